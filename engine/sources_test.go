package engine

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// arrivals drains the stream of src over horizon.
func arrivals(t testing.TB, src Source, horizon time.Duration) []arrival {
	t.Helper()
	sc := Scenario{Horizon: horizon, Sources: []Source{src}, Lanes: stacks(t, "concurrency:max=1")}
	require.NoError(t, sc.Validate())
	st, err := newStream(src, 0, 7, horizon)
	require.NoError(t, err)
	defer st.close()
	var out []arrival
	last := int64(math.MinInt64)
	for {
		a, ok, err := st.next()
		require.NoError(t, err)
		if !ok {
			return out
		}
		require.GreaterOrEqual(t, a.at, last, "arrivals must come in time order")
		last = a.at
		out = append(out, a)
	}
}

func TestConstantRateIsExactAndEven(t *testing.T) {
	got := arrivals(t, Source{Kind: SourceConstant, Rate: 100, From: 2 * sec, Until: 12 * sec}, 20*sec)
	require.Len(t, got, 1000)
	assert.Equal(t, int64(2*sec), got[0].at, "first arrival at From")
	for i, a := range got {
		assert.Equal(t, int64(2*sec+time.Duration(i)*10*ms), a.at, "arrival %d", i)
		assert.Equal(t, 1, a.permits)
	}
	// A rate whose interval is not a whole number of ns: 3/s over 10s → 30, gaps within 1ns of 1/3 s.
	got = arrivals(t, Source{Kind: SourceConstant, Rate: 3}, 10*sec)
	require.Len(t, got, 30)
	for i := 1; i < len(got); i++ {
		assert.InDelta(t, float64(sec)/3, float64(got[i].at-got[i-1].at), 1)
	}
}

func TestPoissonMeanWithinTolerance(t *testing.T) {
	// 1000/s over 100s: expected 100,000, standard deviation √100000 ≈ 316. 5σ = 1581.
	got := arrivals(t, Source{Kind: SourcePoisson, Rate: 1000}, 100*sec)
	assert.InDelta(t, 100_000, len(got), 1581)
	// Gaps are exponential: their coefficient of variation is 1 (±2%).
	var sum, sq float64
	for i := 1; i < len(got); i++ {
		g := float64(got[i].at - got[i-1].at)
		sum += g
		sq += g * g
	}
	n := float64(len(got) - 1)
	mean := sum / n
	cv := math.Sqrt(sq/n-mean*mean) / mean
	assert.InDelta(t, 1.0, cv, 0.02)
	assert.InDelta(t, float64(ms), mean, 0.02*float64(ms))
}

func TestBurstsAndScriptExactTimes(t *testing.T) {
	got := arrivals(t, Source{Kind: SourceBursts, From: 100 * ms, Bursts: []Burst{
		{At: 0, Count: 3}, {At: 50 * ms, Count: 4, Spread: 40 * ms},
	}}, sec)
	want := []int64{100e6, 100e6, 100e6, 150e6, 160e6, 170e6, 180e6}
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i], got[i].at)
	}

	got = arrivals(t, Source{Kind: SourceScript, Permits: 2, Key: "k", Script: []Arrival{
		{At: 1 * ms}, {At: 1 * ms, Permits: 5}, {At: 7 * ms, Key: "other"}, {At: 2 * sec},
	}}, sec)
	require.Len(t, got, 3, "the arrival after the horizon is dropped")
	assert.Equal(t, arrival{at: 1e6, permits: 2, key: "k"}, got[0])
	assert.Equal(t, arrival{at: 1e6, permits: 5, key: "k"}, got[1])
	assert.Equal(t, arrival{at: 7e6, permits: 2, key: "other"}, got[2])
}

// Overlapping bursts (a spread burst still going when the next starts) must still come out in
// time order: the lane's clock cannot go backwards.
func TestOverlappingBurstsStayInOrder(t *testing.T) {
	src := Source{Kind: SourceBursts, Bursts: []Burst{{At: 0, Count: 10, Spread: 100 * ms}, {At: 45 * ms, Count: 2}}}
	got := arrivals(t, src, sec)
	require.Len(t, got, 12)
	sc := &Scenario{Horizon: sec, Sources: []Source{src}, Lanes: stacks(t, "token-bucket:capacity=100,rate=100/1s")}
	res := run(t, sc)
	assert.Equal(t, int64(12), res.Lanes[0].Totals.Admitted)
}

func TestOnOffOnlyDuringOnPhases(t *testing.T) {
	for _, poisson := range []bool{false, true} {
		got := arrivals(t, Source{Kind: SourceOnOff, Rate: 100, On: sec, Off: 2 * sec, Poisson: poisson}, 15*sec)
		for _, a := range got {
			phase := a.at % int64(3*sec)
			assert.Less(t, phase, int64(sec), "arrival at %v is in an off phase", time.Duration(a.at))
		}
		if !poisson {
			assert.Len(t, got, 500, "5 on phases × 100")
		} else {
			assert.InDelta(t, 500, len(got), 5*math.Sqrt(500))
		}
	}
}

