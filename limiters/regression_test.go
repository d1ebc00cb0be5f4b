package limiters

import (
	"math"
	"testing"
	"time"

	"github.com/ratelab/ratelab/virtualclock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each test here failed before the fix named in its comment.

const year = 365 * 24 * time.Hour

// Rate.Interval computed ⌈w/p⌉ as (w+p−1)/p, which overflows for windows near 292 years:
// Rate{2, MaxInt64}.Interval() was −2^62 and a leaky bucket built on it admitted everything.
func TestRegressionIntervalOverflow(t *testing.T) {
	r := Rate{Permits: 2, Window: math.MaxInt64}
	assert.Equal(t, time.Duration(1<<62), r.Interval())
	assert.Equal(t, time.Duration(0), Rate{}.Interval(), "an invalid rate has no interval, and no panic")
	l, err := NewLeakyBucket(r, virtualclock.New())
	require.NoError(t, err)
	assert.Equal(t, Admitted, l.AcquireAt(0, 1))
	assert.Equal(t, Rejected, l.AcquireAt(0, 1), "was admitted: T was negative")
}

// GCRA compared (max(TAT, now) − now) + n·T with τ; at τ = 2^62 (the largest accepted) both
// terms are 2^62, the sum wrapped to −2^63 and every request was admitted.
func TestRegressionGCRAToleranceOverflow(t *testing.T) {
	c := virtualclock.New()
	leak, err := NewLeakyBucket(Rate{1, 1 << 62}, c)
	require.NoError(t, err)
	bucket, err := NewTokenBucket(1, Rate{1, 1 << 62}, c)
	require.NoError(t, err)
	for _, l := range []RateLimiter{leak, bucket} {
		assert.Equal(t, Admitted, l.AcquireAt(0, 1), l.String())
		assert.Equal(t, Rejected, l.AcquireAt(0, 1), "%s: the second permit is 146 years away", l)
		wait, ok := l.RetryAfterAt(0, 1)
		assert.True(t, ok)
		assert.Equal(t, time.Duration(1<<62), wait)
	}
}

// The warm-up bucket accepted capacity·T up to 2^62 but charges n·3T while cold: capacity
// 2^20 at T = 2^42ns made a full request cost 3·2^62, which wrapped negative and was admitted
// although the cold burst is capacity/3. Such configurations are now refused, and the check
// is written so that it cannot overflow.
func TestRegressionWarmUpCostOverflow(t *testing.T) {
	_, err := NewWarmUpTokenBucket(1<<20, Rate{1, 1 << 42}, time.Hour, virtualclock.New())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "capacity=1048576")

	// The largest accepted: capacity·3T ≤ 2^62.
	w, err := NewWarmUpTokenBucket(1<<20, Rate{1, 1 << 40}, time.Hour, virtualclock.New())
	require.NoError(t, err)
	assert.Equal(t, Rejected, w.AcquireAt(0, 1<<20), "more than the cold burst")
	assert.Equal(t, Admitted, w.AcquireAt(0, (1<<20)/3), "the cold burst")

	// Cold interval 3T = 2^62 with capacity 1: backlog and cost both 2^62.
	w, err = NewWarmUpTokenBucket(1, Rate{1, (1 << 62) / 3}, time.Hour, virtualclock.New())
	require.NoError(t, err)
	assert.Equal(t, Admitted, w.AcquireAt(0, 1))
	assert.Equal(t, Rejected, w.AcquireAt(0, 1))
}

// Concurrency compared held+n > max in int32: with max = 2^31−1, one permit held and a
// request for max, the sum wrapped negative, the request was admitted and InFlight became
// −2^31.
func TestRegressionConcurrencyOverflow(t *testing.T) {
	c, err := NewConcurrency(math.MaxInt32)
	require.NoError(t, err)
	require.Equal(t, Admitted, c.AcquireAt(0, 1))
	assert.Equal(t, Rejected, c.AcquireAt(0, math.MaxInt32))
	assert.Equal(t, 1, c.InFlight())
	assert.Equal(t, math.MaxInt32-1, c.Available())
}

// The sliding window tagged each bucket with its slot-index truncated to 64 − bits.Len(limit)
// − 1 bits and compared tags as signed differences. At 1e8 per 1s in 1000 slots that is 36
// bits of 1ms slots: a fresh limiter rejected every request at 2, 4, 6, … 100 years (the
// zeroed buckets looked newer than now), and after 1.5 years of idle a full window was still
// counted. Buckets are now tagged with the window number.
func TestRegressionSlidingWindowLongTimes(t *testing.T) {
	for y := 0; y <= 100; y++ {
		s, err := NewSlidingWindow(100_000_000, time.Second, 1000, virtualclock.New())
		require.NoError(t, err)
		require.Equal(t, Admitted, s.AcquireAt(time.Duration(y)*year, 1), "fresh limiter at year %d", y)
	}
	s, err := NewSlidingWindow(100_000_000, time.Second, 1000, virtualclock.New())
	require.NoError(t, err)
	require.Equal(t, Admitted, s.AcquireAt(0, 100_000_000))
	assert.Equal(t, Rejected, s.AcquireAt(999*time.Millisecond, 1))
	assert.Equal(t, 100_000_000, s.AvailableAt(3*year/2), "1.5 years later the window is empty")
	assert.Equal(t, Admitted, s.AcquireAt(3*year/2, 100_000_000))
}

// With the slot-index tag truncated to 31 bits (limit 2^32−1) the slot → bucket mapping broke
// where the tag wrapped, 24.8 days in with 1ms slots: a live bucket was overwritten and
// 2·limit − 40 permits were admitted within 8ms. Windows shorter than 2^(bits.Len(limit)−1)
// ns are now refused (here 2^31 ns), which makes the generation comparison exact for every
// time below 2^62 ns, and the same for the fixed window, which after 7 years of idle at
// limit 2^31 per 100ms still counted the old full window (a late caller, it thought).
func TestRegressionWindowGenerationWrap(t *testing.T) {
	c := virtualclock.New()
	_, err := NewSlidingWindow(math.MaxUint32, 10*time.Millisecond, 10, c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "window=10ms")
	_, err = NewFixedWindow(1<<31, 100*time.Millisecond, c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "window=100ms")

	// The shortest window accepted for that limit works across 100 years of idle.
	f, err := NewFixedWindow(1<<31, 1<<31, c)
	require.NoError(t, err)
	require.Equal(t, Admitted, f.AcquireAt(0, 1<<31))
	assert.Equal(t, Rejected, f.AcquireAt(1<<31-1, 1))
	for _, at := range []time.Duration{1 << 31, 7 * year, 68 * year, 69 * year, 100 * year, 146 * year} {
		assert.Equal(t, Admitted, f.AcquireAt(at, 1), "fixed window after idle until %v", at)
	}
	s, err := NewSlidingWindow(math.MaxUint32, 1<<31, 1, c)
	require.NoError(t, err)
	require.Equal(t, Admitted, s.AcquireAt(0, math.MaxUint32))
	for _, at := range []time.Duration{1 << 31, 7 * year, 68 * year, 69 * year, 100 * year, 146 * year} {
		assert.Equal(t, math.MaxUint32, s.AvailableAt(at), "sliding window after idle until %v", at)
	}
}
