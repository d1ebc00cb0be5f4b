package clients

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// octokit's wait, against the plugin's arithmetic done by hand: Math.ceil((reset·1000 −
// Date.now())/1000) + 1, at least 0, in seconds.
func TestOctokitRateLimitWait(t *testing.T) {
	for _, tc := range []struct {
		nowMillis, reset int64
		want             time.Duration
	}{
		{300, 1, 2 * time.Second}, // ⌈0.7⌉ + 1
		{700, 3, 4 * time.Second}, // ⌈2.3⌉ + 1: the doc's example
		{1000, 1, time.Second},    // at the reset: ⌈0⌉ + 1
		{500, 0, time.Second},     // no header (epoch 0), early: ⌈−0.5⌉ = −0, + 1
		{1500, 0, 0},              // ⌈−1.5⌉ + 1 = 0
		{90_000, 0, 0},            // far past: max(…, 0)
		{1_700_000_000_123, 1_700_000_060, 61 * time.Second}, // ⌈59.877⌉ + 1
	} {
		assert.Equal(t, tc.want, OctokitRateLimitWait(tc.nowMillis, tc.reset), "now %dms, reset %d", tc.nowMillis, tc.reset)
	}
	assert.True(t, OctokitPrimary(0))
	assert.True(t, OctokitPrimary(-2))
	assert.False(t, OctokitPrimary(1))
	assert.Equal(t, 2, OctokitMaxAttempts)
}

// stripe-go's sleepTime: 500ms·(1 + n²) capped at 5s, less the jitter, never under 500ms.
func TestStripeSleep(t *testing.T) {
	var delays []time.Duration
	for n := range 6 {
		delays = append(delays, StripeDelay(StripeMinRetryDelay, StripeMaxRetryDelay, n))
	}
	assert.Equal(t, []time.Duration{500 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second, 5 * time.Second, 5 * time.Second}, delays)
	assert.Equal(t, 500*time.Millisecond, StripeSleep(StripeMinRetryDelay, StripeMaxRetryDelay, 0, int64(125*time.Millisecond)-1), "floored")
	assert.Equal(t, 900*time.Millisecond, StripeSleep(StripeMinRetryDelay, StripeMaxRetryDelay, 1, int64(100*time.Millisecond)))
	assert.Equal(t, StripeMaxRetryDelay, StripeDelay(StripeMinRetryDelay, StripeMaxRetryDelay, math.MaxInt32+1), "no wrap")
	assert.Equal(t, StripeMaxRetryDelay, StripeDelay(StripeMinRetryDelay, StripeMaxRetryDelay, 1<<20))
	assert.True(t, StripeRetries("lock_timeout"))
	assert.False(t, StripeRetries("rate_limit"))
}

// The adaptive limiter by hand, from the source: off until a throttle; a throttle with no
// measured rate turns it on at the floor (0.5 tokens/s, capacity 1, empty), so the next
// attempt sleeps (1 − 0)/0.5 = 2s; after that sleep the bucket holds 1 token and the
// attempt goes.
func TestAWSAdaptiveByHand(t *testing.T) {
	a := NewAWSAdaptive(0)
	ok, wait := a.Acquire(0)
	assert.True(t, ok)
	assert.Zero(t, wait)
	a.Update(int64(100*time.Millisecond), true)
	assert.True(t, a.Enabled())
	assert.Equal(t, 0.5, a.FillRate())
	ok, wait = a.Acquire(int64(100 * time.Millisecond))
	assert.False(t, ok)
	assert.Equal(t, 2*time.Second, wait)
	ok, _ = a.Acquire(int64(2100 * time.Millisecond))
	assert.True(t, ok)
	// 1.6s later the first half-second bucket closes: 1 attempt over 1s, smoothed by 0.8.
	a.Update(int64(1600*time.Millisecond)+int64(time.Second), false)
	assert.InDelta(t, 0.8*2/2.5, a.MeasuredRate(), 1e-12, "2 attempts over the 2.5s from bucket 0 to bucket 2.5")
}
