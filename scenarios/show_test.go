package scenarios

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// Every built-in, written as YAML and loaded back, is the same scenario: the same text again,
// and results byte-identical to the built-in's.
func TestYAMLRoundTripsEveryBuiltIn(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			sc, err := Get(name)
			require.NoError(t, err)
			if sc.Horizon > time.Minute {
				sc.Horizon = time.Minute // the round trip, not the length, is under test
			}
			text, err := YAML(sc)
			require.NoError(t, err)
			back, err := Load(name+".yaml", text)
			require.NoError(t, err, "%s", text)
			again, err := YAML(back)
			require.NoError(t, err)
			require.Equal(t, string(text), string(again))
			assert.Equal(t, sc.Description, back.Description)

			want, err := engine.Run(context.Background(), sc, nil)
			require.NoError(t, err)
			got, err := engine.Run(context.Background(), back, nil)
			require.NoError(t, err)
			wantJSON, err := json.Marshal(want)
			require.NoError(t, err)
			gotJSON, err := json.Marshal(got)
			require.NoError(t, err)
			require.True(t, string(wantJSON) == string(gotJSON), "results differ after the round trip")
		})
	}
}

// Every field a scenario file can set survives the round trip, exact values included: a
// duration of odd nanoseconds, a rate that is not a short decimal, named and shaped lanes,
// a per-lane client, phases and distributions.
func TestYAMLRoundTripsEveryField(t *testing.T) {
	stack := func(text string) []limiters.Spec {
		s, err := engine.ParseStack(text)
		require.NoError(t, err)
		return s
	}
	sc := &engine.Scenario{
		Name: "all: the fields", Description: "Two  spaces, a colon: and a # kept.", Seed: 18446744073709551615,
		Horizon: time.Hour + 1, Bins: 7, Trace: true, Windows: []time.Duration{333333334, time.Second},
		Sources: []engine.Source{
			{Kind: engine.SourcePoisson, Rate: 1.0 / 3, From: time.Millisecond, Until: 59 * time.Minute, Permits: 2, Key: "true"},
			{Kind: engine.SourceOnOff, Rate: 300, On: time.Second, Off: 2 * time.Second, Poisson: true,
				Keys: &engine.KeyPopulation{Kind: engine.PopulationZipf, Clients: 50, Exponent: 1.1, Prefix: "user-"}},
			{Kind: engine.SourceConstant, Rate: 5, Keys: &engine.KeyPopulation{Kind: engine.PopulationNoisy, Clients: 9, Share: 0.25, Noisy: "big"}},
			{Kind: engine.SourceRamp, Rate: 10, RateTo: 90.5},
			{Kind: engine.SourceSine, Rate: 80, Amplitude: 60, Period: 30 * time.Second},
			{Kind: engine.SourceBursts, Bursts: []engine.Burst{{At: 5, Count: 3, Spread: 7}}},
			{Kind: engine.SourceScript, Script: []engine.Arrival{{At: 1, Permits: 4, Key: "a b"}, {At: 2}}},
			{Kind: engine.SourceTrace, TraceData: "t_ns,permits\n5,1\n9,2\n"},
		},
		Client: engine.Client{Policy: engine.PolicyBackoff, Delay: 5 * time.Millisecond, MaxDelay: time.Second, Jitter: true, MaxAttempts: 4},
		Lanes: []engine.LaneSpec{
			{Stack: stack("token-bucket:capacity=3,rate=100/1s")},
			{Stack: stack("keys(max=20,evict=fresh):nginx:rate=10r/s,burst=5+concurrency:max=4")},
			{Name: "shaped", Stack: stack("leaky-bucket:rate=100/1s"), MaxWait: 250 * time.Millisecond},
			{Name: "queued", Stack: stack("fixed-window:limit=5,window=1s+concurrency:max=2"), Waste: true,
				Client: &engine.Client{Policy: engine.PolicyQueue, QueueSize: 10, Timeout: 500 * time.Millisecond}},
		},
		Downstream: &engine.Downstream{Pool: 8, Phases: []engine.Phase{
			{Service: engine.Distribution{Kind: engine.DistLogNormal, Mean: 40 * time.Millisecond, Sigma: 0.5}},
			{From: 10 * time.Second, Service: engine.Distribution{Kind: engine.DistUniform, Min: time.Millisecond, Max: 3 * time.Millisecond}},
		}},
	}
	require.NoError(t, sc.Validate())
	text, err := YAML(sc)
	require.NoError(t, err)
	back, err := Load("all.yaml", text)
	require.NoError(t, err, "%s", text)
	require.Equal(t, sc, back, "%s", text)
	assert.Contains(t, string(text), "horizon: 1h0m0.000000001s")
}

// A lane made by code has no file form: it is refused, naming the lane.
func TestYAMLRefusesBuiltLanes(t *testing.T) {
	sc, err := Get("steady")
	require.NoError(t, err)
	sc.Lanes[0].Build = func(limiters.Clock) ([]limiters.Limiter, error) { return nil, nil }
	_, err = YAML(sc)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "limiters[0]: token-bucket:capacity=10,rate=100/1s: its limiters are made by code"), err.Error())
}

// A string yaml cannot write (not UTF-8) is refused naming its field, in ratelab's words
// where yaml said "cannot marshal invalid UTF-8 data as !!str": a scenario named after a file
// whose name is not UTF-8, or a lane so named by code.
func TestYAMLRefusesTextThatIsNotUTF8(t *testing.T) {
	sc, err := Get("steady")
	require.NoError(t, err)
	sc.Name = "a\xffb"
	_, err = YAML(sc)
	require.Error(t, err)
	assert.Equal(t, `name "a\xffb" is not UTF-8 text, which a scenario file must be (a file without a name: is named after the file: add a name: line)`, err.Error())
	sc.Name = "steady"
	sc.Lanes[2].Name = "lane\xc3"
	_, err = YAML(sc)
	require.Error(t, err)
	assert.Equal(t, `limiters[2].name "lane\xc3" is not UTF-8 text, which a scenario file must be`, err.Error())
}
