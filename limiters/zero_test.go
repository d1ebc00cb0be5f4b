package limiters_test

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"

	"github.com/stretchr/testify/assert"
)

// The zero value of every limiter type is a limiter that grants nothing: every request is
// Never (or Invalid), nothing is available, no retry helps, and no method panics — not the
// clocked forms either (they read time 0 without a clock).
func TestZeroValuesGrantNothingAndNeverPanic(t *testing.T) {
	for _, l := range []testLimiter{&limiters.TokenBucket{}, &limiters.LeakyBucket{}, &limiters.SlidingWindow{}, &limiters.FixedWindow{}, &limiters.WarmUpTokenBucket{}, &limiters.Concurrency{}, &peers.Flash5Fixed{}, &peers.Flash5Token{}, &peers.XTimeRate{}, &peers.Uber{}, &peers.Nginx{},
		&peers.GuavaBursty{}, &peers.GuavaWarmingUp{}, &peers.Sentinel{}, &peers.Resilience4j{}, &peers.TwoCounter{}} {
		name := func() string { return l.String() }
		assert.NotPanics(t, func() { _ = name() }, "%T.String", l)
		for _, now := range []time.Duration{0, time.Second} {
			assert.Equal(t, limiters.Never, l.AcquireAt(now, 1), "%T", l)
			assert.Equal(t, limiters.Invalid, l.AcquireAt(now, 0), "%T", l)
			assert.False(t, l.TryAcquireAt(now, 1), "%T", l)
			assert.Zero(t, l.AvailableAt(now), "%T", l)
			assert.NotPanics(t, func() { l.Snapshot(now) }, "%T.Snapshot", l)
		}
		assert.False(t, l.TryAcquire(1), "%T", l)
		assert.Zero(t, l.Available(), "%T", l)
		assert.Zero(t, l.MaxPermits(), "%T", l)
		assert.NotEmpty(t, l.Kind(), "%T", l)
		if ra, ok := l.(limiters.RetryAfter); ok {
			_, retry := ra.RetryAfterAt(0, 1)
			assert.False(t, retry, "%T: no retry can help", l)
		}
		if r, ok := l.(limiters.Reserver); ok {
			assert.Equal(t, limiters.Never, r.ReserveAt(0, 1, time.Hour).Decision, "%T", l)
		}
		if r, ok := l.(limiters.Refunder); ok {
			assert.NotPanics(t, func() { r.RefundAt(0, 1) }, "%T.RefundAt", l)
		}
	}
}
