package peers

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/internal/bound"
	"github.com/ratelab/ratelab/limiters/internal/limits"

	"go.uber.org/ratelimit"
)

// KindUber is go.uber.org/ratelimit's name in specs.
const KindUber limiters.Kind = "uber"

// FamilyUber is go.uber.org/ratelimit, Uber's leaky-bucket pacer.
const FamilyUber limiters.Family = "uber"

// Uber is the real go.uber.org/ratelimit (v0.3.1 in go.mod), not a re-implementation:
// ratelimit.New(permits, Per(window), WithSlack(slack) or WithoutSlack, WithClock(c)) on a
// virtual clock c whose Now is virtualEpoch + the caller's time and whose Sleep returns at
// once — Take reports the time it would have slept until, so the wait is that time minus now.
//
// Take always admits and never refuses: it takes one permit and sleeps until its issue time.
// The library's default implementation (atomicInt64Limiter) keeps one int64, the Unix ns of
// the last permit issued, s, with per = window / permits (truncated to whole ns) and
// maxSlack = slack · per. A Take at now issues at
//
//	now                if s = 0 (the very first call) or, without slack, if now − s > per
//	now − maxSlack     if now − s > maxSlack + per (a long idle: the slack is banked, no more)
//	s + per            otherwise
//
// and sleeps until then (not at all if that is in the past). rate=100/1s, slack 10 (the
// default): the first 12 Takes at once return after 0, 10, 20 … 110ms — the first calls get
// no slack; after an idle of 110ms or more, 11 Takes (slack + 1) return at once and the 12th
// after 10ms. slack=0 (WithoutSlack): permits are issued strictly per = 10ms apart, whatever
// the idle. A request for n permits here is n Takes in a row (Uber has no TakeN), its wait
// the last one's; n is at most slack + 1, the most that can ever return at once (a larger n
// is Never, like x/time/rate's n > burst).
//
// That is exactly ratelab's token bucket with capacity slack + 1 in reserve mode, except
// where the table says; its tokens are (now − s) / per, up to slack + 1, and go negative
// while callers sleep. Snapshot draws that level (ShapeLevel), not the GCRA schedule: Uber
// never refuses, so the schedule's "backlog + T > τ: refused" would misstate it, while the
// level reads as x/time/rate's tokens do — 11 of 11 banked after idle, −3 with three Takes
// issued ahead — and NextFree (s + per) is when the next Take returns without sleeping.
//
//	                      uber                                     token-bucket (capacity slack+1)
//	starts                empty: the first Take issues at now,     full: capacity at once
//	                      the next per later (no slack at first)
//	time resolution       whole ns; per = window/permits           whole ns; T = window/permits
//	                      truncated (3/1s: 333,333,333ns, a hair   rounded up (333,333,334ns)
//	                      faster than the rate)
//	refusals              none: Take sleeps (mode=wait only;       try refuses; reserve waits
//	                      mode=try is refused at validation)
//	who pays for a burst  the caller that sleeps                   the caller (reserve)
//	"burst" means         slack: unspent permits banked after      capacity: the largest burst
//	                      idle, slack + 1 at once
//	cancellation          none: an issued permit stays spent       exact at the instant
//	                      (CancelAt does nothing)
//	a late clock reading  the clock never runs back: it reads      judged at its own time
//	                      the latest time any caller gave
//
// The library is lock-free (one CAS loop) and so is the clock: Now reads an atomic holding the
// latest virtual time any caller announced, so concurrent Takes see a clock that never runs
// backwards, as a real one. The state word is the library's own: Snapshot and AvailableAt read
// it atomically, located once by reflection (the unexported field "state" of the library's
// *atomicInt64Limiter, checked at construction together with its per and maxSlack); they
// never write it, and decisions are only ever Take's.
//
// The zero value grants nothing: every request is Never; NewUber makes a working one.
type Uber struct {
	lim      ratelimit.Limiter
	state    *int64 // the library's issue-time word (Unix ns), read atomically, never written
	vclock   uberClock
	per      time.Duration
	maxSlack time.Duration
	spec     UberSpec
	clock    limiters.Clock
}

