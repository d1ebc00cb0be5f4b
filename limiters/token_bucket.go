package limiters

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/limiters/internal/bound"
	"github.com/ratelab/ratelab/limiters/internal/limits"
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
//
// The zero value grants nothing: every request is Never, nothing is available, and no
// method panics; NewTokenBucket makes a working one.
type TokenBucket struct {
	gcra
	capacity int
	rate     Rate
	clock    Clock
}

var (
	_ RateLimiter = (*TokenBucket)(nil)
	_ Reserver    = (*TokenBucket)(nil)
	_ Refunder    = (*TokenBucket)(nil)
	_ Clocked     = (*TokenBucket)(nil)
)

// KindTokenBucket is the token bucket's name in specs.
const KindTokenBucket Kind = "token-bucket"

// TokenBucketSpec configures a TokenBucket: "token-bucket:capacity=3,rate=100/1s".
type TokenBucketSpec struct {
	Capacity int  // the largest burst, admitted at once after idle
	Rate     Rate // the steady rate
}

var tokenBucketKind = KindInfo{
	Kind: KindTokenBucket, Family: FamilyRatelab, Shape: ShapeSchedule,
	Summary:      "average rate, bursts up to capacity after idle (GCRA)",
	Example:      "token-bucket:capacity=3,rate=100/1s",
	Fields:       FieldInfos[TokenBucketSpec](),
	Ranges:       tokenBucketRanges,
	Capabilities: []Capability{CapRetryAfter, CapReserve, CapRefund},
	Parse:        SpecParser(TokenBucketSpec{}),
	Explain:      explainGCRA,
}

func (s *TokenBucketSpec) Fields() []Field {
	return []Field{
		IntField("capacity", true, "the largest burst, admitted at once after idle", &s.Capacity),
		RateField("rate", true, "permits per window, e.g. 100/1s", &s.Rate),
	}
}

// Kind is KindTokenBucket.
func (s TokenBucketSpec) Kind() Kind { return KindTokenBucket }

// String is "token-bucket:capacity=3,rate=100/1s".
func (s TokenBucketSpec) String() string { return FormatSpec(KindTokenBucket, s.Fields()) }

// Validate refuses a capacity below 1, a rate of zero permits or a non-positive window, an
// emission interval below 1ns and a tolerance beyond 2⁶² ns (146 years).
func (s TokenBucketSpec) Validate() error {
	if s.Capacity < 1 {
		return NewConfigError(KindTokenBucket, "capacity", fmt.Sprint(s.Capacity), "must be at least 1")
	}
	if err := s.Rate.Validate(KindTokenBucket); err != nil {
		return err
	}
	if int64(s.Capacity) > MaxSpan/int64(s.Rate.Interval()) {
		return NewConfigError(KindTokenBucket, "capacity", fmt.Sprint(s.Capacity),
			"tolerance capacity×T exceeds 2^62ns (146 years)")
	}
	return nil
}

// tokenBucketRanges are what TokenBucketSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for token-bucket, with specs at and just past each edge that the registry
// test holds to Validate.
var tokenBucketRanges = []FieldRange{
	{Field: "capacity", Accepted: "at least 1, and capacity × T " + limits.Span + " (T = window/permits, rounded up to a whole ns)",
		Why:     "capacity × T is the bucket's tolerance, a time: " + limits.Window,
		Valid:   []string{"token-bucket:capacity=1,rate=1/1s", "token-bucket:capacity=4611686018427387904,rate=1/1ns"},
		Invalid: []string{"token-bucket:capacity=0,rate=1/1s", "token-bucket:capacity=4611686018427387905,rate=1/1ns", "token-bucket:capacity=2,rate=1/4611686018427387904ns"}},
	{Field: "rate", Accepted: "permits/window: permits at least 1, window positive, T = window/permits at least 1 ns",
		Why:     limits.PerNS,
		Valid:   []string{"token-bucket:capacity=1,rate=1/1ns", "token-bucket:capacity=1,rate=1000/1us"},
		Invalid: []string{"token-bucket:capacity=1,rate=2/1ns", "token-bucket:capacity=1,rate=0/1s", "token-bucket:capacity=1,rate=1/0s"}},
}

// New is NewTokenBucket(s.Capacity, s.Rate, clock).
func (s TokenBucketSpec) New(clock Clock) (Limiter, error) {
	return NewTokenBucket(s.Capacity, s.Rate, clock)
}

// AdmissionBound is capacity + ⌈L/T⌉ − 1: a full burst, then one per T. 100/s capacity 3
// over 1s: 102.
func (s TokenBucketSpec) AdmissionBound(L time.Duration) (int64, bool) {
	return bound.SaturatingAdd(int64(s.Capacity), bound.DivCeil(int64(L), int64(s.Rate.Interval()))-1), true
}

// NaturalWindow is the rate's window.
func (s TokenBucketSpec) NaturalWindow() time.Duration { return s.Rate.Window }

// NominalRate is the rate.
func (s TokenBucketSpec) NominalRate() (Rate, bool) { return s.Rate, true }

// InitialPermits is the capacity: a token bucket starts full.
func (s TokenBucketSpec) InitialPermits() int { return s.Capacity }

// NewTokenBucket returns a full token bucket holding at most capacity permits (the largest
// burst) and refilled at rate. It refuses what TokenBucketSpec.Validate refuses and a nil
// clock.
func NewTokenBucket(capacity int, rate Rate, clock Clock) (*TokenBucket, error) {
	if err := (TokenBucketSpec{Capacity: capacity, Rate: rate}).Validate(); err != nil {
		return nil, err
	}
	if err := RequireClock(KindTokenBucket, clock); err != nil {
		return nil, err
	}
	t := int64(rate.Interval())
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
func (b *TokenBucket) TryAcquire(n int) bool { return b.TryAcquireAt(ReadClock(b.clock), n) }

// AvailableAt is ⌊(τ − max(TAT − now, 0)) / T⌋: capacity after any idle, never more.
func (b *TokenBucket) AvailableAt(now time.Duration) int { return b.available(int64(now)) }

// Available is AvailableAt(clock.Now()).
func (b *TokenBucket) Available() int { return b.available(int64(ReadClock(b.clock))) }

// RetryAfterAt is max(TAT + n·T − τ − now, 0); ok is false for n > capacity or n <= 0.
func (b *TokenBucket) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	return b.retryAfter(int64(now), n)
}

// MaxPermits is the capacity.
func (b *TokenBucket) MaxPermits() int { return b.capacity }

// Kind is KindTokenBucket.
func (b *TokenBucket) Kind() Kind { return KindTokenBucket }

// String is the spec: "token-bucket:capacity=3,rate=100/1s".
func (b *TokenBucket) String() string { return b.Spec().String() }

// Spec is the limiter's configuration.
func (b *TokenBucket) Spec() TokenBucketSpec {
	return TokenBucketSpec{Capacity: b.capacity, Rate: b.rate}
}

// Snapshot returns TAT, T, τ and the permits available at now.
func (b *TokenBucket) Snapshot(now time.Duration) State {
	return b.snapshot(KindTokenBucket, int64(now))
}
