package peers

import (
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/internal/bound"
	"github.com/ratelab/ratelab/limiters/internal/limits"
)

// KindResilience4j is resilience4j's AtomicRateLimiter in specs.
const KindResilience4j limiters.Kind = "resilience4j"

// FamilyResilience4j is resilience4j, the Java fault-tolerance library (resilience4j-ratelimiter).
const FamilyResilience4j limiters.Family = "resilience4j"

// resilience4jDefaultTimeout is RateLimiterConfig's default timeoutDuration: 5 seconds
// (RateLimiterConfig.Builder, and the timeoutDuration row of resilience4j's documented
// configuration). The other two defaults, limitForPeriod 50 and limitRefreshPeriod 500ns, are
// not taken: a period of 500ns is 100 million permits a second, never what a user means, so a
// spec gives both.
const resilience4jDefaultTimeout = 5 * time.Second

// resilience4jMaxLimit is the largest limit ratelab takes: permissions + limit, an int sum in
// resilience4j, cannot overflow.
const resilience4jMaxLimit = 1 << 30

// resilience4jMaxPeriod is the longest period ratelab takes, 2⁶⁰ ns (36.5 years): the wait
// of a reservation (cycles × period + the rest of the current one) stays within a long.
const resilience4jMaxPeriod = time.Duration(1) << 60

// Resilience4j is a model, decision for decision and wait for wait (in ns), of resilience4j's
// AtomicRateLimiter (resilience4j-ratelimiter, RateLimiter.of(name, config)): time since the
// limiter was made is cut into cycles of limitRefreshPeriod, and each cycle starts with
// limitForPeriod permissions. Its state is a cycle and the permissions left in it, which a
// reservation can drive negative:
//
//	a request for n at time t (ns since creation), cycle c = t / period:
//	  if c is not the state's cycle: permissions = min(permissions + (c − cycle)·limit, limit)
//	  wait = 0 if permissions ≥ n, else the rest of the cycle plus
//	         ⌈(n − permissions − limit) / limit⌉ whole periods
//	  if wait ≤ timeout: permissions −= n (a reservation), and the caller waits
//	  else: refused, permissions unchanged — and the product parks the caller for the whole
//	        timeout before it says no
//
// limit=50, period=500ms: 50 pass at once in each cycle [0, 500ms), [500ms, 1s), … — 50 at
// 499ms and 50 at 500ms, 100 in 1ms, 2 × limit across a cycle boundary, as any fixed window.
// With the default timeout of 5s, 600 requests at 0: 50 pass at once, then 50 are reserved in
// each of the next 10 cycles (they wait 500ms, 1s, …, 5s, and permissions go down to −500), and
// the last 50 would wait 5.5s: refused. The cycles are aligned to the limiter's creation, not
// to the clock: made at 200ms, its cycles begin at 200ms, 700ms, 1.2s.
//
// The model keeps the state as resilience4j does, in one word swapped by one CAS after one
// read, but as a single index: X = cycle·limit + limit − permissions, the number of the last
// permission given out (counting every cycle's from 0). The refresh is then X = max(X, c·limit),
// a reservation X += n, and permissions at cycle c are c·limit + limit − X: the same numbers
// as resilience4j's pair for every reading, late ones included, in an int64 instead of an
// object per update. It allocates nothing. resilience4j computes the permissions in a Java
// int; a reservation that would take them below −(2³¹ − 1 − limit) (a backlog of two billion
// permits, where Java's int would wrap round and let everything through) is refused here.
//
// Where it differs from ratelab's fixed-window (limit per window), and why it matters:
//
//	                      resilience4j                              fixed-window
//	windows               cycles of limitRefreshPeriod from the     windows aligned to the
//	                      limiter's creation                        clock's origin
//	beyond the limit      a caller whose timeout covers the wait    refused (or retried by the
//	                      reserves a later cycle's permissions:     caller at the Retry-After)
//	                      they go negative, and the caller waits
//	                      for the cycle its permissions fall in
//	default call          acquirePermission() with the default      tryAcquire: refused now
//	                      timeoutDuration of 5s: it waits
//	a refusal             after parking the caller for the whole    at once
//	                      timeout (RequestNotPermitted)
//	requests over limit   any n: waits for the cycles it spans      never (n > limit)
//	                      (n ≤ limit here: MaxPermits is limit)
//	bound over L          limit·⌈windows touched⌉, plus limit − 1   limit·⌈windows touched⌉
//	                      when callers can wait (a reservation of
//	                      n straddles two cycles' permissions)
//
// mode=try (the default) is acquirePermission(n) with timeoutDuration = timeout (5s unless
// given; timeout=0s for a caller that never waits); mode=wait is acquirePermission(n) with a
// timeoutDuration so long that every caller is served. AcquireAt is a caller with timeout 0;
// the simulator reserves with the spec's CallerWait. CancelAt gives a reservation's
// permissions back while they are still owed (before its wait has ended), which resilience4j
// has no call for.
//
// The zero value grants nothing: every request is Never; NewResilience4j makes a working one.
type Resilience4j struct {
	index  atomic.Int64 // X: the last permission given out, cycle·limit + limit − permissions
	limit  int64
	period int64 // ns
	born   time.Duration
	spec   Resilience4jSpec
	clock  limiters.Clock
}

