package peers

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/internal/bound"
	"github.com/ratelab/ratelab/limiters/internal/limits"
)

// KindFlash5Fixed is Flash5's FIXED_WINDOW strategy's name in specs.
const KindFlash5Fixed limiters.Kind = "flash5-fixed"

// FamilyFlash5 is the Flash5 framework's limiter strategies (flash-ext-limiter).
const FamilyFlash5 limiters.Family = "flash5"

// Flash5Fixed is a model, decision for decision, of Flash5's FIXED_WINDOW strategy
// (flash-ext-limiter): a counter per clock-aligned window on a millisecond clock, packed in
// one 64-bit word —
//
//	high 32 bits: the reduced epoch (ms / windowMs) & 0xFFFFFFFF
//	low 32 bits:  the requests counted in that window
//
// A request reads the word; if the stored epoch differs from its own, the same CAS that
// counts it resets the count to 1; otherwise it is counted if the count is below the limit.
// limit=100, window=1s: requests 1–100 in a second pass, the 101st is refused until the next
// second begins, and 100 at 0.999s plus 100 at 1.000s all pass — 2× the limit within 1ms, as
// with any fixed window.
//
// Where it differs from ratelab's fixed-window, and why it matters:
//
//	                      flash5-fixed                          fixed-window
//	time resolution       whole milliseconds (floored)          nanoseconds
//	window alignment      the clock's origin + offset, in ms    the clock's origin
//	window index          32 bits: wraps after 2³² windows      64 − bits.Len(limit) bits: never
//	                      (49.7 days of 1ms windows); after
//	                      exactly 2³² idle windows the old
//	                      count is read as current
//	a late clock reading  any other epoch resets the count,     counted against the newest
//	                      older ones too (a burst)              window (never a reset)
//	permits per request   1 in Flash5; n here counts n          n
//
// Flash5 counts one per call; a request for n permits here counts n (n = 1 is Flash5's call),
// and MaxPermits is the limit. Its API also returns what remains and when the window resets
// (Quota), which services send as X-RateLimit headers.
//
// The zero value grants nothing: every request is Never; NewFlash5Fixed makes a working one.
type Flash5Fixed struct {
	state    atomic.Uint64
	limit    uint64
	windowMs int64
	offsetMs int64
	clock    limiters.Clock
}

var (
	_ limiters.RateLimiter = (*Flash5Fixed)(nil)
	_ limiters.Clocked     = (*Flash5Fixed)(nil)
)

// Flash5FixedSpec configures a Flash5Fixed: "flash5-fixed:limit=100,window=1s".
type Flash5FixedSpec struct {
	Limit  int           // requests per window
	Window time.Duration // a whole number of milliseconds
	// Offset is where the run starts on Flash5's millisecond clock: windows are aligned to
	// the clock's origin minus Offset, so offset=250ms starts a 1s-window run 250ms into a
	// window. 0 (the default) starts at a window boundary.
	Offset time.Duration
}

var flash5FixedKind = limiters.KindInfo{
	Kind: KindFlash5Fixed, Family: FamilyFlash5, Shape: limiters.ShapeWindow,
	Summary:      "Flash5's FIXED_WINDOW: ms clock, 32-bit epoch + 32-bit count in one word",
	Example:      "flash5-fixed:limit=100,window=1s",
	Checks:       limiters.CheckSpecs{Sizes: "flash5-fixed:limit=5,window=1s"},
	Fields:       limiters.FieldInfos[Flash5FixedSpec](),
	Ranges:       flash5FixedRanges,
	Capabilities: []limiters.Capability{limiters.CapRetryAfter},
	Parse:        limiters.SpecParser(Flash5FixedSpec{}),
	Explain:      explainFlash5Fixed,
}

func (s *Flash5FixedSpec) Fields() []limiters.Field {
	offset := limiters.Field{
		FieldInfo: limiters.FieldInfo{Name: "offset", Meaning: "where the run starts on the ms clock (default 0: at a window boundary)"},
		Set: func(text string) error {
			d, err := time.ParseDuration(text)
			if err != nil {
				return fmt.Errorf("%q is not a duration (e.g. 250ms)", text)
			}
			if d < 0 {
				return fmt.Errorf("must not be negative")
			}
			s.Offset = d
			return nil
		},
		Get:  func() string { return limiters.FormatDuration(s.Offset) },
		Omit: func() bool { return s.Offset == 0 },
	}
	return []limiters.Field{
		limiters.IntField("limit", true, "requests per window", &s.Limit),
		limiters.DurationField("window", true, "the window, a whole number of milliseconds", &s.Window),
		offset,
	}
}

