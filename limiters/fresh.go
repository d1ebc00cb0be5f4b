package limiters

import (
	"math"
	"time"
)

// Fresh is a limiter that can tell when its state has forgotten everything: when, from now
// on, it would decide every request exactly as a limiter newly built from the same spec at
// that request's time would. A keyed table (Keyed) may then drop the key's state and build a
// new limiter when the key comes back, without any caller seeing a different decision: the
// eviction policy EvictFresh. A kind without the method is never fresh.
//
// "Available equals a fresh limiter's" is not enough, and the kinds show why:
//
//	kind            fresh at now when                              beside "Available is full"
//	token-bucket,   TAT ≤ now: the schedule has caught up          the same (full ⇔ TAT ≤ now)
//	leaky-bucket
//	fixed-window    count 0, or the stored window is before now's   the same
//	sliding-window  no live slot holds a permit, none is newer       the same, and no late slot
//	concurrency     nothing in flight                                the same
//	flash5-fixed    count 0, or the stored epoch is before now's     the same; see the wrap below
//	nginx           never seen, or the excess has decayed a whole    stricter: a node whose excess has
//	                request below 0: (now−last)·rate ≥ excess+1000   just reached 0 accounts the next
//	                                                                 request at 1000 (one of the burst),
//	                                                                 a new node at 0
//	x-time-rate     TokensAt(now) = burst (the float clamps to it)   the same, in float64
//	uber            slack=0: never taken, or now − s > per           stricter: with slack an idle limiter
//	                slack>0: never taken                             has banked permits a new one, whose
//	                                                                 first Take issues at now, lacks
//
// warm-up, guava-bursty and guava-warmup are never fresh: their state counts from their
// birth (the ramp's age; Guava's microsecond stopwatch and, for SmoothBursty, a new limiter
// starts empty where an idle one is full), so a limiter built later decides differently.
//
// "From now on" assumes the callers' times do not run backwards past now. Two kinds keep a
// reduced window number and would read an old count again after it wraps: flash5-fixed's
// 32-bit epoch (after 2³² windows, 49.7 days of 1ms windows) and nginx's unsigned
// excess·rate product (after 2⁶⁴/rate ms); a key idle that long is where the products
// themselves misbehave, and eviction forgets the misbehaviour.
type Fresh interface {
	// FreshAt reports whether the state at now decides every request at now or later
	// exactly as a new limiter of the same spec would.
	FreshAt(now time.Duration) bool
}

var (
	_ Fresh = (*TokenBucket)(nil)
	_ Fresh = (*LeakyBucket)(nil)
	_ Fresh = (*FixedWindow)(nil)
	_ Fresh = (*SlidingWindow)(nil)
	_ Fresh = (*Concurrency)(nil)
)

// fresh is TAT ≤ now: for every t ≥ now, max(TAT, t) = t, as for a new schedule (TAT 0).
func (g *gcra) fresh(now int64) bool { return g.arrival.Load() <= now }

// FreshAt is TAT ≤ now.
func (b *TokenBucket) FreshAt(now time.Duration) bool { return b.fresh(int64(now)) }

// FreshAt is TAT ≤ now.
func (b *LeakyBucket) FreshAt(now time.Duration) bool { return b.fresh(int64(now)) }

// FreshAt is a count of 0, or a stored window strictly before now's: every request at now or
// later then counts from 0 in its own window, as a new limiter's does.
func (f *FixedWindow) FreshAt(now time.Duration) bool {
	if f.window == 0 { // the zero value
		return true
	}
	index, count := f.unpack(f.state.Load())
	if count == 0 {
		return true
	}
	cur := uint64(max(int64(now), 0)/f.window) & (math.MaxUint64 >> f.countBits)
	return int64((cur-index)<<f.countBits) > 0 // cur is newer than the stored window
}

// FreshAt is no permit in a slot live at now and no slot of a later generation: slots dead
// at now stay dead, so every later request sums only what it adds itself.
func (s *SlidingWindow) FreshAt(now time.Duration) bool {
	if s.limit == 0 {
		return true
	}
	gen, pos := s.position(now)
	total, late := s.sum(gen, pos)
	return total == 0 && !late
}

// FreshAt is nothing in flight.
func (c *Concurrency) FreshAt(time.Duration) bool { return c.inFlight.Load() == 0 }
