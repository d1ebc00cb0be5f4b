package peers

import (
	"fmt"
	"github.com/ratelab/ratelab/limiters"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ratelab/ratelab/limiters/internal/bound"
)

// KindFlash5Token is Flash5's TOKEN_BUCKET strategy's name in specs.
const KindFlash5Token limiters.Kind = "flash5-token"

// flash5TokenMaxLimit is the largest limit flash5-token takes: limit × 1000 (the capacity in
// milli-tokens, and the numerator of the refill) stays within a Java int, whatever width
// Flash5 computes it in.
const flash5TokenMaxLimit = math.MaxInt32 / 1000

// flash5EpochMs is Flash5's millisecond clock at the run's time 0: virtualEpoch
// (2000-01-01T00:00:00Z) in Unix milliseconds, 946,684,800,000. Flash5 reads
// System.currentTimeMillis(), which is never 0; a clock that started at 0 would read the first
// request's refill time as "never refilled" again (see the type's comment).
var flash5EpochMs = virtualEpoch.UnixMilli()

// Flash5Token is a model, decision for decision, of Flash5's TOKEN_BUCKET strategy
// (flash-ext-limiter), on a millisecond clock, in two words as Flash5 keeps them:
//
//	slot0  the tokens × 1000 (milli-tokens, fixed point), at most capacity = limit × 1000
//	slot1  the millisecond of the last refill; 0 means "never", and the bucket reads full
//
// refillPerMs = ⌊limit × 1000 / windowMs⌋ milli-tokens per millisecond, at least 1. A request
// at millisecond now reads slot1 and slot0; tokens = capacity if slot1 is 0, else
// min(capacity, slot0 + (now − slot1) × refillPerMs) when now is later than slot1; it is refused
// below 1000 (one token), otherwise one CAS on slot0 takes 1000 and slot1 is then set to now
// (best-effort, as Flash5 does, outside the CAS).
//
// limit=100, window=1s: refillPerMs = 100, exactly 100 tokens per second; 100 pass at once,
// then one every 10ms. Because the refill is a whole number of milli-tokens per millisecond,
// the rate is ⌊limit × 1000 / windowMs⌋ tokens per second, at least 1, whatever the spec says:
//
//	limit=100, window=60s:  ⌊100000/60000⌋ = 1 milli-token/ms  →  1 per second, 60 per minute (not 100)
//	limit=1,   window=1h:   ⌊1000/3600000⌋ = 0, raised to 1     →  1 per second, 3,600 per hour (not 1)
//	limit=7,   window=3s:   ⌊7000/3000⌋ = 2                     →  2 per second (not 2.33)
//
// It is exact only when windowMs divides limit × 1000; a window above limit × 1000 ms is always
// refilled at one token per second, however long it is.
//
// Where it differs from ratelab's token-bucket (capacity = limit, rate = limit/window):
//
//	                       flash5-token                             token-bucket
//	rate                   ⌊limit·1000/windowMs⌋ tokens per second,  permits/window, T rounded up
//	                       at least 1: 100/60s is 60/min, 1/1h is    to a whole ns: 100/60s is 100
//	                       3,600/h                                   per minute, 1/1h one per hour
//	time resolution        whole milliseconds (floored)             nanoseconds
//	starts                 full (slot1 = 0 reads as a full bucket)   full
//	state                  two words: a CAS on the tokens, then a    one int64 (the TAT), one CAS
//	                       plain store of the time
//	goroutines at start    every request that reads slot1 = 0        exactly capacity
//	                       before the first store refills the
//	                       bucket to full: more than capacity,
//	                       bounded only by how long that store takes
//	goroutines at a refill every request that reads slot1 before     exactly what refilled
//	                       the winner stores it refills the same
//	                       span again: 1 token due, 1 or more pass
//	a late clock reading   no refill, and slot1 is set back to it:   judged at its own time against
//	                       the next request refills that span again  the newer schedule
//	permits per request    1 in Flash5; n here takes n × 1000        n
//
// Flash5 takes one token per call; a request for n permits here takes n tokens (n = 1 is
// Flash5's call), and MaxPermits is the limit. Its API also returns what remains and when the
// bucket is full again (Quota), which services send as X-RateLimit headers.
//
// Cost: two loads, one CAS and one store; lock-free, no allocation. The seed does not say what
// a clock reading older than slot1 does or how an idle of centuries is multiplied out: ratelab
// refills nothing for the former and saturates the latter at a full bucket.
//
// The zero value grants nothing: every request is Never; NewFlash5Token makes a working one.
type Flash5Token struct {
	slot0    atomic.Int64 // milli-tokens
	slot1    atomic.Int64 // ms of the last refill on Flash5's clock; 0: never
	capacity int64        // limit × 1000
	refill   int64        // refillPerMs
	limit    int
	windowMs int64
	clock    limiters.Clock
}

