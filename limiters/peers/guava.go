package peers

import (
	"fmt"
	"github.com/ratelab/ratelab/limiters"
	"math"
	"math/big"
	"strconv"
	"sync"
	"time"

	"github.com/ratelab/ratelab/limiters/internal/bound"
)

// FamilyGuava is Google Guava's RateLimiter (com.google.common.util.concurrent): its two
// implementations, SmoothBursty (guava-bursty) and SmoothWarmingUp (guava-warmup).
const FamilyGuava limiters.Family = "guava"

// GuavaMode is which RateLimiter call a caller makes: tryAcquire(n, timeout) or acquire(n).
type GuavaMode string

// The calls.
const (
	// GuavaTry is tryAcquire(n, timeout): refused unless the next free ticket is at most
	// timeout away (timeout 0, the default: unless it has come). The most common call.
	GuavaTry GuavaMode = "try"
	// GuavaWait is acquire(n): always admitted, after the wait it returns.
	GuavaWait GuavaMode = "wait"
)

// guavaMaxPermits is the largest request Guava takes: acquire(int permits), a Java int.
const guavaMaxPermits = math.MaxInt32

// guavaMinInterval is the shortest stable interval the guava kinds accept, in µs. Guava
// charges each reservation a whole number of microseconds, cut towards zero: below 1µs per
// permit a request costs 0µs and every request passes; a few µs per permit already lose up to
// a third of a permit's cost to the cut. 4µs (250,000 per second) keeps the loss under a
// quarter and makes AdmissionBound finite.
const guavaMinInterval = 4

// guava is the state and arithmetic Guava's SmoothRateLimiter shares between its two
// subclasses, in Guava's own units: time in whole microseconds since the limiter was made,
// permits as doubles. Every method of the kinds takes mu, as Guava's synchronized(mutex())
// does: the state is a double and a long that change together, which no single atomic word
// holds, so the model is locked where ratelab's own kinds are lock-free.
//
// The floating-point expressions keep Guava's order of operations, so that every double is
// the one Java computes (Java's double arithmetic is IEEE 754 binary64 with round-to-nearest,
// as Go's is); a product that is then added is converted explicitly (float64(a*b) + c) so
// that no platform fuses it into one FMA instruction, which Java never does.
type guava struct {
	mu sync.Mutex

	// The state.
	stored float64 // storedPermits
	next   int64   // nextFreeTicketMicros: when the next request may go, whatever its size
	undo   guavaUndo

	// Set at construction, read-only after.
	maxPermits float64 // maxPermits
	stable     float64 // stableIntervalMicros = 1e6 / permitsPerSecond
	coolDown   float64 // µs of idle per stored permit: stable (bursty), warmup / maxPermits (warming up)
	warming    bool    // SmoothWarmingUp: stored permits cost the area under its interval line
	threshold  float64 // warming up: thresholdPermits
	slope      float64 // warming up: µs per permit per stored permit above the threshold
	born       time.Duration
	clock      limiters.Clock
	live       bool // false: the zero value, which grants nothing
}

// guavaUndo is the state before the last admitted reservation, so that a reservation
// cancelled at the instant it was made, with nothing in between, is undone exactly.
type guavaUndo struct {
	valid      bool
	at         int64 // the reservation's µs
	n          int
	stored     float64 // before
	next       int64   // before
	postStored float64 // after: the state must still be this for the undo to apply
	postNext   int64
}

// javaLong is Java's (long) cast of a double: towards zero, NaN to 0, and saturating at the
// ends of the long range, where Go's int64 conversion is undefined.
func javaLong(x float64) int64 {
	switch {
	case x != x:
		return 0
	case x >= 1<<63:
		return math.MaxInt64
	case x <= -(1 << 63):
		return math.MinInt64
	}
	return int64(x)
}

// saturatedAdd is Guava's LongMath.saturatedAdd: a + b, or the end of the long range it
// overflowed past.
func saturatedAdd(a, b int64) int64 {
	sum := a + b
	if (a >= 0) == (b >= 0) && (sum >= 0) != (a >= 0) {
		if a >= 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return sum
}

// guavaPermitsPerSecond is Guava's permitsPerSecond for rate: the double nearest
// permits / window-in-seconds, what a Java caller writes for it (100/1s: 100.0; 1/3s:
// 0.3333333333333333).
func guavaPermitsPerSecond(rate limiters.Rate) float64 {
	r := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(int64(rate.Permits)), big.NewInt(int64(time.Second))),
		big.NewInt(int64(rate.Window)))
	f, _ := r.Float64()
	return f
}

