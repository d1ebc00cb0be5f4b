package translate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/virtualclock"
)

// intents are the intents the tests translate: the issue's, and rates and bursts that are
// awkward for one library or another (a T that is not whole ns, a rate per minute, a burst
// of 1, a window that is not whole ms, a rate below one per second).
var intents = []string{
	"rate=100/1s,burst=20",
	"rate=3/1s,burst=1",
	"rate=7/3s,burst=5",
	"rate=10/1m,burst=10",
	"rate=1000/1s,burst=1",
	"rate=5/100ms,burst=7",
	"rate=1/1h,burst=3",
	"rate=250/1s,burst=40",
	"rate=1000000/1s,burst=1000",
}

func mustIntent(t *testing.T, text string) Intent {
	t.Helper()
	in, err := ParseIntent(text)
	require.NoError(t, err, text)
	return in
}

// Every translation that runs has a spec that parses and builds, and every one that does not
// run has none; the references come first.
func TestEveryTranslatedSpecParses(t *testing.T) {
	for _, text := range intents {
		in := mustIntent(t, text)
		ts := Translate(in)
		require.Equal(t, Reference, ts[0].Lane)
		require.Equal(t, WaitingReference, ts[1].Lane)
		assert.Equal(t, in.Reference().String(), ts[0].Spec)
		names := map[string]bool{}
		for _, tr := range ts {
			assert.False(t, names[tr.Lane], "%s: lane %s twice", text, tr.Lane)
			names[tr.Lane] = true
			assert.NotEmpty(t, tr.Config, "%s %s", text, tr.Lane)
			assert.NotEmpty(t, tr.Why, "%s %s", text, tr.Lane)
			if !tr.Fit.Runs() {
				assert.Empty(t, tr.Spec, "%s %s: not run, so no spec", text, tr.Lane)
				continue
			}
			stack, err := engine.ParseStack(tr.Spec)
			require.NoError(t, err, "%s %s: %s", text, tr.Lane, tr.Spec)
			_, err = engine.NewStack(stack, virtualclock.New())
			require.NoError(t, err, "%s %s: %s builds", text, tr.Lane, tr.Spec)
			assert.Equal(t, tr.Spec, engine.StackString(stack), "%s: the spec is printed as ratelab prints it", text)
		}
	}
}

// A kind that refuses the intent (Guava above 250,000 per second) is not run, and says why.
func TestAnUnbuildableTranslationIsNotRun(t *testing.T) {
	g := find(t, Translate(mustIntent(t, "rate=1000000/1s,burst=1000")), "guava")
	assert.Equal(t, FitCannot, g.Fit)
	assert.Empty(t, g.Spec)
	assert.Contains(t, g.Why, "above 250000 per second")
}

func TestParseIntentNamesTheBadField(t *testing.T) {
	for text, want := range map[string]string{
		"":                          "an intent is rate=PERMITS/WINDOW,burst=N",
		"rate=100/1s":               "burst: required",
		"burst=20":                  "rate: required",
		"rate=100/1s,burst=x":       `burst: "x" is not a whole number`,
		"rate=100/1s,burst=0":       "burst: must be 1 to 1000000, got 0",
		"rate=100,burst=2":          "rate: expected permits/window",
		"rate=100/1s,burst=2,cap=3": "cap: unknown field",
		"rate=100/1s,rate=1/1s":     "rate: given twice",
		"rate=100/1s burst=2":       "rate: window",
		"rate=2/1ns,burst=2":        "rate: ",
	} {
		_, err := ParseIntent(text)
		require.Error(t, err, "%q", text)
		assert.Contains(t, err.Error(), want, "%q", text)
	}
	in := mustIntent(t, " burst=20 , rate=100/s ")
	assert.Equal(t, "rate=100/1s,burst=20", in.String())
}

// At 100/1s with a burst of 20 the probe is the peers scenario's script (scenarios/catalogue.go).
func TestProbeIsThePeersScript(t *testing.T) {
	script, phases, horizon := Probe(mustIntent(t, "rate=100/1s,burst=20"))
	var want []time.Duration
	for range 30 {
		want = append(want, 0)
	}
	for k := range 200 {
		want = append(want, time.Second+time.Duration(k)*5*time.Millisecond)
	}
	for range 30 {
		want = append(want, 5*time.Second)
	}
	for range 100 {
		want = append(want, 7*time.Second-time.Millisecond)
	}
	for range 100 {
		want = append(want, 7*time.Second)
	}
	got := make([]time.Duration, len(script))
	for i, a := range script {
		got[i] = a.At
	}
	assert.Equal(t, want, got)
	assert.Equal(t, 8*time.Second, horizon)
	n := 0
	for _, p := range phases {
		n += p.Requests
	}
	assert.Equal(t, len(script), n, "the phases cover every request")
}

