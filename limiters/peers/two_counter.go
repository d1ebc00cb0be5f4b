package peers

import (
	"fmt"
	"math/bits"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/internal/bound"
	"github.com/ratelab/ratelab/limiters/internal/limits"
)

// KindTwoCounter is the two-counter sliding estimate's name in specs.
const KindTwoCounter limiters.Kind = "two-counter"

// FamilyTwoCounter is the two-counter sliding estimate that Cloudflare's rate limiting (its
// 2017 engineering post "How we built rate limiting capable of scaling to millions of
// domains") and HAProxy's stick-table rates (freq_ctr, sc_http_req_rate) are built on: an
// algorithm many products share rather than one library's code.
const FamilyTwoCounter limiters.Family = "two-counter"

// TwoCounter is the two-counter sliding estimate: it counts the requests of the current
// period and keeps the previous period's count, and estimates the rate over the trailing
// period as if the previous period's requests had been spread evenly over it:
//
//	estimate = prev × (period − elapsed)/period + curr
//
// where elapsed is the time since the current period began. A request for n passes if the
// estimate with it counted does not exceed the limit — prev·(period − elapsed) +
// (curr + n)·period ≤ limit·period, compared exactly in 128-bit integers — and is then counted
// in curr; a refused request counts nothing. Periods are anchored at the first request: it
// begins period 0, and period k is [first + k·period, first + (k+1)·period). Entering the next
// period moves curr to prev; entering a later one empties both.
//
// limit=100, window=1s: 80 requests in period 0, then at 0.25s into period 1 the estimate is
// 80 × 0.75 + 0 = 60, and 40 pass; at 0.5s, 80 × 0.5 + 40 = 80, and 20 more pass.
//
// The estimate is exact only if the previous period's requests were even. An adversary puts
// them all at its last nanosecond: 100 at 2.999999999s (with period 1 empty, so that period 2's
// own previous count is 0), and then, 1s − 2ns later, at 3.999999998s the estimate is
// 100 × 2ns/1s + curr, so curr reaches ⌊100 × (1s − 2ns)/1s⌋ = 99: 199 admitted within
// [2.999999999s, 3.999999999s), one period. In general at most
// limit + ⌊limit × (L − 2ns)/period⌋ in any interval of length L ≤ period — 2 × limit − 1 when
// the period is longer than 2 × limit ns, and 189 over 900ms, where ratelab's sliding window of
// 10 slots admits 100 (over exactly one window its one-slot imprecision admits 200 too).
//
// Where it differs from ratelab's sliding-window, and why it matters:
//
//	                      two-counter                              sliding-window
//	memory                two counts                               one count per slot
//	the previous period   weighted by the time left in the         counted exactly, slot by slot
//	                      current one, as if it had been even
//	worst trailing        limit + ⌊limit·(L − 2ns)/period⌋: for    limit·⌈k/slots⌉ for k slots
//	window (L ≤ period)   100/1s, 199 over 1s, 189 over 900ms      touched: 200 over 1s, 100
//	                                                               over 900ms (10 slots)
//	periods               anchored at the first request            slots aligned to the clock's origin
//	a late clock reading  judged at the start of the newest        refused once a newer caller
//	                      period (the previous count at full       moved a slot past it
//	                      weight: the strictest)
//
// A refused request here counts nothing, as in ratelab's window kinds. HAProxy's usual
// configuration (track-sc, then deny if sc_http_req_rate is over the limit) counts every
// tracked request, refused ones included, so a client that keeps hammering keeps its rate
// high and stays refused; that variant is not modelled.
//
// The state is one 64-bit word — the period's index and the two counts, in
// bits.Len(limit) bits each — updated by one CAS after one load, beside the anchor, written
// once by the first request; lock-free, no allocation. The period index keeps
// 64 − 2·bits.Len(limit) bits, which is why a period must be at least 2^(2·bits.Len(limit) − 2)
// ns (4µs for limit 100, 67ms for 10,000): every period index below 2⁶² ns then fits.
//
// The zero value grants nothing: every request is Never; NewTwoCounter makes a working one.
type TwoCounter struct {
	anchor atomic.Int64  // the first request's time + 1; 0: no request yet
	word   atomic.Uint64 // period index << 2b | prev << b | curr
	limit  uint64
	period int64
	b      uint // bits.Len(limit): the width of each count
	clock  limiters.Clock
}

