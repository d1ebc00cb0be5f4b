package limiters

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = time.Millisecond

// sample is one input to a rule: Netflix's onSample(rtt, inflight, didDrop).
type sample struct {
	rtt      time.Duration
	inflight int
	drop     bool
	want     int    // the limit after it
	why      string // the step of the rule it exercises
}

func newAdaptiveFor(t testing.TB, spec string) *AdaptiveLimiter {
	t.Helper()
	l, err := Parse(spec, zeroClock{})
	require.NoError(t, err)
	return l.(*AdaptiveLimiter)
}

// runSamples feeds each sample to the limiter's rule as its window (or every sample, with no
// window) would, and checks the limit after each.
func runSamples(t *testing.T, l *AdaptiveLimiter, samples []sample) {
	t.Helper()
	for i, s := range samples {
		l.mu.Lock()
		l.hear(s.rtt, s.inflight, s.drop)
		l.mu.Unlock()
		require.Equal(t, s.want, l.Limit(), "sample %d (%v, %d in flight, drop %v): %s", i+1, s.rtt, s.inflight, s.drop, s.why)
	}
}

func repeat(n int, s sample, from int) []sample {
	out := make([]sample, n)
	for i := range out {
		out[i] = s
		out[i].want = from + i
	}
	return out
}

// TestAIMDStepByStep: AIMDLimit._update with its defaults (20, 20, 200, 0.9, 5s), values
// worked from the Java source.
func TestAIMDStepByStep(t *testing.T) {
	l := newAdaptiveFor(t, "aimd:initial=20,min=20,max=200")
	steps := repeat(20, sample{rtt: 10 * ms, inflight: 20, why: "inflight·2 ≥ limit: +1"}, 21)
	steps = append(steps,
		sample{10 * ms, 40, true, 36, "drop: ⌊40·0.9⌋"},
		sample{10 * ms, 10, false, 36, "10·2 < 36: app-limited, unchanged"},
		sample{6 * time.Second, 36, false, 32, "rtt 6s > timeout 5s counts as a drop: ⌊36·0.9⌋ = 32"},
		sample{10 * ms, 18, false, 33, "18·2 ≥ 32: +1"},
		sample{10 * ms, 1, true, 29, "⌊33·0.9⌋ = 29"},
		sample{10 * ms, 1, true, 26, "⌊29·0.9⌋ = 26"},
		sample{10 * ms, 1, true, 23, "⌊26·0.9⌋ = 23"},
		sample{10 * ms, 1, true, 20, "⌊23·0.9⌋ = 20"},
		sample{10 * ms, 1, true, 20, "⌊20·0.9⌋ = 18, held at min 20"},
	)
	runSamples(t, l, steps)
	// At max: +1 is clamped.
	top := newAdaptiveFor(t, "aimd:initial=200,min=20,max=200")
	runSamples(t, top, []sample{{10 * ms, 200, false, 200, "201 clamped to max 200"}})
}

// TestVegasStepByStep: VegasLimit._update with its defaults (20, max 1000, smoothing 1,
// probe 30: no probe within these samples), values worked from the Java source.
func TestVegasStepByStep(t *testing.T) {
	l := newAdaptiveFor(t, "vegas:initial=20,max=1000")
	runSamples(t, l, []sample{
		{10 * ms, 20, false, 20, "the first sample is rtt_noload"},
		{20 * ms, 20, false, 19, "queue ⌈20·(1−10/20)⌉ = 10 > β 6: −log 1"},
		{11 * ms, 19, false, 20, "queue ⌈19·(1−10/11)⌉ = 2 < α 3: +1"},
		{10 * ms, 20, false, 26, "queue 0 ≤ threshold 1: +β 6"},
		{10 * ms, 10, false, 26, "10·2 < 26: app-limited"},
		{10 * ms, 26, true, 25, "drop: −log 1"},
		{5 * ms, 25, false, 25, "5ms < rtt_noload: the new rtt_noload, nothing else"},
		{15 * ms, 25, false, 24, "queue ⌈25·(1−5/15)⌉ = 17 > 6: −1"},
		{6 * ms, 24, false, 24, "queue ⌈24·(1−5/6)⌉ = 4, between α 3 and β 6: unchanged"},
	})
	assert.Equal(t, 5*ms, l.Snapshot(0).RTTNoLoad)
	// At 150 the log is 2: α 6, β 12, threshold 2.
	big := newAdaptiveFor(t, "vegas:initial=150,max=1000")
	runSamples(t, big, []sample{
		{10 * ms, 150, false, 150, "rtt_noload"},
		{10 * ms, 150, false, 162, "queue 0 ≤ 2: +β 12"},
		{12 * ms, 162, false, 160, "queue ⌈162·(1−10/12)⌉ = 27 > β 12: −2"},
	})
	// Smoothing 0.5: half of each step.
	smooth := newAdaptiveFor(t, "vegas:initial=20,max=1000,smoothing=0.5")
	runSamples(t, smooth, []sample{
		{10 * ms, 20, false, 20, "rtt_noload"},
		{20 * ms, 20, false, 19, "L' = 19, L = 0.5·20 + 0.5·19 = 19.5"},
		{10 * ms, 20, false, 22, "L' = 19.5 + 6 = 25.5, L = 22.5"},
	})
}

