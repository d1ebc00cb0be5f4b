package engine

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// Stack is one lane's limiter stages in order: a request is admitted when every stage admits
// it, first to last. It keeps, per stage, what the stage can do beyond limiters.Limiter
// (limiters.CapabilitiesOf, found once when the stack is made): release permits (a
// concurrency limiter), refund them (the time-based kinds), say when a refused request would
// pass (retry-after).
//
// The simulator's lanes and Replay both decide through a Stack, so a stack of limiters means
// the same thing in both. It is not safe for concurrent use (its stages are, but a stack's
// acquire-then-give-back is not atomic).
type Stack struct {
	state   limiters.State // a later stage's state before it decided (Acquire, Reserve), reused
	stages  []limiters.Limiter
	caps    []limiters.Capabilities  // caps[k] is what stages[k] can do beyond the core
	waste   bool                     // earlier stages keep the permits of a request a later one refused
	held    []limiters.Reservation   // Reserve's scratch: the reservations made so far, per stage
	waits   []time.Duration          // each stage's maximum wait for Reserve (SetWaits)
	keyed   []*limiters.KeyedLimiter // keyed[k]: stage k's table when it is keyed (keys.go), else nil; nil when none is
	router  *fleetStage              // a fleet lane's stage, told each request's key by Bind (fleet_stage.go)
	classed []classedStage           // the stages that decide per request class (classes.go)
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
	var keyed []*limiters.KeyedLimiter
	for j, spec := range specs {
		if ks, ok := spec.(limiters.KeyedSpec); ok {
			table, lim, err := newKeyedStage(ks, clock)
			if err != nil {
				return nil, &StageError{Stage: j + 1, Err: err}
			}
			if keyed == nil {
				keyed = make([]*limiters.KeyedLimiter, len(specs))
			}
			keyed[j] = table
			stages = append(stages, lim)
			continue
		}
		lim, err := spec.New(clock)
		if err != nil {
			return nil, &StageError{Stage: j + 1, Err: err}
		}
		stages = append(stages, lim)
	}
	s := StackOf(stages)
	s.keyed = keyed
	return s, nil
}

// StackOf is the stack of the given limiters, first to last: limiters a LaneSpec.Build made,
// or any others. The stack keeps the slice.
func StackOf(stages []limiters.Limiter) *Stack {
	s := &Stack{stages: stages, caps: make([]limiters.Capabilities, len(stages)), held: make([]limiters.Reservation, len(stages)),
		waits: make([]time.Duration, len(stages))}
	for k, lim := range stages {
		s.caps[k] = limiters.CapabilitiesOf(lim)
	}
	return s
}

// Waste makes the stack keep, in the stages before a refusing one, the permits a refused
// request took there, instead of refunding them: what a stack of independent limiters does
// when the caller cannot give permits back (ratelab before refunds), counted as wasted.
// Released permits (a bulkhead's) still come back.
func (s *Stack) Waste(keep bool) { s.waste = keep }

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
// When stage k refuses, the permits stages 0..k-1 took are given back: released by a stage
// that releases (a bulkhead), refunded at now by one that refunds (every time-based ratelab
// kind), so a refusal costs no stage anything. A stage that can do neither (a peer library's
// limiter with no way back), or any time-based stage of a stack set to Waste, keeps them: they
// are returned as wasted, permits times those stages. A three-stage stack of two token
// buckets and a full bulkhead refusing a 2-permit request refunds 2 permits to each bucket;
// set to Waste, it wastes 4.
//
// When before is not nil it receives the state of the deciding stage just before it decided:
// the refusing stage's, or the first stage's when all admitted. That takes a Snapshot of every
// stage asked (the sliding window's allocates), so pass nil unless someone reads it.
func (s *Stack) Acquire(now time.Duration, permits int, before *limiters.State) (d limiters.Decision, stage int, wasted int64) {
	if before == nil {
		// Unobserved (every lane that is not traced): no state to keep, none to clear.
		if len(s.stages) == 1 { // most lanes: nothing to give back
			if d = s.stages[0].AcquireAt(now, permits); d != limiters.Admitted {
				return d, 0, 0
			}
			return limiters.Admitted, 1, 0
		}
		for k, lim := range s.stages {
			if d = lim.AcquireAt(now, permits); d != limiters.Admitted {
				if k > 0 {
					wasted = s.giveBack(k, now, permits)
				}
				return d, k, wasted
			}
		}
		return limiters.Admitted, len(s.stages), 0
	}
	state := &s.state
	for k, lim := range s.stages {
		observe(lim, k, now, before, state)
		if d = lim.AcquireAt(now, permits); d != limiters.Admitted {
			wasted = s.giveBack(k, now, permits)
			if k > 0 {
				copyState(before, state)
			}
			return d, k, wasted
		}
	}
	return limiters.Admitted, len(s.stages), 0
}

