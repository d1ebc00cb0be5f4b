package peers

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"

	"github.com/ratelab/ratelab/virtualclock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twoCounterReference is the sliding estimate in plain terms, with exact rationals: periods
// from the first request, prev and curr, estimate = prev·(period − elapsed)/period + curr.
type twoCounterReference struct {
	limit, period int64
	anchored      bool
	first         int64
	index         int64
	prev, curr    int64
}

func (r *twoCounterReference) acquire(now, n int64) bool {
	if !r.anchored {
		r.anchored, r.first = true, now
	}
	rel := max(now-r.first, 0)
	index, elapsed := rel/r.period, rel%r.period
	switch {
	case index == r.index+1:
		r.prev, r.curr, r.index = r.curr, 0, index
	case index > r.index+1:
		r.prev, r.curr, r.index = 0, 0, index
	case index < r.index:
		elapsed = 0 // late: the newest period, at its start
	}
	estimate := new(big.Rat).SetFrac64(r.prev*(r.period-elapsed), r.period)
	estimate.Add(estimate, big.NewRat(r.curr+n, 1))
	if estimate.Cmp(big.NewRat(r.limit, 1)) > 0 {
		return false
	}
	r.curr += n
	return true
}

// The model decides as the plain estimate on random traffic, late readings and idles included,
// and its Available, RetryAfter and bound agree with it.
func TestTwoCounterMatchesTheEstimate(t *testing.T) {
	for _, tc := range []struct {
		limit  int
		window time.Duration
	}{
		{100, time.Second}, {3, 7 * time.Millisecond}, {1, time.Microsecond}, {1000, 333 * time.Millisecond},
	} {
		l := must(NewTwoCounter(TwoCounterSpec{Limit: tc.limit, Window: tc.window}, zeroClock{}))
		ref := &twoCounterReference{limit: int64(tc.limit), period: int64(tc.window)}
		rng := rand.New(rand.NewPCG(41, 42))
		now := 5 * time.Millisecond // the first request anchors here, not at 0
		admitted := 0
		for i := 0; i < scaled(50_000); i++ {
			at := now
			switch k := rng.IntN(100); {
			case k == 0:
				now += time.Duration(rng.Int64N(int64(3 * tc.window)))
				at = now
			case k < 4:
				at = max(now-time.Duration(rng.Int64N(int64(tc.window))), 0)
			default:
				now += time.Duration(rng.Int64N(int64(3*tc.window) / int64(tc.limit)))
				at = now
			}
			n := 1
			if rng.IntN(4) == 0 {
				n = 1 + rng.IntN(tc.limit)
			}
			avail := l.AvailableAt(at)
			wait, ok := l.RetryAfterAt(at, n)
			require.True(t, ok)
			want := ref.acquire(int64(at), int64(n))
			got := l.AcquireAt(at, n)
			require.Equal(t, want, got == limiters.Admitted, "%s: request %d for %d at %s", l, i, n, at)
			if at == now && i > 0 {
				assert.Equal(t, n <= avail, want, "%s: Available %d, n %d at %s", l, avail, n, at)
				assert.Equal(t, want, wait == 0, "%s: RetryAfter %s at %s", l, wait, at)
			}
			if got == limiters.Admitted {
				admitted++
			}
		}
		assert.Greater(t, admitted, scaled(1000), "%s", l)
	}
}

// RetryAfterAt is exact: refused a nanosecond before, admitted at the hint.
func TestTwoCounterRetryAfterIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for round := range 2000 {
		spec := TwoCounterSpec{Limit: 1 + rng.IntN(20), Window: time.Duration(1000 + rng.Int64N(1_000_000))}
		l := must(NewTwoCounter(spec, zeroClock{}))
		now := time.Duration(0)
		for range 1 + rng.IntN(40) {
			now += time.Duration(rng.Int64N(int64(spec.Window) / 4))
			l.AcquireAt(now, 1+rng.IntN(spec.Limit))
		}
		n := 1 + rng.IntN(spec.Limit)
		wait, ok := l.RetryAfterAt(now, n)
		require.True(t, ok)
		if wait > 0 {
			require.Less(t, l.AvailableAt(now+wait-1), n, "round %d: %s, %d at %s+%s−1ns", round, spec, n, now, wait)
		}
		require.Equal(t, limiters.Admitted, l.AcquireAt(now+wait, n), "round %d: %s, %d at %s+%s", round, spec, n, now, wait)
	}
}