var (
	_ limiters.RateLimiter = (*TwoCounter)(nil)
	_ limiters.Refunder    = (*TwoCounter)(nil)
	_ limiters.Clocked     = (*TwoCounter)(nil)
)

// TwoCounterSpec configures a TwoCounter: "two-counter:limit=100,window=1s".
type TwoCounterSpec struct {
	Limit  int           // the estimate's limit
	Window time.Duration // the period
}

// twoCounterMaxLimit is the largest limit: both counts in one word leave the period index
// 64 − 2·32 bits at 2³²−1, none beyond.
const twoCounterMaxLimit = 1<<31 - 1

var twoCounterKind = limiters.KindInfo{
	Kind: KindTwoCounter, Family: FamilyTwoCounter, Shape: limiters.ShapeLevel,
	Summary:      "the two-counter sliding estimate (Cloudflare, HAProxy): prev × remaining fraction + curr; up to 2×limit − 1 per window",
	Example:      "two-counter:limit=100,window=1s",
	Checks:       limiters.CheckSpecs{Sizes: "two-counter:limit=5,window=1s"},
	Fields:       limiters.FieldInfos[TwoCounterSpec](),
	Ranges:       twoCounterRanges,
	Capabilities: []limiters.Capability{limiters.CapRetryAfter, limiters.CapRefund},
	Parse:        limiters.SpecParser(TwoCounterSpec{}),
	Explain:      explainTwoCounter,
}

func (s *TwoCounterSpec) Fields() []limiters.Field {
	return []limiters.Field{
		limiters.IntField("limit", true, "the most the estimate may reach, with the request counted", &s.Limit),
		limiters.DurationField("window", true, "the period each counter covers, anchored at the first request", &s.Window),
	}
}

// Kind is KindTwoCounter.
func (s TwoCounterSpec) Kind() limiters.Kind { return KindTwoCounter }

// String is "two-counter:limit=100,window=1s".
func (s TwoCounterSpec) String() string { return limiters.FormatSpec(KindTwoCounter, s.Fields()) }

// twoCounterMinWindow is the shortest period for limit: 2^(2·bits.Len(limit) − 2) ns.
func twoCounterMinWindow(limit int) time.Duration {
	return time.Duration(1) << (2*bits.Len64(uint64(limit)) - 2)
}

// Validate refuses a limit below 1 or above 2³¹ − 1, and a window beyond 2⁶² ns or shorter
// than 2^(2·bits.Len(limit) − 2) ns (where the period index would not fit beside the counts).
func (s TwoCounterSpec) Validate() error {
	if s.Limit < 1 || s.Limit > twoCounterMaxLimit {
		return limiters.NewConfigError(KindTwoCounter, "limit", strconv.Itoa(s.Limit), "must be between 1 and 2^31-1")
	}
	if int64(s.Window) > limiters.MaxSpan {
		return limiters.NewConfigError(KindTwoCounter, "window", limiters.FormatDuration(s.Window), "must be at most 2^62ns")
	}
	if min := twoCounterMinWindow(s.Limit); s.Window < min {
		b := bits.Len64(uint64(s.Limit))
		return limiters.NewConfigError(KindTwoCounter, "window", limiters.FormatDuration(s.Window), fmt.Sprintf(
			"too short for limit=%d: the two counts take %d bits each of one 64-bit word, and the period index in the other %d "+
				"needs a period of at least 2^%d ns = %s", s.Limit, b, 64-2*b, 2*b-2, limiters.FormatDuration(min)))
	}
	return nil
}