// Kind is KindFlash5Fixed.
func (s Flash5FixedSpec) Kind() limiters.Kind { return KindFlash5Fixed }

// String is "flash5-fixed:limit=100,window=1s" (with ",offset=…" when there is one).
func (s Flash5FixedSpec) String() string { return limiters.FormatSpec(KindFlash5Fixed, s.Fields()) }

// Validate refuses a limit below 1 or above 2³²−1 (the count's 32 bits), a window that is not
// a positive whole number of milliseconds or is beyond 2⁶² ns, and an offset that is not a
// whole number of milliseconds or is beyond 2⁶² ns.
func (s Flash5FixedSpec) Validate() error {
	if s.Limit < 1 || uint64(s.Limit) > math.MaxUint32 {
		return limiters.NewConfigError(KindFlash5Fixed, "limit", fmt.Sprint(s.Limit), "must be between 1 and 2^32-1 (the count's 32 bits)")
	}
	if s.Window < time.Millisecond || s.Window%time.Millisecond != 0 || int64(s.Window) > limiters.MaxSpan {
		return limiters.NewConfigError(KindFlash5Fixed, "window", limiters.FormatDuration(s.Window),
			"must be a whole number of milliseconds, at least 1ms and at most 2^62ns (Flash5's clock counts ms)")
	}
	if s.Offset < 0 || s.Offset%time.Millisecond != 0 || int64(s.Offset) > limiters.MaxSpan {
		return limiters.NewConfigError(KindFlash5Fixed, "offset", limiters.FormatDuration(s.Offset),
			"must be a whole number of milliseconds between 0 and 2^62ns")
	}
	return nil
}

// flash5FixedRanges are what Flash5FixedSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for flash5-fixed, with specs at and just past each edge that the registry
// test holds to Validate.
var flash5FixedRanges = []limiters.FieldRange{
	{Field: "limit", Accepted: limits.Limit32,
		Why:     "Flash5 counts in 32 bits",
		Valid:   []string{"flash5-fixed:limit=1,window=1ms", "flash5-fixed:limit=4294967295,window=1ms"},
		Invalid: []string{"flash5-fixed:limit=0,window=1ms", "flash5-fixed:limit=4294967296,window=1ms"}},
	{Field: "window", Accepted: "a whole number of milliseconds, from 1ms to 2^62 ns",
		Why:     "Flash5's clock counts milliseconds; " + limits.Window,
		Valid:   []string{"flash5-fixed:limit=1,window=1ms", "flash5-fixed:limit=1,window=4611686018427ms"},
		Invalid: []string{"flash5-fixed:limit=1,window=1500us", "flash5-fixed:limit=1,window=4611686018428ms", "flash5-fixed:limit=1,window=999us"}},
	{Field: "offset", Accepted: "a whole number of milliseconds from 0 to 2^62 ns (default 0)",
		Why:     "as the window",
		Valid:   []string{"flash5-fixed:limit=1,window=1ms,offset=0ms", "flash5-fixed:limit=1,window=1ms,offset=4611686018427ms"},
		Invalid: []string{"flash5-fixed:limit=1,window=1ms,offset=-1ms", "flash5-fixed:limit=1,window=1ms,offset=1500us", "flash5-fixed:limit=1,window=1ms,offset=4611686018428ms"}},
}

// New is NewFlash5Fixed(s, clock).
func (s Flash5FixedSpec) New(clock limiters.Clock) (limiters.Limiter, error) {
	return NewFlash5Fixed(s, clock)
}

