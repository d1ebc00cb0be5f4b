package limiters

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/ratelab/ratelab/limiters/internal/limits"
)

// ColdFactor is how much longer the emission interval is on a cold limiter: 3, the value
// Alibaba Sentinel uses. It is fixed on purpose; see WarmUpTokenBucket.
const ColdFactor = 3

// WarmUpTokenBucket is a token bucket whose rate ramps up over the warm-up period, for a
// freshly started instance whose caches, connection pools and JIT-less dependencies must not
// be slammed at full rate.
//
// Its emission interval starts at ColdFactor·T (T = window/permits) and shrinks linearly
// with the limiter's age a to T at the warm-up period P:
//
//	I(a) = T·(3 − 2a/P)  for a < P,   I(a) = T  after.
//
// The tolerance stays τ = capacity·T (but never below one current interval), so the burst
// budget τ/I goes from ⌊capacity/3⌋ to capacity: capacity 10 at 100/s gives a cold burst of
// 3 (I = 30ms, τ = 100ms) and a warm burst of 10. A capacity of 1, 2 or 3 is not starved while
// cold: τ = max(capacity·T, I) always admits one permit at a time.
//
// Which curve: the interval falls linearly, so the rate 1/I(a) rises along a hyperbola, not a
// straight line: 1/3 of the configured rate at age 0, 1/2 at P/2 (I = 2T) and all of it at P.
// Under saturating demand from age 0 the permits admitted during the warm-up period are the cold burst plus
//
//	∫₀ᴾ da / I(a) = (ln 3 / 2)·rate·P ≈ 0.549·rate·P,
//
// not the 2/3·rate·P a straight rate ramp would give: 100/s over a 10s warm-up admits ≈ 549
// permits plus the burst, not 667.
//
// The ramp follows the limiter's age, not its traffic: idle waiting does not keep it cold, and
// a limiter made two minutes ago with a one-minute warm-up is fully warm even if it has not
// served a request. Age is measured from the clock's reading when the limiter was made.
//
// Cost: one atomic load and one CAS when warm; while warming, one 128-bit multiply and divide
// more to compute I(a).
//
// The zero value grants nothing: every request is Never, nothing is available, and no
// method panics; NewWarmUpTokenBucket makes a working one.
type WarmUpTokenBucket struct {
	arrival   atomic.Int64
	interval  int64 // T, steady
	tolerance int64 // capacity·T
	warmUp    int64 // P
	born      int64 // clock reading at construction: age = now − born
	capacity  int
	rate      Rate
	clock     Clock
}

var (
	_ RateLimiter = (*WarmUpTokenBucket)(nil)
	_ Refunder    = (*WarmUpTokenBucket)(nil)
	_ Clocked     = (*WarmUpTokenBucket)(nil)
)

// KindWarmUpTokenBucket is the warm-up token bucket's name in specs.
const KindWarmUpTokenBucket Kind = "warm-up"

// WarmUpSpec configures a WarmUpTokenBucket: "warm-up:capacity=10,rate=100/1s,warmup=10s".
type WarmUpSpec struct {
	Capacity int           // the largest burst once warm
	Rate     Rate          // the steady rate, reached at the end of the warm-up
	WarmUp   time.Duration // the warm-up period P
}

var warmUpKind = KindInfo{
	Kind: KindWarmUpTokenBucket, Family: FamilyRatelab, Shape: ShapeRamp,
	Summary:      "token bucket whose rate ramps from 1/3 to full over the warm-up",
	Example:      "warm-up:capacity=10,rate=100/1s,warmup=10s",
	Checks:       CheckSpecs{Sizes: "warm-up:capacity=6,rate=100/1s,warmup=1s", Allocs: []string{"warm-up:capacity=3,rate=100/1s,warmup=1s"}},
	Fields:       FieldInfos[WarmUpSpec](),
	Ranges:       warmUpRanges,
	Capabilities: []Capability{CapRetryAfter, CapRefund},
	Parse:        SpecParser(WarmUpSpec{}),
	Explain:      explainGCRA,
}