var (
	_ limiters.RateLimiter = (*Resilience4j)(nil)
	_ limiters.Reserver    = (*Resilience4j)(nil)
	_ limiters.Clocked     = (*Resilience4j)(nil)
	_ limiters.Waiting     = Resilience4jSpec{}
)

// Resilience4jSpec configures a Resilience4j: "resilience4j:limit=50,period=500ms".
type Resilience4jSpec struct {
	Limit  int           // limitForPeriod: permissions per cycle
	Period time.Duration // limitRefreshPeriod: the cycle
	// Timeout is timeoutDuration, how long a mode=try caller may wait for its permissions
	// (5s when a spec leaves it out; the zero value is 0, a caller that never waits).
	Timeout time.Duration
	// Mode is "try" (acquirePermission within Timeout; "" is try) or "wait" (every caller
	// waits as long as it takes).
	Mode string
}

var resilience4jKind = limiters.KindInfo{
	Kind: KindResilience4j, Family: FamilyResilience4j, Shape: limiters.ShapeLevel,
	Summary:      "resilience4j's AtomicRateLimiter: limit per cycle from creation; a caller within its timeout (5s) reserves ahead",
	Example:      "resilience4j:limit=50,period=500ms",
	Checks:       limiters.CheckSpecs{Sizes: "resilience4j:limit=5,period=1s"},
	Fields:       limiters.FieldInfos[Resilience4jSpec](),
	Ranges:       resilience4jRanges,
	Capabilities: []limiters.Capability{limiters.CapRetryAfter, limiters.CapReserve},
	Parse:        parseResilience4j,
	Explain:      explainResilience4j,
}

// parseResilience4j starts from the product's defaults (mode=try, timeout=5s); a mode=wait
// spec that gives no timeout has none.
func parseResilience4j() ([]limiters.Field, func() limiters.Spec) {
	s := Resilience4jSpec{Timeout: resilience4jDefaultTimeout, Mode: "try"}
	fields := s.Fields()
	timed := false
	for i := range fields {
		if fields[i].Name == "timeout" {
			set := fields[i].Set
			fields[i].Set = func(text string) error { timed = true; return set(text) }
		}
	}
	return fields, func() limiters.Spec {
		if s.Mode == "wait" && !timed {
			s.Timeout = 0
		}
		return s
	}
}

func (s *Resilience4jSpec) Fields() []limiters.Field {
	timeout := limiters.Field{
		FieldInfo: limiters.FieldInfo{Name: "timeout", Meaning: "mode=try: timeoutDuration, how long a caller may wait for its permissions (default 5s, the product's; 0s: never waits)"},
		Set: func(text string) error {
			d, err := time.ParseDuration(text)
			if err != nil {
				return fmt.Errorf("%q is not a duration (e.g. 0s, 5s)", text)
			}
			if d < 0 {
				return fmt.Errorf("must not be negative")
			}
			s.Timeout = d
			return nil
		},
		Get: func() string { return limiters.FormatDuration(s.Timeout) },
		Omit: func() bool {
			if s.wait() {
				return s.Timeout == 0
			}
			return s.Timeout == resilience4jDefaultTimeout
		},
	}
	return []limiters.Field{
		limiters.IntField("limit", true, "limitForPeriod: permissions per cycle", &s.Limit),
		limiters.DurationField("period", true, "limitRefreshPeriod: the cycle, counted from the limiter's creation", &s.Period),
		timeout,
		peerModeField(&s.Mode, "try", "try (acquirePermission within timeout, the default) or wait (every caller waits as long as it takes)"),
	}
}

// Kind is KindResilience4j.
func (s Resilience4jSpec) Kind() limiters.Kind { return KindResilience4j }

