package peers

import (
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/internal/limits"
)

// KindGuavaBursty is Guava's SmoothBursty (RateLimiter.create(permitsPerSecond)) in specs.
const KindGuavaBursty limiters.Kind = "guava-bursty"

// GuavaBursty is a model, decision for decision and wait for wait (in µs), of Guava's
// RateLimiter.create(permitsPerSecond): SmoothBursty. Its state is two numbers in Guava's
// units —
//
//	storedPermits         a double, 0 … maxPermits = maxBurstSeconds × permitsPerSecond
//	nextFreeTicketMicros  when the next request may go, in whole µs since the limiter was made
//
// — and a request for n permits at microsecond now (the caller's time floored to µs) is:
//
//	tryAcquire(n, timeout): refused, changing nothing, if nextFree − timeout > now; else
//	resync:   if now > nextFree: stored = min(max, stored + (now − nextFree)/interval), nextFree = now
//	reserve:  the caller may go at nextFree (its wait is nextFree − now);
//	          spend = min(n, stored); nextFree += (long)((n − spend) × interval); stored −= spend
//	acquire(n): the same, never refused.
//
// The stable interval is 1e6 / permitsPerSecond µs, a double: 100/1s is 100.0 per second and
// 10000µs; 1/3s is 0.333… per second and 3000000µs. Stored permits cost nothing; fresh ones
// cost the interval each, cut to whole µs per reservation.
//
// Two things follow that ratelab's token bucket does not do. It starts empty, yet the first
// request passes at once: the next free ticket is the moment it was made. And a request is
// never delayed by its own size: at 1 per second, acquire(10) at 0 returns a wait of 0 and
// pushes the next free ticket to 10s, so the next acquire(1) waits 10s and every tryAcquire
// before 10s is refused — the cost of a request falls on the next caller. After an idle of
// maxBurst, ⌊max⌋ + 1 requests of one permit pass at once: the stored ones, and one more
// whose cost the next caller pays (100/1s: 101).
//
// On a Poisson trace at 3× the rate (300/s for a minute) about 31% of its decisions differ
// from token-bucket:capacity=100,rate=100/1s's, though after the first second both admit
// exactly 100 a second: the bucket starts full; Guava, admitting with no permit in hand, is a
// bucket of one permit more that starts with one, and its µs cuts shift which requests pass.
//
// Where it differs from ratelab's token-bucket, and why it matters:
//
//	                       guava-bursty                           token-bucket
//	starts                 empty: 0 stored permits, but the       full: capacity permits
//	                       first request passes at once
//	who pays for a request the next caller: a request passes      the request itself: n permits
//	                       whenever the ticket has come,          pass only if n fit now
//	                       whatever its size (up to 2³¹−1)
//	burst after idle       ⌊max_burst × rate⌋ + 1 requests        capacity permits
//	"burst" parameter      max_burst, a time: the idle that is    capacity, a count
//	                       stored (1s by default, the only value
//	                       RateLimiter.create offers)
//	time resolution        whole µs (floored), costs cut to µs    ns, T rounded up to a whole ns
//	                       per reservation
//	arithmetic             doubles, under a mutex                 one int64, lock-free
//
// The cut to whole µs per reservation can make Guava faster than its rate: a request that
// spends a fraction of a stored permit pays for the rest cut down, and the double
// (1 − δ/10000) × 10000 is for some idles δ just below 10000 − δ, so an adversary who waits
// such a δ before each request pays 9999µs per permit at 100/s instead of 10000.
// AdmissionBound accounts for that.
//
// MaxPermits is 2³¹−1, Java's int: Guava never refuses a size. Available is what a burst of
// one-permit requests would get now (the stored permits and the one more; 0 before the next
// free ticket), as a request of any size passes when one does. CancelAt undoes the last
// reservation exactly when it is cancelled in its own microsecond with nothing in between
// (what a stack needs when a later stage refuses); otherwise it gives nothing back, as Guava
// cannot. Guava has no refund, so a GuavaBursty is no Refunder.
//
// Cost: a mutex and a few double operations.
//
// The zero value grants nothing: every request is Never; NewGuavaBursty makes a working one.
type GuavaBursty struct {
	guava
	spec GuavaBurstySpec
}

var (
	_ limiters.RateLimiter = (*GuavaBursty)(nil)
	_ limiters.Reserver    = (*GuavaBursty)(nil)
	_ limiters.Clocked     = (*GuavaBursty)(nil)
	_ limiters.Waiting     = GuavaBurstySpec{}
)

// GuavaBurstySpec configures a GuavaBursty: "guava-bursty:rate=100/1s".
type GuavaBurstySpec struct {
	Rate     limiters.Rate // permitsPerSecond = Rate.Permits / Rate.Window, as a double
	MaxBurst time.Duration // maxBurstSeconds: how much idle is stored (default 1s)
	Mode     GuavaMode     // try (tryAcquire, the default; "" is try) or wait (acquire)
	Timeout  time.Duration // mode=try: tryAcquire's timeout (default 0)
}

