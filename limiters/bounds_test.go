package limiters

// Properties every trace must have, checked on random traces and on saturating demand:
// the token bucket's interval bound, the leaky bucket's spacing, no drift over an hour, the
// sliding and fixed windows' limits (and their documented imprecisions), and the warm-up
// ramp's integral.

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratelab/ratelab/virtualclock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomAdmissions drives l with ops random requests (sizes 1…maxN, gaps 0…4·scale with
// bursts of simultaneous requests) and returns the time of every admitted permit, in order.
func randomAdmissions(l Limiter, seed uint64, ops int, scale time.Duration, start time.Duration) []time.Duration {
	r := rand.New(rand.NewPCG(seed, 99))
	var times []time.Duration
	now := start
	for range ops {
		switch p := r.IntN(10); {
		case p < 3: // same instant
		case p < 9:
			now += time.Duration(r.Int64N(int64(scale) + 1))
		default:
			now += time.Duration(r.Int64N(4*int64(scale) + 1))
		}
		n := 1
		if r.IntN(4) == 0 {
			n = 1 + r.IntN(l.MaxPermits())
		}
		if l.AcquireAt(now, n) == Admitted {
			for range n {
				times = append(times, now)
			}
		}
	}
	return times
}

// maxInWindow is the largest number of admission times inside any half-open interval of
// length L: a two-pointer sweep, since the fullest interval can be taken to start at an
// admission.
func maxInWindow(times []time.Duration, L time.Duration) int {
	if L <= 0 {
		return 0
	}
	best, i := 0, 0
	for j := range times {
		for times[j]-times[i] >= L {
			i++
		}
		best = max(best, j-i+1)
	}
	return best
}

func ceilDiv(a, b time.Duration) int { return int((a + b - 1) / b) }

// In any half-open interval of length L a token bucket admits at most capacity + ⌈L/T⌉ − 1.
func TestTokenBucketIntervalBound(t *testing.T) {
	cases := []struct {
		capacity int
		rate     Rate
	}{
		{3, PerSecond(100)},
		{1, PerSecond(100)},                        // capacity 1: at most ⌈L/T⌉
		{10, Rate{7, 100 * time.Millisecond}},      // T = 14,285,715ns, not whole
		{50, Rate{3, time.Second}},                 // T = 333,333,334ns
		{5, Rate{1_000_000, 7 * time.Millisecond}}, // T = 7ns
	}
	for i, c := range cases {
		b, err := NewTokenBucket(c.capacity, c.rate, virtualclock.New())
		require.NoError(t, err)
		T := c.rate.Interval()
		times := randomAdmissions(b, uint64(i), 20_000, T, 0)
		require.NotEmpty(t, times)
		for _, L := range []time.Duration{1, T / 2, T, T + 1, 2*T - 1, 3 * T, 10*T + 1, 100 * T, 1000*T + T/3} {
			if L <= 0 {
				continue
			}
			bound := c.capacity + ceilDiv(L, T) - 1
			assert.LessOrEqual(t, maxInWindow(times, L), bound, "%s: interval of length %v", b, L)
		}
	}
}

// The bound is reached: saturating demand from a full bucket admits exactly
// capacity + ⌈L/T⌉ − 1 in [0, L).
func TestTokenBucketIntervalBoundIsTight(t *testing.T) {
	b, err := NewTokenBucket(3, Rate{7, 100 * time.Millisecond}, virtualclock.New())
	require.NoError(t, err)
	T := b.rate.Interval()
	var times []time.Duration
	for now := time.Duration(0); now < 200*T; now++ {
		for b.AcquireAt(now, 1) == Admitted {
			times = append(times, now)
		}
		if w, _ := b.RetryAfterAt(now, 1); w > 1 {
			now += w - 1 // skip to the next due time
		}
	}
	for _, L := range []time.Duration{1, T, T + 1, 10 * T, 10*T + 1, 150 * T} {
		assert.Equal(t, 3+ceilDiv(L, T)-1, maxInWindow(times, L), "L = %v", L)
	}
}

// A leaky bucket's consecutive admissions are at least T apart, whatever the demand.
func TestLeakyBucketSpacing(t *testing.T) {
	for i, rate := range []Rate{PerSecond(100), {7, 100 * time.Millisecond}, {3, time.Second}, {1_000_000, 7 * time.Millisecond}} {
		l, err := NewLeakyBucket(rate, virtualclock.New())
		require.NoError(t, err)
		T := rate.Interval()
		times := randomAdmissions(l, uint64(i), 20_000, T, 0)
		require.Greater(t, len(times), 1000)
		for k := 1; k < len(times); k++ {
			require.GreaterOrEqual(t, times[k]-times[k-1], T, "%s: admissions %d and %d", l, k-1, k)
		}
		assert.Equal(t, 1, maxInWindow(times, T), "no interval of length T holds two")
	}
}

// No drift: an hour of saturating demand (a request at every due time, found with
// RetryAfterAt) never admits more than capacity + rate·elapsed, checked at every admission,
// and by the end admits at least capacity + rate·elapsed − 2: T is rounded up to a whole ns,
// which costs at most one permit an hour at these rates (Rate.Interval's doc), never one more.
func TestNoDrift(t *testing.T) {
	for _, rate := range []Rate{{3, time.Second}, {7, 100 * time.Millisecond}} {
		for _, capacity := range []int{1, 5} {
			clock := virtualclock.New()
			tb, err := NewTokenBucket(capacity, rate, clock)
			require.NoError(t, err)
			lb, err := NewLeakyBucket(rate, clock)
			require.NoError(t, err)
			wu, err := NewWarmUpTokenBucket(capacity, rate, time.Nanosecond, clock) // warm from 1ns on
			require.NoError(t, err)
			for _, l := range []RateLimiter{tb, lb, wu} {
				burst := l.MaxPermits()
				admitted := 0
				start := time.Duration(0)
				if l == wu {
					start = 1
				}
				now := start
				for now-start <= time.Hour {
					if l.AcquireAt(now, 1) == Admitted {
						admitted++
						// admitted ≤ burst + permits·elapsed/window, in exact integers.
						if int64(admitted-burst)*int64(rate.Window) > int64(rate.Permits)*int64(now-start) {
							t.Fatalf("%s: %d admitted by %v: more than the rate", l, admitted, now-start)
						}
						continue
					}
					w, ok := l.RetryAfterAt(now, 1)
					if !ok || w <= 0 {
						t.Fatalf("%s: rejected at %v but RetryAfterAt = %v, %v", l, now, w, ok)
					}
					now += w
				}
				ideal := float64(burst) + float64(rate.Permits)*float64(time.Hour)/float64(rate.Window)
				assert.GreaterOrEqual(t, float64(admitted), ideal-2, "%s: too conservative over an hour", l)
				assert.LessOrEqual(t, float64(admitted), ideal, "%s", l)
			}
		}
	}
	// The numbers in Rate.Interval's doc: 3/1s admits 10,799 after the burst in an hour.
	b, err := NewTokenBucket(1, PerSecond(3), virtualclock.New())
	require.NoError(t, err)
	assert.Equal(t, time.Duration(333_333_334), b.rate.Interval())
	assert.Equal(t, time.Duration(14_285_715), Rate{7, 100 * time.Millisecond}.Interval())
	admitted := 0
	for k := time.Duration(0); k*333_333_334 <= time.Hour; k++ {
		if b.AcquireAt(k*333_333_334, 1) == Admitted {
			admitted++
		}
	}
	assert.Equal(t, 1+10_799, admitted)
}

// In any half-open interval of length window − slotLength (and, exactly, of length
// window − slotLength + 1ns) a sliding window admits at most limit.
func TestSlidingWindowBound(t *testing.T) {
	cases := []struct {
		limit  int
		window time.Duration
		slots  int
	}{
		{100, time.Second, 10},
		{7, 100 * time.Millisecond, 4},
		{20, time.Second, 1}, // one slot: a fixed window
		{5, 60 * time.Millisecond, 60},
	}
	for i, c := range cases {
		s, err := NewSlidingWindow(c.limit, c.window, c.slots, virtualclock.New())
		require.NoError(t, err)
		slot := c.window / time.Duration(c.slots)
		times := randomAdmissions(s, uint64(i), 30_000, c.window/time.Duration(c.limit)*3/2, 0)
		require.NotEmpty(t, times)
		assert.LessOrEqual(t, maxInWindow(times, c.window-slot), c.limit, "%s: window − slot", s)
		assert.LessOrEqual(t, maxInWindow(times, c.window-slot+1), c.limit, "%s: window − slot + 1ns", s)
		// And a window's length is where the one-slot imprecision shows: more than limit.
		if c.slots > 1 {
			assert.Greater(t, maxInWindow(times, c.window), c.limit, "%s: the imprecision is real", s)
		}
	}
}

// The one-slot imprecision, with the numbers of SlidingWindow's doc comment: limit 100 per
// 1s in 10 slots, 100 at 99.999999ms (the last ns of slot 0) and 100 more at 1s (the instant
// slot 0 expires): 200 admitted 900.000001ms = window − slotLength + 1ns apart.
func TestSlidingWindowOneSlotImprecision(t *testing.T) {
	const ms = time.Millisecond
	s, err := NewSlidingWindow(100, time.Second, 10, virtualclock.New())
	require.NoError(t, err)
	steps := []struct {
		at   time.Duration
		n    int
		want Decision
	}{
		{100*ms - 1, 100, Admitted}, // the last ns of slot 0
		{100*ms - 1, 1, Rejected},
		{999_999_999, 1, Rejected}, // slot 0 is counted until slot 10 begins
		{time.Second, 100, Admitted},
		{time.Second, 1, Rejected},
	}
	for i, st := range steps {
		assert.Equal(t, st.want, s.AcquireAt(st.at, st.n), "step %d at %v", i, st.at)
	}
	assert.Equal(t, 900*ms+1, time.Second-(100*ms-1), "window − slotLength + 1ns apart")
	times := append(make([]time.Duration, 0, 200), make([]time.Duration, 100)...)
	for i := range 100 {
		times[i] = 100*ms - 1
		times = append(times, time.Second)
	}
	assert.Equal(t, 100, maxInWindow(times, 900*ms+1), "no half-open interval of window − slot + 1ns holds both bursts")
	assert.Equal(t, 200, maxInWindow(times, 900*ms+2), "one 1ns longer holds 2·limit")
	assert.Equal(t, 200, maxInWindow(times, 901*ms), "the doc's 200 within 901ms")
}

// A fixed window admits at most limit per aligned window.
func TestFixedWindowBound(t *testing.T) {
	for i, c := range []struct {
		limit  int
		window time.Duration
	}{{100, time.Second}, {7, 100 * time.Millisecond}, {1, time.Millisecond}} {
		f, err := NewFixedWindow(c.limit, c.window, virtualclock.New())
		require.NoError(t, err)
		times := randomAdmissions(f, uint64(i), 30_000, c.window/time.Duration(c.limit)*3/2, 0)
		perWindow := map[time.Duration]int{}
		for _, at := range times {
			perWindow[at/c.window]++
		}
		full := 0
		for w, n := range perWindow {
			require.LessOrEqual(t, n, c.limit, "%s: window %d", f, w)
			if n == c.limit {
				full++
			}
		}
		assert.Positive(t, full, "%s: the trace filled some windows", f)
	}
}

// The boundary attack: limit 100 per 1s, 100 at 0.999s and 100 at 1.000s — 200 within 1ms.
func TestFixedWindowBoundaryAttack(t *testing.T) {
	const ms = time.Millisecond
	f, err := NewFixedWindow(100, time.Second, virtualclock.New())
	require.NoError(t, err)
	steps := []struct {
		at   time.Duration
		n    int
		want Decision
	}{
		{999 * ms, 100, Admitted},
		{time.Second - 1, 1, Rejected}, // the first window is spent to its last ns
		{time.Second, 100, Admitted},
		{time.Second, 1, Rejected},
		{2*time.Second - 1, 1, Rejected}, // and so is the second
	}
	admitted := 0
	for i, st := range steps {
		d := f.AcquireAt(st.at, st.n)
		assert.Equal(t, st.want, d, "step %d", i)
		if d == Admitted {
			admitted += st.n
		}
	}
	assert.Equal(t, 200, admitted, "2·limit within 1ms around the boundary")
}

// Warm-up: cold burst ⌊capacity/3⌋ (at least 1), warm burst capacity, idle does not cool it,
// and capacity 1 is not starved while cold.
func TestWarmUpBursts(t *testing.T) {
	const P = 10 * time.Second
	burst := func(l Limiter, at time.Duration) int {
		n := 0
		for l.AcquireAt(at, 1) == Admitted {
			n++
		}
		return n
	}
	for _, c := range []struct{ capacity, cold int }{
		{10, 3}, {9, 3}, {3, 1}, {2, 1}, // capacity 2 < the cold factor: still 1
		{1, 1}, {100, 33},
	} {
		w, err := NewWarmUpTokenBucket(c.capacity, PerSecond(100), P, virtualclock.New())
		require.NoError(t, err)
		assert.Equal(t, c.cold, w.AvailableAt(0), "capacity %d: cold", c.capacity)
		assert.Equal(t, c.cold, burst(w, 0), "capacity %d: cold burst", c.capacity)
		// Idle until warm: age, not traffic, warms it.
		assert.Equal(t, c.capacity, burst(w, P), "capacity %d: warm burst after idling to P", c.capacity)
		// And idling on does not cool it down again.
		assert.Equal(t, c.capacity, burst(w, 100*P), "capacity %d: still warm after a long idle", c.capacity)
	}

	// Halfway the interval is 2T: the burst is ⌊capacity·T / 2T⌋, whatever happened before.
	w, err := NewWarmUpTokenBucket(10, PerSecond(100), P, virtualclock.New())
	require.NoError(t, err)
	assert.Equal(t, 5, w.AvailableAt(P/2))
	assert.Equal(t, 20*time.Millisecond, w.Snapshot(P/2).Interval)

	// Capacity 1 while cold: one permit every 3T, never starved.
	one, err := NewWarmUpTokenBucket(1, PerSecond(100), time.Hour, virtualclock.New())
	require.NoError(t, err)
	for k := range time.Duration(100) {
		require.Equal(t, Admitted, one.AcquireAt(k*30*time.Millisecond, 1), "permit %d", k)
		require.Equal(t, Rejected, one.AcquireAt(k*30*time.Millisecond, 1))
	}

	// Age is measured from the clock's reading at construction.
	clock, err := virtualclock.NewAt(time.Hour)
	require.NoError(t, err)
	late, err := NewWarmUpTokenBucket(10, PerSecond(100), P, clock)
	require.NoError(t, err)
	assert.Equal(t, 3, late.AvailableAt(time.Hour), "born cold at 1h")
	assert.Equal(t, 10, late.AvailableAt(time.Hour+P))
}

// Under saturating demand from age 0 the permits admitted during the warm-up period are the
// cold burst plus ∫₀ᴾ da/I(a) = (ln 3 / 2)·rate·P, not the 2/3·rate·P of a straight rate ramp.
//
// Tolerance, derived: with a request at every due time, consecutive admissions after the
// burst at ages a_k, a_{k+1} are exactly I(a_{k+1}) apart (each lands when the backlog has
// fallen to τ − I), so each step contributes ∫_{a_k}^{a_{k+1}} da/I(a) ∈
// [I(a_{k+1})/I(a_k), 1]: counting steps overestimates the integral by at most
// Σ (I(a_k) − I(a_{k+1}))/I(a_k) ≤ ln(3T/T) ≈ 1.1 over the whole ramp. The partial steps at
// both ends (before the first post-burst admission, after the last one before P) are worth
// at most 1 each. So admitted − (burst + (ln 3/2)·rate·P) lies within [−2, +2.1]; flooring
// I(a) to whole ns only admits earlier, by under 10⁻⁶. We test ±2.5 permits: under 0.5% of
// the 552 expected here.
func TestWarmUpIntegral(t *testing.T) {
	for _, c := range []struct {
		capacity int
		rate     Rate
		warmUp   time.Duration
	}{
		{10, PerSecond(100), 10 * time.Second},
		{1, PerSecond(1000), 5 * time.Second},
		{30, Rate{7, 100 * time.Millisecond}, time.Minute},
	} {
		w, err := NewWarmUpTokenBucket(c.capacity, c.rate, c.warmUp, virtualclock.New())
		require.NoError(t, err)
		cold := max(c.capacity/ColdFactor, 1)
		admitted := 0
		for now := time.Duration(0); now < c.warmUp; {
			if w.AcquireAt(now, 1) == Admitted {
				admitted++
				continue
			}
			wait, ok := w.RetryAfterAt(now, 1)
			if !ok || wait <= 0 {
				t.Fatalf("%s: rejected at %v but RetryAfterAt = %v, %v", w, now, wait, ok)
			}
			now += wait
		}
		ratePerNs := float64(c.rate.Permits) / float64(c.rate.Window)
		want := float64(cold) + math.Log(3)/2*ratePerNs*float64(c.warmUp)
		t.Logf("%s: admitted %d, want %.2f (delta %.2f)", w, admitted, want, float64(admitted)-want)
		assert.InDelta(t, want, float64(admitted), 2.5, "%s", w)
		straight := 2.0 / 3 * ratePerNs * float64(c.warmUp)
		assert.Less(t, float64(admitted), 0.9*straight, "%s: clearly not 2/3·rate·P = %.0f", w, straight)
	}
}

// A bound past the int64 range saturates: limit 2^32−1 per 2^31ns over 146 years is about
// 2^93 permits, which used to wrap negative.
func TestAdmissionBoundSaturates(t *testing.T) {
	L := time.Duration(1)<<62 - 1
	for _, text := range []string{"fixed-window:limit=4294967295,window=2147483648ns",
		"sliding-window:limit=4294967295,window=2147483648ns,slots=1", "flash5-fixed:limit=4294967295,window=1ms"} {
		spec, err := ParseSpec(text)
		require.NoError(t, err)
		b, ok := AdmissionBound(spec, L)
		require.True(t, ok)
		assert.Equal(t, int64(math.MaxInt64), b, text)
	}
}
