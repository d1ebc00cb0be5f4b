package scenarios

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

func stack(t *testing.T, text string) []limiters.Spec {
	st, err := engine.ParseStack(text)
	require.NoError(t, err)
	return st
}

const complete = `name: complete
description: every kind of field
seed: 7
horizon: 1m30s
bins: 90
trace: true
windows: [100ms, 10s]
sources:
  - kind: poisson
    rate: 80.5
    from: 1s
    until: 80s
    permits: 2
    key: web
  - kind: bursts
    bursts:
      - {at: 10s, count: 200, spread: 50ms}
      - {at: 20s, count: 1}
  - kind: on-off
    rate: 300
    on: 1s
    off: 4s
    poisson: true
  - kind: ramp
    rate: 0
    rate_to: 150
  - kind: sine
    rate: 50
    amplitude: 30
    period: 10s
  - kind: script
    arrivals:
      - {at: 5s, permits: 5, key: export}
      - {at: 6s}
  - kind: trace
    file: peak.csv
client:
  policy: backoff
  delay: 10ms
  max_delay: 1s
  jitter: true
  max_attempts: 5
limiters:
  - token-bucket:capacity=20,rate=100/1s
  - spec: leaky-bucket:rate=100/1s
    max_wait: 50ms
  - spec: token-bucket:capacity=20,rate=100/1s+concurrency:max=8
    name: bucket + bulkhead
    refund: false
    client: {policy: queue, queue_size: 50, timeout: 500ms}
downstream:
  pool: 16
  phases:
    - {from: 0, service: {kind: lognormal, median: 40ms, sigma: 0.5}}
    - {from: 20s, service: {kind: uniform, min: 1ms, max: 3ms}}
`

func TestLoadCompleteFile(t *testing.T) {
	sc, err := Load("dir/complete.yaml", []byte(complete))
	require.NoError(t, err)
	want := &engine.Scenario{
		Name: "complete", Description: "every kind of field", Seed: 7, Horizon: 90 * time.Second, Bins: 90, Trace: true,
		Windows: []time.Duration{100 * ms, 10 * s},
		Sources: []engine.Source{
			{Kind: engine.SourcePoisson, Rate: 80.5, From: s, Until: 80 * s, Permits: 2, Key: "web"},
			{Kind: engine.SourceBursts, Bursts: []engine.Burst{{At: 10 * s, Count: 200, Spread: 50 * ms}, {At: 20 * s, Count: 1}}},
			{Kind: engine.SourceOnOff, Rate: 300, On: s, Off: 4 * s, Poisson: true},
			{Kind: engine.SourceRamp, Rate: 0, RateTo: 150},
			{Kind: engine.SourceSine, Rate: 50, Amplitude: 30, Period: 10 * s},
			{Kind: engine.SourceScript, Script: []engine.Arrival{{At: 5 * s, Permits: 5, Key: "export"}, {At: 6 * s}}},
			{Kind: engine.SourceTrace, TraceFile: filepath.Join("dir", "peak.csv")},
		},
		Client: engine.Client{Policy: engine.PolicyBackoff, Delay: 10 * ms, MaxDelay: s, Jitter: true, MaxAttempts: 5},
		Lanes: []engine.LaneSpec{
			{Stack: stack(t, "token-bucket:capacity=20,rate=100/1s")},
			{Stack: stack(t, "leaky-bucket:rate=100/1s"), MaxWait: 50 * ms},
			{Name: "bucket + bulkhead", Stack: stack(t, "token-bucket:capacity=20,rate=100/1s+concurrency:max=8"),
				Client: &engine.Client{Policy: engine.PolicyQueue, QueueSize: 50, Timeout: 500 * ms}, Waste: true},
		},
		Downstream: &engine.Downstream{Pool: 16, Phases: []engine.Phase{
			{From: 0, Service: engine.Distribution{Kind: engine.DistLogNormal, Mean: 40 * ms, Sigma: 0.5}},
			{From: 20 * s, Service: engine.Distribution{Kind: engine.DistUniform, Min: ms, Max: 3 * ms}},
		}},
	}
	assert.Equal(t, want, sc)
}