func TestRampCountIsTheIntegral(t *testing.T) {
	for _, tc := range []struct{ r0, r1 float64 }{{10, 110}, {110, 10}, {0, 100}, {100, 0}, {50, 50}} {
		got := arrivals(t, Source{Kind: SourceRamp, Rate: tc.r0, RateTo: tc.r1, From: sec, Until: 11 * sec}, 20*sec)
		want := (tc.r0 + tc.r1) / 2 * 10
		assert.InDelta(t, want, len(got), 1, "ramp %v→%v", tc.r0, tc.r1)
		if len(got) > 0 {
			assert.GreaterOrEqual(t, got[0].at, int64(sec))
			assert.Less(t, got[len(got)-1].at, int64(11*sec))
		}
	}
	// Rising ramp: the gaps shrink.
	got := arrivals(t, Source{Kind: SourceRamp, Rate: 10, RateTo: 110}, 10*sec)
	require.Greater(t, len(got), 100)
	assert.Greater(t, got[1].at-got[0].at, got[len(got)-1].at-got[len(got)-2].at)
}

func TestSineCountIsMeanTimesDuration(t *testing.T) {
	got := arrivals(t, Source{Kind: SourceSine, Rate: 80, Amplitude: 60, Period: 10 * sec}, 30*sec)
	assert.InDelta(t, 80*30, len(got), 1)
	// More arrivals in the first half-period (sine above the mean) than in the second.
	var first, second int
	for _, a := range got {
		switch {
		case a.at < int64(5*sec):
			first++
		case a.at < int64(10*sec):
			second++
		}
	}
	assert.InDelta(t, 400+60*10/math.Pi, first, 2) // ∫₀⁵ (80 + 60 sin(2πt/10)) = 400 + 600/π
	assert.InDelta(t, 400-60*10/math.Pi, second, 2)
	// Amplitude equal to the mean: the rate touches 0; still terminates with the right count.
	got = arrivals(t, Source{Kind: SourceSine, Rate: 20, Amplitude: 20, Period: 4 * sec}, 8*sec)
	assert.InDelta(t, 160, len(got), 1)
	poisson := arrivals(t, Source{Kind: SourceSine, Rate: 80, Amplitude: 60, Period: 10 * sec, Poisson: true}, 100*sec)
	assert.InDelta(t, 8000, len(poisson), 5*math.Sqrt(8000))
}

func TestTraceSourceReadsCSV(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "trace.csv")
	require.NoError(t, os.WriteFile(file, []byte("t_ns,permits,key\n0,1,a\n5000000,3,b\n5000000,,c\n2000000000,1,late\n"), 0o644))
	got := arrivals(t, Source{Kind: SourceTrace, TraceFile: file, From: 10 * ms}, sec)
	require.Len(t, got, 3)
	assert.Equal(t, arrival{at: 10e6, permits: 1, key: "a"}, got[0])
	assert.Equal(t, arrival{at: 15e6, permits: 3, key: "b"}, got[1])
	assert.Equal(t, arrival{at: 15e6, permits: 1, key: "c"}, got[2])

	data := arrivals(t, Source{Kind: SourceTrace, TraceData: "t\n0.5\n0.75\n"}, sec)
	require.Len(t, data, 2)
	assert.Equal(t, int64(500*ms), data[0].at)

	_, err := newStream(Source{Kind: SourceTrace, TraceFile: filepath.Join(dir, "missing.csv")}, 0, 1, sec)
	assert.ErrorContains(t, err, "sources[0].file")

	sc := &Scenario{Horizon: sec, Sources: []Source{{Kind: SourceTrace, TraceData: "t_ns\n5\n3\n"}}, Lanes: stacks(t, "concurrency:max=1")}
	_, err = runErr(sc)
	assert.ErrorContains(t, err, "line 3")
}

func TestFromUntilRespected(t *testing.T) {
	for _, src := range []Source{
		{Kind: SourceConstant, Rate: 1000},
		{Kind: SourcePoisson, Rate: 1000},
		{Kind: SourceOnOff, Rate: 1000, On: 100 * ms, Off: 100 * ms},
		{Kind: SourceRamp, Rate: 100, RateTo: 2000},
		{Kind: SourceSine, Rate: 1000, Amplitude: 500, Period: sec},
		{Kind: SourceBursts, Bursts: []Burst{{At: 0, Count: 10}, {At: 3 * sec, Count: 10, Spread: 2 * sec}}},
	} {
		src.From, src.Until = sec, 4*sec
		got := arrivals(t, src, 10*sec)
		require.NotEmpty(t, got, src.Kind)
		assert.GreaterOrEqual(t, got[0].at, int64(sec), src.Kind)
		assert.Less(t, got[len(got)-1].at, int64(4*sec), src.Kind)
	}
	// Until beyond the horizon: the horizon wins.
	got := arrivals(t, Source{Kind: SourceConstant, Rate: 10, Until: 100 * sec}, sec)
	assert.Len(t, got, 10)
}

