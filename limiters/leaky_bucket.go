package limiters

import (
	"fmt"
	"time"
)

// LeakyBucket paces requests strictly evenly: after one permit is granted the next is
// exactly one emission interval T = window/permits away, however long the limiter was idle.
//
// It is GCRA with a tolerance of a single interval (τ = T), so it shares TokenBucket's core
// and differs only in the burst it tolerates. That is not a relabelling: at 100/s, after
// 50ms of idle a token bucket of capacity 3 has 3 permits available and a leaky bucket 1.
// Two requests at the same instant: the first passes, the second waits 10ms. Consecutive
// admissions are always at least T apart.
//
// Use it when bursts would hurt the downstream (a partner API, a queue consumer); use a token
// bucket when a client that was quiet may legitimately catch up.
//
// Cost: one atomic load and one CAS; no lock, no allocation.
type LeakyBucket struct {
	gcra
	rate  Rate
	clock Clock
}

var _ RateLimiter = (*LeakyBucket)(nil)

// NewLeakyBucket returns a leaky bucket draining at rate. It refuses the same bad rates as
// NewTokenBucket and a nil clock.
func NewLeakyBucket(rate Rate, clock Clock) (*LeakyBucket, error) {
	if err := rate.validate(KindLeakyBucket); err != nil {
		return nil, err
	}
	if err := requireClock(KindLeakyBucket, clock); err != nil {
		return nil, err
	}
	t := int64(rate.Interval())
	if t > maxSpan {
		return nil, configError(KindLeakyBucket, "rate", rate.String(), "emission interval exceeds 2^62ns (146 years)")
	}
	b := &LeakyBucket{rate: rate, clock: clock}
	b.init(t, t)
	return b, nil
}

// AcquireAt takes n permits at time now if (max(TAT, now) − now) + n·T ≤ T. Only n = 1 can
// ever pass; n > 1 is answered Never.
func (b *LeakyBucket) AcquireAt(now time.Duration, n int) Decision { return b.acquire(int64(now), n) }

// TryAcquireAt reports whether n permits were taken at time now.
func (b *LeakyBucket) TryAcquireAt(now time.Duration, n int) bool {
	return b.acquire(int64(now), n) == Admitted
}

// TryAcquire takes n permits now, by the limiter's clock.
func (b *LeakyBucket) TryAcquire(n int) bool { return b.TryAcquireAt(b.clock.Now(), n) }

// AvailableAt is 1 once TAT ≤ now, else 0: nothing accumulates while idle.
func (b *LeakyBucket) AvailableAt(now time.Duration) int { return b.available(int64(now)) }

// Available is AvailableAt(clock.Now()).
func (b *LeakyBucket) Available() int { return b.available(int64(b.clock.Now())) }

// RetryAfterAt is max(TAT − now, 0) for n = 1; ok is false for any other n.
func (b *LeakyBucket) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	return b.retryAfter(int64(now), n)
}

// MaxPermits is 1.
func (b *LeakyBucket) MaxPermits() int { return 1 }

// Kind is KindLeakyBucket.
func (b *LeakyBucket) Kind() Kind { return KindLeakyBucket }

// String is the spec: "leaky-bucket:rate=100/1s".
func (b *LeakyBucket) String() string { return fmt.Sprintf("%s:rate=%s", KindLeakyBucket, b.rate) }

// Snapshot returns TAT, T, τ (= T) and the permits available at now.
func (b *LeakyBucket) Snapshot(now time.Duration) State {
	return b.snapshot(KindLeakyBucket, int64(now))
}
