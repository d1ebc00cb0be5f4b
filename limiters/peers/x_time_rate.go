package peers

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/internal/limits"
)

// KindXTimeRate is golang.org/x/time/rate's name in specs.
const KindXTimeRate limiters.Kind = "x-time-rate"

// FamilyXTimeRate is golang.org/x/time/rate, the Go team's token bucket.
const FamilyXTimeRate limiters.Family = "x-time-rate"

// virtualEpoch is the instant a peer library is told virtual time 0 is, when its API takes a
// time.Time: a constant, never the wall clock, so a run decides the same every time. It is
// not the Unix epoch on purpose: go.uber.org/ratelimit reads an issue time of exactly 0 Unix
// nanoseconds as "never taken", so a virtual 0 mapped to Unix 0 would forget its first Take.
var virtualEpoch = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// XTimeRate is the real golang.org/x/time/rate (the module in go.mod, v0.16.0), not a
// re-implementation: a *rate.Limiter created with rate.NewLimiter(permits / window seconds,
// burst) and driven at the lane's virtual time, virtualEpoch + now, through the library's
// explicit-time calls:
//
//	mode=try (the default)    AllowN(t, n)
//	mode=try,timeout=15ms     ReserveN(t, n); admitted if DelayFrom(t) ≤ 15ms, else CancelAt(t)
//	mode=wait                 ReserveN(t, n); admitted with DelayFrom(t) as the wait
//	a cancelled reservation   the library's Reservation.CancelAt
//
// The library is a token bucket in float64: tokens = min(burst, tokens + elapsed.Seconds() ·
// limit), and a request for n waits (tokens − n) / limit seconds, converted to a
// time.Duration by truncation. rate=100/1s,burst=3: the bucket starts full, three requests
// pass at 0, a fourth is refused (AllowN) or waits 10ms (mode=wait: the next two wait 10ms
// and 20ms, and the tokens go negative, −2 after five), and from then on one passes every
// 10ms. AllowN(t, n) with n > burst is refused forever (Never here), whatever the idle.
//
// The truncation admits what exact arithmetic refuses: a request whose deficit is less than
// one nanosecond of refill waits "0" and passes. rate=3/1s,burst=1 (one token per
// 333,333,333.3ns) admits at 0, 333,333,333, 666,666,666 and 999,999,999ns, each 1/3ns to
// 1ns early, the deficit carried as negative tokens (−1e-9, −2e-9, −3e-9, the last one
// rounded to 0.99999999ns): four permits in one second from a limiter of three per second
// with a burst of one, where ratelab's token bucket of the same spec (T rounded up to
// 333,333,334ns) admits the first and the third. The next request at 1,333,333,332ns is
// refused and the debt is paid; the pattern repeats every 5 requests.
//
// Where it differs from ratelab's token-bucket (capacity = burst, same rate):
//
//	                      x-time-rate                              token-bucket
//	starts                full: burst tokens                       full: capacity permits
//	time resolution       float64 seconds; a wait is truncated     whole ns; T = window/permits
//	                      to whole ns, so a deficit under 1ns of   rounded up, never admits
//	                      refill passes (sub-ns admissions)        early
//	bound over L          burst + ⌊permits·L/window⌋: one more     capacity + ⌈L/T⌉ − 1
//	                      when permits·L/window is whole, where
//	                      the float rounding at the 1ns edge
//	                      admits (3/1s, 100/1s; not 7/1s)
//	who pays for a burst  the caller that waits (ReserveN); the    the caller (reserve) or nobody
//	                      debt is negative tokens                  (refused)
//	"burst" means         bucket size and the largest n, forever   capacity, the same
//	a late clock reading  no refill (elapsed = 0), decided now     judged at its own time
//	concurrency           a sync.Mutex per call (float state)      one CAS, no lock
//	allocation            none (the library's Reservation is kept  none
//	                      by value for CancelAt)
//	cancellation          the library's CancelAt: at the instant,  exact at the instant
//	                      within ~1e-14 tokens ((tokens − n) + n
//	                      rounds), so a later wait can differ by
//	                      1ns (2–13% of them on random traffic);
//	                      no decision differed in 300,000
//
// Cancellation needs the library's rate.Reservation, which ratelab's Reservation cannot carry:
// the limiter keeps (copies of) its last 16 admitted reservations and CancelAt cancels the
// matching one (same time, permits and wait) through the library, once; an older one, or a
// plain try's grant (AllowN has no undo: a later stage's refusal wastes it, as in a service
// that called AllowN), gives nothing back — never more than it took.
//
// The limiter is safe for concurrent use: the library takes its own mutex on every call, and
// the reservation memory has one of its own. It passes the race detector.
//
// The zero value grants nothing: every request is Never; NewXTimeRate makes a working one.
type XTimeRate struct {
	lim   *rate.Limiter
	limit rate.Limit
	spec  XTimeRateSpec
	clock limiters.Clock

	mu   sync.Mutex // guards held and next
	held [xTimeRateHeld]xTimeRateHold
	next int
}

