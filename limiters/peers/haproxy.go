package peers

import (
	"fmt"
	"math/bits"
	"strconv"
	"sync"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/internal/bound"
)

// KindHAProxy is HAProxy's stick-table request rate limit's name in specs.
const KindHAProxy limiters.Kind = "haproxy"

// HAProxy is a model, decision for decision, of one key of HAProxy's usual per-client limit
// (checked against a real HAProxy 2.6, Debian's, by accesslog's
// TestRealHAProxyDecisionsMatchTheHAProxyKind):
//
//	backend per_client
//	    stick-table type string len 32 size 1m expire 30s store http_req_rate(10s)
//	frontend fe
//	    http-request track-sc0 req.hdr(X-Client) table per_client
//	    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 100 }
//	                                               ⇔   haproxy:period=10s,limit=100
//
// The rate is a freq_ctr (src/freq_ctr.c, include/haproxy/freq_ctr.h; 2.6.0 and today's
// master do the same arithmetic): per key a tick (when the current period began, in whole ms
// of HAProxy's clock), curr (the requests counted since) and prev (those of the period
// before). Each request is counted first — track-sc0 adds 1 to curr, refused requests
// included — and then read, at the same ms now:
//
//	sc_http_req_rate = ⌊(prev·(tick + period − now) + curr·period) / period⌋
//	                 = curr + ⌊prev·remain/period⌋,   remain = tick + period − now ∈ [1, period]
//
// and the request is denied if that is above limit. Counting rotates the periods: at
// now − tick ≥ period, prev ← curr, curr ← 0 and tick ← tick + period, or, if now is past
// that period too, prev ← 0 and tick ← now; a new key is the latter (its tick is 0). The
// stored tick has its lowest bit cleared (it is the counter's lock bit), so a period begins
// on an even ms: a key first seen at ms 1001 has periods [1000ms, 2000ms), [2000ms, 3000ms), …
//
// period=1s, limit=3: four at 0ms read rates 1, 2, 3, 4: the 4th is denied, and counted
// (curr 4). At 1000ms the period rotates (prev 4, remain 1000) and a request reads 1 + ⌊4·1000/
// 1000⌋ = 5: denied (curr 1). At 1600ms (remain 400) the 4 still weigh ⌊4·400/1000⌋ = 1: one
// passes (2 + 1 = 3), the next is denied (3 + 1 = 4). At 1800ms (remain 200) they weigh
// ⌊0.8⌋ = 0, and the rate reads 4 + 0: denied — curr holds the denied ones too.
//
// Where it differs from the two-counter kind, the same estimate with ratelab's conventions,
// and why it matters:
//
//	                      haproxy                                  two-counter
//	refused requests      counted: a client that keeps sending     count nothing
//	                      keeps its rate high and stays denied
//	rounding              the previous term rounded down: 100      exact: estimate with the
//	                      per 1s admits 200 in a trailing second   request ≤ limit; 199
//	                      (⌊100·999/1000⌋ = 99 weighs, 1 more fits)
//	time                  whole ms (the event loop's now_ms),      ns; periods anchored at
//	                      periods begin on even ms; after two      the first request for ever
//	                      quiet periods the next request starts
//	                      a new period
//
// What the model does not see: HAProxy's clock is the event loop's, read once per wake-up
// (requests handled in one turn of the loop share a ms), and its ms are the wall clock's, so
// the even-ms rule applies to Unix ms. The model's ms are its clock's; a trace rebased to a
// first arrival at an odd Unix ms begins its periods 1ms after HAProxy did (feed it times
// shifted by that 1ms to match). A stick-table entry that expires (expire, a few periods
// usually) is a new key, which the model sees as a key quiet for two periods — the same
// decisions as long as expire is at least two periods. HAProxy's ticks wrap every 2^32 ms
// (49.7 days); the model's do not.
//
// An HAProxy is one key's entry; keys(max=N):haproxy:… keeps one per key, as the table does.
// A late clock reading (now before the latest seen) is judged at the latest: HAProxy's clock
// only moves forward. A request for n counts n. The zero value grants nothing: every request
// is Never; NewHAProxy makes a working one.
type HAProxy struct {
	mu     sync.Mutex
	e      haproxyEntry
	period int64 // ms, even
	limit  uint64
	clock  limiters.Clock
}

// haproxyEntry is a key's freq_ctr, in ms of the model's clock.
type haproxyEntry struct {
	seen       bool
	tick       int64 // the current period's start, even
	curr, prev uint64
	last       int64 // the latest ms seen
}

var (
	_ limiters.Limiter = (*HAProxy)(nil)
	_ limiters.Clocked = (*HAProxy)(nil)
	_ limiters.Fresh   = (*HAProxy)(nil)
)