// uberClock is the library's Clock on virtual time: Now is virtualEpoch + the latest time a
// caller announced; Sleep returns at once.
type uberClock struct{ now atomic.Int64 }

func (c *uberClock) Now() time.Time { return time.Unix(0, virtualEpochNs+c.now.Load()) }

// virtualEpochNs is virtualEpoch in Unix ns, the library's unit.
var virtualEpochNs = virtualEpoch.UnixNano()

func (c *uberClock) Sleep(time.Duration) {}

// announce moves the clock to now unless a caller already moved it further.
func (c *uberClock) announce(now time.Duration) {
	for {
		cur := c.now.Load()
		if int64(now) <= cur || c.now.CompareAndSwap(cur, int64(now)) {
			return
		}
	}
}

var (
	_ limiters.Limiter  = (*Uber)(nil)
	_ limiters.Clocked  = (*Uber)(nil)
	_ limiters.Reserver = (*Uber)(nil)
	_ limiters.Waiting  = UberSpec{}
)

// UberSpec configures an Uber: "uber:rate=100/1s" (slack 10), "uber:rate=100/1s,slack=0".
type UberSpec struct {
	Rate limiters.Rate // ratelimit.New(permits, Per(window))
	// Slack is WithSlack(slack): unspent permits banked after idle. 0 is WithoutSlack.
	// ParseSpec defaults it to 10, the library's default; a Go literal must say it.
	Slack int
	// Mode is "wait" (Take), the only mode; "" is "wait". "try" is refused: Uber has none.
	Mode string
}

var uberKind = limiters.KindInfo{
	Kind: KindUber, Family: FamilyUber, Shape: limiters.ShapeLevel,
	Summary:      "go.uber.org/ratelimit, the real library: Take always admits and sleeps; slack after idle",
	Example:      "uber:rate=100/1s",
	Checks:       limiters.CheckSpecs{Sizes: "uber:rate=100/1s,slack=4"},
	Fields:       limiters.FieldInfos[UberSpec](),
	Ranges:       uberRanges,
	Capabilities: []limiters.Capability{limiters.CapReserve},
	Parse:        limiters.SpecParser(UberSpec{Slack: 10, Mode: "wait"}),
	Explain:      explainUber,
}

func (s *UberSpec) Fields() []limiters.Field {
	slack := limiters.Field{
		FieldInfo: limiters.FieldInfo{Name: "slack", Meaning: "unspent permits banked after idle (default 10; 0: WithoutSlack)"},
		Set: func(text string) error {
			v, err := strconv.Atoi(text)
			if err != nil {
				return fmt.Errorf("%q is not a whole number", text)
			}
			if v < 0 {
				return fmt.Errorf("must not be negative (0 is WithoutSlack)")
			}
			s.Slack = v
			return nil
		},
		Get:  func() string { return strconv.Itoa(s.Slack) },
		Omit: func() bool { return s.Slack == 10 },
	}
	return []limiters.Field{
		limiters.RateField("rate", true, "permits per window: ratelimit.New(permits, Per(window))", &s.Rate),
		slack,
		peerModeField(&s.Mode, "wait", "wait (Take), the only one: Uber has no try"),
	}
}

// Kind is KindUber.
func (s UberSpec) Kind() limiters.Kind { return KindUber }

// String is "uber:rate=100/1s" (with ",slack=…" unless it is 10).
func (s UberSpec) String() string { return limiters.FormatSpec(KindUber, s.Fields()) }

// per is the library's per-request interval: window / permits, truncated.
func (s UberSpec) per() time.Duration { return s.Rate.Window / time.Duration(s.Rate.Permits) }