// AdmissionBound is a fixed window's, limit·(⌈(L−1ns)/window⌉ + 1): 100 per 1s over 1s: 200.
// It holds for callers whose clock readings never run backwards; a late reading resets the
// count (see the table above), which the bound does not cover. The epoch's wrap only makes it
// stricter (an old count read as current refuses more).
func (s Flash5FixedSpec) AdmissionBound(L time.Duration) (int64, bool) {
	return bound.SaturatingMul(int64(s.Limit), bound.Touched(L, s.Window)), true
}

// NaturalWindow is the window.
func (s Flash5FixedSpec) NaturalWindow() time.Duration { return s.Window }

// NominalRate is limit per window.
func (s Flash5FixedSpec) NominalRate() (limiters.Rate, bool) {
	return limiters.Rate{Permits: s.Limit, Window: s.Window}, true
}

// InitialPermits is the limit.
func (s Flash5FixedSpec) InitialPermits() int { return s.Limit }

// NewFlash5Fixed returns Flash5's fixed window for spec on clock. It refuses what
// Flash5FixedSpec.Validate refuses and a nil clock.
func NewFlash5Fixed(spec Flash5FixedSpec, clock limiters.Clock) (*Flash5Fixed, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := limiters.RequireClock(KindFlash5Fixed, clock); err != nil {
		return nil, err
	}
	return &Flash5Fixed{limit: uint64(spec.Limit), windowMs: int64(spec.Window / time.Millisecond),
		offsetMs: int64(spec.Offset / time.Millisecond), clock: clock}, nil
}

// epoch is Flash5's reduced epoch of now: (ms / windowMs) & 0xFFFFFFFF, ms = ⌊now/1ms⌋ + offset.
func (f *Flash5Fixed) epoch(now time.Duration) uint64 {
	return uint64(f.ms(now)/f.windowMs) & math.MaxUint32
}

func (f *Flash5Fixed) ms(now time.Duration) int64 {
	return max(int64(now), 0)/int64(time.Millisecond) + f.offsetMs
}

// AcquireAt counts n requests in now's window: one load and one CAS. A stored epoch other
// than now's (newer, older, or one that wrapped) is replaced, with the count reset to n.
func (f *Flash5Fixed) AcquireAt(now time.Duration, n int) limiters.Decision {
	if uint(n-1) >= uint(f.limit) {
		return limiters.CheckN(n, int(f.limit))
	}
	epoch := f.epoch(now)
	for {
		s := f.state.Load()
		next := epoch<<32 | uint64(n)
		if s>>32 == epoch {
			if s&math.MaxUint32+uint64(n) > f.limit {
				return limiters.Rejected
			}
			next = s + uint64(n)
		}
		if f.state.CompareAndSwap(s, next) {
			return limiters.Admitted
		}
	}
}

// TryAcquireAt reports whether n permits were taken at time now.
func (f *Flash5Fixed) TryAcquireAt(now time.Duration, n int) bool {
	return f.AcquireAt(now, n) == limiters.Admitted
}

// TryAcquire takes n permits now, by the limiter's clock.
func (f *Flash5Fixed) TryAcquire(n int) bool { return f.TryAcquireAt(limiters.ReadClock(f.clock), n) }

// used is the count now's window holds as Flash5 reads it: the stored count if the stored
// epoch is now's (after 2³² windows, an old one), else 0.
func (f *Flash5Fixed) used(now time.Duration) uint64 {
	if f.windowMs == 0 { // the zero value
		return 0
	}
	if s := f.state.Load(); s>>32 == f.epoch(now) {
		return s & math.MaxUint32
	}
	return 0
}

// AvailableAt is limit minus the count Flash5 reads for now's window.
func (f *Flash5Fixed) AvailableAt(now time.Duration) int {
	return int(f.limit - min(f.used(now), f.limit))
}

// Available is AvailableAt at the clock's current time.
func (f *Flash5Fixed) Available() int { return f.AvailableAt(limiters.ReadClock(f.clock)) }

// RetryAfterAt is 0 if n fit in now's window, else the time to the next window boundary.
func (f *Flash5Fixed) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	if limiters.CheckN(n, int(f.limit)) != limiters.Admitted {
		return 0, false
	}
	if f.used(now)+uint64(n) <= f.limit {
		return 0, true
	}
	_, end := f.window(now)
	return end - now, true
}

