package peers

import (
	"fmt"
	"github.com/ratelab/ratelab/limiters"
	"math"
	"strconv"
	"time"
)

// KindGuavaWarmUp is Guava's SmoothWarmingUp (RateLimiter.create(permitsPerSecond,
// warmupPeriod)) in specs.
const KindGuavaWarmUp limiters.Kind = "guava-warmup"

// GuavaWarmingUp is a model, decision for decision and wait for wait (in µs), of Guava's
// RateLimiter.create(permitsPerSecond, warmupPeriod): SmoothWarmingUp. The frame is
// SmoothBursty's (see GuavaBursty: whole µs, a double of stored permits, the next free
// ticket, the cost of a request paid by the next caller), but stored permits are not free:
// they measure how cold the limiter is, and spending them costs time along a line —
//
//	stable interval  T = 1e6 / permitsPerSecond µs, cold interval C = T × cold_factor (3)
//	threshold        0.5 × warmup / T stored permits
//	max              threshold + 2 × warmup / (T + C) stored permits
//	slope            (C − T) / (max − threshold) µs per permit, per stored permit above the threshold
//
// Spending k stored permits from s costs the area under the interval line between s − k and
// s: above the threshold a trapezoid rising from T at the threshold to C at max, below it T
// per permit (each part cut to whole µs); fresh permits cost T each. The limiter starts full —
// cold, max stored permits — and idle refills one stored permit per warmup / max µs (with
// cold_factor 3 exactly T), so an idle of warmup makes it cold again. 100/1s with warmup=1s:
// T = 10ms, C = 30ms, threshold 50, max 100, slope 400µs; from cold, successive requests
// cost 29.8ms, 29.4ms, … down to 10ms once 50 permits are spent — the warm-up takes exactly
// the trapezoid's area, 1s, under saturating demand (acquire).
//
// What follows for tryAcquire, which is no queue: only demand that pays the cold costs warms
// it, and a caller who is refused pays nothing. With tryAcquire traffic at exactly the stable
// rate (100/1s, warmup=1s, one request every 10ms from creation) each admission from cold costs
// more than the 10ms to the next request, so that one is refused, and the idle that follows
// stores permits back: it admits 33–34 requests a second until 7s, 50 a second (one in two,
// each costing 10.001ms) until 24s, and every request only from 24.82s — 25 warm-up periods,
// reached only because a cut to whole µs makes one request cost 10000µs. With cold_factor=2 it
// never warms up: idle refills faster (a permit per 8.57ms) and the stored permits settle at
// 59.03, above the threshold of 50, admitting exactly 50 a second for ever. The same traffic
// with acquire (mode=wait) is warm after 50 requests, and every caller after waits 500ms (the
// golden guarantee guava-warmup-never-warms pins these numbers; the real Guava 31.1 gives
// them too, and with cold_factor=2 its state repeats exactly every 140ms from 12.9s on, 7 of
// 14 requests refused: limiters/peers/guava_java_test.go).
//
// Where it differs from ratelab's warm-up, and why it matters:
//
//	                       guava-warmup                            warm-up
//	starts                 full of stored permits: cold            cold by age: interval 3T at age 0
//	what warms it          traffic: spending stored permits        age: the interval falls with time,
//	                       (acquire, or try traffic above the      whether or not requests come
//	                       rate); idle makes it cold again
//	burst                  none: one request at a time, each       ⌊capacity/3⌋ cold … capacity warm
//	                       costing at least T (stored permits
//	                       are dearer, not free)
//	who pays for a request the next caller (any size passes)       the request itself
//	time resolution        whole µs, costs cut per part            ns
//	arithmetic             doubles, under a mutex                  one int64, lock-free
//
// MaxPermits is 2³¹−1, Available is 1 once the next free ticket has come (else 0), and
// CancelAt and the mutex are as for GuavaBursty.
//
// The zero value grants nothing: every request is Never; NewGuavaWarmingUp makes a working
// one.
type GuavaWarmingUp struct {
	guava
	spec GuavaWarmUpSpec
}

