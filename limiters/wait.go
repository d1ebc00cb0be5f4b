package limiters

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrWouldExceedDeadline is Wait's answer when the permits would come after ctx's deadline:
// nothing was taken and nobody slept.
var ErrWouldExceedDeadline = errors.New("limiters: the permits would come after the context's deadline")

// Wait blocks until l grants n permits or ctx is done, as x/time/rate's WaitN: it reserves
// the permits at clock's now with at most the time left before ctx's deadline as the wait
// (forever without a deadline), sleeps the reservation's wait on the wall clock, and gives the
// permits back (CancelAt) if ctx is done first. It returns at once, having taken nothing, when
// n can never be granted (more than MaxPermits: Never, or n ≤ 0: Invalid) or when the wait
// would end past the deadline (ErrWouldExceedDeadline).
//
// clock must be the limiter's own clock and run at real time (NewMonotonicClock): Wait sleeps
// the waits it reads. On a token bucket of 100/s and capacity 20 whose 20 permits are spent, a
// Wait for 1 sleeps 10ms; with 5ms left before the deadline it returns ErrWouldExceedDeadline
// at once.
func Wait(ctx context.Context, l Reserver, clock Clock, n int) error {
	if ctx == nil { // the zero value's walk calls with nothing; a nil context waits without end
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	now := ReadClock(clock)
	maxWait := MaxWaitForever
	if deadline, ok := ctx.Deadline(); ok {
		maxWait = max(time.Until(deadline), 0)
	}
	r := l.ReserveAt(now, n, maxWait)
	switch r.Decision {
	case Admitted:
	case Rejected:
		return ErrWouldExceedDeadline
	default:
		return fmt.Errorf("limiters: a request for %d permits is %s", n, r.Decision)
	}
	if r.Wait <= 0 {
		return nil
	}
	timer := time.NewTimer(r.Wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		l.CancelAt(ReadClock(clock), r)
		return ctx.Err()
	}
}

// Wait blocks until n permits are granted or ctx is done (Wait): 100/s with capacity 20, its 20
// spent, a Wait for 1 sleeps 10ms.
func (b *TokenBucket) Wait(ctx context.Context, n int) error { return Wait(ctx, b, b.clock, n) }

// Wait blocks until n permits are granted or ctx is done (Wait): at 100/s, one permit every
// 10ms, so the third of three callers arriving together sleeps 20ms.
func (b *LeakyBucket) Wait(ctx context.Context, n int) error { return Wait(ctx, b, b.clock, n) }