// Every source offers the same arrivals for the same seed, and a different seed changes
// a Poisson source.
func TestStreamsAreSeeded(t *testing.T) {
	a := arrivals(t, Source{Kind: SourcePoisson, Rate: 100}, sec)
	b := arrivals(t, Source{Kind: SourcePoisson, Rate: 100}, sec)
	assert.Equal(t, a, b)
	st, err := newStream(Source{Kind: SourcePoisson, Rate: 100}, 0, 8, sec)
	require.NoError(t, err)
	first, _, _ := st.next()
	assert.NotEqual(t, a[0].at, first.at)
}

// The extremes validation accepts run, and no derived time overflows: a source at 1e-10/s
// (its next arrival 317 years away), a burst whose spread × count overflows int64 and an
// on-off cycle of 10^8 × 146 years used to stop with the clock's "cannot move backwards" or
// offer arrivals at wrapped times.
func TestTheLargestAcceptedValuesRun(t *testing.T) {
	long := MaxTime - 1
	for _, tc := range []struct {
		name    string
		sc      func(sc *Scenario)
		offered int64
	}{
		{"horizon just below 2^62", func(sc *Scenario) { sc.Horizon = long; sc.Sources[0] = scriptFrom(0, 0, sec, long-1) }, 3},
		{"constant at 1e-10/s", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceConstant, Rate: 1e-10} }, 1},
		{"constant at 1e-10/s over 146 years", func(sc *Scenario) { // the second arrival is 317 years in
			sc.Horizon = long
			sc.Sources[0] = Source{Kind: SourceConstant, Rate: 1e-10}
		}, 1},
		{"poisson at 1e-10/s", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourcePoisson, Rate: 1e-10} }, -1},
		{"poisson at 1e-10/s over 146 years", func(sc *Scenario) {
			sc.Horizon = long
			sc.Sources[0] = Source{Kind: SourcePoisson, Rate: 1e-10}
		}, -1},
		{"ramp from 1e-10/s", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceRamp, Rate: 1e-10, RateTo: 1e-10} }, 1},
		{"sine at 1e-10/s", func(sc *Scenario) {
			sc.Sources[0] = Source{Kind: SourceSine, Rate: 1e-10, Amplitude: 1e-10, Period: long, Poisson: true}
		}, -1},
		{"on-off with the longest off", func(sc *Scenario) {
			sc.Horizon = long
			sc.Sources[0] = Source{Kind: SourceOnOff, Rate: 10, On: sec, Off: long}
		}, 10},
		{"on-off with a 1ns on and the longest off", func(sc *Scenario) { // 10^8 cycles of 146 years
			sc.Horizon = long
			sc.Sources[0] = Source{Kind: SourceOnOff, Rate: 10, On: 1, Off: long}
		}, 1},
		{"on-off, long off, late start", func(sc *Scenario) {
			sc.Horizon = long
			sc.Sources[0] = Source{Kind: SourceOnOff, Rate: 10, On: sec, Off: long, From: long - 500*ms}
		}, 5},
		{"burst whose spread × count overflows", func(sc *Scenario) {
			sc.Horizon = long
			sc.Sources[0] = Source{Kind: SourceBursts, Bursts: []Burst{{At: 0, Count: 10, Spread: long}}}
		}, 10},
		{"burst spread past the horizon", func(sc *Scenario) {
			sc.Sources[0] = Source{Kind: SourceBursts, From: long / 2, Bursts: []Burst{{At: long / 2, Count: 3, Spread: long}}}
		}, 0},
		{"script near the end of the range", func(sc *Scenario) {
			sc.Horizon = long
			sc.Sources[0] = scriptFrom(0, long-2, long-1)
			sc.Sources[0].From = 1
		}, 1},
		{"uniform service up to the longest time", func(sc *Scenario) {
			sc.Downstream.Phases[0].Service = Distribution{Kind: DistUniform, Min: 0, Max: long}
		}, 100},
		{"backoff with jitter at the longest delay", func(sc *Scenario) {
			sc.Sources[0] = Source{Kind: SourceBursts, Bursts: []Burst{{Count: 10}}}
			sc.Client = Client{Policy: PolicyBackoff, Delay: long, Jitter: true, MaxAttempts: 5}
		}, 10},
		{"backoff without a cap, doubling past the range", func(sc *Scenario) {
			sc.Horizon = long
			sc.Sources[0] = Source{Kind: SourceBursts, Bursts: []Burst{{Count: 10}}}
			sc.Client = Client{Policy: PolicyBackoff, Delay: long / 4, Jitter: true, MaxAttempts: 5}
		}, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := validScenario(t)
			tc.sc(sc)
			require.NoError(t, sc.Validate())
			res, err := runErr(sc)
			require.NoError(t, err)
			tot := res.Lanes[0].Totals
			if tc.offered < 0 { // random: a handful at most
				assert.LessOrEqual(t, tot.Offered, int64(2))
			} else {
				assert.Equal(t, tc.offered, tot.Offered)
			}
			assert.Equal(t, tot.Offered, tot.OfferedPermits)
		})
	}
}