func (s *WarmUpSpec) Fields() []Field {
	return []Field{
		IntField("capacity", true, "the largest burst once warm", &s.Capacity),
		RateField("rate", true, "the steady rate once warm, e.g. 100/1s", &s.Rate),
		DurationField("warmup", true, "the warm-up period over which the rate ramps from 1/3 to full", &s.WarmUp),
	}
}

// Kind is KindWarmUpTokenBucket.
func (s WarmUpSpec) Kind() Kind { return KindWarmUpTokenBucket }

// String is "warm-up:capacity=10,rate=100/1s,warmup=10s".
func (s WarmUpSpec) String() string { return FormatSpec(KindWarmUpTokenBucket, s.Fields()) }

// Validate refuses what TokenBucketSpec.Validate refuses (but for the tolerance, checked at
// the cold interval: capacity×3T, the cost of a full burst while cold, beyond 2⁶² ns), a
// non-positive warm-up period or one beyond 2⁶² ns, and a cold interval 3T beyond 2⁶² ns.
func (s WarmUpSpec) Validate() error {
	if s.Capacity < 1 {
		return NewConfigError(KindWarmUpTokenBucket, "capacity", fmt.Sprint(s.Capacity), "must be at least 1")
	}
	if err := s.Rate.Validate(KindWarmUpTokenBucket); err != nil {
		return err
	}
	if s.WarmUp <= 0 || int64(s.WarmUp) > MaxSpan {
		return NewConfigError(KindWarmUpTokenBucket, "warmup", FormatDuration(s.WarmUp), "must be positive and at most 2^62ns")
	}
	t := int64(s.Rate.Interval())
	if t > MaxSpan/ColdFactor {
		return NewConfigError(KindWarmUpTokenBucket, "rate", s.Rate.String(),
			"the cold interval 3T exceeds 2^62ns (146 years)")
	}
	// The largest cost a request can have is capacity × 3T (all of it while cold); it must
	// not overflow.
	if int64(s.Capacity) > MaxSpan/(ColdFactor*t) {
		return NewConfigError(KindWarmUpTokenBucket, "capacity", fmt.Sprint(s.Capacity),
			"capacity×3T (the cost of a full burst while cold) exceeds 2^62ns (146 years)")
	}
	return nil
}

// warmUpRanges are what WarmUpSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for warm-up, with specs at and just past each edge that the registry
// test holds to Validate.
var warmUpRanges = []FieldRange{
	{Field: "capacity", Accepted: "at least 1, and capacity × 3T " + limits.Span,
		Why:     "a request's largest cost is a full burst while cold: " + limits.Window,
		Valid:   []string{"warm-up:capacity=1,rate=1/1s,warmup=1s", "warm-up:capacity=1537228672809129301,rate=1/1ns,warmup=1s"},
		Invalid: []string{"warm-up:capacity=0,rate=1/1s,warmup=1s", "warm-up:capacity=1537228672809129302,rate=1/1ns,warmup=1s"}},
	{Field: "rate", Accepted: "as the token bucket's, and the cold interval 3T " + limits.Span,
		Why:     limits.PerNS + "; " + limits.Window,
		Valid:   []string{"warm-up:capacity=1,rate=1/1ns,warmup=1s", "warm-up:capacity=1,rate=1/1537228672809129301ns,warmup=1s"},
		Invalid: []string{"warm-up:capacity=1,rate=2/1ns,warmup=1s", "warm-up:capacity=1,rate=1/1537228672809129302ns,warmup=1s"}},
	{Field: "warmup", Accepted: "positive, " + limits.Span,
		Why:     limits.Window,
		Valid:   []string{"warm-up:capacity=1,rate=1/1s,warmup=1ns", "warm-up:capacity=1,rate=1/1s,warmup=4611686018427387904ns"},
		Invalid: []string{"warm-up:capacity=1,rate=1/1s,warmup=0s", "warm-up:capacity=1,rate=1/1s,warmup=4611686018427387905ns"}},
}