// twoCounterRanges are what TwoCounterSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for two-counter, with specs at and just past each edge that the registry
// test holds to Validate.
var twoCounterRanges = []limiters.FieldRange{
	{Field: "limit", Accepted: "1 to 2^31−1",
		Why:     "both counts share one 64-bit word with the period index",
		Valid:   []string{"two-counter:limit=1,window=1ns", "two-counter:limit=2147483647,window=1152921504606846976ns"},
		Invalid: []string{"two-counter:limit=0,window=1s", "two-counter:limit=2147483648,window=2000000000000000000ns"}},
	{Field: "window", Accepted: "at least 2^(2·bits(limit)−2) ns (1ns for limit 1, 4.1µs for 100, 67ms for 10000, 1.07s for 65535), " + limits.Span,
		Why:     "the period index keeps the word's other 64 − 2·bits(limit) bits: with this period every index below 2^62 ns fits",
		Valid:   []string{"two-counter:limit=100,window=4096ns", "two-counter:limit=65535,window=1073741824ns", "two-counter:limit=1,window=4611686018427387904ns"},
		Invalid: []string{"two-counter:limit=100,window=4095ns", "two-counter:limit=100000,window=1s", "two-counter:limit=1,window=4611686018427387905ns"}},
}

// New is NewTwoCounter(s, clock).
func (s TwoCounterSpec) New(clock limiters.Clock) (limiters.Limiter, error) {
	return NewTwoCounter(s, clock)
}

// AdmissionBound for L ≤ window is exact: limit + ⌊limit·(L − 2ns)/window⌋ (limit for L ≤ 2ns)
// — the previous period's limit at its last ns, and what the estimate lets the current one
// have by L − 2ns after its start (100/1s over 1s: 199). Beyond, it is limit per period the
// interval touches, which overstates the worst case by about one per period after the first
// (a period whose predecessor was not empty gets at most limit − 1 by its last ns).
func (s TwoCounterSpec) AdmissionBound(L time.Duration) (int64, bool) {
	if L > s.Window {
		return bound.SaturatingMul(int64(s.Limit), bound.Touched(L, s.Window)), true
	}
	e := uint64(max(L-2, 0))
	hi, lo := bits.Mul64(uint64(s.Limit), e)
	q, _ := bits.Div64(hi, lo, uint64(s.Window)) // hi < window: limit·e/window ≤ limit
	return int64(s.Limit) + int64(q), true
}

// NaturalWindow is the window.
func (s TwoCounterSpec) NaturalWindow() time.Duration { return s.Window }

// NominalRate is limit per window.
func (s TwoCounterSpec) NominalRate() (limiters.Rate, bool) {
	return limiters.Rate{Permits: s.Limit, Window: s.Window}, true
}

// InitialPermits is the limit.
func (s TwoCounterSpec) InitialPermits() int { return s.Limit }

// NewTwoCounter returns the two-counter sliding estimate for spec on clock. It refuses what
// TwoCounterSpec.Validate refuses and a nil clock.
func NewTwoCounter(spec TwoCounterSpec, clock limiters.Clock) (*TwoCounter, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := limiters.RequireClock(KindTwoCounter, clock); err != nil {
		return nil, err
	}
	return &TwoCounter{limit: uint64(spec.Limit), period: int64(spec.Window), b: uint(bits.Len64(uint64(spec.Limit))), clock: clock}, nil
}

// twoCounterView is the state as a request at some time sees it: the period it is judged in,
// the time elapsed in it, and the two counts after any move to a newer period.
type twoCounterView struct {
	word           uint64 // the word it was read from
	index          uint64
	elapsed        int64
	prev, curr     uint64
	anchored, late bool
}

// view reads the state for a request at now; anchor is the first request's time + 1 (0: none).
func (l *TwoCounter) view(now time.Duration, anchor int64) twoCounterView {
	v := twoCounterView{word: l.word.Load()}
	if anchor == 0 {
		return v
	}
	v.anchored = true
	rel := max(int64(now)-(anchor-1), 0)
	index, elapsed := uint64(rel/l.period), rel%l.period
	mask := uint64(1)<<l.b - 1
	stored, prev, curr := v.word>>(2*l.b), v.word>>l.b&mask, v.word&mask
	switch {
	case index == stored:
	case index == stored+1:
		prev, curr = curr, 0
	case index > stored:
		prev, curr = 0, 0
	default: // a late reading: judged at the start of the newest period
		index, elapsed, v.late = stored, 0, true
	}
	v.index, v.elapsed, v.prev, v.curr = index, elapsed, prev, curr
	return v
}