var (
	_ limiters.RateLimiter = (*GuavaWarmingUp)(nil)
	_ limiters.Reserver    = (*GuavaWarmingUp)(nil)
	_ limiters.Clocked     = (*GuavaWarmingUp)(nil)
	_ limiters.Waiting     = GuavaWarmUpSpec{}
)

// GuavaWarmUpSpec configures a GuavaWarmingUp: "guava-warmup:rate=100/1s,warmup=1s".
type GuavaWarmUpSpec struct {
	Rate       limiters.Rate // the stable rate: permitsPerSecond = Rate.Permits / Rate.Window, as a double
	WarmUp     time.Duration // warmupPeriod, a whole number of µs
	ColdFactor float64       // the cold interval over the stable one (default 3; Guava's public API fixes 3)
	Mode       GuavaMode     // try (tryAcquire, the default; "" is try) or wait (acquire)
	Timeout    time.Duration // mode=try: tryAcquire's timeout (default 0)
}

var guavaWarmUpKind = limiters.KindInfo{
	Kind: KindGuavaWarmUp, Family: FamilyGuava, Shape: limiters.ShapeLevel,
	Summary:      "Guava's SmoothWarmingUp: starts cold and full, stored permits cost more than fresh ones",
	Example:      "guava-warmup:rate=100/1s,warmup=1s",
	Fields:       limiters.FieldInfos[GuavaWarmUpSpec](),
	Ranges:       guavaWarmUpRanges,
	Capabilities: []limiters.Capability{limiters.CapRetryAfter, limiters.CapReserve},
	Parse:        limiters.SpecParser(GuavaWarmUpSpec{ColdFactor: 3, Mode: GuavaTry}),
	Explain:      explainGuava,
}

func (s *GuavaWarmUpSpec) Fields() []limiters.Field {
	cold := limiters.Field{
		FieldInfo: limiters.FieldInfo{Name: "cold_factor", Meaning: "the cold interval over the stable one, at least 1 (default 3)"},
		Set: func(text string) error {
			v, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return fmt.Errorf("%q is not a number", text)
			}
			s.ColdFactor = v
			return nil
		},
		Get:  func() string { return strconv.FormatFloat(s.ColdFactor, 'g', -1, 64) },
		Omit: func() bool { return s.ColdFactor == 3 },
	}
	return append([]limiters.Field{
		limiters.RateField("rate", true, "the stable rate, e.g. 100/1s: Guava's permitsPerSecond, a double", &s.Rate),
		limiters.DurationField("warmup", true, "whole µs: from cold to the stable rate under saturating demand", &s.WarmUp),
		cold,
	}, guavaModeFields(&s.Mode, &s.Timeout)...)
}

// Kind is KindGuavaWarmUp.
func (s GuavaWarmUpSpec) Kind() limiters.Kind { return KindGuavaWarmUp }

// String is "guava-warmup:rate=100/1s,warmup=1s" (with ",cold_factor=…", ",mode=wait" or
// ",timeout=…" when they are not the defaults).
func (s GuavaWarmUpSpec) String() string { return limiters.FormatSpec(KindGuavaWarmUp, s.Fields()) }

// Validate refuses what GuavaBurstySpec.Validate refuses for the rate, mode and timeout, a
// warm-up that is not a whole number of µs or is below 1µs or beyond 2⁶² ns (Guava takes 0,
// and its cool-down interval 0/0 is then NaN), and a cold factor below 1 or not finite.
func (s GuavaWarmUpSpec) Validate() error {
	if err := validateGuavaRate(KindGuavaWarmUp, s.Rate); err != nil {
		return err
	}
	if s.WarmUp < time.Microsecond || s.WarmUp%time.Microsecond != 0 || int64(s.WarmUp) > limiters.MaxSpan {
		return limiters.NewConfigError(KindGuavaWarmUp, "warmup", limiters.FormatDuration(s.WarmUp),
			"must be a whole number of microseconds, at least 1µs and at most 2^62ns (Guava counts µs; at 0 its cool-down is 0/0)")
	}
	if !(s.ColdFactor >= 1) || math.IsInf(s.ColdFactor, 0) {
		return limiters.NewConfigError(KindGuavaWarmUp, "cold_factor", strconv.FormatFloat(s.ColdFactor, 'g', -1, 64),
			"must be a finite number of at least 1 (below 1 stored permits would cost less than fresh ones)")
	}
	return validateGuavaMode(KindGuavaWarmUp, s.Mode, s.Timeout)
}