// runProbe runs the translations of text on the probe.
func runProbe(t *testing.T, text string) *Report {
	t.Helper()
	in := mustIntent(t, text)
	sc, phases := ProbeScenario(in)
	rep, err := Run(context.Background(), sc, in, Translate(in), phases)
	require.NoError(t, err)
	return rep
}

func lane(t *testing.T, rep *Report, name string) LaneReport {
	t.Helper()
	for _, l := range rep.Lanes {
		if l.Lane == name {
			return l
		}
	}
	t.Fatalf("no lane %s", name)
	return LaneReport{}
}

// On the probe, each translation admits what its doc comment and its Translation's First,
// Idle and Boundary say, phase by phase (first 30 at 0 | 200 at twice the rate | 30 after
// idle | 100 + 100 across the boundary at 7s), and differs from the reference exactly there.
func TestProbePinsEachDifference(t *testing.T) {
	rep := runProbe(t, "rate=100/1s,burst=20")
	assert.EqualValues(t, 460, rep.Requests)
	for _, tc := range []struct {
		lane      string
		perPhase  []int64
		differing []int64
	}{
		// 20 stored + 99 refilled of the 200; 20 after idle; 20 at 6.999s and none at 7s.
		{Reference, []int64{20, 119, 20, 20}, []int64{0, 0, 0, 0}},
		{"x/time/rate", []int64{20, 119, 20, 20}, []int64{0, 0, 0, 0}},
		{"nginx", []int64{20, 119, 20, 20}, []int64{0, 0, 0, 0}},
		{"flash5-token", []int64{20, 119, 20, 20}, []int64{0, 0, 0, 0}},
		// The same requests, each at its turn: 175 of the 179 waited, at most 19 × 10ms.
		{"sentinel", []int64{20, 119, 20, 20}, []int64{0, 0, 0, 0}},
		{"leaky-bucket (waits 190ms)", []int64{20, 119, 20, 20}, []int64{0, 0, 0, 0}},
		// uber admits all, compared wait for wait with the waiting reference: only the first
		// 29 calls (no slack at first) wait longer.
		{"uber", []int64{30, 200, 30, 200}, []int64{29, 0, 0, 0}},
		// Guava starts empty (1 of 30), stores 1s of permits (199 of the 200, 30 of 30 after
		// idle) and passes 100 stored + 1 at the boundary.
		{"guava", []int64{1, 199, 30, 101}, nil},
		// With the package-private max_burst it is the reference but for its start.
		{"guava (max_burst, not public)", []int64{1, 119, 20, 20}, []int64{19, 0, 0, 0}},
		{"guava-warmup", []int64{1, 84, 1, 1}, nil},
		// Windows of 20 per 200ms: 100 of the 200 (20 per window), and 2 × 20 across 7s.
		{"resilience4j", []int64{20, 100, 20, 40}, nil},
		{"flash5-fixed", []int64{20, 100, 20, 40}, nil},
		{"fixed-window", []int64{20, 100, 20, 40}, nil},
		{"sliding-window", []int64{20, 100, 20, 20}, nil},
		{"two-counter", []int64{20, 96, 20, 20}, nil},
		// Cold at 0: ⌊20/3⌋ = 6, then the reference.
		{"warm-up", []int64{6, 119, 20, 20}, []int64{14, 0, 0, 0}},
	} {
		l := lane(t, rep, tc.lane)
		require.True(t, l.Ran, tc.lane)
		assert.Equal(t, tc.perPhase, l.PerPhase, "%s admitted per phase", tc.lane)
		if tc.differing != nil {
			assert.Equal(t, tc.differing, l.DifferingPerPhase, "%s differing per phase", tc.lane)
		}
	}
	s := lane(t, rep, "sentinel")
	assert.Equal(t, 190*time.Millisecond, s.LongestWait)
	u := lane(t, rep, "uber")
	require.NotNil(t, u.FirstDifference)
	assert.EqualValues(t, 2, u.FirstDifference.Request, "the second call at 0 sleeps 10ms, where the full bucket has its permit")
	assert.Equal(t, 10*time.Millisecond, u.FirstDifference.Lane.Wait)
	assert.Equal(t, outcomeAdmitted, u.FirstDifference.Reference.Outcome)
	assert.Contains(t, u.FirstDifference.Lane.Reason, "0 of 20 permits banked")
	assert.NotEmpty(t, u.FirstDifference.Reference.Reason)
	for _, name := range []string{"concurrency", "redis-cell", "redis_rate", "throttled"} {
		assert.False(t, lane(t, rep, name).Ran, name)
	}
}