// TestVegasProbes: with probe=1 the probe comes every jitter·1·L samples, jitter in [0.5, 1):
// at L = 20, every 10 to 20 samples; it takes the sample as rtt_noload, however high.
func TestVegasProbes(t *testing.T) {
	l := newAdaptiveFor(t, "vegas:initial=20,max=20,probe=1")
	since := 0
	var gaps []int
	for i := range 400 {
		rtt := 10 * ms
		if i >= 200 {
			rtt = 50 * ms // the server slowed
		}
		before := l.Probes()
		l.mu.Lock()
		l.hear(rtt, 20, false)
		l.mu.Unlock()
		since++
		if l.Probes() > before {
			gaps = append(gaps, since)
			since = 0
			assert.Equal(t, rtt, l.Snapshot(0).RTTNoLoad, "a probe takes its sample as rtt_noload")
		}
	}
	require.NotEmpty(t, gaps)
	for _, g := range gaps {
		assert.True(t, g >= 10 && g <= 20, "probe gap %d samples: jitter·L is in [10, 20)", g)
	}
}

// TestGradientStepByStep: GradientLimit._update with its defaults (50, 1, 1000, smoothing
// 0.2, tolerance 2, backoff 0.9), values worked from the Java source; then its probe, which
// with probe=1 comes every other sample (countdown 1 + U{0}).
func TestGradientStepByStep(t *testing.T) {
	l := newAdaptiveFor(t, "gradient:initial=50,min=1,max=1000")
	runSamples(t, l, []sample{
		{10 * ms, 50, false, 57, "gradient min(1, 2·10/10) = 1: 50 + queue 7"},
		{30 * ms, 57, false, 54, "gradient 2·10/30 = 0.667: L' = 45 < 57, smoothed 0.8·57 + 0.2·45 = 54.6"},
		{10 * ms, 20, false, 54, "20 < 54.6/2: app-limited"},
		{10 * ms, 54, true, 53, "drop: L' = 54.6·0.9 = 49.14, smoothed 0.8·54.6 + 0.2·49.14 = 53.508"},
	})
	assert.Equal(t, 10*ms, l.Snapshot(0).RTTNoLoad)
	p := newAdaptiveFor(t, "gradient:initial=50,min=1,max=1000,probe=1")
	runSamples(t, p, []sample{
		{10 * ms, 50, false, 57, "as above"},
		{10 * ms, 57, false, 7, "probe: L = max(min 1, queue ⌊√57⌋ = 7), the minimum forgotten"},
		{20 * ms, 7, false, 11, "the minimum is now 20ms: gradient 1, 7 + queue max(4, ⌊√7⌋) = 11"},
		{20 * ms, 11, false, 4, "probe: max(1, queue max(4, ⌊√11⌋ = 3)) = 4"},
	})
	assert.Equal(t, 2, p.Probes())
}

// TestGradient2StepByStep: Gradient2Limit._update with its defaults (20, 20, 200, smoothing
// 0.2, tolerance 1.5, queue 4, long window 600), values worked from the Java source.
func TestGradient2StepByStep(t *testing.T) {
	l := newAdaptiveFor(t, "gradient2:initial=20,min=20,max=200")
	var steps []sample
	for i, want := range []int{20, 21, 22, 23, 24, 24, 25, 26, 27, 28} { // 20.8, 21.6, …, 28.0
		steps = append(steps, sample{10 * ms, 20 + i, false, want, "gradient 1: L + 0.2·4"})
	}
	steps = append(steps,
		sample{30 * ms, 28, false, 26, "long 10.067ms, gradient 0.503: 0.8·28 + 0.2·(28·0.503 + 4) = 26.02"},
		sample{10 * ms, 5, false, 26, "5 < 26/2: app-limited"},
		sample{10 * ms, 26, true, 26, "drops are not read: gradient 1 (long 10.07ms ≈ rtt) adds 0.8, 26.8"},
	)
	runSamples(t, l, steps)
	// The 0.95 decay: ten samples of 100ms, then one of 10ms: long = 99.70ms, 9.97 times the
	// sample, so it is cut to 94.72ms; the gradient used the 99.70ms (1 either way).
	d := newAdaptiveFor(t, "gradient2:initial=20,min=20,max=200")
	for range 10 {
		runSamples(t, d, []sample{{100 * ms, 0, false, 20, "app-limited: the average still moves"}})
	}
	runSamples(t, d, []sample{{10 * ms, 0, false, 20, "app-limited"}})
	assert.Equal(t, time.Duration(94715474), d.Snapshot(0).RTTNoLoad)
}

