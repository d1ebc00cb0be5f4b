package engine

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// releaser is a stage whose permits come back by release (the concurrency limiter), not by
// the clock.
type releaser interface{ Release(n int) }

// Stack is one lane's limiter stages in order: a request is admitted when every stage admits
// it, first to last. It keeps, per stage, what the stage can do beyond limiters.Limiter, found
// once when the stack is made: give permits back (a concurrency limiter's Release) and say when
// a refused request would pass (limiters.RateLimiter's RetryAfterAt).
//
// The simulator's lanes and Replay both decide through a Stack, so a stack of limiters means
// the same thing in both. It is not safe for concurrent use (its stages are, but a stack's
// acquire-then-release is not atomic).
type Stack struct {
	stages    []limiters.Limiter
	releasers []releaser             // releasers[k] is stages[k] when it releases, else nil
	rated     []limiters.RateLimiter // rated[k] is stages[k] when it gives retry-after hints, else nil
}

// StageError is a stage of a stack that could not be built from its spec.
type StageError struct {
	Stage int   // 1 for the first stage
	Err   error // the limiter's own error
}

func (e *StageError) Error() string { return fmt.Sprintf("stage %d: %v", e.Stage, e.Err) }

func (e *StageError) Unwrap() error { return e.Err }

// NewStack builds a limiter for each spec, in order, on clock. A spec the algorithm cannot
// honour fails with a *StageError.
func NewStack(specs []limiters.Spec, clock limiters.Clock) (*Stack, error) {
	stages := make([]limiters.Limiter, 0, len(specs))
	for j, spec := range specs {
		lim, err := spec.New(clock)
		if err != nil {
			return nil, &StageError{Stage: j + 1, Err: err}
		}
		stages = append(stages, lim)
	}
	return StackOf(stages), nil
}

// StackOf is the stack of the given limiters, first to last: limiters a LaneSpec.Build made,
// or any others. The stack keeps the slice.
func StackOf(stages []limiters.Limiter) *Stack {
	s := &Stack{stages: stages, releasers: make([]releaser, len(stages)), rated: make([]limiters.RateLimiter, len(stages))}
	for k, lim := range stages {
		s.releasers[k], _ = lim.(releaser)
		s.rated[k], _ = lim.(limiters.RateLimiter)
	}
	return s
}

// Len is the number of stages.
func (s *Stack) Len() int { return len(s.stages) }

// Stage is stage k, from 0.
func (s *Stack) Stage(k int) limiters.Limiter { return s.stages[k] }

// Stages is every stage in order. The slice is the stack's own: do not modify it.
func (s *Stack) Stages() []limiters.Limiter { return s.stages }

// Acquire asks each stage in order for permits at now, and stops at the first that does not
// admit them. It returns that stage's decision and index, or Admitted and Len() when every
// stage admitted.
//
// When stage k refuses, the permits stages 0..k-1 took are given back where the algorithm
// allows it (a concurrency limiter's are released). A rate stage's cannot be: they are
// returned as wasted, permits times the rate stages before k. A three-stage stack of two
// token buckets and a full bulkhead refusing a 2-permit request wastes 4 permits.
//
// When before is not nil it receives the state of the deciding stage just before it decided:
// the refusing stage's, or the first stage's when all admitted. That takes a Snapshot of every
// stage asked (the sliding window's allocates), so pass nil unless someone reads it.
func (s *Stack) Acquire(now time.Duration, permits int, before *limiters.State) (d limiters.Decision, stage int, wasted int64) {
	var state limiters.State
	for k, lim := range s.stages {
		if before != nil {
			if k == 0 {
				*before = lim.Snapshot(now)
			} else {
				state = lim.Snapshot(now)
			}
		}
		if d = lim.AcquireAt(now, permits); d != limiters.Admitted {
			s.Release(permits, k)
			for j := range k {
				if s.releasers[j] == nil {
					wasted += int64(permits)
				}
			}
			if before != nil && k > 0 {
				*before = state
			}
			return d, k, wasted
		}
	}
	return limiters.Admitted, len(s.stages), 0
}

// Release gives permits back to the releasing stages among the first k: k = Len() for a
// request that completed, k = the refusing stage for one refused part way (Acquire does that
// itself).
func (s *Stack) Release(permits, k int) {
	for _, rel := range s.releasers[:k] {
		if rel != nil {
			rel.Release(permits)
		}
	}
}

// RetryAfter is stage k's hint of how long after now a request for permits would first pass
// (what a Retry-After header carries). ok is false when the stage gives no hint (a
// concurrency limiter: its permits come back on release, not with time) or says the request
// can never pass.
func (s *Stack) RetryAfter(k int, now time.Duration, permits int) (wait time.Duration, ok bool) {
	if rl := s.rated[k]; rl != nil {
		return rl.RetryAfterAt(now, permits)
	}
	return 0, false
}

// BulkheadFull reports whether some releasing stage lacks the permits for a request now, a
// request it could grant when emptier (one larger than its MaxPermits is not held up here: a
// stage answers it Never). A releasing stage's availability does not change with time, only
// with acquire and release, so asking it costs nothing and takes nothing.
func (s *Stack) BulkheadFull(now time.Duration, permits int) bool {
	for k, rel := range s.releasers {
		if rel != nil && s.stages[k].AvailableAt(now) < permits && permits <= s.stages[k].MaxPermits() {
			return true
		}
	}
	return false
}