// New is NewWarmUpTokenBucket(s.Capacity, s.Rate, s.WarmUp, clock).
func (s WarmUpSpec) New(clock Clock) (Limiter, error) {
	return NewWarmUpTokenBucket(s.Capacity, s.Rate, s.WarmUp, clock)
}

// AdmissionBound is the token bucket's, capacity + ⌈L/T⌉ − 1: the ramp only makes it stricter.
func (s WarmUpSpec) AdmissionBound(L time.Duration) (int64, bool) {
	return TokenBucketSpec{Capacity: s.Capacity, Rate: s.Rate}.AdmissionBound(L)
}

// NaturalWindow is the rate's window.
func (s WarmUpSpec) NaturalWindow() time.Duration { return s.Rate.Window }

// NominalRate is the steady rate, reached once warm.
func (s WarmUpSpec) NominalRate() (Rate, bool) { return s.Rate, true }

// InitialPermits is the cold burst, ⌊capacity/3⌋ but at least 1.
func (s WarmUpSpec) InitialPermits() int { return max(s.Capacity/ColdFactor, 1) }

// WarmUpPeriod is the period P over which the rate ramps.
func (s WarmUpSpec) WarmUpPeriod() time.Duration { return s.WarmUp }

// RateAt is the admission rate (permits per second) under saturating demand at limiter age
// a: 1/I(a) = rate·1/(3 − 2a/P) before P, the rate after.
func (s WarmUpSpec) RateAt(age time.Duration) float64 {
	rate := float64(s.Rate.Permits) / s.Rate.Window.Seconds()
	if age >= s.WarmUp {
		return rate
	}
	a := float64(age) / float64(s.WarmUp)
	return rate / (ColdFactor - (ColdFactor-1)*a)
}

// NewWarmUpTokenBucket returns a cold token bucket of the given capacity and steady rate,
// warming up over warmUp from the clock's current time. It refuses what WarmUpSpec.Validate
// refuses and a nil clock.
func NewWarmUpTokenBucket(capacity int, rate Rate, warmUp time.Duration, clock Clock) (*WarmUpTokenBucket, error) {
	if err := (WarmUpSpec{Capacity: capacity, Rate: rate, WarmUp: warmUp}).Validate(); err != nil {
		return nil, err
	}
	if err := RequireClock(KindWarmUpTokenBucket, clock); err != nil {
		return nil, err
	}
	t := int64(rate.Interval())
	born := int64(clock.Now())
	w := &WarmUpTokenBucket{
		interval: t, tolerance: int64(capacity) * t, warmUp: int64(warmUp), born: born,
		capacity: capacity, rate: rate, clock: clock,
	}
	w.arrival.Store(born)
	return w, nil
}

// intervalAt is I(a) = T + 2T·(P − a)/P, floored to a whole nanosecond, for age a in [0, P);
// T after; 3T before the limiter was made.
func (w *WarmUpTokenBucket) intervalAt(now int64) int64 {
	age := now - w.born
	if age >= w.warmUp {
		return w.interval
	}
	if age <= 0 {
		return ColdFactor * w.interval
	}
	hi, lo := bits.Mul64(uint64((ColdFactor-1)*w.interval), uint64(w.warmUp-age))
	extra, _ := bits.Div64(hi, lo, uint64(w.warmUp)) // < 2T, so hi < P and Div64 cannot panic
	return w.interval + int64(extra)
}

// AcquireAt takes n permits at time now if (max(TAT, now) − now) + n·I(a) ≤ max(τ, I(a)).
func (w *WarmUpTokenBucket) AcquireAt(now time.Duration, n int) Decision {
	if d := CheckN(n, w.capacity); d != Admitted {
		return d
	}
	interval := w.intervalAt(int64(now))
	cost := int64(n) * interval
	room := max(w.tolerance, interval) - cost // negative when n·I(a) alone exceeds the tolerance
	for {
		tat := w.arrival.Load()
		backlog := max(tat-int64(now), 0)
		if backlog > room { // backlog + n·I > τ, written so that it cannot overflow
			return Rejected
		}
		if w.arrival.CompareAndSwap(tat, int64(now)+backlog+cost) {
			return Admitted
		}
	}
}