// window is now's window [start, end) in the run's time.
func (f *Flash5Fixed) window(now time.Duration) (start, end time.Duration) {
	ms := f.ms(now)
	startMs := ms - ms%f.windowMs - f.offsetMs
	return time.Duration(startMs) * time.Millisecond, time.Duration(startMs+f.windowMs) * time.Millisecond
}

// Quota is what Flash5's check writes to its out[2]: the requests remaining in now's window
// and the window's reset time in whole seconds on its clock ((epoch + 1)·windowMs / 1000,
// with the run's time 0 at the clock's offset), what X-RateLimit-Remaining and -Reset carry.
func (f *Flash5Fixed) Quota(now time.Duration) (remaining int, resetSeconds int64) {
	if f.windowMs == 0 {
		return 0, 0
	}
	return f.AvailableAt(now), (f.ms(now)/f.windowMs + 1) * f.windowMs / 1000
}

// MaxPermits is the limit.
func (f *Flash5Fixed) MaxPermits() int { return int(f.limit) }

// Kind is KindFlash5Fixed.
func (f *Flash5Fixed) Kind() limiters.Kind { return KindFlash5Fixed }

// String is the spec.
func (f *Flash5Fixed) String() string { return f.Spec().String() }

// Spec is the limiter's configuration.
func (f *Flash5Fixed) Spec() Flash5FixedSpec {
	return Flash5FixedSpec{Limit: int(f.limit), Window: time.Duration(f.windowMs) * time.Millisecond,
		Offset: time.Duration(f.offsetMs) * time.Millisecond}
}

// Snapshot returns now's window, the count Flash5 reads for it and the limit.
func (f *Flash5Fixed) Snapshot(now time.Duration) limiters.State {
	if f.windowMs == 0 {
		return limiters.State{Kind: KindFlash5Fixed, At: now}
	}
	start, end := f.window(now)
	used := int(min(f.used(now), f.limit))
	return limiters.State{Kind: KindFlash5Fixed, At: now, Available: int(f.limit) - used, MaxPermits: int(f.limit),
		Limit: int(f.limit), Count: used, Window: time.Duration(f.windowMs) * time.Millisecond,
		WindowStart: start, WindowEnd: end}
}

// explainFlash5Fixed: the epoch's count against the limit, and when the window resets.
func explainFlash5Fixed(s limiters.State, n int, d limiters.Decision) string {
	head := fmt.Sprintf("Flash5 window [%s, %s) has counted %d of %d", limiters.FormatDuration(s.WindowStart), limiters.FormatDuration(s.WindowEnd), s.Count, s.Limit)
	if d == limiters.Admitted {
		return fmt.Sprintf("%s; %d more fit (a new epoch resets the count in the same CAS)", head, n)
	}
	return fmt.Sprintf("%s; %d more would exceed it: 429 until the epoch changes in %s", head, n, limiters.FormatDuration(s.WindowEnd-s.At))
}

var _ limiters.Fresh = (*Flash5Fixed)(nil)

// FreshAt is a count of 0, or a stored epoch before now's (within the last 2³¹ windows of
// the 32-bit epoch): Flash5 replaces it at the next request.
func (f *Flash5Fixed) FreshAt(now time.Duration) bool {
	if f.windowMs == 0 {
		return true
	}
	s := f.state.Load()
	if s&math.MaxUint32 == 0 {
		return true
	}
	behind := uint32(f.epoch(now)) - uint32(s>>32)
	return behind != 0 && behind < 1<<31
}

// Grid is the windows, aligned to the clock's origin minus Offset: offset=250ms with 1s
// windows puts the first boundary at 750ms.
func (s Flash5FixedSpec) Grid() (limiters.Grid, bool) {
	if s.Window <= 0 {
		return limiters.Grid{}, false
	}
	return limiters.Grid{Period: s.Window, Parts: 1, Phase: (s.Window - s.Offset%s.Window) % s.Window, What: "window"}, true
}

var _ limiters.Splittable = Flash5FixedSpec{}

// Split is limit / n (the same window and offset).
func (s Flash5FixedSpec) Split(n int) (limiters.Spec, error) {
	var err error
	s.Limit, err = limiters.SplitCount(s, "limit", s.Limit, n)
	return s, err
}