// guavaWarmUpRanges are what GuavaWarmUpSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for guava-warmup, with specs at and just past each edge that the registry
// test holds to Validate.
var guavaWarmUpRanges = []limiters.FieldRange{
	{Field: "rate", Accepted: "as guava-bursty's",
		Why:     "as guava-bursty's",
		Valid:   []string{"guava-warmup:rate=250000/1s,warmup=1s", "guava-warmup:rate=1/1h,warmup=1s"},
		Invalid: []string{"guava-warmup:rate=250001/1s,warmup=1s"}},
	{Field: "warmup", Accepted: "a whole number of microseconds, from 1µs to 2^62 ns",
		Why:     "Guava counts microseconds, and a warm-up of 0 makes its cool-down 0/0",
		Valid:   []string{"guava-warmup:rate=1/1s,warmup=1us", "guava-warmup:rate=1/1s,warmup=4611686018427387us"},
		Invalid: []string{"guava-warmup:rate=1/1s,warmup=1500ns", "guava-warmup:rate=1/1s,warmup=4611686018427387905ns"}},
	{Field: "cold_factor", Accepted: "a finite number, at least 1 (default 3)",
		Why:     "below 1 stored permits would cost less than fresh ones",
		Valid:   []string{"guava-warmup:rate=1/1s,warmup=1s,cold_factor=1", "guava-warmup:rate=1/1s,warmup=1s,cold_factor=10"},
		Invalid: []string{"guava-warmup:rate=1/1s,warmup=1s,cold_factor=0.5"}},
	{Field: "mode", Accepted: "as guava-bursty's",
		Why:     "as guava-bursty's",
		Valid:   []string{"guava-warmup:rate=1/1s,warmup=1s,mode=wait"},
		Invalid: []string{"guava-warmup:rate=1/1s,warmup=1s,mode=block"}},
	{Field: "timeout", Accepted: "as guava-bursty's",
		Why:     "as guava-bursty's",
		Valid:   []string{"guava-warmup:rate=1/1s,warmup=1s,timeout=1ms"},
		Invalid: []string{"guava-warmup:rate=1/1s,warmup=1s,mode=wait,timeout=1ms", "guava-warmup:rate=1/1s,warmup=1s,timeout=4611686018427387904ns"}},
}

// New is NewGuavaWarmingUp(s, clock).
func (s GuavaWarmUpSpec) New(clock limiters.Clock) (limiters.Limiter, error) {
	return NewGuavaWarmingUp(s, clock)
}

// CallerWait is MaxWaitForever for mode=wait (acquire), else the timeout.
func (s GuavaWarmUpSpec) CallerWait() time.Duration { return guavaCallerWait(s.Mode, s.Timeout) }

// AdmissionBound is ⌊D / (T − 3)⌋ + 2³¹ − 1, with T the stable interval and D = ⌈(L −
// 1ns)/1µs⌉ the µs an interval of length L spans: the last request can be of any size, and
// every permit before it costs at least T less the three cuts of its reservation (stored
// permits cost T or more, fresh ones T). 100/1s: L = 1ns, 2³¹ − 1; L = 1s, 100 + 2³¹ − 1,
// reached once warm by a request every 10ms, the last of 2³¹ − 1 permits.
func (s GuavaWarmUpSpec) AdmissionBound(L time.Duration) (int64, bool) {
	t := 1e6 / guavaPermitsPerSecond(s.Rate)
	return guavaFloor(guavaSpan(L)/(t-3)) + guavaMaxPermits, true
}

// NaturalWindow is the rate's window.
func (s GuavaWarmUpSpec) NaturalWindow() time.Duration { return s.Rate.Window }

// NominalRate is the stable rate.
func (s GuavaWarmUpSpec) NominalRate() (limiters.Rate, bool) { return s.Rate, true }