func TestLoadDefaults(t *testing.T) {
	sc, err := Load("some/where/mine.yaml", []byte("horizon: 5s\nsources: [{kind: constant, rate: 5}]\nlimiters: [leaky-bucket:rate=10/1s]\ndownstream: {service: {kind: constant, mean: 5ms}}\n"))
	require.NoError(t, err)
	assert.Equal(t, "mine", sc.Name, "the file name")
	assert.Equal(t, uint64(1), sc.Seed)
	assert.Equal(t, engine.Client{Policy: engine.PolicyDrop}, sc.Client)
	assert.Equal(t, []engine.Phase{{Service: engine.Distribution{Kind: engine.DistConstant, Mean: 5 * ms}}}, sc.Downstream.Phases)
}

// The commented example every README reader copies: it must load, use every field and run.
func TestExampleFile(t *testing.T) {
	sc, err := LoadFile(filepath.Join("testdata", "example.yaml"))
	require.NoError(t, err)
	assert.Equal(t, "checkout-peak", sc.Name)
	assert.True(t, strings.HasPrefix(sc.Description, "Checkout traffic at the evening peak"), sc.Description)
	assert.True(t, strings.HasSuffix(sc.Description, "and a slow provider."), "no trailing newline from the folded block: %q", sc.Description)
	kinds := map[engine.SourceKind]bool{}
	for _, src := range sc.Sources {
		kinds[src.Kind] = true
	}
	assert.Len(t, kinds, 8, "every source kind")
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	require.Len(t, res.Lanes, 9)
	for _, lane := range res.Lanes {
		assert.Greater(t, lane.Totals.Admitted, int64(0), lane.Name)
		assert.Equal(t, res.Lanes[0].Totals.Offered, lane.Totals.Offered, lane.Name)
		assert.False(t, lane.Truncated, lane.Name)
	}
	// Every field of the format appears in the example.
	data, err := os.ReadFile(filepath.Join("testdata", "example.yaml"))
	require.NoError(t, err)
	for _, field := range []string{"name", "description", "seed", "horizon", "bins", "windows", "trace", "sources", "kind",
		"rate", "rate_to", "from", "until", "poisson", "on", "off", "amplitude", "period", "permits", "key", "file", "bursts",
		"at", "count", "spread", "arrivals", "client", "policy", "delay", "max_delay", "jitter", "max_attempts", "queue_size",
		"timeout", "retry_quota", "max_elapsed", "group", "limiters", "spec", "downstream", "pool", "phases", "service", "mean", "median", "min", "max", "sigma"} {
		assert.Regexp(t, `(?m)(^|[\s{,])`+field+`:`, string(data), "field %s", field)
	}
}

const base = "horizon: 10s\nsources:\n  - kind: constant\n    rate: 5\nlimiters:\n  - token-bucket:capacity=3,rate=10/1s\n"

