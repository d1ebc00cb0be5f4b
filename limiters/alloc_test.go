package limiters

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/virtualclock"
	"github.com/stretchr/testify/assert"
)

// The decision paths allocate nothing: AcquireAt, TryAcquireAt, AvailableAt and RetryAfterAt
// of every limiter, on both the admit and the reject side, and the real-clock TryAcquire.
func TestZeroAllocations(t *testing.T) {
	c := virtualclock.New()
	limiters := []testLimiter{
		must(NewTokenBucket(3, PerSecond(100), c)),
		must(NewLeakyBucket(Rate{7, 100 * time.Millisecond}, c)),
		must(NewSlidingWindow(100, time.Second, 10, c)),
		must(NewFixedWindow(100, time.Second, c)),
		must(NewWarmUpTokenBucket(10, PerSecond(100), time.Hour, c)), // warming: the 128-bit path
		must(NewWarmUpTokenBucket(10, PerSecond(100), time.Nanosecond, c)),
		must(NewConcurrency(20)),
		must(NewFlash5Fixed(Flash5FixedSpec{Limit: 100, Window: time.Second}, c)),
		must(NewFlash5Token(Flash5TokenSpec{Limit: 100, Window: time.Second}, c)),
		must(NewXTimeRate(XTimeRateSpec{Rate: PerSecond(100), Burst: 3}, c)),
		must(NewUber(UberSpec{Rate: PerSecond(100), Slack: 10}, c)),
		must(NewNginx(NginxSpec{Rate: PerSecond(100), Burst: 20, Delay: 5}, c)),
		must(NewGuavaBursty(GuavaBurstySpec{Rate: PerSecond(100), MaxBurst: time.Second}, c)),
		must(NewGuavaWarmingUp(GuavaWarmUpSpec{Rate: PerSecond(100), WarmUp: time.Second, ColdFactor: 3}, c)),
		must(NewSentinel(SentinelSpec{Threshold: 100}, c)),
		must(NewSentinel(SentinelSpec{Threshold: 100, Strategy: SentinelWarmUp, WarmUp: 10 * time.Second}, c)),
		must(NewSentinel(SentinelSpec{Threshold: 100, Strategy: SentinelWarmUp, WarmUp: 10 * time.Second,
			Behavior: SentinelThrottling, MaxQueue: 500 * time.Millisecond}, c)),
		must(NewResilience4j(Resilience4jSpec{Limit: 50, Period: 500 * time.Millisecond, Timeout: 5 * time.Second}, c)),
		must(NewTwoCounter(TwoCounterSpec{Limit: 100, Window: time.Second}, c)),
	}
	for _, l := range limiters {
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
		if rl, ok := l.(RateLimiter); ok {
			l.AcquireAt(now, l.MaxPermits())
			check("RetryAfterAt", func() { rl.RetryAfterAt(now, 1) })
			check("RetryAfterAt n=max", func() { rl.RetryAfterAt(now, l.MaxPermits()) })
		}
		if rs, ok := l.(Reserver); ok {
			check("ReserveAt+CancelAt", func() { now += step; rs.CancelAt(now, rs.ReserveAt(now, 1, MaxWaitForever)) })
			check("Snapshot", func() { now += step; l.Snapshot(now) })
		}
		if cl, ok := l.(*Concurrency); ok {
			check("acquire+Release", func() {
				if cl.TryAcquire(1) {
					cl.Release(1)
				}
			})
		}
	}
	assert.False(t, t.Failed())
}

// testLimiter is every form ratelab's own kinds offer: the core, the clocked forms and
// TryAcquireAt.
type testLimiter interface {
	Clocked
	TryAcquireAt(now time.Duration, n int) bool
}