// InitialPermits is 1: the first request passes at once (and costs the cold interval).
func (s GuavaWarmUpSpec) InitialPermits() int { return 1 }

// NewGuavaWarmingUp returns Guava's SmoothWarmingUp for spec on clock, made at the clock's
// current time: RateLimiter.create(rate, warmup) for cold_factor=3. It refuses what
// GuavaWarmUpSpec.Validate refuses and a nil clock.
func NewGuavaWarmingUp(spec GuavaWarmUpSpec, clock limiters.Clock) (*GuavaWarmingUp, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := limiters.RequireClock(KindGuavaWarmUp, clock); err != nil {
		return nil, err
	}
	w := &GuavaWarmingUp{spec: spec}
	// SmoothRateLimiter.doSetRate at creation, then SmoothWarmingUp's: the line's geometry
	// and the initial state, cold (oldMaxPermits == 0: storedPermits = maxPermits).
	warmup := float64(int64(spec.WarmUp / time.Microsecond))
	w.stable = 1e6 / guavaPermitsPerSecond(spec.Rate)
	cold := w.stable * spec.ColdFactor
	w.threshold = 0.5 * warmup / w.stable
	w.maxPermits = w.threshold + 2.0*warmup/(w.stable+cold)
	w.slope = (cold - w.stable) / (w.maxPermits - w.threshold)
	w.stored = w.maxPermits
	w.coolDown = warmup / w.maxPermits
	w.warming = true
	w.born, w.clock, w.live = clock.Now(), clock, true
	return w, nil
}

// AcquireAt is tryAcquire(n) at now: admitted iff the next free ticket has come.
func (w *GuavaWarmingUp) AcquireAt(now time.Duration, n int) limiters.Decision {
	return w.acquireAt(now, n)
}

// TryAcquireAt reports whether n permits were taken at time now.
func (w *GuavaWarmingUp) TryAcquireAt(now time.Duration, n int) bool {
	return w.acquireAt(now, n) == limiters.Admitted
}

// TryAcquire takes n permits now, by the limiter's clock.
func (w *GuavaWarmingUp) TryAcquire(n int) bool {
	return w.TryAcquireAt(limiters.ReadClock(w.clock), n)
}

// AvailableAt is 1 once the next free ticket has come, else 0: every permit costs at least
// the stable interval (less the cuts), so one request passes at a time.
func (w *GuavaWarmingUp) AvailableAt(now time.Duration) int { return w.availableAt(now) }

// Available is AvailableAt(clock.Now()).
func (w *GuavaWarmingUp) Available() int { return w.availableAt(limiters.ReadClock(w.clock)) }

// RetryAfterAt is how long until the next free ticket, for any n.
func (w *GuavaWarmingUp) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	return w.retryAfterAt(now, n)
}

// ReserveAt is tryAcquire(n, maxWait), or acquire(n) for maxWait = MaxWaitForever.
func (w *GuavaWarmingUp) ReserveAt(now time.Duration, n int, maxWait time.Duration) limiters.Reservation {
	return w.reserveAt(now, n, maxWait)
}

// CancelAt undoes r exactly if it is the last reservation and is cancelled in its own
// microsecond; otherwise nothing comes back.
func (w *GuavaWarmingUp) CancelAt(now time.Duration, r limiters.Reservation) { w.cancelAt(now, r) }

// MaxPermits is 2³¹−1, Java's largest int.
func (w *GuavaWarmingUp) MaxPermits() int {
	if !w.live {
		return 0
	}
	return guavaMaxPermits
}

// Kind is KindGuavaWarmUp.
func (w *GuavaWarmingUp) Kind() limiters.Kind { return KindGuavaWarmUp }

// String is the spec.
func (w *GuavaWarmingUp) String() string { return w.spec.String() }

// Spec is the limiter's configuration.
func (w *GuavaWarmingUp) Spec() GuavaWarmUpSpec { return w.spec }

// Snapshot returns the stored permits (resynced to now) of maxPermits and the next free
// ticket.
func (w *GuavaWarmingUp) Snapshot(now time.Duration) limiters.State {
	return w.snapshot(KindGuavaWarmUp, now)
}