var (
	_ limiters.RateLimiter = (*Flash5Token)(nil)
	_ limiters.Clocked     = (*Flash5Token)(nil)
)

// Flash5TokenSpec configures a Flash5Token: "flash5-token:limit=100,window=1s".
type Flash5TokenSpec struct {
	Limit  int           // the capacity in tokens, and the requests per window the refill is derived from
	Window time.Duration // a whole number of milliseconds
}

var flash5TokenKind = limiters.KindInfo{
	Kind: KindFlash5Token, Family: FamilyFlash5, Shape: limiters.ShapeLevel,
	Summary:      "Flash5's TOKEN_BUCKET: milli-tokens refilled a whole number per ms (100/60s is 60/min, 1/1h is 3600/h)",
	Example:      "flash5-token:limit=100,window=1s",
	Checks:       limiters.CheckSpecs{Sizes: "flash5-token:limit=5,window=1s"},
	Fields:       limiters.FieldInfos[Flash5TokenSpec](),
	Ranges:       flash5TokenRanges,
	Capabilities: []limiters.Capability{limiters.CapRetryAfter},
	Parse:        limiters.SpecParser(Flash5TokenSpec{}),
	Explain:      explainFlash5Token,
}

func (s *Flash5TokenSpec) Fields() []limiters.Field {
	return []limiters.Field{
		limiters.IntField("limit", true, "the bucket's capacity in tokens; with window, the refill ⌊limit·1000/windowMs⌋ milli-tokens per ms (at least 1)", &s.Limit),
		limiters.DurationField("window", true, "the window the limit is per, a whole number of milliseconds", &s.Window),
	}
}

// Kind is KindFlash5Token.
func (s Flash5TokenSpec) Kind() limiters.Kind { return KindFlash5Token }

// String is "flash5-token:limit=100,window=1s".
func (s Flash5TokenSpec) String() string { return limiters.FormatSpec(KindFlash5Token, s.Fields()) }

// Validate refuses a limit below 1 or above 2,147,483 (limit × 1000 must fit a Java int) and a
// window that is not a positive whole number of milliseconds or is beyond 2⁶² ns.
func (s Flash5TokenSpec) Validate() error {
	if s.Limit < 1 || s.Limit > flash5TokenMaxLimit {
		return limiters.NewConfigError(KindFlash5Token, "limit", strconv.Itoa(s.Limit),
			fmt.Sprintf("must be between 1 and %d (limit × 1000 milli-tokens must fit a Java int)", flash5TokenMaxLimit))
	}
	if s.Window < time.Millisecond || s.Window%time.Millisecond != 0 || int64(s.Window) > limiters.MaxSpan {
		return limiters.NewConfigError(KindFlash5Token, "window", limiters.FormatDuration(s.Window),
			"must be a whole number of milliseconds, at least 1ms and at most 2^62ns (Flash5's clock counts ms)")
	}
	return nil
}

// flash5TokenRanges are what Flash5TokenSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for flash5-token, with specs at and just past each edge that the registry
// test holds to Validate.
var flash5TokenRanges = []limiters.FieldRange{
	{Field: "limit", Accepted: "1 to 2147483",
		Why:     "the capacity in milli-tokens, limit × 1000, must fit a Java int",
		Valid:   []string{"flash5-token:limit=1,window=1ms", "flash5-token:limit=2147483,window=1ms"},
		Invalid: []string{"flash5-token:limit=0,window=1ms", "flash5-token:limit=2147484,window=1ms"}},
	{Field: "window", Accepted: "a whole number of milliseconds, from 1ms to 2^62 ns",
		Why:     "Flash5's clock counts milliseconds",
		Valid:   []string{"flash5-token:limit=1,window=1ms", "flash5-token:limit=1,window=4611686018427ms"},
		Invalid: []string{"flash5-token:limit=1,window=1500us", "flash5-token:limit=1,window=4611686018428ms", "flash5-token:limit=1,window=999us"}},
}