// HAProxySpec configures an HAProxy: "haproxy:period=10s,limit=100" for http_req_rate(10s)
// and sc_http_req_rate(0) gt 100.
type HAProxySpec struct {
	Period time.Duration // http_req_rate's period: whole, even ms
	Limit  int           // the rate above which a request is denied ("gt limit")
}

// haproxyMaxPeriod is the longest period, 2^31 − 2 ms (24.8 days): HAProxy's ms ticks wrap at
// 2^32 and compare within half of that.
const haproxyMaxPeriod = (1<<31 - 2) * time.Millisecond

var haproxyKind = limiters.KindInfo{
	Kind: KindHAProxy, Family: FamilyTwoCounter, Shape: limiters.ShapeLevel,
	Summary: "HAProxy's stick-table http_req_rate limit: curr + ⌊prev × remaining/period⌋ on a ms clock, refused requests counted; up to 2×limit per period",
	Example: "haproxy:period=1s,limit=100",
	Checks:  limiters.CheckSpecs{Sizes: "haproxy:period=1s,limit=5"},
	Fields:  limiters.FieldInfos[HAProxySpec](),
	Ranges:  haproxyRanges,
	Parse:   limiters.SpecParser(HAProxySpec{}),
	Explain: explainHAProxy,
}

func (s *HAProxySpec) Fields() []limiters.Field {
	return []limiters.Field{
		limiters.DurationField("period", true, "http_req_rate's period (store http_req_rate(10s)): whole, even ms", &s.Period),
		limiters.IntField("limit", true, "a request is denied when sc_http_req_rate, counting it, is above this (gt limit)", &s.Limit),
	}
}

// Kind is KindHAProxy.
func (s HAProxySpec) Kind() limiters.Kind { return KindHAProxy }

// String is "haproxy:period=1s,limit=100".
func (s HAProxySpec) String() string { return limiters.FormatSpec(KindHAProxy, s.Fields()) }

// Validate refuses a limit below 1 or above 2³¹ − 1, and a period that is not a whole, even
// number of ms from 2ms to 2³¹ − 2 ms.
func (s HAProxySpec) Validate() error {
	ms := int64(s.Period / time.Millisecond)
	if s.Period%time.Millisecond != 0 || s.Period < 2*time.Millisecond || s.Period > haproxyMaxPeriod || ms%2 != 0 {
		return limiters.NewConfigError(KindHAProxy, "period", limiters.FormatDuration(s.Period),
			"must be a whole, even number of ms from 2ms to 2^31-2 ms: HAProxy counts in ms, and stores a period's start with its "+
				"lowest bit cleared, so an odd period would begin each period 1ms early")
	}
	if s.Limit < 1 || s.Limit > 1<<31-1 {
		return limiters.NewConfigError(KindHAProxy, "limit", strconv.Itoa(s.Limit), "must be between 1 and 2^31-1")
	}
	return nil
}

// haproxyRanges are what HAProxySpec.Validate accepts, field by field.
var haproxyRanges = []limiters.FieldRange{
	{Field: "period", Accepted: "a whole, even number of ms, 2ms to 2^31−2 ms (24.8 days)",
		Why:     "HAProxy's ticks are ms that wrap at 2^32, and a period's start is stored with its lowest bit cleared (the lock bit): an odd period would drift",
		Valid:   []string{"haproxy:period=2ms,limit=1", "haproxy:period=2147483646ms,limit=1"},
		Invalid: []string{"haproxy:period=0s,limit=1", "haproxy:period=1ms,limit=1", "haproxy:period=3ms,limit=1", "haproxy:period=1500us,limit=1", "haproxy:period=2147483648ms,limit=1"}},
	{Field: "limit", Accepted: "1 to 2^31−1",
		Why:     "a request is a permit: MaxPermits is an int",
		Valid:   []string{"haproxy:period=1s,limit=1", "haproxy:period=1s,limit=2147483647"},
		Invalid: []string{"haproxy:period=1s,limit=0", "haproxy:period=1s,limit=2147483648"}},
}

// New is NewHAProxy(s, clock).
func (s HAProxySpec) New(clock limiters.Clock) (limiters.Limiter, error) { return NewHAProxy(s, clock) }

// AdmissionBound for L ≤ period is exact: limit + ⌈limit·E/period⌉, E = ⌊(L − 2ns)/1ms⌋ ms —
// a period's limit at its last ms, then what the rounded-down weight lets the next one have by
// E ms into it (100 per 1s over 1s: E = 999ms, ⌈99.9⌉ = 100, so 200). Beyond, it is limit per
// period the interval touches, which overstates the worst case.
func (s HAProxySpec) AdmissionBound(L time.Duration) (int64, bool) {
	if L > s.Period {
		return bound.SaturatingMul(int64(s.Limit), bound.Touched(L, s.Period)), true
	}
	e := uint64(max(L-2, 0) / time.Millisecond)
	p := uint64(s.Period / time.Millisecond)
	hi, lo := bits.Mul64(uint64(s.Limit), e)
	q, r := bits.Div64(hi, lo, p) // e < p: q < limit
	if r > 0 {
		q++
	}
	return int64(s.Limit) + int64(q), true
}