// script is random traffic around the intent's rate: gaps of about 0.7T (exponential), now
// and then a burst of up to 2b at one instant or an idle of up to 3 bursts' span; on whole
// milliseconds when ms is set.
func script(rng *rand.Rand, in Intent, n int, ms bool) []engine.Arrival {
	T := float64(in.Interval())
	var out []engine.Arrival
	at := 0.0
	for len(out) < n {
		switch r := rng.Float64(); {
		case r < 0.05:
			at += rng.Float64() * 3 * float64(in.BurstSpan())
		case r < 0.1:
			for range rng.IntN(2*in.Burst) + 1 {
				out = append(out, engine.Arrival{At: quantise(at, ms)})
			}
		default:
			at += rng.ExpFloat64() * 0.7 * T
		}
		out = append(out, engine.Arrival{At: quantise(at, ms)})
	}
	return out
}

func quantise(at float64, ms bool) time.Duration {
	d := time.Duration(at)
	if ms {
		d = d.Truncate(time.Millisecond)
	}
	return d
}

// compareOn runs the named translation of in against its reference on arrivals.
func compareOn(t *testing.T, in Intent, name string, arrivals []engine.Arrival) LaneReport {
	t.Helper()
	ts := Translate(in)
	var pick []Translation
	for _, tr := range ts {
		if tr.Lane == name || tr.Fit == FitReference {
			pick = append(pick, tr)
		}
	}
	require.Len(t, pick, 3, name)
	horizon := arrivals[len(arrivals)-1].At + 1
	sc := &engine.Scenario{Name: "random", Seed: 1, Horizon: horizon, Client: engine.Client{Policy: engine.PolicyDrop},
		Sources: []engine.Source{{Kind: engine.SourceScript, Script: arrivals}}}
	rep, err := Run(context.Background(), sc, in, pick, nil)
	require.NoError(t, err)
	return lane(t, rep, name)
}

func describe(l LaneReport) string {
	if l.FirstDifference == nil {
		return "identical"
	}
	f := l.FirstDifference
	return fmt.Sprintf("%d differ; first #%d at %v: %s (%s), reference %s (%s)", l.Differing, f.Request, f.At,
		f.Lane, f.Lane.Reason, f.Reference, f.Reference.Reason)
}

// The exact equivalences hold decision for decision on random traffic: nginx burst=b−1
// nodelay and Flash5's token bucket on whole milliseconds (their clocks), x/time/rate,
// the leaky bucket with callers waiting (b − 1)·T and sentinel's throttling on any
// nanosecond — at every intent the table marks exact.
func TestExactEquivalencesHoldOnRandomTraffic(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 2026))
	for _, text := range intents {
		in := mustIntent(t, text)
		for _, tr := range Translate(in) {
			if tr.Fit != FitExact && tr.Fit != FitLater {
				continue
			}
			wholeMs := tr.Lane == "nginx" || tr.Lane == "flash5-token"
			var admitted, refused int64
			for trial := range 12 {
				arrivals := script(rng, in, 300, wholeMs)
				l := compareOn(t, in, tr.Lane, arrivals)
				require.Zero(t, l.Differing, "%s %s trial %d: %s", text, tr.Lane, trial, describe(l))
				admitted += l.Admitted
				refused += l.Refused
			}
			assert.True(t, admitted > 100 && refused > 100, "%s %s: the traffic both admits and refuses (%d, %d)", text, tr.Lane, admitted, refused)
		}
	}
}

// uber is the waiting reference wait for wait once both are full: after a lone first call
// and an idle of (b + 1)·T, on random traffic, at every intent whose T is exact.
func TestUberIsTheWaitingBucketAfterTheFirstIdle(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 2026))
	for _, text := range intents {
		in := mustIntent(t, text)
		if !in.exactInterval() {
			continue
		}
		for trial := range 8 {
			shift := time.Duration(in.Burst+1) * in.Interval()
			arrivals := []engine.Arrival{{At: 0}}
			for _, a := range script(rng, in, max(300, 3*in.Burst), false) {
				arrivals = append(arrivals, engine.Arrival{At: a.At + shift})
			}
			l := compareOn(t, in, "uber", arrivals)
			require.Zero(t, l.Differing, "%s trial %d: %s", text, trial, describe(l))
			assert.Positive(t, l.Delayed, "%s: some calls sleep", text)
		}
	}
}

