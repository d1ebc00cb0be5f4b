package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/translate"
)

// --details prints every library's parameters and, on the probe, which lanes admit the
// reference's requests: the table's verdicts are the report's.
func TestTranslateTable(t *testing.T) {
	out, stderr, err := ratelab(t, "translate", "rate=100/1s,burst=20", "--details")
	require.NoError(t, err)
	assert.Empty(t, stderr)
	for _, want := range []string{
		"rate=100/1s,burst=20 means token-bucket:capacity=20,rate=100/1s (T = 10ms)",
		"nginx — exact (NGINX limit_req)",
		"limit_req_zone $binary_remote_addr zone=z:10m rate=100r/s; limit_req zone=z burst=19",
		"rate.NewLimiter(100, 20); lim.Allow()",
		"ratelimit.New(100, ratelimit.WithSlack(19)); rl.Take()",
		"RateLimiter.create(100); rl.tryAcquire()",
		"redis-cell — not modelled (redis-cell)",
		"CL.THROTTLE key 19 100 1",
		"redis_rate.Limit{Rate: 100, Burst: 20, Period: time.Second}",
		"throttled.RateQuota{MaxRate: throttled.PerDuration(100, time.Second), MaxBurst: 19}",
		"Decisions on the probe: 460 requests over 8s",
		"  uber: request 2 at 0s (1 permit)",
	} {
		assert.Contains(t, out, want)
	}
	// x/time/rate, nginx, flash5-token, and (each at its turn) sentinel and the leaky bucket.
	assert.Equal(t, 5, strings.Count(out, "run         identical to the reference: the same 179 admitted, 281 refused"))
	flat := strings.Join(strings.Fields(out), " ")
	assert.Contains(t, flat, "differs from the waiting reference (request for request and wait for wait) in 29 requests (first: 29); "+
		"the first is request 2 at 0s: admitted after 10ms, the reference admitted.")
	assert.Contains(t, flat, "guava 1 199 30 101 331 129 0 0s 190")
	for _, line := range strings.Split(out, "\n") {
		assert.Equal(t, strings.TrimRight(line, " "), line, "no trailing spaces")
	}
}

// JSON is the report; CSV one row per translation, the not-run ones included; both agree.
func TestTranslateJSONAndCSV(t *testing.T) {
	out, _, err := ratelab(t, "translate", "rate=100/1s,burst=20", "--format", "json")
	require.NoError(t, err)
	var rep translate.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.EqualValues(t, 460, rep.Requests)
	assert.Len(t, rep.Phases, 4)
	byLane := map[string]translate.LaneReport{}
	for _, l := range rep.Lanes {
		byLane[l.Lane] = l
	}
	assert.True(t, byLane["nginx"].Identical())
	require.NotNil(t, byLane["guava"].FirstDifference)
	assert.Equal(t, "refused", byLane["guava"].FirstDifference.Lane.Outcome)
	assert.False(t, byLane["throttled"].Ran)

	out, _, err = ratelab(t, "translate", "rate=100/1s,burst=20", "--format", "csv")
	require.NoError(t, err)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+len(rep.Lanes))
	header := rows[0]
	col := func(name string) int {
		for i, h := range header {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %s in %v", name, header)
		return -1
	}
	assert.Equal(t, "admitted_boundary", header[len(header)-1])
	for i, l := range rep.Lanes {
		row := rows[i+1]
		assert.Equal(t, l.Lane, row[col("lane")])
		if l.Ran {
			assert.Equal(t, strings.TrimSpace(row[col("differing")]), jsonInt(l.Differing), l.Lane)
		} else {
			assert.Empty(t, row[col("admitted")], l.Lane)
		}
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

// --chart writes a PNG (or an SVG by its name) as well as the table; --chart - writes only
// the image.
func TestTranslateChart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.png")
	out, _, err := ratelab(t, "translate", "rate=100/1s,burst=20", "--chart", path)
	require.NoError(t, err)
	assert.Contains(t, out, "  nginx                          exact                      179          0")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, 1000, img.Bounds().Dx())
	out, _, err = ratelab(t, "translate", "rate=100/1s,burst=20", "--chart", "-", "--format", "json")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "\x89PNG"), "only the image")
	assert.True(t, strings.HasSuffix(out, "IEND\xaeB`\x82"), "nothing after the image's last chunk")
	svg := filepath.Join(dir, "t.svg")
	_, _, err = ratelab(t, "translate", "rate=100/1s,burst=20", "--chart", svg)
	require.NoError(t, err)
	data, err = os.ReadFile(svg)
	require.NoError(t, err)
	assert.Contains(t, string(data), "<svg")
}