// xTimeRateHeld is how many admitted reservations XTimeRate remembers for CancelAt.
const xTimeRateHeld = 16

// xTimeRateHold is one admitted reservation: a copy of the library's Reservation (CancelAt
// reads only its values) and what ratelab was told; n = 0 marks a free slot.
type xTimeRateHold struct {
	r        rate.Reservation
	at, wait time.Duration
	n        int
}

var (
	_ limiters.Limiter  = (*XTimeRate)(nil)
	_ limiters.Clocked  = (*XTimeRate)(nil)
	_ limiters.Reserver = (*XTimeRate)(nil)
	_ limiters.Waiting  = XTimeRateSpec{}
)

// XTimeRateSpec configures an XTimeRate: "x-time-rate:rate=100/1s,burst=3".
type XTimeRateSpec struct {
	Rate  limiters.Rate // the limit, permits per window: rate.Limit(permits / window seconds)
	Burst int           // the bucket's size and the largest request
	// Mode is how callers ask: "try" (AllowN, or ReserveN within Timeout) or "wait"
	// (ReserveN, waiting as long as it takes). "" is "try".
	Mode string
	// Timeout is how long a try-mode caller waits (0: AllowN, no wait).
	Timeout time.Duration
}

var xTimeRateKind = limiters.KindInfo{
	Kind: KindXTimeRate, Family: FamilyXTimeRate, Shape: limiters.ShapeLevel,
	Summary:      "golang.org/x/time/rate, the real library: float token bucket, AllowN/ReserveN at virtual time",
	Example:      "x-time-rate:rate=100/1s,burst=3",
	Checks:       limiters.CheckSpecs{Sizes: "x-time-rate:rate=100/1s,burst=5"},
	Fields:       limiters.FieldInfos[XTimeRateSpec](),
	Ranges:       xTimeRateRanges,
	Capabilities: []limiters.Capability{limiters.CapRetryAfter, limiters.CapReserve},
	Parse:        limiters.SpecParser(XTimeRateSpec{Mode: "try"}),
	Explain:      explainXTimeRate,
}

// peerModeField is a peer's mode=try|wait, omitted when it is the product's default call.
func peerModeField(v *string, def, meaning string) limiters.Field {
	return limiters.Field{
		FieldInfo: limiters.FieldInfo{Name: "mode", Meaning: meaning},
		Set: func(text string) error {
			if text != "try" && text != "wait" {
				return fmt.Errorf("%q is not a mode (try or wait)", text)
			}
			*v = text
			return nil
		},
		Get:  func() string { return *v },
		Omit: func() bool { return *v == def || *v == "" },
	}
}

func (s *XTimeRateSpec) Fields() []limiters.Field {
	timeout := limiters.Field{
		FieldInfo: limiters.FieldInfo{Name: "timeout", Meaning: "mode=try: how long a caller waits for its tokens (default 0: AllowN)"},
		Set: func(text string) error {
			d, err := time.ParseDuration(text)
			if err != nil {
				return fmt.Errorf("%q is not a duration (e.g. 15ms)", text)
			}
			if d < 0 {
				return fmt.Errorf("must not be negative")
			}
			s.Timeout = d
			return nil
		},
		Get:  func() string { return limiters.FormatDuration(s.Timeout) },
		Omit: func() bool { return s.Timeout == 0 },
	}
	return []limiters.Field{
		limiters.RateField("rate", true, "the limit, permits per window (rate.Limit = permits / window seconds)", &s.Rate),
		limiters.IntField("burst", true, "the bucket's size: the largest burst and the largest request", &s.Burst),
		peerModeField(&s.Mode, "try", "try (AllowN; ReserveN within timeout) or wait (ReserveN, waits as long as it takes); default try"),
		timeout,
	}
}