// NaturalWindow is the period.
func (s HAProxySpec) NaturalWindow() time.Duration { return s.Period }

// NominalRate is limit per period.
func (s HAProxySpec) NominalRate() (limiters.Rate, bool) {
	return limiters.Rate{Permits: s.Limit, Window: s.Period}, true
}

// InitialPermits is the limit.
func (s HAProxySpec) InitialPermits() int { return s.Limit }

// NewHAProxy returns the model of one stick-table entry for spec on clock. It refuses what
// HAProxySpec.Validate refuses and a nil clock.
func NewHAProxy(spec HAProxySpec, clock limiters.Clock) (*HAProxy, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := limiters.RequireClock(KindHAProxy, clock); err != nil {
		return nil, err
	}
	return &HAProxy{period: int64(spec.Period / time.Millisecond), limit: uint64(spec.Limit), clock: clock}, nil
}

// haproxyMs is HAProxy's now_ms for now: whole ms, floored.
func haproxyMs(now time.Duration) int64 { return max(int64(now), 0) / int64(time.Millisecond) }

// count is update_freq_ctr_period: the entry after n are counted at ms now (already clamped to
// the latest seen).
func (l *HAProxy) count(e haproxyEntry, now int64, n uint64) haproxyEntry {
	switch {
	case !e.seen: // a new entry: tick 0, so now is past two periods
		e = haproxyEntry{seen: true, tick: now &^ 1, curr: n}
	case now-e.tick < l.period:
		e.curr += n
	default:
		e.prev, e.curr, e.tick = e.curr, n, e.tick+l.period
		if now-e.tick >= l.period { // two periods or more since the last count
			e.prev, e.tick = 0, now
		}
		e.tick &^= 1
	}
	e.last = now
	return e
}

// rate is sc_http_req_rate read right after counting at ms now: curr + ⌊prev·remain/period⌋.
func (l *HAProxy) rate(e haproxyEntry, now int64) uint64 {
	remain := uint64(e.tick + l.period - now) // 1 to period after counting
	hi, lo := bits.Mul64(e.prev, remain)
	w, _ := bits.Div64(hi, lo, uint64(l.period)) // remain ≤ period: w ≤ prev
	return e.curr + w
}