// guavaSeconds is a duration as Guava's double seconds (maxBurstSeconds): the nearest double.
func guavaSeconds(d time.Duration) float64 {
	f, _ := new(big.Rat).SetFrac64(int64(d), int64(time.Second)).Float64()
	return f
}

// micros is Guava's stopwatch reading for the caller's time now: whole microseconds since
// the limiter was made, floored (a reading before it was made is 0).
func (g *guava) micros(now time.Duration) int64 {
	if now <= g.born {
		return 0
	}
	return int64(now-g.born) / int64(time.Microsecond)
}

// at is the caller's time of Guava's microsecond μ.
func (g *guava) at(μ int64) time.Duration {
	if μ >= (limiters.MaxSpan-int64(g.born))/int64(time.Microsecond) {
		return time.Duration(limiters.MaxSpan)
	}
	return g.born + time.Duration(μ)*time.Microsecond
}

// resynced is SmoothRateLimiter.resync's result at μ without storing it: once the next free
// ticket is in the past, the idle time since becomes stored permits (one per coolDown µs, at
// most maxPermits) and the ticket moves to now.
func (g *guava) resynced(μ int64) (stored float64, next int64) {
	stored, next = g.stored, g.next
	if μ > next {
		stored = min(g.maxPermits, stored+float64(μ-next)/g.coolDown)
		next = μ
	}
	return stored, next
}

// storedCost is storedPermitsToWaitTime: the µs that spending take of stored permits costs.
// SmoothBursty: nothing, stored permits are free. SmoothWarmingUp: the area under the
// interval line between stored − take and stored, the part above the threshold a trapezoid
// rising from the stable interval to the cold one, the part below it the stable interval
// per permit — each part cut to whole µs.
func (g *guava) storedCost(stored, take float64) int64 {
	if !g.warming {
		return 0
	}
	var cost int64
	if above := stored - g.threshold; above > 0 {
		part := min(above, take)
		sides := g.intervalAt(above) + g.intervalAt(above-part)
		cost = javaLong(part * sides / 2.0)
		take -= part
	}
	return cost + javaLong(g.stable*take)
}

// intervalAt is the interval line p stored permits above the threshold: stable + p·slope.
func (g *guava) intervalAt(p float64) float64 { return g.stable + float64(p*g.slope) }

// reserve is reserveEarliestAvailable: resync, spend stored permits first and fresh ones
// for the rest, push the next free ticket by their cost, and return the ticket as it was —
// the moment this request may go. Its own cost is paid by whoever comes next.
func (g *guava) reserve(n int, μ int64) (moment int64) {
	g.stored, g.next = g.resynced(μ)
	moment = g.next
	spend := min(float64(n), g.stored)
	fresh := float64(n) - spend
	cost := g.storedCost(g.stored, spend) + javaLong(fresh*g.stable)
	g.next = saturatedAdd(g.next, cost)
	g.stored -= spend
	g.undo.valid = false
	return moment
}

// can is canAcquire: the next free ticket is at most timeout µs after μ. It does not
// resync, as Guava's does not.
func (g *guava) can(μ, timeout int64) bool { return g.next-timeout <= μ }

// guavaCheck classifies a request size: Guava takes any positive int.
func (g *guava) check(n int) limiters.Decision {
	if !g.live {
		if n <= 0 {
			return limiters.Invalid
		}
		return limiters.Never
	}
	return limiters.CheckN(n, guavaMaxPermits)
}