// Kind is KindXTimeRate.
func (s XTimeRateSpec) Kind() limiters.Kind { return KindXTimeRate }

// String is "x-time-rate:rate=100/1s,burst=3" (with ",mode=wait" or ",timeout=…" when set).
func (s XTimeRateSpec) String() string { return limiters.FormatSpec(KindXTimeRate, s.Fields()) }

// wait reports mode=wait.
func (s XTimeRateSpec) wait() bool { return s.Mode == "wait" }

// Validate refuses what ratelab's rates refuse (no permits, a non-positive window, an
// interval below 1ns), a burst below 1 or above 2⁵³ (where float64 stops counting tokens
// exactly), a mode other than try or wait, a negative timeout or one beyond 2⁶² ns, and a
// timeout with mode=wait (which waits as long as it takes).
func (s XTimeRateSpec) Validate() error {
	if err := s.Rate.Validate(KindXTimeRate); err != nil {
		return err
	}
	if s.Burst < 1 || int64(s.Burst) > 1<<53 {
		return limiters.NewConfigError(KindXTimeRate, "burst", fmt.Sprint(s.Burst), "must be between 1 and 2^53 (float64 tokens)")
	}
	if s.Mode != "" && s.Mode != "try" && s.Mode != "wait" {
		return limiters.NewConfigError(KindXTimeRate, "mode", s.Mode, "must be try (AllowN) or wait (ReserveN)")
	}
	if s.Timeout < 0 || int64(s.Timeout) > limiters.MaxSpan {
		return limiters.NewConfigError(KindXTimeRate, "timeout", limiters.FormatDuration(s.Timeout), "must be between 0 and 2^62ns")
	}
	if s.Timeout > 0 && s.wait() {
		return limiters.NewConfigError(KindXTimeRate, "timeout", limiters.FormatDuration(s.Timeout),
			"applies to mode=try (how long a try waits); mode=wait waits as long as ReserveN says")
	}
	return nil
}

// xTimeRateRanges are what XTimeRateSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for x-time-rate, with specs at and just past each edge that the registry
// test holds to Validate.
var xTimeRateRanges = []limiters.FieldRange{
	{Field: "rate", Accepted: "permits/window as the token bucket's; the library keeps it as a float64 per second",
		Why:     limits.PerNS,
		Valid:   []string{"x-time-rate:rate=1/1ns,burst=1", "x-time-rate:rate=1/1h,burst=1"},
		Invalid: []string{"x-time-rate:rate=2/1ns,burst=1", "x-time-rate:rate=0/1s,burst=1"}},
	{Field: "burst", Accepted: "1 to 2^53",
		Why:     "the library counts tokens in a float64, exact up to 2^53",
		Valid:   []string{"x-time-rate:rate=1/1s,burst=1", "x-time-rate:rate=1/1s,burst=9007199254740992"},
		Invalid: []string{"x-time-rate:rate=1/1s,burst=0", "x-time-rate:rate=1/1s,burst=9007199254740993"}},
	{Field: "mode", Accepted: "try (AllowN; ReserveN within a timeout) or wait (ReserveN)",
		Why:     "the library's two calls",
		Valid:   []string{"x-time-rate:rate=1/1s,burst=1,mode=try", "x-time-rate:rate=1/1s,burst=1,mode=wait"},
		Invalid: []string{"x-time-rate:rate=1/1s,burst=1,mode=block"}},
	{Field: "timeout", Accepted: "0 to 2^62 ns, with mode=try only",
		Why:     "a wait is added to times up to 2^62 ns; mode=wait waits as long as ReserveN says",
		Valid:   []string{"x-time-rate:rate=1/1s,burst=1,timeout=1ms", "x-time-rate:rate=1/1s,burst=1,timeout=4611686018427387904ns"},
		Invalid: []string{"x-time-rate:rate=1/1s,burst=1,timeout=4611686018427387905ns", "x-time-rate:rate=1/1s,burst=1,mode=wait,timeout=1ms"}},
}