// fits reports whether n more keep the estimate within the limit at the view's time:
// prev·(period − elapsed) + (curr + n)·period ≤ limit·period, in 128 bits.
func (l *TwoCounter) fits(v twoCounterView, n uint64) bool {
	if v.curr+n > l.limit {
		return false
	}
	h1, l1 := bits.Mul64(v.prev, uint64(l.period-v.elapsed))
	h2, l2 := bits.Mul64(v.curr+n, uint64(l.period))
	lo, carry := bits.Add64(l1, l2, 0)
	hi := h1 + h2 + carry
	hl, ll := bits.Mul64(l.limit, uint64(l.period))
	return hi < hl || hi == hl && lo <= ll
}

func (l *TwoCounter) pack(v twoCounterView, curr uint64) uint64 {
	return v.index<<(2*l.b) | v.prev<<l.b | curr
}

// AcquireAt counts n at now if the estimate with them stays within the limit: one load of the
// word and one CAS (none for a refusal in the stored period; the first request also sets the
// anchor, once).
func (l *TwoCounter) AcquireAt(now time.Duration, n int) limiters.Decision {
	if uint(n-1) >= uint(l.limit) {
		return limiters.CheckN(n, int(l.limit))
	}
	anchor := l.anchor.Load()
	if anchor == 0 {
		l.anchor.CompareAndSwap(0, max(int64(now), 0)+1) // the first request anchors the periods
		anchor = l.anchor.Load()
	}
	for {
		v := l.view(now, anchor)
		d, curr := limiters.Rejected, v.curr
		if l.fits(v, uint64(n)) {
			d, curr = limiters.Admitted, v.curr+uint64(n)
		}
		// A refusal in a newer period stores the move to it (its counts are a function of
		// time), so that later late readings are judged in the newest period seen.
		if next := l.pack(v, curr); next == v.word || l.word.CompareAndSwap(v.word, next) {
			return d
		}
	}
}

// TryAcquireAt reports whether n permits were taken at time now.
func (l *TwoCounter) TryAcquireAt(now time.Duration, n int) bool {
	return l.AcquireAt(now, n) == limiters.Admitted
}

// TryAcquire takes n permits now, by the limiter's clock.
func (l *TwoCounter) TryAcquire(n int) bool { return l.TryAcquireAt(limiters.ReadClock(l.clock), n) }

// RefundAt takes n back off the current count, if now is still in the period that counted
// them (exact at the instant of the grant); a period that has moved on gives nothing back.
func (l *TwoCounter) RefundAt(now time.Duration, n int) {
	anchor := l.anchor.Load()
	if l.limit == 0 || n <= 0 || anchor == 0 {
		return
	}
	for {
		v := l.view(now, anchor)
		if v.late || v.word>>(2*l.b) != v.index || v.curr < uint64(n) {
			return
		}
		if l.word.CompareAndSwap(v.word, l.pack(v, v.curr-uint64(n))) {
			return
		}
	}
}

// AvailableAt is the largest n that fits at now.
func (l *TwoCounter) AvailableAt(now time.Duration) int {
	if l.limit == 0 {
		return 0
	}
	v := l.view(now, l.anchor.Load())
	return int(l.room(v))
}

// room is the largest n that fits in the view: ⌊limit − curr − prev·(period − elapsed)/period⌋.
func (l *TwoCounter) room(v twoCounterView) uint64 {
	hi, lo := bits.Mul64(v.prev, uint64(l.period-v.elapsed))
	weighted, rem := bits.Div64(hi, lo, uint64(l.period)) // hi < period: prev·(…)/period ≤ prev
	used := v.curr + weighted
	if rem > 0 {
		used++
	}
	if used >= l.limit {
		return 0
	}
	return l.limit - used
}

// Available is AvailableAt at the clock's current time.
func (l *TwoCounter) Available() int { return l.AvailableAt(limiters.ReadClock(l.clock)) }

