package limiters

import (
	"fmt"
	"time"
)

// TokenBucket is a token bucket of size capacity, initially full and refilled at rate
// permits per window, implemented as GCRA (virtual scheduling) in a single int64.
//
// Instead of a token counter and a refill timer it keeps the theoretical arrival time (TAT):
// the moment the next permit becomes available. With emission interval T = window/permits and
// tolerance τ = capacity·T, a request for n permits at time now is admitted when
//
//	(max(TAT, now) − now) + n·T ≤ τ,  and then TAT = max(TAT, now) + n·T.
//
// 100/s with capacity 3: T = 10ms, τ = 30ms. After any idle, three requests pass at once
// (each pushes TAT 10ms ahead, the third to now+30ms = now+τ), a fourth at the same instant is
// rejected (now+40ms would exceed τ), and from then on one passes every 10ms:
//
//	time  0ms   10ms   20ms   30ms   40ms
//	      ▓▓▓───●──────●──────●──────●───▶   burst of 3, then one per T = 10ms
//
// The bucket never overflows: however long the idle, Available reports capacity, not more.
// In any half-open interval of length L at most capacity + ⌈L/T⌉ − 1 permits are admitted.
//
// Cost: one atomic load and one CAS; no lock, no allocation.
type TokenBucket struct {
	gcra
	capacity int
	rate     Rate
	clock    Clock
}

var _ RateLimiter = (*TokenBucket)(nil)

// NewTokenBucket returns a full token bucket holding at most capacity permits (the largest
// burst) and refilled at rate. It refuses a capacity below 1, a rate of zero permits or a
// non-positive window, an emission interval below 1ns, a tolerance beyond 2⁶² ns (146 years),
// and a nil clock.
func NewTokenBucket(capacity int, rate Rate, clock Clock) (*TokenBucket, error) {
	if capacity < 1 {
		return nil, configError(KindTokenBucket, "capacity", fmt.Sprint(capacity), "must be at least 1")
	}
	if err := rate.validate(KindTokenBucket); err != nil {
		return nil, err
	}
	if err := requireClock(KindTokenBucket, clock); err != nil {
		return nil, err
	}
	t := int64(rate.Interval())
	if int64(capacity) > maxSpan/t {
		return nil, configError(KindTokenBucket, "capacity", fmt.Sprint(capacity),
			"tolerance capacity×T exceeds 2^62ns (146 years)")
	}
	b := &TokenBucket{capacity: capacity, rate: rate, clock: clock}
	b.init(t, int64(capacity)*t)
	return b, nil
}

// AcquireAt takes n permits at time now if (max(TAT, now) − now) + n·T ≤ τ.
func (b *TokenBucket) AcquireAt(now time.Duration, n int) Decision {
	return b.acquire(int64(now), n)
}

// TryAcquireAt reports whether n permits were taken at time now.
func (b *TokenBucket) TryAcquireAt(now time.Duration, n int) bool {
	return b.acquire(int64(now), n) == Admitted
}

// TryAcquire takes n permits now, by the limiter's clock.
func (b *TokenBucket) TryAcquire(n int) bool { return b.TryAcquireAt(b.clock.Now(), n) }

// AvailableAt is ⌊(τ − max(TAT − now, 0)) / T⌋: capacity after any idle, never more.
func (b *TokenBucket) AvailableAt(now time.Duration) int { return b.available(int64(now)) }

// Available is AvailableAt(clock.Now()).
func (b *TokenBucket) Available() int { return b.available(int64(b.clock.Now())) }

// RetryAfterAt is max(TAT + n·T − τ − now, 0); ok is false for n > capacity or n <= 0.
func (b *TokenBucket) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	return b.retryAfter(int64(now), n)
}

// MaxPermits is the capacity.
func (b *TokenBucket) MaxPermits() int { return b.capacity }

// Kind is KindTokenBucket.
func (b *TokenBucket) Kind() Kind { return KindTokenBucket }

// String is the spec: "token-bucket:capacity=3,rate=100/1s".
func (b *TokenBucket) String() string {
	return fmt.Sprintf("%s:capacity=%d,rate=%s", KindTokenBucket, b.capacity, b.rate)
}

// Snapshot returns TAT, T, τ and the permits available at now.
func (b *TokenBucket) Snapshot(now time.Duration) State {
	return b.snapshot(KindTokenBucket, int64(now))
}