// CallerWait is how long the spec's callers wait: MaxWaitForever in mode=wait, the timeout in
// mode=try (0: AllowN).
func (s XTimeRateSpec) CallerWait() time.Duration {
	if s.wait() {
		return limiters.MaxWaitForever
	}
	return s.Timeout
}

// New is NewXTimeRate(s, clock).
func (s XTimeRateSpec) New(clock limiters.Clock) (limiters.Limiter, error) {
	return NewXTimeRate(s, clock)
}

// AdmissionBound is burst + ⌊permits·L/window⌋: a full bucket, then the refill, plus, when
// permits·L/window is a whole number, the one sub-nanosecond admission the library's float
// rounding can allow at the 1ns edge. It is an upper bound, reached where the rounding falls
// below 1ns: 100/1s burst 3 over 1s: 103, reached (ratelab's token bucket: 102); 3/1s burst 1:
// 4, reached; 7/1s burst 2: 9, while the greedy adversary gets 8, the token bucket's bound.
func (s XTimeRateSpec) AdmissionBound(L time.Duration) (int64, bool) {
	hi, lo := bits.Mul64(uint64(s.Rate.Permits), uint64(L))
	if hi >= uint64(s.Rate.Window) {
		return math.MaxInt64, true
	}
	q, _ := bits.Div64(hi, lo, uint64(s.Rate.Window))
	if q > math.MaxInt64-uint64(s.Burst) {
		return math.MaxInt64, true
	}
	return int64(s.Burst) + int64(q), true
}

// NaturalWindow is the rate's window.
func (s XTimeRateSpec) NaturalWindow() time.Duration { return s.Rate.Window }

// NominalRate is the rate.
func (s XTimeRateSpec) NominalRate() (limiters.Rate, bool) { return s.Rate, true }

// InitialPermits is the burst: rate.NewLimiter starts full.
func (s XTimeRateSpec) InitialPermits() int { return s.Burst }

// limit is the library's rate.Limit for the spec: permits / window seconds.
func (s XTimeRateSpec) limit() rate.Limit {
	return rate.Limit(float64(s.Rate.Permits) / s.Rate.Window.Seconds())
}

// NewXTimeRate returns golang.org/x/time/rate's limiter for spec on clock (the plain forms
// read it; the At forms take the time): rate.NewLimiter(permits / window seconds, burst). It
// refuses what XTimeRateSpec.Validate refuses and a nil clock.
func NewXTimeRate(spec XTimeRateSpec, clock limiters.Clock) (*XTimeRate, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := limiters.RequireClock(KindXTimeRate, clock); err != nil {
		return nil, err
	}
	limit := spec.limit()
	return &XTimeRate{lim: rate.NewLimiter(limit, spec.Burst), limit: limit, spec: spec, clock: clock}, nil
}

// Library is the *rate.Limiter itself, for callers that want the library's own API.
func (x *XTimeRate) Library() *rate.Limiter { return x.lim }

// at is the library's time for virtual time now: virtualEpoch + now.
func (x *XTimeRate) at(now time.Duration) time.Time { return virtualEpoch.Add(now) }

// AcquireAt is AllowN(virtualEpoch + now, n): Admitted when the library allows it, Never when
// it refuses an n above the burst (which it refuses forever), Invalid for n ≤ 0 (the library
// would allow 0 and credit a negative n).
func (x *XTimeRate) AcquireAt(now time.Duration, n int) limiters.Decision {
	if x.lim == nil || n <= 0 {
		return limiters.CheckN(n, 0)
	}
	if x.lim.AllowN(x.at(now), n) {
		return limiters.Admitted
	}
	if n > x.spec.Burst {
		return limiters.Never
	}
	return limiters.Rejected
}

// TryAcquireAt reports whether AllowN(virtualEpoch + now, n) allowed n tokens.
func (x *XTimeRate) TryAcquireAt(now time.Duration, n int) bool {
	return x.AcquireAt(now, n) == limiters.Admitted
}