// String is "resilience4j:limit=50,period=500ms" (with ",timeout=…" when it is not 5s, and
// ",mode=wait").
func (s Resilience4jSpec) String() string { return limiters.FormatSpec(KindResilience4j, s.Fields()) }

func (s Resilience4jSpec) wait() bool { return s.Mode == "wait" }

// Validate refuses a limit below 1 or above 2³⁰, a period shorter than limit ns (more than a
// permit per ns) or longer than 2⁶⁰ ns, a mode other than try and wait, a negative timeout or
// one beyond 2⁶² ns, and a timeout with mode=wait.
func (s Resilience4jSpec) Validate() error {
	if s.Limit < 1 || s.Limit > resilience4jMaxLimit {
		return limiters.NewConfigError(KindResilience4j, "limit", strconv.Itoa(s.Limit),
			"must be between 1 and 2^30 (resilience4j adds limit to its int permissions)")
	}
	if int64(s.Period) < int64(s.Limit) || s.Period > resilience4jMaxPeriod {
		return limiters.NewConfigError(KindResilience4j, "period", limiters.FormatDuration(s.Period), fmt.Sprintf(
			"must be at least limit=%d ns (one permit per ns, the clock's resolution) and at most 2^60ns", s.Limit))
	}
	if s.Mode != "" && s.Mode != "try" && s.Mode != "wait" {
		return limiters.NewConfigError(KindResilience4j, "mode", s.Mode, "must be try or wait")
	}
	if s.Timeout < 0 || int64(s.Timeout) > limiters.MaxSpan {
		return limiters.NewConfigError(KindResilience4j, "timeout", limiters.FormatDuration(s.Timeout), "must be between 0 and 2^62ns")
	}
	if s.wait() && s.Timeout != 0 {
		return limiters.NewConfigError(KindResilience4j, "timeout", limiters.FormatDuration(s.Timeout),
			"only mode=try takes a timeout: mode=wait waits as long as it takes")
	}
	return nil
}

// resilience4jRanges are what Resilience4jSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for resilience4j, with specs at and just past each edge that the registry
// test holds to Validate.
var resilience4jRanges = []limiters.FieldRange{
	{Field: "limit", Accepted: "1 to 2^30",
		Why:     "resilience4j adds the limit to its int permissions: the sum must not overflow",
		Valid:   []string{"resilience4j:limit=1,period=1s", "resilience4j:limit=1073741824,period=2h"},
		Invalid: []string{"resilience4j:limit=0,period=1s", "resilience4j:limit=1073741825,period=2h"}},
	{Field: "period", Accepted: "at least limit ns, at most 2^60 ns",
		Why:     limits.PerNS + "; a reservation's wait, cycles × period, stays within int64",
		Valid:   []string{"resilience4j:limit=50,period=50ns", "resilience4j:limit=1,period=1152921504606846976ns"},
		Invalid: []string{"resilience4j:limit=50,period=49ns", "resilience4j:limit=1,period=1152921504606846977ns"}},
	{Field: "timeout", Accepted: "0 to 2^62 ns, with mode=try only (default 5s, RateLimiterConfig's timeoutDuration)",
		Why:     "a wait is added to times up to 2^62 ns; mode=wait waits as long as it takes",
		Valid:   []string{"resilience4j:limit=1,period=1s,timeout=0s", "resilience4j:limit=1,period=1s,timeout=4611686018427387904ns"},
		Invalid: []string{"resilience4j:limit=1,period=1s,timeout=4611686018427387905ns", "resilience4j:limit=1,period=1s,mode=wait,timeout=1ms"}},
	{Field: "mode", Accepted: "try (acquirePermission within the timeout) or wait",
		Why:     "a caller that waits as long as it takes is a timeout beyond any wait",
		Valid:   []string{"resilience4j:limit=1,period=1s,mode=try", "resilience4j:limit=1,period=1s,mode=wait"},
		Invalid: []string{"resilience4j:limit=1,period=1s,mode=block"}},
}

// New is NewResilience4j(s, clock).
func (s Resilience4jSpec) New(clock limiters.Clock) (limiters.Limiter, error) {
	return NewResilience4j(s, clock)
}

// CallerWait is MaxWaitForever for mode=wait, else the timeout.
func (s Resilience4jSpec) CallerWait() time.Duration {
	if s.wait() {
		return limiters.MaxWaitForever
	}
	return s.Timeout
}