var guavaBurstyKind = limiters.KindInfo{
	Kind: KindGuavaBursty, Family: FamilyGuava, Shape: limiters.ShapeLevel,
	Summary:      "Guava's SmoothBursty: starts empty, a request's cost falls on the next caller (µs, doubles)",
	Example:      "guava-bursty:rate=100/1s",
	Fields:       limiters.FieldInfos[GuavaBurstySpec](),
	Ranges:       guavaBurstyRanges,
	Capabilities: []limiters.Capability{limiters.CapRetryAfter, limiters.CapReserve},
	Parse:        limiters.SpecParser(GuavaBurstySpec{MaxBurst: time.Second, Mode: GuavaTry}),
	Explain:      explainGuava,
}

func (s *GuavaBurstySpec) Fields() []limiters.Field {
	maxBurst := limiters.DurationField("max_burst", false, "idle time stored as permits (default 1s: rate × 1s of them)", &s.MaxBurst)
	maxBurst.Omit = func() bool { return s.MaxBurst == time.Second }
	return append([]limiters.Field{
		limiters.RateField("rate", true, "permits per window, e.g. 100/1s: Guava's permitsPerSecond, a double", &s.Rate),
		maxBurst,
	}, guavaModeFields(&s.Mode, &s.Timeout)...)
}

// Kind is KindGuavaBursty.
func (s GuavaBurstySpec) Kind() limiters.Kind { return KindGuavaBursty }

// String is "guava-bursty:rate=100/1s" (with ",max_burst=…", ",mode=wait" or ",timeout=…"
// when they are not the defaults).
func (s GuavaBurstySpec) String() string { return limiters.FormatSpec(KindGuavaBursty, s.Fields()) }

// Validate refuses what Rate.validate refuses, a rate above 250,000 per second (a stable
// interval below 4µs, see guavaMinInterval), a max_burst that is not positive or is beyond
// 2⁶² ns, a mode other than try and wait, and a timeout that is negative, 2⁶² ns or more
// (MaxWaitForever, which would make tryAcquire acquire) or given with mode=wait.
func (s GuavaBurstySpec) Validate() error {
	if err := validateGuavaRate(KindGuavaBursty, s.Rate); err != nil {
		return err
	}
	if s.MaxBurst <= 0 || int64(s.MaxBurst) > limiters.MaxSpan {
		return limiters.NewConfigError(KindGuavaBursty, "max_burst", limiters.FormatDuration(s.MaxBurst), "must be positive and at most 2^62ns")
	}
	return validateGuavaMode(KindGuavaBursty, s.Mode, s.Timeout)
}

// guavaBurstyRanges are what GuavaBurstySpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for guava-bursty, with specs at and just past each edge that the registry
// test holds to Validate.
var guavaBurstyRanges = []limiters.FieldRange{
	{Field: "rate", Accepted: "as the token bucket's, at most 250000 per second",
		Why:     "Guava charges whole microseconds: a shorter interval loses too much of a permit's cost",
		Valid:   []string{"guava-bursty:rate=250000/1s", "guava-bursty:rate=1/1h"},
		Invalid: []string{"guava-bursty:rate=250001/1s", "guava-bursty:rate=0/1s"}},
	{Field: "max_burst", Accepted: "positive, " + limits.Span,
		Why:     "maxBurstSeconds × rate is the stored permits' maximum; " + limits.Window,
		Valid:   []string{"guava-bursty:rate=1/1s,max_burst=1ns", "guava-bursty:rate=1/1s,max_burst=4611686018427387904ns"},
		Invalid: []string{"guava-bursty:rate=1/1s,max_burst=4611686018427387905ns"}},
	{Field: "mode", Accepted: "try (tryAcquire) or wait (acquire)",
		Why:     "Guava's two calls",
		Valid:   []string{"guava-bursty:rate=1/1s,mode=try", "guava-bursty:rate=1/1s,mode=wait"},
		Invalid: []string{"guava-bursty:rate=1/1s,mode=block"}},
	{Field: "timeout", Accepted: "0 to 2^62 ns − 1, with mode=try only",
		Why:     "tryAcquire's timeout; acquire waits as long as it takes: 2^62 ns is its wait (MaxWaitForever), and the real Guava's tryAcquire with it still refuses a ticket further away",
		Valid:   []string{"guava-bursty:rate=1/1s,timeout=1ms", "guava-bursty:rate=1/1s,timeout=4611686018427387903ns"},
		Invalid: []string{"guava-bursty:rate=1/1s,timeout=4611686018427387904ns", "guava-bursty:rate=1/1s,mode=wait,timeout=1ms"}},
}

// New is NewGuavaBursty(s, clock).
func (s GuavaBurstySpec) New(clock limiters.Clock) (limiters.Limiter, error) {
	return NewGuavaBursty(s, clock)
}

// CallerWait is MaxWaitForever for mode=wait (acquire), else the timeout.
func (s GuavaBurstySpec) CallerWait() time.Duration { return guavaCallerWait(s.Mode, s.Timeout) }