// TryAcquire is TryAcquireAt at the limiter's clock's time.
func (x *XTimeRate) TryAcquire(n int) bool { return x.TryAcquireAt(limiters.ReadClock(x.clock), n) }

// ReserveAt is the library's answer for a caller who waits up to maxWait: AllowN when
// maxWait is 0 (a plain try), else ReserveN(t, n), admitted with DelayFrom(t) when that is at
// most maxWait, else cancelled at once (CancelAt(t)) and Rejected with the delay it would
// have needed. A request above the burst is Never (the reservation is not OK).
func (x *XTimeRate) ReserveAt(now time.Duration, n int, maxWait time.Duration) limiters.Reservation {
	out := limiters.Reservation{Permits: n, At: now}
	if x.lim == nil || n <= 0 {
		out.Decision = limiters.CheckN(n, 0)
		return out
	}
	if maxWait <= 0 {
		out.Decision = x.AcquireAt(now, n)
		return out
	}
	t := x.at(now)
	r := x.lim.ReserveN(t, n)
	if !r.OK() {
		out.Decision = limiters.Never
		return out
	}
	out.Wait = r.DelayFrom(t)
	if out.Wait > maxWait {
		r.CancelAt(t)
		out.Decision = limiters.Rejected
		return out
	}
	out.Decision = limiters.Admitted
	x.mu.Lock()
	x.held[x.next] = xTimeRateHold{r: *r, at: now, wait: out.Wait, n: n}
	x.next = (x.next + 1) % xTimeRateHeld
	x.mu.Unlock()
	return out
}

// CancelAt cancels an admitted reservation through the library (Reservation.CancelAt at
// virtualEpoch + now), if it is one of the last 16 ReserveN made and was not cancelled yet;
// otherwise (an AllowN grant, an older one) nothing comes back.
func (x *XTimeRate) CancelAt(now time.Duration, r limiters.Reservation) {
	if r.Decision != limiters.Admitted || x.lim == nil {
		return
	}
	var (
		found rate.Reservation
		ok    bool
	)
	x.mu.Lock()
	for i := range xTimeRateHeld {
		j := (x.next - 1 - i + 2*xTimeRateHeld) % xTimeRateHeld // newest first
		if h := &x.held[j]; h.n > 0 && h.at == r.At && h.n == r.Permits && h.wait == r.Wait {
			found, ok = h.r, true
			*h = xTimeRateHold{}
			break
		}
	}
	x.mu.Unlock()
	if ok {
		found.CancelAt(x.at(now))
	}
}

// delay is what the library makes a request for n wait with tokens in the bucket: 0 when
// tokens ≥ n, else its durationFromTokens(n − tokens), ((n − tokens) / limit) · 1e9 truncated
// to whole nanoseconds, so a deficit under 1ns of refill is no wait.
func (x *XTimeRate) delay(n int, tokens float64) time.Duration {
	deficit := float64(n) - tokens // exactly −(tokens − n), as the library negates it
	if deficit <= 0 {
		return 0
	}
	d := (deficit / float64(x.limit)) * float64(time.Second)
	if d > float64(math.MaxInt64) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d)
}

// RetryAfterAt is how long after now AllowN would first allow n, nothing else arriving: the
// first nanosecond at which the library's TokensAt leaves n a wait that truncates to 0
// (delay). The library refills in float64, so the first such instant is found by a search
// of TokensAt (read-only, about 2·log2 of the wait in ns: 46 reads for 10ms, 100/s from an
// empty bucket). ok is false for n above the burst or n ≤ 0.
func (x *XTimeRate) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	if x.lim == nil || n <= 0 || n > x.spec.Burst {
		return 0, false
	}
	if wait, ok := limiters.FirstInstant(func(d time.Duration) bool { return x.delay(n, x.lim.TokensAt(x.at(now+d))) == 0 }); ok {
		return wait, true
	}
	return time.Duration(limiters.MaxSpan), true
}