// New is NewFlash5Token(s, clock).
func (s Flash5TokenSpec) New(clock limiters.Clock) (limiters.Limiter, error) {
	return NewFlash5Token(s, clock)
}

// RefillPerMs is Flash5's refill in milli-tokens per millisecond, ⌊limit × 1000 / windowMs⌋
// and at least 1 — which is also the tokens it refills per second: 100/1s is 100, 100/60s is 1,
// 1/1h is 1 (⌊1000/3600000⌋ = 0, raised to 1).
func (s Flash5TokenSpec) RefillPerMs() int64 {
	windowMs := int64(s.Window / time.Millisecond)
	if windowMs <= 0 {
		return 0
	}
	return max(int64(s.Limit)*1000/windowMs, 1)
}

// AdmissionBound is ⌊(limit·1000 + D·refillPerMs) / 1000⌋ with D = ⌈(L − 1ns)/1ms⌉, the most
// whole ms an interval of length L spans: a full bucket at once, then what refills meanwhile
// (100/1s over 1s: 100 + 100 = 200; 100/60s over 60s: 100 + 60 = 160). It is exact, and holds for
// callers whose clock readings never run backwards and that do not race each other between a
// CAS and its store of slot1 (see the type's comment).
func (s Flash5TokenSpec) AdmissionBound(L time.Duration) (int64, bool) {
	spanned := bound.DivCeil(int64(L)-1, int64(time.Millisecond))
	return bound.SaturatingAdd(int64(s.Limit), bound.SaturatingMul(spanned, s.RefillPerMs())/1000), true
}

// NaturalWindow is the window.
func (s Flash5TokenSpec) NaturalWindow() time.Duration { return s.Window }

// NominalRate is the rate Flash5 enforces, RefillPerMs tokens per second (100/60s: 1/1s), not
// the spec's limit per window.
func (s Flash5TokenSpec) NominalRate() (limiters.Rate, bool) {
	return limiters.Rate{Permits: int(s.RefillPerMs()), Window: time.Second}, true
}

// InitialPermits is the limit: the first request reads a full bucket.
func (s Flash5TokenSpec) InitialPermits() int { return s.Limit }

// NewFlash5Token returns Flash5's token bucket for spec on clock. It refuses what
// Flash5TokenSpec.Validate refuses and a nil clock.
func NewFlash5Token(spec Flash5TokenSpec, clock limiters.Clock) (*Flash5Token, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := limiters.RequireClock(KindFlash5Token, clock); err != nil {
		return nil, err
	}
	return &Flash5Token{capacity: int64(spec.Limit) * 1000, refill: spec.RefillPerMs(), limit: spec.Limit,
		windowMs: int64(spec.Window / time.Millisecond), clock: clock}, nil
}

// ms is Flash5's clock for the run's time now: flash5EpochMs + ⌊now/1ms⌋ (0 before 0).
func (f *Flash5Token) ms(now time.Duration) int64 {
	return flash5EpochMs + max(int64(now), 0)/int64(time.Millisecond)
}

// tokens is what Flash5 reads at ms from slot0 = s and slot1 = last, in milli-tokens.
func (f *Flash5Token) tokens(s, last, ms int64) int64 {
	switch {
	case last == 0:
		return f.capacity // never refilled: "one full window elapsed", the bucket is full
	case ms <= last:
		return s
	case ms-last >= (f.capacity-s)/f.refill+1:
		return f.capacity // the refill would pass the capacity (and the product may overflow)
	}
	return s + (ms-last)*f.refill
}

// AcquireAt takes n tokens at now: read slot1 and slot0, one CAS on slot0, then store slot1.
func (f *Flash5Token) AcquireAt(now time.Duration, n int) limiters.Decision {
	if uint(n-1) >= uint(f.limit) {
		return limiters.CheckN(n, f.limit)
	}
	ms := f.ms(now)
	need := int64(n) * 1000
	for {
		last := f.slot1.Load()
		s := f.slot0.Load()
		tokens := f.tokens(s, last, ms)
		if tokens < need {
			return limiters.Rejected
		}
		if f.slot0.CompareAndSwap(s, tokens-need) {
			f.slot1.Store(ms) // best-effort, after the CAS, as Flash5 does
			return limiters.Admitted
		}
	}
}

// TryAcquireAt reports whether n permits were taken at time now.
func (f *Flash5Token) TryAcquireAt(now time.Duration, n int) bool {
	return f.AcquireAt(now, n) == limiters.Admitted
}

