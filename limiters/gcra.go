package limiters

import (
	"sync/atomic"
	"time"
)

// gcra is the virtual-scheduling core shared by the token bucket and the leaky bucket.
//
// Its whole state is one int64: the theoretical arrival time (TAT), the moment at which the
// next permit becomes available. A request for n permits at time now is admitted when
//
//	(max(TAT, now) − now) + n·T ≤ τ
//
// and then TAT becomes max(TAT, now) + n·T. T is the emission interval, τ the tolerance.
// Idle time refills the bucket implicitly: once now passes TAT, max(TAT, now) = now and the
// full τ is available again, never more.
type gcra struct {
	arrival   atomic.Int64 // TAT, ns since the clock's origin
	interval  int64        // T
	tolerance int64        // τ = capacity·T
	maxN      int          // τ / T
}

func (g *gcra) init(interval, tolerance int64) {
	g.interval, g.tolerance = interval, tolerance
	g.maxN = int(tolerance / interval)
}

// acquire is one atomic read and, on admission, one CAS (retried only when another
// goroutine's CAS landed in between).
//
// It is kept small enough for the compiler to inline it, and the limiters' AcquireAt with it,
// into callers that hold the concrete type.
func (g *gcra) acquire(now int64, n int) Decision {
	if uint(n-1) >= uint(g.maxN) { // n ≤ 0 or n > τ/T, in one comparison
		if n <= 0 {
			return Invalid
		}
		return Never
	}
	cost := int64(n) * g.interval
	for {
		tat := g.arrival.Load()
		// backlog + cost ≤ τ, written so that it cannot overflow: with τ = 2^62 both terms
		// can be 2^62 and their sum would wrap to a negative number and be admitted.
		backlog := max(tat-now, 0)
		if backlog > g.tolerance-cost {
			return Rejected
		}
		if g.arrival.CompareAndSwap(tat, now+backlog+cost) {
			return Admitted
		}
	}
}

// available is ⌊(τ − backlog) / T⌋, where backlog = max(TAT − now, 0).
func (g *gcra) available(now int64) int {
	backlog := max(g.arrival.Load()-now, 0)
	if backlog >= g.tolerance {
		return 0
	}
	return int((g.tolerance - backlog) / g.interval)
}

// retryAfter is the wait until max(TAT, t) − t + n·T ≤ τ, i.e. t ≥ TAT + n·T − τ.
func (g *gcra) retryAfter(now int64, n int) (time.Duration, bool) {
	if checkN(n, g.maxN) != Admitted {
		return 0, false
	}
	due := g.arrival.Load() + int64(n)*g.interval - g.tolerance
	return time.Duration(max(due-now, 0)), true
}

func (g *gcra) snapshot(kind Kind, now int64) State {
	return State{
		Kind:       kind,
		At:         time.Duration(now),
		Available:  g.available(now),
		MaxPermits: g.maxN,
		Arrival:    time.Duration(g.arrival.Load()),
		Interval:   time.Duration(g.interval),
		Tolerance:  time.Duration(g.tolerance),
	}
}