// availableIn is the largest n ≤ burst that AllowN would allow with tokens in the bucket:
// ⌊tokens⌋, or one more when its deficit is under 1ns of refill.
func (x *XTimeRate) availableIn(tokens float64) int {
	k := 0
	if tokens >= 1 {
		k = int(min(math.Floor(tokens), float64(x.spec.Burst)))
	}
	for k < x.spec.Burst && x.delay(k+1, tokens) == 0 {
		k++
	}
	return k
}

// AvailableAt is the largest n that AllowN(virtualEpoch + now, n) would allow, from the
// library's TokensAt.
func (x *XTimeRate) AvailableAt(now time.Duration) int {
	if x.lim == nil {
		return 0
	}
	return x.availableIn(x.lim.TokensAt(x.at(now)))
}

// Available is AvailableAt at the limiter's clock's time.
func (x *XTimeRate) Available() int { return x.AvailableAt(limiters.ReadClock(x.clock)) }

// MaxPermits is the burst.
func (x *XTimeRate) MaxPermits() int { return x.spec.Burst }

// Kind is KindXTimeRate.
func (x *XTimeRate) Kind() limiters.Kind { return KindXTimeRate }

// String is the spec.
func (x *XTimeRate) String() string { return x.Spec().String() }

// Spec is the limiter's configuration.
func (x *XTimeRate) Spec() XTimeRateSpec { return x.spec }

// Snapshot is the library's TokensAt(virtualEpoch + now) against the burst (negative while
// waiting callers owe tokens), and when one token is next free: now, or now + the library's
// delay for one token.
func (x *XTimeRate) Snapshot(now time.Duration) limiters.State {
	st := limiters.State{Kind: KindXTimeRate, At: now, LevelName: "tokens", NextFree: now}
	if x.lim == nil {
		return st
	}
	tokens := x.lim.TokensAt(x.at(now))
	st.Available = x.availableIn(tokens)
	st.MaxPermits = x.spec.Burst
	st.Level, st.LevelMax = tokens, float64(x.spec.Burst)
	if st.Available < 1 {
		st.NextFree = now + x.delay(1, tokens)
	}
	return st
}

// explainXTimeRate: the tokens against the burst, and what n of them cost.
func explainXTimeRate(s limiters.State, n int, d limiters.Decision) string {
	head := fmt.Sprintf("x/time/rate holds %s of %s tokens", xTokens(s.Level), xTokens(s.LevelMax))
	short := float64(n) - s.Level
	refill := fmt.Sprintf("the refill of %s tokens", xTokens(short))
	if n == 1 && s.NextFree > s.At {
		refill += " (" + limiters.FormatDuration(s.NextFree-s.At) + ")"
	}
	switch {
	case d == limiters.Admitted && short <= 0:
		return fmt.Sprintf("%s; %d taken, leaving %s", head, n, xTokens(s.Level-float64(n)))
	case d == limiters.Admitted && n <= s.Available:
		return fmt.Sprintf("%s; %d taken although %s short: less than 1ns of refill, which the library truncates to no wait",
			head, n, xTokens(short))
	case d == limiters.Admitted:
		return fmt.Sprintf("%s; ReserveN(%d) takes them, leaving %s: the caller waits for %s", head, n, xTokens(s.Level-float64(n)), refill)
	}
	return fmt.Sprintf("%s; %d would wait for %s: refused", head, n, refill)
}

// xTokens prints a token count with up to 9 significant digits: 3, 2.5, 0.999999999.
func xTokens(v float64) string { return fmt.Sprintf("%.9g", v) }

var _ limiters.Fresh = (*XTimeRate)(nil)

// FreshAt is a full bucket at now: the library's tokens clamp to exactly the burst, and stay
// there for every later time, as a new limiter's do.
func (x *XTimeRate) FreshAt(now time.Duration) bool {
	if x.lim == nil {
		return true
	}
	return x.lim.TokensAt(x.at(now)) >= float64(x.spec.Burst)
}

var _ limiters.Splittable = XTimeRateSpec{}

// Split is burst / n and rate / n.
func (s XTimeRateSpec) Split(n int) (limiters.Spec, error) {
	var err error
	if s.Burst, err = limiters.SplitCount(s, "burst", s.Burst, n); err != nil {
		return nil, err
	}
	s.Rate, err = limiters.SplitRate(s, s.Rate, n)
	return s, err
}