// Validate refuses mode=try (Take cannot refuse), what ratelab's rates refuse (no permits, a
// non-positive window, an interval below 1ns), a negative slack, and a banked slack
// (slack · per) beyond 2⁵⁹ ns (18 years), which would take the library's issue time back past
// the Unix epoch the virtual clock starts 30 years after.
func (s UberSpec) Validate() error {
	if s.Mode == "try" {
		return limiters.NewConfigError(KindUber, "mode", s.Mode,
			"go.uber.org/ratelimit has no try: Take always admits and sleeps until its permit is due; use mode=wait (the default)")
	}
	if s.Mode != "" && s.Mode != "wait" {
		return limiters.NewConfigError(KindUber, "mode", s.Mode, "must be wait (Take)")
	}
	if err := s.Rate.Validate(KindUber); err != nil {
		return err
	}
	if s.Slack < 0 {
		return limiters.NewConfigError(KindUber, "slack", fmt.Sprint(s.Slack), "must not be negative (0 is WithoutSlack)")
	}
	if int64(s.Slack) > (int64(1)<<59)/int64(s.per()) {
		return limiters.NewConfigError(KindUber, "slack", fmt.Sprint(s.Slack), "slack × per-request interval exceeds 2^59ns (18 years)")
	}
	return nil
}

// uberRanges are what UberSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for uber, with specs at and just past each edge that the registry
// test holds to Validate.
var uberRanges = []limiters.FieldRange{
	{Field: "rate", Accepted: "permits/window as the token bucket's",
		Why:     limits.PerNS,
		Valid:   []string{"uber:rate=1/1ns", "uber:rate=1/1h"},
		Invalid: []string{"uber:rate=2/1ns", "uber:rate=0/1s"}},
	{Field: "slack", Accepted: "0 (WithoutSlack) up to slack × the interval of 2^59 ns",
		Why:     "the library keeps its slack as a time in an int64 beside the clock's",
		Valid:   []string{"uber:rate=1/1s,slack=0", "uber:rate=1/1s,slack=576460752"},
		Invalid: []string{"uber:rate=1/1s,slack=-1", "uber:rate=1/1s,slack=576460753"}},
	{Field: "mode", Accepted: "wait (Take) only",
		Why:     "go.uber.org/ratelimit has no try: Take always admits",
		Valid:   []string{"uber:rate=1/1s,mode=wait"},
		Invalid: []string{"uber:rate=1/1s,mode=try"}},
}

// CallerWait is MaxWaitForever: Take's callers wait as long as it takes.
func (s UberSpec) CallerWait() time.Duration { return limiters.MaxWaitForever }

// New is NewUber(s, clock).
func (s UberSpec) New(clock limiters.Clock) (limiters.Limiter, error) { return NewUber(s, clock) }

// AdmissionBound is the token bucket's with capacity slack + 1 and T = per (truncated):
// slack + ⌈L/per⌉. 100/1s slack 10 over 1s: 110; slack 0: 100.
func (s UberSpec) AdmissionBound(L time.Duration) (int64, bool) {
	return bound.SaturatingAdd(int64(s.Slack), bound.DivCeil(int64(L), int64(s.per()))), true
}

// NaturalWindow is the rate's window.
func (s UberSpec) NaturalWindow() time.Duration { return s.Rate.Window }

// NominalRate is the rate.
func (s UberSpec) NominalRate() (limiters.Rate, bool) { return s.Rate, true }

// InitialPermits is 1: the very first Take gets no slack.
func (s UberSpec) InitialPermits() int { return 1 }