// Where a translation is exact only on its library's clock or arithmetic, a test pins the
// difference with the numbers of the kind's doc comment.
func TestInexactTranslationsDifferWhereTheDocSays(t *testing.T) {
	ms := time.Millisecond
	at := func(ts ...time.Duration) []engine.Arrival {
		var out []engine.Arrival
		for _, d := range ts {
			out = append(out, engine.Arrival{At: d})
		}
		return out
	}
	// nginx and Flash5 floor the clock to whole ms: at 100/1s with a burst of 1, requests at
	// 0.9ms and 10.5ms are 10ms apart to them (ms 0 and ms 10), 9.6ms to the reference.
	in := mustIntent(t, "rate=100/1s,burst=1")
	for _, name := range []string{"nginx", "flash5-token"} {
		l := compareOn(t, in, name, at(900*time.Microsecond, 10500*time.Microsecond))
		require.NotNil(t, l.FirstDifference, name)
		assert.EqualValues(t, 1, l.Differing, name)
		assert.EqualValues(t, 2, l.FirstDifference.Request, name)
		assert.Equal(t, outcomeAdmitted, l.FirstDifference.Lane.Outcome, name)
		assert.Equal(t, outcomeRefused, l.FirstDifference.Reference.Outcome, name)
	}
	// x/time/rate at 3/1s with a burst of 1: its float64 waits truncated to whole ns admit
	// all four of 0, 333,333,333, 666,666,666 and 999,999,999ns, each under 1ns early; the
	// reference (T rounded up to 333,333,334ns) admits the first and the third.
	l := compareOn(t, mustIntent(t, "rate=3/1s,burst=1"), "x/time/rate", at(0, 333_333_333, 666_666_666, 999_999_999))
	assert.EqualValues(t, 4, l.Admitted)
	assert.EqualValues(t, 2, l.Differing)
	require.NotNil(t, l.FirstDifference)
	assert.EqualValues(t, 2, l.FirstDifference.Request)
	// Flash5's token bucket cannot say 7 per 3s: its refill is a whole number of milli-tokens
	// per ms, ⌊5·1000/2143⌋ = 2 (2 per second, not 2.33): marked closest, and slower.
	in = mustIntent(t, "rate=7/3s,burst=5")
	f := find(t, Translate(in), "flash5-token")
	assert.Equal(t, FitClosest, f.Fit)
	assert.Contains(t, f.Why, "2 tokens per second")
	steady := make([]time.Duration, 0, 100)
	for k := range 100 {
		steady = append(steady, time.Duration(k)*100*ms)
	}
	l = compareOn(t, in, "flash5-token", at(steady...))
	ref := compareOn(t, in, "x/time/rate", at(steady...))
	assert.Less(t, l.Admitted, ref.Admitted, "2 per second admits fewer than 7 per 3s over 10s")
	// nginx's r/m rate is kept in milli-requests per second, truncated: not exact.
	assert.Equal(t, FitClosest, find(t, Translate(mustIntent(t, "rate=10/1m,burst=10")), "nginx").Fit)
}

func find(t *testing.T, ts []Translation, name string) Translation {
	t.Helper()
	for _, tr := range ts {
		if tr.Lane == name {
			return tr
		}
	}
	t.Fatalf("no translation %s", name)
	return Translation{}
}

// The report is the same whatever the number of cores the lanes run on.
func TestRunIsDeterministic(t *testing.T) {
	in := mustIntent(t, "rate=100/1s,burst=20")
	report := func(procs int) *Report {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		sc, phases := ProbeScenario(in)
		rep, err := Run(context.Background(), sc, in, Translate(in), phases)
		require.NoError(t, err)
		return rep
	}
	one := report(1)
	assert.Equal(t, one, report(4))
	assert.Equal(t, one, report(1))
}

// A cancelled run stops with the context's error.
func TestRunStopsWhenCancelled(t *testing.T) {
	in := mustIntent(t, "rate=100/1s,burst=20")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sc := &engine.Scenario{Name: "long", Seed: 1, Horizon: time.Hour, Client: engine.Client{Policy: engine.PolicyDrop},
		Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 1000}}}
	_, err := Run(ctx, sc, in, Translate(in), nil)
	require.ErrorIs(t, err, context.Canceled)
}

// Run refuses a list of translations without the references, and a scenario that is not
// valid, with the scenario's own words.
func TestRunRefusesWhatItCannotCompare(t *testing.T) {
	in := mustIntent(t, "rate=100/1s,burst=20")
	sc, _ := ProbeScenario(in)
	_, err := Run(context.Background(), sc, in, Translate(in)[2:], nil)
	require.ErrorContains(t, err, "lack the references")
	bad := *sc
	bad.Horizon = 0
	_, err = Run(context.Background(), &bad, in, Translate(in), nil)
	require.ErrorContains(t, err, "horizon: must be positive")
}