// giveBack returns the permits stages 0..k-1 took for a request stage k refused, and counts
// those it cannot return as wasted (see Acquire).
func (s *Stack) giveBack(k int, now time.Duration, permits int) (wasted int64) {
	for j := range k {
		switch c := &s.caps[j]; {
		case c.Release != nil:
			c.Release.Release(permits)
		case c.Refund != nil && !s.waste:
			c.Refund.RefundAt(now, permits)
		default:
			wasted += int64(permits)
		}
	}
	return wasted
}

// SetWaits sets each stage's maximum wait for Reserve: the spec's own (limiters.Waiting, a
// peer's mode=wait or timeout) when it has one, else the lane's maxWait. It reports whether
// any stage waits at all, i.e. whether the stack shapes.
func (s *Stack) SetWaits(specs []limiters.Spec, maxWait time.Duration) bool {
	shapes := false
	for k := range s.waits {
		s.waits[k] = maxWait
		if k < len(specs) {
			if w, ok := specs[k].(limiters.Waiting); ok {
				s.waits[k] = max(w.CallerWait(), maxWait)
			}
		}
		shapes = shapes || s.waits[k] > 0
	}
	return shapes
}

// Reserve is Acquire for callers who will wait: each stage that can reserve
// (limiters.Reserver) takes the permits now for use after a wait of at most its maximum wait
// (SetWaits), each
// stage that releases (a bulkhead) decides at once and holds its permits through the wait.
// The request may go on after the longest of the stages' waits. When stage k refuses, the
// reservations and permits of stages 0..k-1 are given back at once (cancelled at the instant
// they were made, which undoes them exactly). A stage that can do neither is asked as by
// Acquire (CanReserve says whether every stage can).
//
// A token bucket of 100/s with capacity 3 stacked before a bulkhead of 5, six requests at
// once: three pass at once, the fourth and fifth wait 10ms and 20ms, the sixth is refused by
// the bulkhead and its reservation (which would have waited 30ms) is cancelled.
func (s *Stack) Reserve(now time.Duration, permits int, before *limiters.State) (d limiters.Decision, stage int, wait time.Duration) {
	state := &s.state
	for k, lim := range s.stages {
		observe(lim, k, now, before, state)
		if rs := s.caps[k].Reserve; rs != nil {
			s.held[k] = rs.ReserveAt(now, permits, s.waits[k])
			d = s.held[k].Decision
			if d == limiters.Admitted {
				wait = max(wait, s.held[k].Wait)
			}
		} else {
			d = lim.AcquireAt(now, permits)
		}
		if d != limiters.Admitted {
			for j := range k {
				switch c := &s.caps[j]; {
				case c.Reserve != nil:
					c.Reserve.CancelAt(now, s.held[j])
				case c.Release != nil:
					c.Release.Release(permits)
				case c.Refund != nil:
					c.Refund.RefundAt(now, permits)
				}
			}
			if before != nil && k > 0 {
				copyState(before, state)
			}
			return d, k, 0
		}
	}
	return limiters.Admitted, len(s.stages), wait
}

// CanReserve is nil when every stage that must wait (SetWaits) can reserve or release, else
// the *limiters.CapabilityError of the first that cannot.
func (s *Stack) CanReserve() error {
	for k, lim := range s.stages {
		if s.waits[k] > 0 && s.caps[k].Reserve == nil && s.caps[k].Release == nil {
			_, err := limiters.Require(lim, limiters.CapReserve)
			return &StageError{Stage: k + 1, Err: err}
		}
	}
	return nil
}

