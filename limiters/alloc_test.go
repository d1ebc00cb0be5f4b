package limiters_test

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"

	"github.com/ratelab/ratelab/virtualclock"
	"github.com/stretchr/testify/assert"
)

// The decision paths allocate nothing: AcquireAt, TryAcquireAt, AvailableAt and RetryAfterAt
// of every limiter, on both the admit and the reject side, and the real-clock TryAcquire.
func TestZeroAllocations(t *testing.T) {
	c := virtualclock.New()
	all := []testLimiter{
		must(limiters.NewTokenBucket(3, limiters.PerSecond(100), c)),
		must(limiters.NewLeakyBucket(limiters.Rate{7, 100 * time.Millisecond}, c)),
		must(limiters.NewSlidingWindow(100, time.Second, 10, c)),
		must(limiters.NewFixedWindow(100, time.Second, c)),
		must(limiters.NewWarmUpTokenBucket(10, limiters.PerSecond(100), time.Hour, c)), // warming: the 128-bit path
		must(limiters.NewWarmUpTokenBucket(10, limiters.PerSecond(100), time.Nanosecond, c)),
		must(limiters.NewConcurrency(20)),
		must(peers.NewFlash5Fixed(peers.Flash5FixedSpec{Limit: 100, Window: time.Second}, c)),
		must(peers.NewFlash5Token(peers.Flash5TokenSpec{Limit: 100, Window: time.Second}, c)),
		must(peers.NewXTimeRate(peers.XTimeRateSpec{Rate: limiters.PerSecond(100), Burst: 3}, c)),
		must(peers.NewUber(peers.UberSpec{Rate: limiters.PerSecond(100), Slack: 10}, c)),
		must(peers.NewNginx(peers.NginxSpec{Rate: limiters.PerSecond(100), Burst: 20, Delay: 5}, c)),
		must(peers.NewGuavaBursty(peers.GuavaBurstySpec{Rate: limiters.PerSecond(100), MaxBurst: time.Second}, c)),
		must(peers.NewGuavaWarmingUp(peers.GuavaWarmUpSpec{Rate: limiters.PerSecond(100), WarmUp: time.Second, ColdFactor: 3}, c)),
		must(peers.NewSentinel(peers.SentinelSpec{Threshold: 100}, c)),
		must(peers.NewSentinel(peers.SentinelSpec{Threshold: 100, Strategy: peers.SentinelWarmUp, WarmUp: 10 * time.Second}, c)),
		must(peers.NewSentinel(peers.SentinelSpec{Threshold: 100, Strategy: peers.SentinelWarmUp, WarmUp: 10 * time.Second,
			Behavior: peers.SentinelThrottling, MaxQueue: 500 * time.Millisecond}, c)),
		must(peers.NewResilience4j(peers.Resilience4jSpec{Limit: 50, Period: 500 * time.Millisecond, Timeout: 5 * time.Second}, c)),
		must(peers.NewTwoCounter(peers.TwoCounterSpec{Limit: 100, Window: time.Second}, c)),
	}
	for _, l := range all {
		now := time.Duration(0)
		step := 7 * time.Millisecond
		check := func(what string, f func()) {
			if allocs := testing.AllocsPerRun(200, f); allocs != 0 {
				t.Errorf("%s: %s allocates %v per call", l, what, allocs)
			}
		}
		check("AcquireAt", func() { now += step; l.AcquireAt(now, 1) })
		check("AcquireAt rejected", func() { l.AcquireAt(now, l.MaxPermits()) })
		check("TryAcquireAt", func() { now += step; l.TryAcquireAt(now, 1) })
		check("AvailableAt", func() { now += step; l.AvailableAt(now) })
		check("TryAcquire", func() { l.TryAcquire(1) })
		check("Available", func() { l.Available() })
		if rl, ok := l.(limiters.RateLimiter); ok {
			l.AcquireAt(now, l.MaxPermits())
			check("RetryAfterAt", func() { rl.RetryAfterAt(now, 1) })
			check("RetryAfterAt n=max", func() { rl.RetryAfterAt(now, l.MaxPermits()) })
		}
		if rs, ok := l.(limiters.Reserver); ok {
			check("ReserveAt+CancelAt", func() { now += step; rs.CancelAt(now, rs.ReserveAt(now, 1, limiters.MaxWaitForever)) })
			check("Snapshot", func() { now += step; l.Snapshot(now) })
		}
		if cl, ok := l.(*limiters.Concurrency); ok {
			check("acquire+Release", func() {
				if cl.TryAcquire(1) {
					cl.Release(1)
				}
			})
		}
	}
	assert.False(t, t.Failed())
}