// acquireAt is tryAcquire(n) at now: the ticket has come, whatever n is.
func (g *guava) acquireAt(now time.Duration, n int) limiters.Decision {
	if d := g.check(n); d != limiters.Admitted {
		return d
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	μ := g.micros(now)
	if !g.can(μ, 0) {
		return limiters.Rejected
	}
	g.reserve(n, μ)
	return limiters.Admitted
}

// reserveAt is tryAcquire(n, maxWait) — acquire(n) when maxWait is MaxWaitForever — at now.
// The wait is Guava's: from the caller's microsecond to the old next free ticket, in whole µs.
func (g *guava) reserveAt(now time.Duration, n int, maxWait time.Duration) limiters.Reservation {
	r := limiters.Reservation{Permits: n, At: now}
	if r.Decision = g.check(n); r.Decision != limiters.Admitted {
		return r
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	μ := g.micros(now)
	if maxWait < limiters.MaxWaitForever && !g.can(μ, max(int64(maxWait), 0)/int64(time.Microsecond)) {
		r.Decision, r.Wait = limiters.Rejected, guavaWait(g.next-μ)
		return r
	}
	before := guavaUndo{valid: true, at: μ, n: n, stored: g.stored, next: g.next}
	r.Wait = guavaWait(max(g.reserve(n, μ)-μ, 0))
	before.postStored, before.postNext = g.stored, g.next
	g.undo = before
	return r
}

// guavaWait is a wait of w µs as a duration, at most MaxWaitForever.
func guavaWait(w int64) time.Duration {
	if w >= int64(limiters.MaxWaitForever)/int64(time.Microsecond) {
		return limiters.MaxWaitForever
	}
	return time.Duration(w) * time.Microsecond
}

// cancelAt undoes r if it is the last reservation, cancelled in its own microsecond with the
// state untouched since; otherwise it gives nothing back, as Guava (which cannot cancel)
// would.
func (g *guava) cancelAt(now time.Duration, r limiters.Reservation) {
	if r.Decision != limiters.Admitted || !g.live {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	u := g.undo
	μ := g.micros(now)
	if u.valid && u.at == μ && g.micros(r.At) == μ && u.n == r.Permits && g.stored == u.postStored && g.next == u.postNext {
		g.stored, g.next = u.stored, u.next
		g.undo.valid = false
	}
}

// unitsAt is how many requests of one permit would pass at μ one after another: none before
// the next free ticket; then every whole stored permit that costs nothing (SmoothBursty), and
// the first that costs something — it passes too, its cost falling on the next. With
// SmoothWarmingUp every permit costs at least the stable interval less the cuts, so exactly
// one passes.
func (g *guava) unitsAt(μ int64) int {
	stored, next := g.resynced(μ)
	if next > μ {
		return 0
	}
	units := 0
	if !g.warming && stored >= 1 {
		whole := math.Floor(stored)
		if whole >= guavaMaxPermits {
			return guavaMaxPermits
		}
		units = int(whole)
		stored -= whole // exact: what spending one permit at a time leaves
	}
	for next <= μ && units < guavaMaxPermits { // at most twice
		spend := min(1.0, stored)
		next = saturatedAdd(next, g.storedCost(stored, spend)+javaLong((1.0-spend)*g.stable))
		stored -= spend
		units++
	}
	return units
}

// availableAt is unitsAt at now.
func (g *guava) availableAt(now time.Duration) int {
	if !g.live {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.unitsAt(g.micros(now))
}

// retryAfterAt is when the next free ticket comes, for a request of any size: Guava's
// queryEarliestAvailable, to the nanosecond of the caller's clock at which its microsecond
// reading reaches the ticket.
func (g *guava) retryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	if g.check(n) != limiters.Admitted {
		return 0, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return max(g.at(g.next)-now, 0), true
}

// snapshot is the stored permits of maxPermits and when the next request may go, at now.
func (g *guava) snapshot(kind limiters.Kind, now time.Duration) limiters.State {
	st := limiters.State{Kind: kind, At: now, LevelName: "stored permits"}
	if !g.live {
		return st
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	μ := g.micros(now)
	stored, next := g.resynced(μ)
	st.Available, st.MaxPermits = g.unitsAt(μ), guavaMaxPermits
	st.Level, st.LevelMax = stored, g.maxPermits
	st.NextFree = now
	if next > μ {
		st.NextFree = g.at(next)
	}
	return st
}

// guavaSpan is D, the most whole µs an interval of length L > 0 spans between the floored
// readings of its first and last instants: ⌈(L − 1ns)/1µs⌉ (the AdmissionBounds' D).
func guavaSpan(L time.Duration) float64 {
	return float64(bound.DivCeil(int64(L)-1, int64(time.Microsecond)))
}

// guavaFloor is ⌊x⌋ with a margin of a part in 10¹² for the rounding of the doubles it was
// computed from, so that a bound never falls below what the doubles admit.
func guavaFloor(x float64) int64 { return int64(math.Floor(x + x*1e-12 + 1e-9)) }

// guavaModeFields are the mode= and timeout= fields both kinds take.
func guavaModeFields(mode *GuavaMode, timeout *time.Duration) []limiters.Field {
	return []limiters.Field{
		{
			FieldInfo: limiters.FieldInfo{Name: "mode", Meaning: "try (tryAcquire, the default) or wait (acquire: always admitted, after its wait)"},
			Set: func(text string) error {
				switch GuavaMode(text) {
				case GuavaTry, GuavaWait:
					*mode = GuavaMode(text)
					return nil
				}
				return fmt.Errorf("must be try or wait")
			},
			Get:  func() string { return string(*mode) },
			Omit: func() bool { return *mode == "" || *mode == GuavaTry },
		},
		{
			FieldInfo: limiters.FieldInfo{Name: "timeout", Meaning: "mode=try: how long a caller may wait for the next free ticket (default 0), floored to µs"},
			Set: func(text string) error {
				d, err := time.ParseDuration(text)
				if err != nil {
					return fmt.Errorf("%q is not a duration (e.g. 0s, 50ms)", text)
				}
				if d < 0 {
					return fmt.Errorf("must not be negative")
				}
				*timeout = d
				return nil
			},
			Get:  func() string { return limiters.FormatDuration(*timeout) },
			Omit: func() bool { return *timeout == 0 },
		},
	}
}

// validateGuavaRate refuses what Rate.validate refuses and a stable interval below 4µs.
func validateGuavaRate(kind limiters.Kind, rate limiters.Rate) error {
	if err := rate.Validate(kind); err != nil {
		return err
	}
	if int64(rate.Permits) > int64(rate.Window)/(guavaMinInterval*int64(time.Microsecond)) {
		return limiters.NewConfigError(kind, "rate", rate.String(), fmt.Sprintf(
			"above 250000 per second: Guava charges whole microseconds, and below %dµs per permit the cut loses "+
				"a quarter of a permit's cost or more (below 1µs a permit costs 0µs and every request passes)", guavaMinInterval))
	}
	return nil
}

// validateGuavaMode refuses a mode other than try and wait, a negative timeout or one of
// 2⁶² ns or more, and a timeout in mode=wait (acquire has none). A timeout of exactly 2⁶² ns
// would be MaxWaitForever, which ReserveAt takes for acquire: the real Guava's
// tryAcquire(1, 2⁶² ns) still refuses when the next free ticket is further away (after
// acquire(2³¹−1) at 1 per hour, 7.7e18µs), acquire does not.
func validateGuavaMode(kind limiters.Kind, mode GuavaMode, timeout time.Duration) error {
	if mode != "" && mode != GuavaTry && mode != GuavaWait {
		return limiters.NewConfigError(kind, "mode", string(mode), "must be try or wait")
	}
	if timeout < 0 || timeout >= limiters.MaxWaitForever {
		return limiters.NewConfigError(kind, "timeout", limiters.FormatDuration(timeout),
			"must be at least 0 and below 2^62ns (a caller who waits 2^62ns waits for ever: mode=wait)")
	}
	if mode == GuavaWait && timeout != 0 {
		return limiters.NewConfigError(kind, "timeout", limiters.FormatDuration(timeout),
			"only mode=try takes a timeout: acquire (mode=wait) waits as long as it takes")
	}
	return nil
}

// guavaCallerWait is how long the kind's callers wait: forever for acquire, the timeout for
// tryAcquire.
func guavaCallerWait(mode GuavaMode, timeout time.Duration) time.Duration {
	if mode == GuavaWait {
		return limiters.MaxWaitForever
	}
	return timeout
}

// explainGuava: the next free ticket against the request's time, and the stored permits.
func explainGuava(s limiters.State, n int, d limiters.Decision) string {
	level := fmt.Sprintf("%s stored permits of %s", guavaLevel(s.Level), guavaLevel(s.LevelMax))
	if d != limiters.Admitted {
		return fmt.Sprintf("the next free ticket is at %s, %s away (%s): Guava refuses a request of any size until then, "+
			"or one whose caller would wait past its timeout", limiters.FormatDuration(s.NextFree), limiters.FormatDuration(s.NextFree-s.At), level)
	}
	if s.NextFree > s.At {
		return fmt.Sprintf("the next free ticket is %s away: the caller waits until %s, and the cost of its %d permit(s) "+
			"pushes the ticket on for the next caller (%s)", limiters.FormatDuration(s.NextFree-s.At), limiters.FormatDuration(s.NextFree), n, level)
	}
	return fmt.Sprintf("the next free ticket has come (%s): %d permit(s) pass at once, whatever their number; what the "+
		"stored permits do not cover is paid by the next caller", level, n)
}

// guavaLevel prints a permit count with at most two decimals.
func guavaLevel(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}