// TryAcquire takes n permits now, by the limiter's clock.
func (f *Flash5Token) TryAcquire(n int) bool { return f.TryAcquireAt(limiters.ReadClock(f.clock), n) }

// milliTokens is what a request at now would read, in milli-tokens (0 for the zero value).
func (f *Flash5Token) milliTokens(now time.Duration) int64 {
	if f.refill == 0 {
		return 0
	}
	last := f.slot1.Load()
	return f.tokens(f.slot0.Load(), last, f.ms(now))
}

// AvailableAt is the whole tokens a request at now would read.
func (f *Flash5Token) AvailableAt(now time.Duration) int { return int(f.milliTokens(now) / 1000) }

// Available is AvailableAt at the clock's current time.
func (f *Flash5Token) Available() int { return f.AvailableAt(limiters.ReadClock(f.clock)) }

// RetryAfterAt is 0 if n tokens are there now, else the time to the first millisecond at
// which the refill has brought them.
func (f *Flash5Token) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	if limiters.CheckN(n, f.limit) != limiters.Admitted {
		return 0, false
	}
	return f.untilMilliTokens(now, int64(n)*1000), true
}

// untilMilliTokens is how long after now the bucket first holds want milli-tokens (≤ capacity).
func (f *Flash5Token) untilMilliTokens(now time.Duration, want int64) time.Duration {
	deficit := want - f.milliTokens(now)
	if deficit <= 0 {
		return 0
	}
	ms := max(int64(now), 0)/int64(time.Millisecond) + bound.DivCeil(deficit, f.refill)
	if ms > limiters.MaxSpan/int64(time.Millisecond) {
		return time.Duration(limiters.MaxSpan) - now
	}
	return time.Duration(ms)*time.Millisecond - now
}

// Quota is what Flash5's check writes to its out[2]: the whole tokens remaining at now and
// the reset, in epoch seconds on Flash5's clock (virtualEpoch + the run's time), what
// X-RateLimit-Remaining and -Reset carry. The seed names the reset without defining it for a
// bucket; ratelab gives the first whole second at which the bucket is full again (now's second
// rounded up when it is full now). 100/1s with 40 tokens left at run time 0: 40 and
// 946,684,801, the bucket refilling the 60 in 600ms.
func (f *Flash5Token) Quota(now time.Duration) (remaining int, resetSeconds int64) {
	if f.refill == 0 {
		return 0, 0
	}
	full := now + f.untilMilliTokens(now, f.capacity)
	return f.AvailableAt(now), bound.DivCeil(f.ms(full), 1000)
}

// MaxPermits is the limit.
func (f *Flash5Token) MaxPermits() int { return f.limit }

// Kind is KindFlash5Token.
func (f *Flash5Token) Kind() limiters.Kind { return KindFlash5Token }

// String is the spec.
func (f *Flash5Token) String() string { return f.Spec().String() }

// Spec is the limiter's configuration.
func (f *Flash5Token) Spec() Flash5TokenSpec {
	return Flash5TokenSpec{Limit: f.limit, Window: time.Duration(f.windowMs) * time.Millisecond}
}

// Snapshot is the tokens a request at now would read (Level, of the limit as LevelMax) and
// when the next one is there (NextFree).
func (f *Flash5Token) Snapshot(now time.Duration) limiters.State {
	st := limiters.State{Kind: KindFlash5Token, At: now, LevelName: "tokens", NextFree: now}
	if f.refill == 0 {
		return st
	}
	milli := f.milliTokens(now)
	st.Available, st.MaxPermits = int(milli/1000), f.limit
	st.Level, st.LevelMax = float64(milli)/1000, float64(f.limit)
	st.NextFree = now + f.untilMilliTokens(now, 1000)
	return st
}

// explainFlash5Token: the tokens against the request, and when the refill brings the next.
func explainFlash5Token(s limiters.State, n int, d limiters.Decision) string {
	head := fmt.Sprintf("Flash5's bucket holds %s of %s tokens (in milli-tokens, refilled a whole number per ms)",
		levelText(s.Level), levelText(s.LevelMax))
	if d == limiters.Admitted {
		return fmt.Sprintf("%s: %d token(s) taken in one CAS", head, n)
	}
	return fmt.Sprintf("%s: %d would take it below 0, so 429 (the next whole token is there in %s)", head, n, limiters.FormatDuration(s.NextFree-s.At))
}
