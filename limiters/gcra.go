package limiters

import (
	"fmt"
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

// reserve admits n permits due within maxWait: wait = backlog + n·T − τ, admitted when
// wait ≤ maxWait, and then TAT = max(TAT, now) + n·T as for acquire. 100/s, capacity 3, four
// reservations at once: three pass at once (wait 0), the fourth waits 10ms. The reservation
// horizon is capped at 2⁶² ns − τ so that TAT cannot overflow.
func (g *gcra) reserve(now int64, n int, maxWait time.Duration) Reservation {
	r := Reservation{Permits: n, At: time.Duration(now)}
	if uint(n-1) >= uint(g.maxN) {
		r.Decision = CheckN(n, g.maxN)
		return r
	}
	cost := int64(n) * g.interval
	limit := min(max(int64(maxWait), 0), MaxSpan-g.tolerance)
	for {
		tat := g.arrival.Load()
		backlog := max(tat-now, 0)
		wait := backlog - (g.tolerance - cost) // backlog + cost − τ, without overflow
		if wait > limit {
			r.Decision, r.Wait = Rejected, time.Duration(wait)
			return r
		}
		if g.arrival.CompareAndSwap(tat, now+backlog+cost) {
			r.Decision, r.Wait = Admitted, time.Duration(max(wait, 0))
			return r
		}
	}
}

// refund takes n·T back off the schedule: TAT = max(TAT − n·T, now). At the instant of the
// grant that is exact (the grant moved TAT to at least now + n·T); later, once TAT has
// fallen behind now, nothing is owed any more and the bucket is simply full.
func (g *gcra) refund(now int64, n int) {
	if uint(n-1) >= uint(g.maxN) {
		return
	}
	cost := int64(n) * g.interval
	for {
		tat := g.arrival.Load()
		if tat <= now {
			return
		}
		if g.arrival.CompareAndSwap(tat, max(tat-cost, now)) {
			return
		}
	}
}

// ReserveAt takes n permits due within maxWait: admitted with wait
// max(backlog + n·T − τ, 0) when that is at most maxWait (the token and leaky buckets).
func (g *gcra) ReserveAt(now time.Duration, n int, maxWait time.Duration) Reservation {
	return g.reserve(int64(now), n, maxWait)
}

// CancelAt gives an admitted reservation's n·T back to the schedule.
func (g *gcra) CancelAt(now time.Duration, r Reservation) {
	if r.Decision == Admitted {
		g.refund(int64(now), r.Permits)
	}
}

// RefundAt gives n permits granted at now back: TAT = max(TAT − n·T, now).
func (g *gcra) RefundAt(now time.Duration, n int) { g.refund(int64(now), n) }

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
	if CheckN(n, g.maxN) != Admitted {
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

// explainGCRA is the sentence of the GCRA kinds (token bucket, leaky bucket, warm-up):
// where the schedule stands and where n more permits would put it against τ.
func explainGCRA(s State, n int, d Decision) string {
	ramp := ""
	if s.Kind == KindWarmUpTokenBucket {
		if s.Age < s.WarmUp {
			ramp = fmt.Sprintf("warming (age %s of %s, T=%s); ", FormatDuration(s.Age), FormatDuration(s.WarmUp), FormatDuration(s.Interval))
		} else {
			ramp = "warm; "
		}
	}
	backlog := s.Backlog()
	due := "bucket full, next permit due now"
	if backlog > 0 {
		due = fmt.Sprintf("next permit due at %s, %s ahead", FormatDuration(s.Arrival), FormatDuration(backlog))
	}
	after := backlog + time.Duration(n)*s.Interval
	verdict := "within"
	if d != Admitted {
		verdict = "over"
	}
	return fmt.Sprintf("%s%s; %d more (T=%s) would put it %s ahead, %s the %s tolerance",
		ramp, due, n, FormatDuration(s.Interval), FormatDuration(after), verdict, FormatDuration(s.Tolerance))
}