// A trace and a scenario are run as they are, open loop; the probe's phases are the probe's.
func TestTranslateOnATraceAndAScenario(t *testing.T) {
	out, _, err := ratelab(t, "translate", "rate=200/1s,burst=50", "--in", gatewayTrace, "--format", "json")
	require.NoError(t, err)
	var rep translate.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.EqualValues(t, 1919, rep.Requests)
	assert.Empty(t, rep.Phases)
	assert.Equal(t, gatewayTrace, rep.Traffic)
	ref := rep.Lanes[0]
	assert.EqualValues(t, 1919, ref.Admitted+ref.Refused)

	var stdin bytes.Buffer
	stdin.WriteString("t_ns\n0\n1000000\n2000000\n")
	var stdout, stderr bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"translate", "rate=1/1s,burst=2", "--in", "-", "--format", "json"}, &stdin, &stdout, &stderr))
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep))
	assert.Equal(t, "standard input", rep.Traffic)
	assert.EqualValues(t, 2, rep.Lanes[0].Admitted, "a bucket of 2 admits two of three at once")

	out, _, err = ratelab(t, "translate", "rate=100/1s,burst=20", "--scenario", "peers", "--horizon", "3s", "--details")
	require.NoError(t, err)
	assert.Contains(t, out, "Decisions on peers: 230 requests over 3s")
	out, _, err = ratelab(t, "translate", "rate=100/1s,burst=20", "--scenario", "peers", "--horizon", "3s")
	require.NoError(t, err)
	assert.Contains(t, out, "it admits 139 of the 230 requests of\npeers (3s)")
}

func TestTranslateUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"translate"}, "translate: an intent is required, e.g. ratelab translate 'rate=100/1s,burst=20'"},
		{[]string{"translate", "rate=100/1s,", "burst=20"}, "translate: one intent, got 2: rate=100/1s, burst=20 (quote it: 'rate=100/1s,burst=20')"},
		{[]string{"translate", "rate=100/1s,burst=0"}, "translate rate=100/1s,burst=0: burst: must be 1 to 1000000, got 0"},
		{[]string{"translate", "rate=100/1s,brust=2"}, "translate rate=100/1s,brust=2: brust: unknown field (an intent has rate and burst)"},
		{[]string{"translate", "rate=1/1s,burst=1", "--format", "xml"}, "--format xml: not table, json or csv"},
		{[]string{"translate", "rate=1/1s,burst=1", "--seed", "2"}, "translate: --seed and --horizon apply to a --scenario, not to the probe"},
		{[]string{"translate", "rate=1/1s,burst=1", "--in", "x.csv", "--scenario", "peers"}, "translate: either --scenario or --in, not both"},
		{[]string{"translate", "rate=1/1s,burst=1", "--scenario", "peer"}, `no built-in scenario "peer" (did you mean peers?)`},
	} {
		_, _, err := ratelab(t, tc.args...)
		require.Error(t, err, "%v", tc.args)
		assert.True(t, isUsage(err), "%v: %v is a usage error", tc.args, err)
		assert.Contains(t, err.Error(), tc.want, "%v", tc.args)
	}
	_, _, err := ratelab(t, "translate", "rate=1/1s,burst=1", "--in", "/nonexistent/trace.csv")
	require.Error(t, err)
	assert.False(t, isUsage(err))
	assert.Equal(t, "/nonexistent/trace.csv: no such file or directory", err.Error())
}

func TestTranslateCompletes(t *testing.T) {
	ctx := context.Background()
	assert.Contains(t, completions(ctx, nil, "tr"), "translate")
	assert.Subset(t, completions(ctx, []string{"translate"}, "--"), []string{"--scenario", "--in", "--format", "--chart", "--seed", "--horizon"})
	got := completions(ctx, []string{"translate", "--scenario"}, "pe")
	assert.Equal(t, []string{filesDirective, "peers"}, got)
	assert.Equal(t, []string{"table", "json", "csv"}, completions(ctx, []string{"translate", "--format"}, ""))
}