// TestWindowedSampling: WindowedLimit's rules with window=1s, window_size=10: samples under
// 100µs are dropped; the first sample closes an empty window (nextUpdateTime starts at 0);
// a window of fewer than 10 samples is discarded; a full one gives the rule its average RTT
// (integer division), its most in flight and whether any dropped.
func TestWindowedSampling(t *testing.T) {
	l := newAdaptiveFor(t, "aimd:initial=20,min=10,max=200,window=1s")
	require.Equal(t, Admitted, l.AcquireAt(0, 5)) // 5 in flight for every sample below
	l.ObserveAt(10*ms, 1, 50*time.Microsecond, true)
	assert.Equal(t, time.Duration(0), l.next, "a sample under 100µs is dropped before any window")
	l.ObserveAt(10*ms, 1, 10*ms, false)
	assert.Equal(t, 10*ms+time.Second, l.next, "the first sample closes the empty first window: next = 10ms + min(max(2·10ms, 1s), 1s)")
	assert.Equal(t, 20, l.Limit(), "a window of 1 sample is discarded, drop and all")
	for i := range 8 {
		l.ObserveAt(20*ms+time.Duration(i)*ms, 1, 10*ms, true)
	}
	l.ObserveAt(1010*ms, 1, 10*ms, true) // not past 1.01s: still the same window (9 samples)
	assert.Equal(t, 20, l.Limit())
	l.ObserveAt(1011*ms, 1, 19*ms, false) // the 10th, past the end: the window closes
	assert.Equal(t, 18, l.Limit(), "10 samples with a drop: ⌊20·0.9⌋ = 18")
	st := l.Snapshot(0)
	assert.Equal(t, 10900*time.Microsecond, st.RTT, "the rule heard the average (9·10ms + 19ms)/10")
	assert.Equal(t, 1011*ms+time.Second, l.next)
	// The next window: 10 answers, no drop, with 5 in flight: 5·2 < 18, app-limited.
	for i := range 10 {
		l.ObserveAt(1100*ms+time.Duration(i)*ms, 1, 10*ms, true)
	}
	l.ObserveAt(2020*ms, 1, 10*ms, true)
	assert.Equal(t, 18, l.Limit())
}