// AdmissionBound is limit·⌈(L − 1ns)/period + 1⌉ (the cycles an interval of length L touches)
// when callers never wait (timeout=0s), counted when they go on; when they can wait, limit − 1
// more: a reservation of n that finds p < n permissions takes its first p from one cycle and
// goes on in the next, whose remaining permissions then pass too (50 per 500ms over 500ms: 100, or
// 149 with waiting callers). Exact, for callers whose clock readings never run backwards.
func (s Resilience4jSpec) AdmissionBound(L time.Duration) (int64, bool) {
	b := bound.SaturatingMul(int64(s.Limit), bound.Touched(L, s.Period))
	if s.CallerWait() > 0 {
		b = bound.SaturatingAdd(b, int64(s.Limit)-1)
	}
	return b, true
}

// NaturalWindow is the period.
func (s Resilience4jSpec) NaturalWindow() time.Duration { return s.Period }

// NominalRate is limit per period.
func (s Resilience4jSpec) NominalRate() (limiters.Rate, bool) {
	return limiters.Rate{Permits: s.Limit, Window: s.Period}, true
}

// InitialPermits is the limit: a new limiter's cycle 0 has all its permissions.
func (s Resilience4jSpec) InitialPermits() int { return s.Limit }

// NewResilience4j returns resilience4j's AtomicRateLimiter for spec on clock, created now: its
// cycles count from clock.Now(). It refuses what Resilience4jSpec.Validate refuses and a nil
// clock.
func NewResilience4j(spec Resilience4jSpec, clock limiters.Clock) (*Resilience4j, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := limiters.RequireClock(KindResilience4j, clock); err != nil {
		return nil, err
	}
	return &Resilience4j{limit: int64(spec.Limit), period: int64(spec.Period), born: clock.Now(), spec: spec, clock: clock}, nil
}

// since is resilience4j's currentNanoTime: ns since creation (0 before it).
func (l *Resilience4j) since(now time.Duration) int64 { return max(int64(now-l.born), 0) }

// at is the state X as read at t: the refresh of every cycle since, max(X, cycle·limit), and
// the permissions of t's cycle.
func (l *Resilience4j) at(x, t int64) (refreshed, permissions int64) {
	refreshed = max(x, t/l.period*l.limit)
	return refreshed, t/l.period*l.limit + l.limit - refreshed
}

// waitFor is nanosToWaitForPermission: 0 if the permissions cover n, else the rest of t's
// cycle and the whole cycles until a cycle's permissions do.
func (l *Resilience4j) waitFor(n, permissions, t int64) int64 {
	if permissions >= n {
		return 0
	}
	toNextCycle := (t/l.period+1)*l.period - t
	fullCycles := (n - permissions - l.limit + l.limit - 1) / l.limit // divCeil, ≥ 0 here
	return fullCycles*l.period + toNextCycle
}

// floor is the least permissions a reservation may leave: below it resilience4j's
// int arithmetic (permissions − n, n − permissions + limit − 1) would overflow.
func (l *Resilience4j) floor() int64 { return l.limit - math.MaxInt32 }

// ReserveAt is acquirePermission(n) with timeoutDuration maxWait at now: one read, the
// refresh, the wait, and one CAS that reserves the permissions if the wait is at most maxWait
// (Admitted with that Wait) or only stores the refresh (Rejected with the Wait it needed).
func (l *Resilience4j) ReserveAt(now time.Duration, n int, maxWait time.Duration) limiters.Reservation {
	r := limiters.Reservation{Decision: limiters.CheckN(n, l.MaxPermits()), Permits: n, At: now}
	if r.Decision != limiters.Admitted {
		return r
	}
	t, need, timeout := l.since(now), int64(n), max(int64(maxWait), 0)
	for {
		x := l.index.Load()
		refreshed, permissions := l.at(x, t)
		wait := l.waitFor(need, permissions, t)
		next := refreshed
		if wait <= timeout && permissions-need >= l.floor() {
			next += need
			r.Decision, r.Wait = limiters.Admitted, time.Duration(wait)
		} else {
			r.Decision, r.Wait = limiters.Rejected, time.Duration(min(wait, int64(limiters.MaxWaitForever)))
		}
		if next == x || l.index.CompareAndSwap(x, next) {
			return r
		}
	}
}

// CancelAt gives an admitted reservation's n permissions back while it is still owed: at the
// instant it was made, or before its wait has ended. The index moves back by n, but never
// below the current cycle's start (a cycle that has begun keeps what it was given).
func (l *Resilience4j) CancelAt(now time.Duration, r limiters.Reservation) {
	if r.Decision != limiters.Admitted || l.limit == 0 || (now != r.At && now >= r.At+r.Wait) {
		return
	}
	t := l.since(now)
	for {
		x := l.index.Load()
		next := max(x-int64(r.Permits), t/l.period*l.limit)
		if next >= x || l.index.CompareAndSwap(x, next) {
			return
		}
	}
}