// The worst trailing window: the previous period's limit at its last ns, and the estimate's
// ⌊limit·(L − 2ns)/period⌋ by the end of the interval — 199 for 100/1s over 1s.
func TestTwoCounterWorstTrailingWindow(t *testing.T) {
	spec := TwoCounterSpec{Limit: 100, Window: time.Second}
	l := must(NewTwoCounter(spec, zeroClock{}))
	require.Equal(t, limiters.Admitted, l.AcquireAt(0, 1), "anchors period 0")
	last := 3*time.Second - 1 // period 2's last ns; period 1 was empty, so period 2 has no previous count
	got := 0
	for l.AcquireAt(last, 1) == limiters.Admitted {
		got++
	}
	require.Equal(t, 100, got)
	for l.AcquireAt(last+time.Second-1, 1) == limiters.Admitted {
		got++
	}
	assert.Equal(t, 199, got, "within [2.999999999s, 3.999999999s)")
	b, ok := spec.AdmissionBound(time.Second)
	require.True(t, ok)
	assert.Equal(t, int64(199), b)
	st := l.Snapshot(last + time.Second - 1)
	assert.Contains(t, st.Explain(1, limiters.Rejected), "estimate = prev 100 × 0.000 of the period left + curr 99")

	// Half a period on, the previous count weighs half: 80 × 0.75 + 40, then 80 × 0.5 + 60.
	l = must(NewTwoCounter(spec, zeroClock{}))
	require.Equal(t, limiters.Admitted, l.AcquireAt(0, 80))
	assert.Equal(t, 40, l.AvailableAt(1250*time.Millisecond))
	require.Equal(t, limiters.Admitted, l.AcquireAt(1250*time.Millisecond, 40))
	assert.Equal(t, 20, l.AvailableAt(1500*time.Millisecond))
	assert.Equal(t, 0, l.AvailableAt(1250*time.Millisecond))
}

// For L ≤ period the bound is exact: random and adversarial traffic on short periods never
// beats it, and the adversary above reaches it.
func TestTwoCounterAdmissionBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	for round := range 300 {
		spec := TwoCounterSpec{Limit: 1 + rng.IntN(6), Window: time.Duration(16 + rng.Int64N(50))}
		l := must(NewTwoCounter(spec, zeroClock{}))
		var times []time.Duration
		now := time.Duration(0)
		for range 400 {
			now += time.Duration(rng.Int64N(3))
			for l.AcquireAt(now, 1) == limiters.Admitted {
				times = append(times, now)
			}
		}
		for _, L := range []time.Duration{1, 2, 3, spec.Window / 2, spec.Window} {
			b, _ := spec.AdmissionBound(L)
			worst := 0
			for i := range times {
				j, _ := slices.BinarySearch(times, times[i]+L)
				worst = max(worst, j-i)
			}
			require.LessOrEqual(t, int64(worst), b, "round %d: %s over %s", round, spec, L)
		}
		// The adversary: anchor, skip a period, limit at the last ns of period 2, then all
		// that fits at the interval's last instant.
		a := must(NewTwoCounter(spec, zeroClock{}))
		a.AcquireAt(0, 1)
		P := spec.Window
		got := 0
		for a.AcquireAt(3*P-1, 1) == limiters.Admitted {
			got++
		}
		for a.AcquireAt(3*P-1+P-1, 1) == limiters.Admitted {
			got++
		}
		b, _ := spec.AdmissionBound(P)
		require.Equal(t, b, int64(got), "round %d: %s: the bound is reached", round, spec)
	}
	b, _ := TwoCounterSpec{Limit: 100, Window: time.Second}.AdmissionBound(3 * time.Second)
	assert.Equal(t, int64(400), b, "beyond the period: limit per period touched")
}

// A refund gives back what the current period counted, exactly at the grant's instant.
func TestTwoCounterRefund(t *testing.T) {
	l := must(NewTwoCounter(TwoCounterSpec{Limit: 10, Window: time.Second}, zeroClock{}))
	require.Equal(t, limiters.Admitted, l.AcquireAt(0, 10))
	l.RefundAt(0, 4)
	assert.Equal(t, 4, l.AvailableAt(0))
	l.RefundAt(2*time.Second, 6)
	assert.Equal(t, 10, l.AvailableAt(2*time.Second), "two periods on: nothing held, nothing to give")
	assert.Equal(t, 4, l.AvailableAt(500*time.Millisecond), "the refund at 2s gave nothing back to period 0")
}

// Goroutines racing on a frozen clock take exactly the limit.
func TestTwoCounterRaces(t *testing.T) {
	rounds := 100
	if raceDetector {
		rounds = 10
	}
	for range rounds {
		c := virtualclock.New()
		l := must(NewTwoCounter(TwoCounterSpec{Limit: 20, Window: time.Second}, c))
		require.Equal(t, 20, race(16, l))
		c.Advance(1500 * time.Millisecond)
		require.Equal(t, 10, race(16, l), "half the previous period still weighs: 20 × 0.5")
	}
}

// Bad specs are refused naming the field.
func TestTwoCounterValidation(t *testing.T) {
	for text, field := range map[string]string{
		"two-counter:limit=2147483648,window=1s": "limit",
		"two-counter:limit=100,window=4095ns":    "window",
		"two-counter:limit=100000,window=1s":     "window",
		"two-counter:limit=1,window=2000000h":    "window",
	} {
		spec, err := limiters.ParseSpec(text)
		require.NoError(t, err, text)
		var ce *limiters.ConfigError
		require.ErrorAs(t, spec.Validate(), &ce, text)
		assert.Equal(t, field, ce.Field, text)
	}
	for _, text := range []string{"two-counter:limit=100,window=4096ns", "two-counter:limit=65535,window=1073741824ns",
		"two-counter:limit=1,window=1ns", "two-counter:limit=2147483647,window=1152921504606846976ns"} {
		spec, err := limiters.ParseSpec(text)
		require.NoError(t, err, text)
		assert.NoError(t, spec.Validate(), text)
	}
}