// AdmissionBound is ⌊(M·T + D) / (T − 1)⌋ + 2³¹ − 1, with M = maxPermits, T the stable
// interval and D = ⌈(L − 1ns)/1µs⌉ the µs an interval of length L spans. The last request in
// the interval can be of any size — Guava bounds when the next caller goes, not what one
// takes — and the ones before it spend at most M stored permits plus what the idle in the
// interval stores (one per T), and pay for the rest at least T − 1 µs each (each reservation
// cuts less than 1µs). 100/1s: L = 1ns, 100 + 2³¹ − 1; L = 1s, 200 + 2³¹ − 1 — both reached:
// 100 stored permits, then one request every 9999µs (the cut, see above), the last of
// 2³¹ − 1 permits.
func (s GuavaBurstySpec) AdmissionBound(L time.Duration) (int64, bool) {
	pps := guavaPermitsPerSecond(s.Rate)
	t, m := 1e6/pps, guavaSeconds(s.MaxBurst)*pps
	return guavaFloor((m*t+guavaSpan(L))/(t-1)) + guavaMaxPermits, true
}

// NaturalWindow is the rate's window.
func (s GuavaBurstySpec) NaturalWindow() time.Duration { return s.Rate.Window }

// NominalRate is the rate.
func (s GuavaBurstySpec) NominalRate() (limiters.Rate, bool) { return s.Rate, true }

// InitialPermits is 1: no stored permits, but the first request passes at once.
func (s GuavaBurstySpec) InitialPermits() int { return 1 }

// NewGuavaBursty returns Guava's SmoothBursty for spec on clock, made at the clock's current
// time (its microsecond 0): RateLimiter.create(rate) for max_burst=1s. It refuses what
// GuavaBurstySpec.Validate refuses and a nil clock.
func NewGuavaBursty(spec GuavaBurstySpec, clock limiters.Clock) (*GuavaBursty, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := limiters.RequireClock(KindGuavaBursty, clock); err != nil {
		return nil, err
	}
	b := &GuavaBursty{spec: spec}
	// SmoothRateLimiter.doSetRate at creation: the interval, then SmoothBursty's maxPermits
	// with its initial state (oldMaxPermits == 0: storedPermits = 0, nextFree = 0).
	pps := guavaPermitsPerSecond(spec.Rate)
	b.stable = 1e6 / pps
	b.coolDown = b.stable
	b.maxPermits = guavaSeconds(spec.MaxBurst) * pps
	b.born, b.clock, b.live = clock.Now(), clock, true
	return b, nil
}

// AcquireAt is tryAcquire(n) at now: admitted iff the next free ticket has come.
func (b *GuavaBursty) AcquireAt(now time.Duration, n int) limiters.Decision {
	return b.acquireAt(now, n)
}

// TryAcquireAt reports whether n permits were taken at time now.
func (b *GuavaBursty) TryAcquireAt(now time.Duration, n int) bool {
	return b.acquireAt(now, n) == limiters.Admitted
}

// TryAcquire takes n permits now, by the limiter's clock.
func (b *GuavaBursty) TryAcquire(n int) bool { return b.TryAcquireAt(limiters.ReadClock(b.clock), n) }

// AvailableAt is how many one-permit requests would pass at now one after another:
// ⌊stored⌋ + 1 once the next free ticket has come (+1 more if that one's cost is cut to 0µs),
// else 0.
func (b *GuavaBursty) AvailableAt(now time.Duration) int { return b.availableAt(now) }

// Available is AvailableAt(clock.Now()).
func (b *GuavaBursty) Available() int { return b.availableAt(limiters.ReadClock(b.clock)) }

// RetryAfterAt is how long until the next free ticket, for any n: then a request of any size
// passes.
func (b *GuavaBursty) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	return b.retryAfterAt(now, n)
}

// ReserveAt is tryAcquire(n, maxWait), or acquire(n) for maxWait = MaxWaitForever: admitted
// with Guava's wait (whole µs) when the next free ticket is at most maxWait away.
func (b *GuavaBursty) ReserveAt(now time.Duration, n int, maxWait time.Duration) limiters.Reservation {
	return b.reserveAt(now, n, maxWait)
}

// CancelAt undoes r exactly if it is the last reservation and is cancelled in its own
// microsecond; otherwise nothing comes back (Guava cannot cancel).
func (b *GuavaBursty) CancelAt(now time.Duration, r limiters.Reservation) { b.cancelAt(now, r) }

// MaxPermits is 2³¹−1, Java's largest int: Guava takes a request of any size.
func (b *GuavaBursty) MaxPermits() int {
	if !b.live {
		return 0
	}
	return guavaMaxPermits
}

// Kind is KindGuavaBursty.
func (b *GuavaBursty) Kind() limiters.Kind { return KindGuavaBursty }

// String is the spec.
func (b *GuavaBursty) String() string { return b.spec.String() }

// Spec is the limiter's configuration.
func (b *GuavaBursty) Spec() GuavaBurstySpec { return b.spec }

// Snapshot returns the stored permits (resynced to now) of maxPermits and the next free
// ticket.
func (b *GuavaBursty) Snapshot(now time.Duration) limiters.State {
	return b.snapshot(KindGuavaBursty, now)
}