// TestAdaptiveAdmission: the limit is a bulkhead's max: in flight + n ≤ limit, refused past
// it, Never past the spec's max; Release panics on over-release and changes nothing.
func TestAdaptiveAdmission(t *testing.T) {
	l := newAdaptiveFor(t, "aimd:initial=3,min=1,max=10")
	assert.Equal(t, Admitted, l.AcquireAt(0, 2))
	assert.Equal(t, Rejected, l.AcquireAt(0, 2), "2 + 2 > 3")
	assert.Equal(t, Admitted, l.AcquireAt(0, 1))
	assert.Equal(t, Never, l.AcquireAt(0, 11), "more than max can ever be the limit")
	assert.Equal(t, Invalid, l.AcquireAt(0, 0))
	assert.Equal(t, 0, l.AvailableAt(0))
	assert.PanicsWithValue(t, "limiters: aimd: Release(4) with 3 in flight", func() { l.Release(4) })
	assert.Equal(t, 3, l.InFlight())
	// The limit falls below what is held: nothing is taken back, nothing more admitted.
	l.ObserveAt(ms, 1, ms, false) // drop: ⌊3·0.9⌋ = 2
	assert.Equal(t, 2, l.Limit())
	assert.Equal(t, 0, l.AvailableAt(0), "available is never negative")
	l.Release(1)
	assert.Equal(t, Rejected, l.AcquireAt(0, 1), "2 held, limit 2")
	st := l.Snapshot(5 * ms)
	assert.Equal(t, State{Kind: KindAIMD, At: 5 * ms, Available: 0, MaxPermits: 10, InFlight: 2, Max: 2, RTT: ms}, st)
	assert.Equal(t, "2 of the limit 2 in flight (last RTT 1ms); 1 more would pass the limit until permits are released or the limit grows",
		st.Explain(1, Rejected))
	js, err := st.MarshalJSON()
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"aimd","at_ns":5000000,"available":0,"max_permits":10,"in_flight":2,"max":2,"rtt_ns":1000000,"rtt_noload_ns":0,"probes":0}`, string(js))
}

// TestAdaptiveValidation: each kind refuses what Netflix's builders refuse, by field.
func TestAdaptiveValidation(t *testing.T) {
	for spec, want := range map[string]string{
		"aimd:initial=5,min=10,max=200":                    "initial=5: must be between min=10 and max=200",
		"aimd:initial=20,min=20,max=200,backoff=1":         "backoff=1: must be in [0.5, 1)",
		"aimd:initial=20,min=20,max=200,window=50ms":       "window=50ms: must be at least 100ms",
		"aimd:window=1s,window_size=5":                     "window_size=5: must be at least 10",
		"vegas:initial=20,max=1000,smoothing=0":            "smoothing=0: must be in (0, 1]",
		"gradient:initial=3,min=1,max=3":                   "max=3: must be at least 4",
		"gradient:initial=50,min=1,max=1000,tolerance=0.5": "tolerance=0.5: must be at least 1",
		"gradient2:min=30,max=20":                          "min=30: must be at most max=20",
	} {
		s, err := ParseSpec(spec)
		require.NoError(t, err, spec)
		err = s.Validate()
		require.Error(t, err, spec)
		assert.Contains(t, err.Error(), want, spec)
	}
	// Defaults print back short: a field at its default is left out.
	s, err := ParseSpec("vegas")
	require.NoError(t, err)
	assert.Equal(t, "vegas:initial=20,max=1000", s.String())
	s, err = ParseSpec("gradient:initial=50,min=1,max=1000,window=1s,seed=7")
	require.NoError(t, err)
	assert.Equal(t, "gradient:initial=50,min=1,max=1000,seed=7,window=1s", s.String())
}

// TestAdaptiveUnderGoroutines: 16 goroutines acquire, observe and release against each kind
// while the limit moves; in flight never passes the limit a decision read (checked by the
// holders' count never passing the spec's max and by the final state), and everything
// balances. Run under -race.
func TestAdaptiveUnderGoroutines(t *testing.T) {
	for _, spec := range []string{"aimd:initial=20,min=5,max=40", "vegas:initial=20,max=40,probe=1",
		"gradient:initial=20,min=4,max=40,probe=3", "gradient2:initial=20,min=5,max=40,window=100ms"} {
		l := newAdaptiveFor(t, spec)
		var wg sync.WaitGroup
		var mu sync.Mutex
		held, most := 0, 0
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 2000 {
					if l.AcquireAt(0, 1) != Admitted {
						continue
					}
					mu.Lock()
					held++
					most = max(most, held)
					mu.Unlock()
					rtt := time.Duration(1+(g+i)%7) * ms
					l.ObserveAt(time.Duration(i)*ms, 1, rtt, (g+i)%13 != 0)
					mu.Lock()
					held--
					mu.Unlock()
					l.Release(1)
				}
			}()
		}
		wg.Wait()
		assert.LessOrEqual(t, most, 40, spec)
		assert.Equal(t, 0, l.InFlight(), spec)
		assert.GreaterOrEqual(t, l.Limit(), 1, spec)
		assert.LessOrEqual(t, l.Limit(), 40, spec)
	}
}

func ExampleAdaptiveLimiter() {
	l, _ := Parse("aimd:initial=20,min=10,max=200", NewMonotonicClock())
	a := l.(*AdaptiveLimiter)
	for range 20 {
		a.AcquireAt(0, 1)
	}
	fmt.Println(a.AcquireAt(0, 1), a.Limit())
	a.ObserveAt(5*time.Millisecond, 1, 4*time.Millisecond, true) // 20 in flight use the limit: +1
	a.Release(1)
	fmt.Println(a.Limit(), a.Available())
	a.ObserveAt(9*time.Millisecond, 1, 8*time.Millisecond, false) // a failure: ×0.9
	a.Release(1)
	fmt.Println(a.Limit(), a.Available())
	// Output:
	// rejected 20
	// 21 2
	// 18 0
}

func BenchmarkAdaptiveAcquireRelease(b *testing.B) {
	for _, spec := range []string{"aimd:initial=1000,min=20,max=2000", "gradient2:initial=1000,min=20,max=2000"} {
		b.Run(spec, func(b *testing.B) {
			l := newAdaptiveFor(b, spec)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if l.AcquireAt(0, 1) == Admitted {
						l.ObserveAt(0, 1, ms, true)
						l.Release(1)
					}
				}
			})
		})
	}
}