// NewUber returns go.uber.org/ratelimit's limiter for spec on a virtual clock of its own
// (clock is read by the plain forms; the At forms take the time). It refuses what
// UberSpec.Validate refuses and a nil clock.
func NewUber(spec UberSpec, clock limiters.Clock) (*Uber, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := limiters.RequireClock(KindUber, clock); err != nil {
		return nil, err
	}
	u := &Uber{spec: spec, clock: clock, per: spec.per(), maxSlack: time.Duration(spec.Slack) * spec.per()}
	slack := ratelimit.WithoutSlack
	if spec.Slack > 0 {
		slack = ratelimit.WithSlack(spec.Slack)
	}
	u.lim = ratelimit.New(spec.Rate.Permits, ratelimit.Per(spec.Rate.Window), slack, ratelimit.WithClock(&u.vclock))
	state, per, maxSlack, err := uberInternals(u.lim)
	if err != nil {
		return nil, err
	}
	if per != u.per || maxSlack != u.maxSlack {
		return nil, limiters.NewConfigError(KindUber, "rate", spec.Rate.String(), fmt.Sprintf(
			"the library computed per=%s maxSlack=%s, not per=%s maxSlack=%s", per, maxSlack, u.per, u.maxSlack))
	}
	u.state = state
	return u, nil
}

// uberInternals finds the library's state word and its per-request interval and slack in the
// limiter ratelimit.New returned (v0.3.1: *atomicInt64Limiter{state int64, perRequest,
// maxSlack time.Duration}), or says what is not as expected.
func uberInternals(l ratelimit.Limiter) (state *int64, per, maxSlack time.Duration, err error) {
	v := reflect.ValueOf(l)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, 0, 0, fmt.Errorf("limiters: uber: ratelimit.New returned a %T, not the pointer to a struct v0.3.1 returns", l)
	}
	e := v.Elem()
	word, p, m := e.FieldByName("state"), e.FieldByName("perRequest"), e.FieldByName("maxSlack")
	for _, f := range []reflect.Value{word, p, m} {
		if !f.IsValid() || f.Kind() != reflect.Int64 {
			return nil, 0, 0, fmt.Errorf("limiters: uber: %T lacks the int64 fields state, perRequest and maxSlack of v0.3.1", l)
		}
	}
	return (*int64)(word.Addr().UnsafePointer()), time.Duration(p.Int()), time.Duration(m.Int()), nil
}

// Library is the ratelimit.Limiter itself.
func (u *Uber) Library() ratelimit.Limiter { return u.lim }

// take makes n Takes at now and returns how long after now the last one returns.
func (u *Uber) take(now time.Duration, n int) time.Duration {
	u.vclock.announce(now)
	var last time.Time
	for range n {
		last = u.lim.Take()
	}
	return max(time.Duration(last.UnixNano()-virtualEpochNs)-now, 0)
}

// AcquireAt is n Takes at now, always Admitted (Take cannot refuse); the wait they imply is
// ReserveAt's to return. Never for n > slack + 1, Invalid for n ≤ 0, with no Take made.
func (u *Uber) AcquireAt(now time.Duration, n int) limiters.Decision {
	if d := limiters.CheckN(n, u.MaxPermits()); d != limiters.Admitted {
		return d
	}
	u.take(now, n)
	return limiters.Admitted
}

// TryAcquireAt is AcquireAt(now, n) == Admitted.
func (u *Uber) TryAcquireAt(now time.Duration, n int) bool {
	return u.AcquireAt(now, n) == limiters.Admitted
}

// TryAcquire is TryAcquireAt at the limiter's clock's time.
func (u *Uber) TryAcquire(n int) bool { return u.TryAcquireAt(limiters.ReadClock(u.clock), n) }

// ReserveAt is n Takes at now: Admitted with the wait until the last one's issue time, whatever
// maxWait (Take sleeps as long as it must; it cannot refuse).
func (u *Uber) ReserveAt(now time.Duration, n int, _ time.Duration) limiters.Reservation {
	out := limiters.Reservation{Permits: n, At: now, Decision: limiters.CheckN(n, u.MaxPermits())}
	if out.Decision == limiters.Admitted {
		out.Wait = u.take(now, n)
	}
	return out
}