// AcquireAt is a caller with timeout 0: admitted only if the permissions are there now.
func (l *Resilience4j) AcquireAt(now time.Duration, n int) limiters.Decision {
	return l.ReserveAt(now, n, 0).Decision
}

// TryAcquireAt reports whether n permits were taken at time now.
func (l *Resilience4j) TryAcquireAt(now time.Duration, n int) bool {
	return l.AcquireAt(now, n) == limiters.Admitted
}

// TryAcquire takes n permits now, by the limiter's clock.
func (l *Resilience4j) TryAcquire(n int) bool { return l.TryAcquireAt(limiters.ReadClock(l.clock), n) }

// permissionsAt is the permissions a request at now would see (negative: reserved ahead).
func (l *Resilience4j) permissionsAt(now time.Duration) int64 {
	if l.limit == 0 {
		return 0
	}
	_, p := l.at(l.index.Load(), l.since(now))
	return p
}

// AvailableAt is the permissions a request at now would find, 0 when they are reserved ahead:
// what Metrics.getAvailablePermissions says, not below 0.
func (l *Resilience4j) AvailableAt(now time.Duration) int { return int(max(l.permissionsAt(now), 0)) }

// Available is AvailableAt at the clock's current time.
func (l *Resilience4j) Available() int { return l.AvailableAt(limiters.ReadClock(l.clock)) }

// RetryAfterAt is the wait resilience4j would give n permits at now (Metrics.getNanosToWait for
// n = 1): 0 if they are there, else until the start of the cycle whose permissions cover them.
func (l *Resilience4j) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	if limiters.CheckN(n, l.MaxPermits()) != limiters.Admitted {
		return 0, false
	}
	t := l.since(now)
	return time.Duration(l.waitFor(int64(n), l.permissionsAt(now), t)), true
}

// MaxPermits is the limit (resilience4j takes more, waiting for the cycles they span).
func (l *Resilience4j) MaxPermits() int { return int(l.limit) }

// Kind is KindResilience4j.
func (l *Resilience4j) Kind() limiters.Kind { return KindResilience4j }

// String is the spec.
func (l *Resilience4j) String() string { return l.spec.String() }

// Spec is the limiter's configuration.
func (l *Resilience4j) Spec() Resilience4jSpec { return l.spec }

// Snapshot is the permissions of now's cycle (Level, negative when reserved ahead, of the limit
// as LevelMax), when one passes at once (NextFree), and the cycle itself (Window, WindowStart,
// WindowEnd, for the explanation).
func (l *Resilience4j) Snapshot(now time.Duration) limiters.State {
	st := limiters.State{Kind: KindResilience4j, At: now, LevelName: "permissions", NextFree: now}
	if l.limit == 0 {
		return st
	}
	t := l.since(now)
	p := l.permissionsAt(now)
	st.Available, st.MaxPermits = int(max(p, 0)), int(l.limit)
	st.Level, st.LevelMax = float64(p), float64(l.limit)
	st.NextFree = now + time.Duration(l.waitFor(1, p, t))
	start := l.born + time.Duration(t/l.period*l.period)
	st.Window, st.WindowStart, st.WindowEnd = time.Duration(l.period), start, start+time.Duration(l.period)
	return st
}

// explainResilience4j: the cycle's permissions against the request, and what a wait buys.
func explainResilience4j(s limiters.State, n int, d limiters.Decision) string {
	head := fmt.Sprintf("cycle [%s, %s) has %s of %s permissions", limiters.FormatDuration(s.WindowStart), limiters.FormatDuration(s.WindowEnd),
		levelText(s.Level), levelText(s.LevelMax))
	switch {
	case d == limiters.Admitted && float64(n) <= s.Level:
		return fmt.Sprintf("%s: %d taken at once", head, n)
	case d == limiters.Admitted:
		return fmt.Sprintf("%s: the caller's timeout covers the wait, so %d are reserved from a later cycle (permissions go to %s) and it waits",
			head, n, levelText(s.Level-float64(n)))
	}
	return fmt.Sprintf("%s: %d would wait past the caller's timeout, so it is refused (resilience4j parks it for the whole timeout first); "+
		"one passes at once in %s", head, n, limiters.FormatDuration(s.NextFree-s.At))
}