func TestLoadErrorsAreLocated(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"unknown field", "horizon: 10s\nsources:\n  - kind: constant\n    rate: 5\n    rte: 5\nlimiters: [concurrency:max=1]\n",
			"f.yaml:5:5: sources[0].rte: unknown field (did you mean rate?) (known: amplitude, arrivals, bursts, class, data, file, from, key, keys, kind, log_fields, log_format, log_key, off, on, period, permits, poisson, rate, rate_to, until)"},
		{"unknown top-level field", "horizont: 10s\n", "f.yaml:1:1: horizont: unknown field"},
		{"list for a number", "horizon: 10s\nsources:\n  - kind: constant\n    rate: [1, 2]\n", "f.yaml:4:11: sources[0].rate: expected a number, got a list"},
		{"mapping for a duration", "horizon: {a: 1}\n", "f.yaml:1:10: horizon: expected a duration, got a mapping"},
		{"word for a number", base + "bins: many\n", `f.yaml:7:7: bins: expected a whole number, got "many"`},
		{"bad duration", "horizon: 10\n", `f.yaml:1:10: horizon: expected a duration such as 10s`},
		{"bad boolean", base + "trace: yes\n", `f.yaml:7:8: trace: expected true or false, got "yes"`},
		{"negative rate", "horizon: 10s\nsources:\n  - kind: constant\n    rate: -5\nlimiters: [concurrency:max=1]\n",
			"f.yaml:4:11: sources[0].rate: must be between 0 and 1e9 requests per second, got -5"},
		{"zero horizon", "horizon: 0s\nsources: [{kind: constant, rate: 5}]\nlimiters: [concurrency:max=1]\n", "f.yaml:1:10: horizon: must be positive"},
		{"bad nested value", base + "client: {policy: retry, delay: 5ms, max_attempts: 0}\n", "f.yaml:7:51: client.max_attempts: must be at least 1"},
		{"lane client", base + "  - spec: concurrency:max=1\n    client:\n      policy: queue\n      queue_size: 5\n", "f.yaml:9:7: limiters[1].client.timeout: must be positive"},
		{"bad limiter spec value", base + "  - token-bucket:capacity=x,rate=10/1s\n",
			`f.yaml:7:5: limiters[1]: limiter spec "token-bucket:capacity=x,rate=10/1s": capacity=x: `},
		{"bad limiter spec key", "horizon: 10s\nsources: [{kind: constant, rate: 5}]\nlimiters:\n  - spec: token-bucket:capacity=3,rat=10/1s\n",
			`f.yaml:4:11: limiters[0]: limiter spec "token-bucket:capacity=3,rat=10/1s": rat=10/1s:`},
		{"limiter value out of range", base + "  - token-bucket:capacity=0,rate=10/1s\n", `f.yaml:7:5: limiters[1]: limiter spec "token-bucket:capacity=0,rate=10/1s": capacity=0:`},
		{"missing kind", "horizon: 10s\nsources:\n  - rate: 5\n", "f.yaml:3:5: sources[0].kind: missing (constant, poisson"},
		{"unknown kind", "horizon: 10s\nsources:\n  - kind: wave\n    rate: 5\nlimiters: [concurrency:max=1]\n", `f.yaml:3:11: sources[0].kind: unknown source kind "wave"`},
		{"misspelt kind", "horizon: 10s\nsources:\n  - kind: poison\n    rate: 5\nlimiters: [concurrency:max=1]\n", `f.yaml:3:11: sources[0].kind: unknown source kind "poison" (did you mean poisson?)`},
		{"flow list split at a comma", "horizon: 10s\nsources: [{kind: constant, rate: 5}]\nlimiters: [token-bucket:capacity=20,rate=100/1s]\n",
			`f.yaml:3:37: limiters[1]: "rate=100/1s" looks like the rest of the spec before it: in a flow list [a, b] YAML splits at every comma; quote each spec (["token-bucket:capacity=20,rate=100/1s"])`},
		{"missing policy", base + "client: {delay: 5ms}\n", "f.yaml:7:9: client.policy: missing (drop, retry, backoff, retry-after, retry-after-header, aws-standard, aws-adaptive, retryablehttp, retryablehttp-linear, cenkalti-backoff, octokit, stripe, stripe-lock-timeout, header-paced, queue)"},
		{"unknown policy", base + "client: {policy: aws}\n", `f.yaml:7:18: client.policy: unknown policy "aws" (drop, retry,`},
		{"retry quota word", base + "client: {policy: aws-standard, retry_quota: lots}\n", `f.yaml:7:45: client.retry_quota: expected a whole number of tokens, at least 1, or none, got "lots"`},
		{"retry quota 0", base + "client: {policy: aws-standard, retry_quota: 0}\n", `f.yaml:7:45: client.retry_quota: expected a whole number of tokens, at least 1, or none, got "0"`},
		{"retry quota elsewhere", base + "client: {policy: retryablehttp, retry_quota: 10}\n", "f.yaml:7:46: client.retry_quota: is for aws-standard and aws-adaptive, not retryablehttp"},
		{"library jitter", base + "  - spec: concurrency:max=1\n    client: {policy: retryablehttp-linear, jitter: true}\n",
			"f.yaml:8:52: limiters[1].client.jitter: retryablehttp-linear draws its own jitter as the library does"},
		{"max elapsed negative", base + "client: {policy: cenkalti-backoff, max_elapsed: -1s}\n", "f.yaml:7:49: client.max_elapsed: must be positive"},
		{"header policy without delay", base + "client: {policy: retry-after-header, max_attempts: 3}\n", "f.yaml:7:9: client.delay: must be positive for retry-after-header"},
		{"missing distribution kind", base + "downstream: {service: {mean: 5ms}}\n", "f.yaml:7:23: downstream.service.kind: missing"},
		{"lognormal median", base + "downstream:\n  service: {kind: lognormal, median: 0s, sigma: 1}\n", "f.yaml:8:38: downstream.phases[0].service.median: must be positive"},
		{"duplicate key", "horizon: 10s\nseed: 1\nhorizon: 20s\n", "f.yaml:3:1: horizon: given twice"},
		{"duplicate nested key", base + "client: {policy: drop, policy: retry}\n", "f.yaml:7:24: client.policy: given twice"},
		{"service and phases", base + "downstream:\n  service: {kind: constant, mean: 1ms}\n  phases: [{from: 0s, service: {kind: constant, mean: 1ms}}]\n",
			"f.yaml:8:3: downstream.service: give either service"},
		{"syntax: bad indentation", "horizon: 10s\nsources:\n  - kind: constant\n   rate: 5\nlimiters: [concurrency:max=1]\n", "f.yaml:4:1: did not find expected '-' indicator"},
		{"syntax: unclosed flow list", "horizon: 10s\nsources: [{kind: constant, rate: 5}\nlimiters: []\n", "f.yaml:2:1: did not find expected ',' or ']'"},
		{"syntax: tab", "horizon: 10s\n\tseed: 1\n", "f.yaml:2:1: found a tab character"},
		{"syntax: unclosed quote", "horizon: 10s\nname: \"abc\nseed: 1\n", "f.yaml:2:1: "},
		{"not a mapping", "- a\n- b\n", "f.yaml:1:1: expected a mapping of fields, got a list"},
		{"empty", "", "f.yaml:1:1: the file is empty"},
		{"not UTF-8 in a lane name", base + "  - {name: \"a\xffb\", spec: concurrency:max=1}\n",
			`f.yaml:7:14: byte 0xff is not UTF-8 text, which a scenario file must be: save the file as UTF-8 (in a double-quoted string, \u00ff writes ÿ)`},
		{"not UTF-8 after Unicode", "name: \"ÿÿ\xc3(\"\n", "f.yaml:1:10: byte 0xc3 is not UTF-8 text"},
		{"a surrogate", "horizon: 10s\nname: x\xed\xa0\x80\n", "f.yaml:2:8: byte 0xed is not UTF-8 text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load("f.yaml", []byte(tc.yaml))
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "got  %s\nwant %s…", err, tc.want)
			var fe *FileError
			assert.True(t, errors.As(err, &fe), "a *FileError")
		})
	}
}