// Complete ends an admitted request's work at now: each stage that takes feedback
// (limiters.Feedback) hears its latency at the downstream and whether it was served (ok), and
// the releasing stages get their permits back.
func (s *Stack) Complete(now time.Duration, permits int, latency time.Duration, ok bool) {
	for j := range s.caps {
		if fb := s.caps[j].Feedback; fb != nil {
			fb.ObserveAt(now, permits, latency, ok)
		}
		if rel := s.caps[j].Release; rel != nil {
			rel.Release(permits)
		}
	}
}

// observe keeps stage k's state before it decides, when before is not nil: in before for the
// first stage (the state an admission is explained by), in state for a later one (copied to
// before if that stage refuses).
func observe(lim limiters.Limiter, k int, now time.Duration, before, state *limiters.State) {
	switch {
	case before == nil:
	case k == 0:
		snapshot(lim, now, before)
	default:
		snapshot(lim, now, state)
	}
}

// copyState copies src into dst, its slots into dst's own array (each State keeps its own,
// reused from one decision to the next).
func copyState(dst, src *limiters.State) {
	slots := dst.Slots[:0]
	*dst = *src
	if src.Slots != nil {
		dst.Slots = append(slots, src.Slots...)
	}
}

// snapshotInto is a limiter that writes its snapshot into a State, reusing its slices
// (limiters.SlidingWindow.SnapshotInto).
type snapshotInto interface {
	SnapshotInto(now time.Duration, st *limiters.State)
}

// snapshot writes lim's state at now into st, reusing st's slices when lim can.
func snapshot(lim limiters.Limiter, now time.Duration, st *limiters.State) {
	if si, ok := lim.(snapshotInto); ok {
		si.SnapshotInto(now, st)
		return
	}
	*st = lim.Snapshot(now)
}

// Release gives permits back to the releasing stages among the first k: k = Len() for a
// request that completed, k = the refusing stage for one refused part way (Acquire does that
// itself).
func (s *Stack) Release(permits, k int) {
	for j := range s.caps[:k] {
		if rel := s.caps[j].Release; rel != nil {
			rel.Release(permits)
		}
	}
}

// shapes reports whether some stage waits (SetWaits gave it a maximum wait).
func (s *Stack) shapes() bool {
	for _, w := range s.waits {
		if w > 0 {
			return true
		}
	}
	return false
}

// hears reports whether some stage takes feedback (an adaptive limit).
func (s *Stack) hears() bool {
	for _, c := range s.caps {
		if c.Feedback != nil {
			return true
		}
	}
	return false
}

// releases reports whether some stage gives permits back on release (a bulkhead).
func (s *Stack) releases() bool {
	for _, c := range s.caps {
		if c.Release != nil {
			return true
		}
	}
	return false
}

// RetryAfter is stage k's hint of how long after now a request for permits would first pass
// (what a Retry-After header carries). ok is false when the stage gives no hint (a
// concurrency limiter: its permits come back on release, not with time) or says the request
// can never pass.
func (s *Stack) RetryAfter(k int, now time.Duration, permits int) (wait time.Duration, ok bool) {
	if ra := s.caps[k].RetryAfter; ra != nil {
		return ra.RetryAfterAt(now, permits)
	}
	return 0, false
}

// BulkheadFull reports whether some releasing stage lacks the permits for a request now, a
// request it could grant when emptier (one larger than its MaxPermits is not held up here: a
// stage answers it Never). A releasing stage's availability does not change with time, only
// with acquire and release, so asking it costs nothing and takes nothing.
func (s *Stack) BulkheadFull(now time.Duration, permits int) bool {
	for k := range s.caps {
		if s.caps[k].Release != nil && s.stages[k].AvailableAt(now) < permits && permits <= s.stages[k].MaxPermits() {
			return true
		}
	}
	return false
}

// adaptive is the first stage whose limit moves (limiters.Adaptive), nil when none does.
func (s *Stack) adaptive() limiters.Adaptive {
	for _, lim := range s.stages {
		if a, ok := lim.(limiters.Adaptive); ok {
			return a
		}
	}
	return nil
}
