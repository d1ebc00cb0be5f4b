package limiters

import (
	"time"

	"github.com/ratelab/ratelab/limiters/internal/bound"
	"github.com/ratelab/ratelab/limiters/internal/limits"
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
//
// The zero value grants nothing: every request is Never, nothing is available, and no
// method panics; NewLeakyBucket makes a working one.
type LeakyBucket struct {
	gcra
	rate  Rate
	clock Clock
}

var (
	_ RateLimiter = (*LeakyBucket)(nil)
	_ Reserver    = (*LeakyBucket)(nil)
	_ Refunder    = (*LeakyBucket)(nil)
	_ Clocked     = (*LeakyBucket)(nil)
)

// KindLeakyBucket is the leaky bucket's name in specs.
const KindLeakyBucket Kind = "leaky-bucket"

// LeakyBucketSpec configures a LeakyBucket: "leaky-bucket:rate=100/1s".
type LeakyBucketSpec struct {
	Rate Rate // one permit per emission interval T = window/permits
}

var leakyBucketKind = KindInfo{
	Kind: KindLeakyBucket, Family: FamilyRatelab, Shape: ShapeSchedule,
	Summary:      "strictly even pacing, one permit per emission interval",
	Example:      "leaky-bucket:rate=100/1s",
	Fields:       FieldInfos[LeakyBucketSpec](),
	Ranges:       leakyBucketRanges,
	Capabilities: []Capability{CapRetryAfter, CapReserve, CapRefund},
	Parse:        SpecParser(LeakyBucketSpec{}),
	Explain:      explainGCRA,
}

func (s *LeakyBucketSpec) Fields() []Field {
	return []Field{RateField("rate", true, "permits per window, e.g. 100/1s", &s.Rate)}
}

// Kind is KindLeakyBucket.
func (s LeakyBucketSpec) Kind() Kind { return KindLeakyBucket }

// String is "leaky-bucket:rate=100/1s".
func (s LeakyBucketSpec) String() string { return FormatSpec(KindLeakyBucket, s.Fields()) }

// Validate refuses the bad rates TokenBucketSpec refuses and an emission interval beyond 2⁶² ns.
func (s LeakyBucketSpec) Validate() error {
	if err := s.Rate.Validate(KindLeakyBucket); err != nil {
		return err
	}
	if int64(s.Rate.Interval()) > MaxSpan {
		return NewConfigError(KindLeakyBucket, "rate", s.Rate.String(), "emission interval exceeds 2^62ns (146 years)")
	}
	return nil
}

// leakyBucketRanges are what LeakyBucketSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for leaky-bucket, with specs at and just past each edge that the registry
// test holds to Validate.
var leakyBucketRanges = []FieldRange{
	{Field: "rate", Accepted: "permits/window with T = window/permits from 1 ns to 2^62 ns",
		Why:     limits.PerNS + "; " + limits.Window,
		Valid:   []string{"leaky-bucket:rate=1/1ns", "leaky-bucket:rate=1/4611686018427387904ns"},
		Invalid: []string{"leaky-bucket:rate=2/1ns", "leaky-bucket:rate=1/4611686018427387905ns"}},
}

// New is NewLeakyBucket(s.Rate, clock).
func (s LeakyBucketSpec) New(clock Clock) (Limiter, error) { return NewLeakyBucket(s.Rate, clock) }

// AdmissionBound is ⌈L/T⌉; 100/s over 1s: 100.
func (s LeakyBucketSpec) AdmissionBound(L time.Duration) (int64, bool) {
	return bound.DivCeil(int64(L), int64(s.Rate.Interval())), true
}

// NaturalWindow is the rate's window.
func (s LeakyBucketSpec) NaturalWindow() time.Duration { return s.Rate.Window }

// NominalRate is the rate.
func (s LeakyBucketSpec) NominalRate() (Rate, bool) { return s.Rate, true }

// InitialPermits is 1: nothing accumulates beyond the next permit.
func (s LeakyBucketSpec) InitialPermits() int { return 1 }

// NewLeakyBucket returns a leaky bucket draining at rate. It refuses what
// LeakyBucketSpec.Validate refuses and a nil clock.
func NewLeakyBucket(rate Rate, clock Clock) (*LeakyBucket, error) {
	if err := (LeakyBucketSpec{Rate: rate}).Validate(); err != nil {
		return nil, err
	}
	if err := RequireClock(KindLeakyBucket, clock); err != nil {
		return nil, err
	}
	t := int64(rate.Interval())
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
func (b *LeakyBucket) TryAcquire(n int) bool { return b.TryAcquireAt(ReadClock(b.clock), n) }

// AvailableAt is 1 once TAT ≤ now, else 0: nothing accumulates while idle.
func (b *LeakyBucket) AvailableAt(now time.Duration) int { return b.available(int64(now)) }

// Available is AvailableAt(clock.Now()).
func (b *LeakyBucket) Available() int { return b.available(int64(ReadClock(b.clock))) }

// RetryAfterAt is max(TAT − now, 0) for n = 1; ok is false for any other n.
func (b *LeakyBucket) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	return b.retryAfter(int64(now), n)
}

// MaxPermits is 1 (0 for the zero value).
func (b *LeakyBucket) MaxPermits() int { return b.maxN }

// Kind is KindLeakyBucket.
func (b *LeakyBucket) Kind() Kind { return KindLeakyBucket }

// String is the spec: "leaky-bucket:rate=100/1s".
func (b *LeakyBucket) String() string { return b.Spec().String() }

// Spec is the limiter's configuration.
func (b *LeakyBucket) Spec() LeakyBucketSpec { return LeakyBucketSpec{Rate: b.rate} }

// Snapshot returns TAT, T, τ (= T) and the permits available at now.
func (b *LeakyBucket) Snapshot(now time.Duration) State {
	return b.snapshot(KindLeakyBucket, int64(now))
}