// TryAcquireAt reports whether n permits were taken at time now.
func (w *WarmUpTokenBucket) TryAcquireAt(now time.Duration, n int) bool {
	return w.AcquireAt(now, n) == Admitted
}

// TryAcquire takes n permits now, by the limiter's clock.
func (w *WarmUpTokenBucket) TryAcquire(n int) bool { return w.TryAcquireAt(ReadClock(w.clock), n) }

// AvailableAt is ⌊(max(τ, I) − backlog) / I⌋ with I the interval at now.
func (w *WarmUpTokenBucket) AvailableAt(now time.Duration) int {
	interval := w.intervalAt(int64(now))
	tolerance := max(w.tolerance, interval)
	backlog := max(w.arrival.Load()-int64(now), 0)
	if backlog >= tolerance {
		return 0
	}
	return int((tolerance - backlog) / interval)
}

// Available is AvailableAt(clock.Now()).
func (w *WarmUpTokenBucket) Available() int { return w.AvailableAt(ReadClock(w.clock)) }

// RetryAfterAt finds the first instant at which n permits would pass. The condition only
// gets easier with time (the backlog drains and the interval shrinks), so it is a binary
// search over [now, now + backlog + n·3T].
func (w *WarmUpTokenBucket) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	if CheckN(n, w.capacity) != Admitted {
		return 0, false
	}
	tat := w.arrival.Load()
	fits := func(t int64) bool {
		interval := w.intervalAt(t)
		return max(tat, t)+int64(n)*interval-t <= max(w.tolerance, interval)
	}
	lo, hi := int64(now), max(tat, int64(now))+int64(n)*ColdFactor*w.interval+w.warmUp
	if fits(lo) {
		return 0, true
	}
	for hi-lo > 1 { // invariant: !fits(lo), fits(hi)
		mid := lo + (hi-lo)/2
		if fits(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return time.Duration(hi - int64(now)), true
}

// RefundAt gives n permits granted at now back: TAT = max(TAT − n·I(now), now), the cost
// the grant paid at the interval of its instant.
func (w *WarmUpTokenBucket) RefundAt(now time.Duration, n int) {
	if CheckN(n, w.capacity) != Admitted {
		return
	}
	cost := int64(n) * w.intervalAt(int64(now))
	for {
		tat := w.arrival.Load()
		if tat <= int64(now) || w.arrival.CompareAndSwap(tat, max(tat-cost, int64(now))) {
			return
		}
	}
}

// MaxPermits is the capacity (only reachable once warm).
func (w *WarmUpTokenBucket) MaxPermits() int { return w.capacity }

// Kind is KindWarmUpTokenBucket.
func (w *WarmUpTokenBucket) Kind() Kind { return KindWarmUpTokenBucket }

// String is the spec: "warm-up:capacity=10,rate=100/1s,warmup=10s".
func (w *WarmUpTokenBucket) String() string { return w.Spec().String() }

// Spec is the limiter's configuration.
func (w *WarmUpTokenBucket) Spec() WarmUpSpec {
	return WarmUpSpec{Capacity: w.capacity, Rate: w.rate, WarmUp: time.Duration(w.warmUp)}
}

// Snapshot returns TAT, the current interval and tolerance, the age and the warm-up period.
func (w *WarmUpTokenBucket) Snapshot(now time.Duration) State {
	interval := w.intervalAt(int64(now))
	return State{
		Kind: KindWarmUpTokenBucket, At: now, Available: w.AvailableAt(now), MaxPermits: w.capacity,
		Arrival: time.Duration(w.arrival.Load()), Interval: time.Duration(interval),
		Tolerance: time.Duration(max(w.tolerance, interval)), SteadyInterval: time.Duration(w.interval),
		Age: now - time.Duration(w.born), WarmUp: time.Duration(w.warmUp),
	}
}