// RetryAfterAt is how long after now n would first fit, nothing else counted meanwhile: in
// the current period once the previous count's weight has fallen enough, else in the next,
// where the current count becomes the previous one.
func (l *TwoCounter) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	if limiters.CheckN(n, int(l.limit)) != limiters.Admitted {
		return 0, false
	}
	v := l.view(now, l.anchor.Load())
	if !v.anchored || l.fits(v, uint64(n)) {
		return 0, true
	}
	start := time.Duration(l.anchor.Load()-1) + time.Duration(v.index)*time.Duration(l.period)
	prev, curr := v.prev, v.curr
	if curr+uint64(n) > l.limit {
		start += time.Duration(l.period)
		prev, curr = curr, 0
	}
	// The least elapsed e with prev·(period − e) ≤ (limit − curr − n)·period:
	// e = ⌈(prev + curr + n − limit)·period / prev⌉, at most period (prev > 0 here).
	x := prev + curr + uint64(n) - l.limit
	hi, lo := bits.Mul64(x, uint64(l.period))
	e, rem := bits.Div64(hi, lo, prev)
	if rem > 0 {
		e++
	}
	at := start + time.Duration(e)
	if at > time.Duration(limiters.MaxSpan) {
		at = time.Duration(limiters.MaxSpan)
	}
	return max(at-now, 0), true
}

// MaxPermits is the limit.
func (l *TwoCounter) MaxPermits() int { return int(l.limit) }

// Kind is KindTwoCounter.
func (l *TwoCounter) Kind() limiters.Kind { return KindTwoCounter }

// String is the spec.
func (l *TwoCounter) String() string { return l.Spec().String() }

// Spec is the limiter's configuration.
func (l *TwoCounter) Spec() TwoCounterSpec {
	return TwoCounterSpec{Limit: int(l.limit), Window: time.Duration(l.period)}
}

// Snapshot is the estimate at now (Level, of the limit as LevelMax) and when one more fits
// (NextFree); for the explanation also the current period (Window, WindowStart, WindowEnd) and
// its two counts (Slots: the previous period's, then the current one's).
func (l *TwoCounter) Snapshot(now time.Duration) limiters.State {
	st := limiters.State{Kind: KindTwoCounter, At: now, LevelName: "estimate", NextFree: now}
	if l.limit == 0 {
		return st
	}
	anchor := l.anchor.Load()
	v := l.view(now, anchor)
	st.Available, st.MaxPermits = int(l.room(v)), int(l.limit)
	st.LevelMax, st.Limit, st.Count, st.Window = float64(l.limit), int(l.limit), int(v.curr), time.Duration(l.period)
	if wait, ok := l.RetryAfterAt(now, 1); ok {
		st.NextFree = now + wait
	}
	if !v.anchored {
		st.WindowStart, st.WindowEnd = now, now+time.Duration(l.period)
		return st
	}
	st.Level = float64(v.prev)*float64(l.period-v.elapsed)/float64(l.period) + float64(v.curr)
	st.WindowStart = time.Duration(anchor-1) + time.Duration(v.index)*time.Duration(l.period)
	st.WindowEnd = st.WindowStart + time.Duration(l.period)
	st.Slots = []limiters.Slot{{Start: st.WindowStart - time.Duration(l.period), Count: int(v.prev), Live: true},
		{Start: st.WindowStart, Count: int(v.curr), Live: true}}
	return st
}

// explainTwoCounter: the estimate's two terms against the limit.
func explainTwoCounter(s limiters.State, n int, d limiters.Decision) string {
	if len(s.Slots) != 2 {
		if d == limiters.Admitted {
			return fmt.Sprintf("the first request: it anchors the periods of %s, and %d of %d are counted", limiters.FormatDuration(s.Window), n, s.Limit)
		}
		return fmt.Sprintf("no request yet; %d is more than the limit %d", n, s.Limit)
	}
	left := float64(s.WindowEnd-s.At) / float64(s.Window)
	head := fmt.Sprintf("estimate = prev %d × %s of the period left + curr %d = %s of %d", s.Slots[0].Count, strconv.FormatFloat(left, 'f', 3, 64),
		s.Slots[1].Count, levelText(s.Level), s.Limit)
	if d == limiters.Admitted {
		return fmt.Sprintf("%s: with %d more it stays within the limit", head, n)
	}
	return fmt.Sprintf("%s: %d more would exceed it; the previous period's weight falls, one fits in %s", head, n, limiters.FormatDuration(s.NextFree-s.At))
}