// AcquireAt counts n at now, as track-sc0 does, and admits them if the rate read then is at
// most the limit; a refused request stays counted.
func (l *HAProxy) AcquireAt(now time.Duration, n int) limiters.Decision {
	if uint(n-1) >= uint(l.limit) {
		return limiters.CheckN(n, int(l.limit))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ms := max(haproxyMs(now), l.e.last)
	l.e = l.count(l.e, ms, uint64(n))
	if l.rate(l.e, ms) > l.limit {
		return limiters.Rejected
	}
	return limiters.Admitted
}

// TryAcquireAt reports whether n permits were taken at time now.
func (l *HAProxy) TryAcquireAt(now time.Duration, n int) bool {
	return l.AcquireAt(now, n) == limiters.Admitted
}

// TryAcquire takes n permits now, by the limiter's clock.
func (l *HAProxy) TryAcquire(n int) bool { return l.TryAcquireAt(limiters.ReadClock(l.clock), n) }

// room is the largest n a request at ms now would be admitted with, given the entry before it.
func (l *HAProxy) room(e haproxyEntry, now int64) int {
	after := l.count(e, now, 0)
	used := l.rate(after, now)
	if used >= l.limit {
		return 0
	}
	return int(l.limit - used)
}

// AvailableAt is the largest n that would be admitted at now.
func (l *HAProxy) AvailableAt(now time.Duration) int {
	if l.limit == 0 {
		return 0
	}
	l.mu.Lock()
	e := l.e
	l.mu.Unlock()
	return l.room(e, max(haproxyMs(now), e.last))
}

// Available is AvailableAt at the clock's current time.
func (l *HAProxy) Available() int { return l.AvailableAt(limiters.ReadClock(l.clock)) }

// nextFree is the first ms from now at which one request would be admitted, nothing else
// arriving meanwhile: within the current period once ⌊prev·remain/period⌋ has fallen to
// limit − curr − 1, else in the next (prev ← curr), else two periods on (a new period).
func (l *HAProxy) nextFree(e haproxyEntry, now int64) int64 {
	if l.room(e, now) > 0 {
		return now
	}
	// The least ms t ≥ start with curr + 1 + ⌊prev·(tick + period − t)/period⌋ ≤ limit:
	// prev·remain ≤ (limit − curr)·period − 1.
	first := func(tick int64, prev, curr uint64, start int64) (int64, bool) {
		if curr+1 > l.limit {
			return 0, false
		}
		if prev == 0 {
			return start, true
		}
		hi, lo := bits.Mul64(l.limit-curr, uint64(l.period))
		lo, borrow := bits.Sub64(lo, 1, 0)
		hi -= borrow
		if hi >= prev {
			return start, true // remain ≤ period always fits
		}
		r, _ := bits.Div64(hi, lo, prev)
		if r == 0 {
			return 0, false
		}
		return max(tick+l.period-int64(r), start), true
	}
	cur := l.count(e, now, 0)
	if t, ok := first(cur.tick, cur.prev, cur.curr, now); ok {
		return t
	}
	next := cur.tick + l.period
	if t, ok := first(next, cur.curr, 0, next); ok && t < next+l.period {
		return t
	}
	return next + l.period
}

// MaxPermits is the limit.
func (l *HAProxy) MaxPermits() int { return int(l.limit) }

// Kind is KindHAProxy.
func (l *HAProxy) Kind() limiters.Kind { return KindHAProxy }

// String is the spec.
func (l *HAProxy) String() string { return l.Spec().String() }

// Spec is the limiter's configuration.
func (l *HAProxy) Spec() HAProxySpec {
	return HAProxySpec{Period: time.Duration(l.period) * time.Millisecond, Limit: int(l.limit)}
}

// Snapshot is the rate a request at now would be judged on, without it (Level: curr +
// ⌊prev·remain/period⌋, of the limit as LevelMax), when one more would pass (NextFree), the
// current period (Window, WindowStart, WindowEnd) and its two counts (Slots: prev, then
// curr).
func (l *HAProxy) Snapshot(now time.Duration) limiters.State {
	st := limiters.State{Kind: KindHAProxy, At: now, LevelName: "sc_http_req_rate", NextFree: now}
	if l.limit == 0 {
		return st
	}
	l.mu.Lock()
	e := l.e
	l.mu.Unlock()
	ms := max(haproxyMs(now), e.last)
	after := l.count(e, ms, 0)
	period := time.Duration(l.period) * time.Millisecond
	st.Available, st.MaxPermits = l.room(e, ms), int(l.limit)
	st.Level, st.LevelMax = float64(l.rate(after, ms)), float64(l.limit)
	st.Limit, st.Count, st.Window = int(l.limit), int(after.curr), period
	st.WindowStart = time.Duration(after.tick) * time.Millisecond
	st.WindowEnd = st.WindowStart + period
	st.Slots = []limiters.Slot{{Start: st.WindowStart - period, Count: int(after.prev), Live: true},
		{Start: st.WindowStart, Count: int(after.curr), Live: true}}
	if st.Available == 0 {
		st.NextFree = max(time.Duration(l.nextFree(e, ms))*time.Millisecond, now)
	}
	return st
}

// explainHAProxy: the rate HAProxy reads with the request counted, against the limit.
func explainHAProxy(s limiters.State, n int, d limiters.Decision) string {
	if len(s.Slots) != 2 {
		return fmt.Sprintf("no entry; %d is more than the limit %d", n, s.Limit)
	}
	remain := (s.WindowEnd - s.At.Truncate(time.Millisecond)) / time.Millisecond
	head := fmt.Sprintf("sc_http_req_rate = curr %d + %d + ⌊prev %d × %dms left / %s⌋ = %d", s.Slots[1].Count, n, s.Slots[0].Count,
		remain, limiters.FormatDuration(s.Window), int(s.Level)+n)
	if d == limiters.Admitted {
		return fmt.Sprintf("%s, not above %d: allowed", head, s.Limit)
	}
	return fmt.Sprintf("%s, above %d: denied, and counted; with nothing more sent, one passes in %s", head, s.Limit, limiters.FormatDuration(s.NextFree-s.At))
}

// FreshAt is an entry never counted, or one whose last count is two periods or more before
// now: the next request starts a new period with nothing before it, as on a new entry.
func (l *HAProxy) FreshAt(now time.Duration) bool {
	l.mu.Lock()
	e := l.e
	l.mu.Unlock()
	ms := haproxyMs(now)
	return !e.seen || ms >= e.last && ms-e.tick >= 2*l.period
}

var (
	_ limiters.Reusable     = (*HAProxy)(nil)
	_ limiters.ReusableSpec = HAProxySpec{}
)

// ReusesLimiters is true: New makes a limiter of its own on every call, so a keyed table
// resets an evicted key's limiter for the next new key.
func (HAProxySpec) ReusesLimiters() bool { return true }

// ResetState puts the limiter back as New makes it: no entry.
func (l *HAProxy) ResetState() {
	l.mu.Lock()
	l.e = haproxyEntry{}
	l.mu.Unlock()
}