// CancelAt does nothing: Uber has no way to give an issued permit back.
func (u *Uber) CancelAt(time.Duration, limiters.Reservation) {}

// issued is the library's state word as virtual time, and whether any Take was made.
func (u *Uber) issued() (time.Duration, bool) {
	s := atomic.LoadInt64(u.state)
	return time.Duration(s - virtualEpochNs), s != 0
}

// AvailableAt is how many Takes at now would return at once: 1 before the first, else
// ⌊(now − s) / per⌋, at most slack + 1.
func (u *Uber) AvailableAt(now time.Duration) int {
	if u.lim == nil {
		return 0
	}
	s, taken := u.issued()
	if !taken {
		return 1
	}
	if now <= s {
		return 0
	}
	return int(min(int64(now-s)/int64(u.per), int64(u.spec.Slack)+1))
}

// Available is AvailableAt at the limiter's clock's time.
func (u *Uber) Available() int { return u.AvailableAt(limiters.ReadClock(u.clock)) }

// MaxPermits is slack + 1, the most Takes that can ever return at once (0 for the zero value).
func (u *Uber) MaxPermits() int {
	if u.lim == nil {
		return 0
	}
	return u.spec.Slack + 1
}

// Kind is KindUber.
func (u *Uber) Kind() limiters.Kind { return KindUber }

// String is the spec.
func (u *Uber) String() string { return u.Spec().String() }

// Spec is the limiter's configuration.
func (u *Uber) Spec() UberSpec { return u.spec }

// Snapshot is the library's state as a level: (now − s) / per permits banked, at most slack +
// 1 (before the first Take, 1: no slack), negative while callers sleep (−3: three Takes are
// issued ahead of now), and NextFree, when the next Take returns without sleeping: s + per, or
// now. Interval carries per, for the explanation.
func (u *Uber) Snapshot(now time.Duration) limiters.State {
	st := limiters.State{Kind: KindUber, At: now, LevelName: "permits banked", NextFree: now}
	if u.lim == nil {
		return st
	}
	s, taken := u.issued()
	if !taken {
		s = now - u.per
	}
	st.Available, st.MaxPermits, st.Interval = u.AvailableAt(now), u.MaxPermits(), u.per
	st.LevelMax = float64(u.spec.Slack + 1)
	st.Level = min(float64(now-s)/float64(u.per), st.LevelMax)
	st.NextFree = max(s+u.per, now)
	return st
}

// explainUber: the permits banked, and when n more Takes return.
func explainUber(s limiters.State, n int, d limiters.Decision) string {
	head := fmt.Sprintf("uber has %s of %s permits banked (per %s)", levelString(s.Level), levelString(s.LevelMax), limiters.FormatDuration(s.Interval))
	if d != limiters.Admitted {
		return head + "; Take never refuses: it sleeps until its permit is due"
	}
	takes, verb := "1 Take", "returns"
	if n != 1 {
		takes, verb = fmt.Sprintf("%d Takes", n), "return"
	}
	wait := time.Duration(math.Round((float64(n) - s.Level) * float64(s.Interval)))
	if n <= s.Available || wait <= 0 {
		return fmt.Sprintf("%s; %s %s at once", head, takes, verb)
	}
	return fmt.Sprintf("%s; %s: the last permit is issued %s from now, and the caller sleeps until then", head, takes, limiters.FormatDuration(wait))
}

// levelString prints a level with up to 4 significant digits: 11, 3.5, -2.
func levelString(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

var _ limiters.Fresh = (*Uber)(nil)

// FreshAt is never taken, or, without slack, an issue time more than per before now (the
// library then issues at now, as on its first call). With slack an idle limiter banks up to
// slack permits that a new one, which issues its first Take at now, does not have.
func (u *Uber) FreshAt(now time.Duration) bool {
	if u.lim == nil {
		return true
	}
	s, taken := u.issued()
	if !taken {
		return true
	}
	return u.spec.Slack == 0 && now-s > u.per
}