func TestLoadFileAndResolve(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t.csv"), []byte("t_ns\n0\n1000000\n"), 0o644))
	file := filepath.Join(dir, "mine.yml")
	require.NoError(t, os.WriteFile(file, []byte("horizon: 1s\nsources: [{kind: trace, file: t.csv}]\nlimiters: [concurrency:max=1]\n"), 0o644))
	assert.True(t, IsFile(file))
	assert.False(t, IsFile("poisson"))
	sc, err := Resolve(file)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "t.csv"), sc.Sources[0].TraceFile, "relative to the scenario file")
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(2), res.Lanes[0].Totals.Offered)

	_, err = Resolve(filepath.Join(dir, "missing.yaml"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	sc, err = Resolve("poisson")
	require.NoError(t, err)
	assert.Equal(t, "poisson", sc.Name)
	_, err = Resolve("nope")
	assert.ErrorContains(t, err, `no built-in scenario "nope" (known: aws-quota-drain, black-hole, boundary-attack`)
}

// The performance scenario is the built-in poisson's six lanes at 10,000/s for an hour.
func TestPerfScenarioMatchesPoisson(t *testing.T) {
	perf, err := LoadFile(filepath.Join("testdata", "perf-poisson-1h.yaml"))
	require.NoError(t, err)
	poisson, err := Get("poisson")
	require.NoError(t, err)
	assert.Equal(t, poisson.Lanes, perf.Lanes)
	assert.Equal(t, poisson.Downstream, perf.Downstream)
	assert.Equal(t, poisson.Client, perf.Client)
	assert.Equal(t, time.Hour, perf.Horizon)
	assert.Equal(t, []engine.Source{{Kind: engine.SourcePoisson, Rate: 10_000}}, perf.Sources)
}
