package tui

import (
	"context"
	"fmt"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// logCapacity is how many records each lane's event log keeps (the newest ones).
const logCapacity = 256

// sim runs every lane of a scenario in lockstep on one virtual time axis: each move is a
// RunUntil of the same time in every lane, so the lanes always read as of the same instant.
// It is deterministic: how the moves are chunked (frames, steps) does not change what any
// lane decides.
type sim struct {
	sc     *engine.Scenario
	lanes  []*engine.Lane
	now    time.Duration
	slice  time.Duration // the chart's time slice: one column
	charts [][]sliceCount
	logs   []recordRing
	events uint64 // decisions and other records seen, all lanes

	// steps is the position on the run for time travel: how many steps (step) have run since
	// 0. Every move is made of steps, so re-running as many from a fresh start reaches the
	// same state, decision for decision: that is how the workbench goes back.
	steps  uint64
	lastAt time.Duration // the instant of the last step
	marks  [][]mark      // per lane, the moments `[` and `]` jump between, in step order
	seen   []laneSeen
	// windowKinds[i] are lane i's stages' kinds whose boundaries are marks (windowed).
	windowKinds [][]limiters.Kind
	// starts[k] is the position when chart slice k began (before its first step): where a
	// rewind can skip to, because every record before it is already counted in the charts.
	starts []sliceStart
	watch  *prediction // the requests a prediction is about, counted as they end
	// stop, when set, ends a long advance (a recording's frame over hours of virtual time)
	// once it is done: checked every 4096 steps.
	stop context.Context
}

// sliceStart is the position at the start of a chart slice, and what the mark finder had
// seen by then.
type sliceStart struct {
	steps uint64
	seen  []laneSeen
}

// mark is a moment worth jumping to in one lane: the step after which it shows.
type mark struct {
	step   uint64
	at     time.Duration
	burst  bool // the first request after an idle
	window bool // the first decision in a new window of a window kind (a boundary passed)
	// neither: a refusal after admissions, a refusal run's start
}

// String names the mark for the status line: "the burst at t=50ms (event 1)".
func (k mark) String() string {
	what := "the refusal"
	switch {
	case k.burst:
		what = "the burst"
	case k.window:
		what = "the new window"
	}
	return fmt.Sprintf("%s at t=%s (event %d)", what, short(k.at), k.step)
}

// laneSeen is what the observer remembers of a lane to find its marks (engine.Moments), and
// the window its window-kind stage last decided in.
type laneSeen struct {
	engine.Moments
	window   time.Duration // the window's start (limiters.State.WindowStart)
	inWindow bool          // a window kind has decided: window is set
}

// windowed reports whether a decision's state is a window kind's (limiters.ShapeWindow: a
// fixed window, whose boundary resets its count), whose boundaries are marks.
func windowed(kinds []limiters.Kind, st *limiters.State) bool {
	if st == nil {
		return false
	}
	for _, k := range kinds {
		if st.Kind == k {
			return true
		}
	}
	return false
}

// sliceCount is what one lane decided in one time slice.
type sliceCount struct{ admitted, rejected int }

// newSim prepares every lane of sc at time 0. sc must be valid.
func newSim(sc *engine.Scenario) (*sim, error) {
	sc.Trace = false // the log listens to OnEvent; the lanes need not keep a trace too
	s := &sim{sc: sc, slice: sliceFor(sc.Horizon)}
	slices := int((sc.Horizon+s.slice-1)/s.slice) + 1
	for i := range sc.Lanes {
		lane, err := engine.NewLane(sc, i)
		if err != nil {
			s.close()
			return nil, err
		}
		s.lanes = append(s.lanes, lane)
		s.charts = append(s.charts, make([]sliceCount, slices))
		s.logs = append(s.logs, recordRing{})
		s.marks = append(s.marks, nil)
		s.seen = append(s.seen, laneSeen{})
		var kinds []limiters.Kind
		for _, st := range lane.Stages {
			if st.Snapshot(0).Shape() == limiters.ShapeWindow {
				kinds = append(kinds, st.Kind())
			}
		}
		s.windowKinds = append(s.windowKinds, kinds)
		lane.OnEvent = s.observer(i)
		lane.LazyReasons = true // a sentence is made when the log shows it (recordRing)
	}
	return s, nil
}

// close releases every lane's open sources; the sim is not used afterwards.
func (s *sim) close() {
	for _, lane := range s.lanes {
		lane.Close()
	}
}

// observer counts lane i's decisions into its chart and keeps them for its log.
func (s *sim) observer(i int) func(engine.Record) {
	client := s.sc.Client
	if c := s.sc.Lanes[i].Client; c != nil {
		client = *c
	}
	dropping := client.Policy == engine.PolicyDrop || client.Policy == ""
	return func(r engine.Record) {
		s.events++
		// The log keeps what teaches: decisions and what the client and the downstream did
		// about them. A completion is routine, and a dropping client's refusal only repeats
		// the rejection before it.
		if r.Outcome != engine.OutcomeCompleted && (r.Outcome != engine.OutcomeRefused || !dropping) {
			s.logs[i].push(r)
		}
		s.markMoments(i, r)
		if s.watch != nil {
			s.watch.watch(i, r)
		}
		k := int(r.At / s.slice)
		if k >= len(s.charts[i]) {
			return
		}
		switch r.Outcome {
		case engine.OutcomeAdmitted:
			s.charts[i][k].admitted++
		case engine.OutcomeRejected, engine.OutcomeNever:
			s.charts[i][k].rejected++
		}
	}
}

// burstIdleSlices is how long a lane must see no request for the next one to start a burst,
// in chart columns (engine.BurstIdleSlices: burst-after-idle's 1ms columns, its requests at
// 50ms, 80ms and 150ms each start one, the one at 152ms does not).
const burstIdleSlices = engine.BurstIdleSlices

// markMoments notes lane i's moments for `[` and `]` (engine.Moments.See): the first request
// after an idle of burstIdleSlices columns (a burst), a refusal that follows an admission
// (the limiter starts refusing: a refusal run's start), and, in a lane with a fixed window,
// the first decision in a new window (its boundary passed, the count back to 0: on
// boundary-attack, `]` from 990ms stops at 1s instead of the end). Each is a mark at the step
// running now.
func (s *sim) markMoments(i int, r engine.Record) {
	burst, refusal := s.seen[i].See(r, burstIdleSlices*s.slice)
	if burst {
		s.marks[i] = append(s.marks[i], mark{step: s.steps, at: r.At, burst: true})
	}
	if seen := &s.seen[i]; len(s.windowKinds[i]) > 0 && windowed(s.windowKinds[i], r.State) && (!seen.inWindow || r.State.WindowStart != seen.window) {
		if seen.inWindow && !burst { // a burst at the boundary is marked already
			s.marks[i] = append(s.marks[i], mark{step: s.steps, at: r.At, window: true})
		}
		seen.window, seen.inWindow = r.State.WindowStart, true
	}
	if refusal {
		if n := len(s.marks[i]); n == 0 || s.marks[i][n-1].step != s.steps {
			s.marks[i] = append(s.marks[i], mark{step: s.steps, at: r.At})
		}
	}
}

// niceDurations are the steps of the chart's slice and of the speed control.
var niceDurations = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 20 * time.Second,
	30 * time.Second, time.Minute,
}

// sliceFor picks the chart's column width (engine.ChartSlice): the smallest nice duration
// that cuts the horizon into at most 400 slices (250ms → 1ms, 60s → 200ms).
func sliceFor(horizon time.Duration) time.Duration { return engine.ChartSlice(horizon) }

// done reports whether every lane has reached the horizon.
func (s *sim) done() bool { return s.now >= s.sc.Horizon }

// advanceTo moves every lane to t (at most the horizon): each runs its events before t.
// It moves by steps, so that the position (steps) stays exact.
func (s *sim) advanceTo(t time.Duration) error {
	t = min(t, s.sc.Horizon)
	if t <= s.now {
		return nil
	}
	for {
		next := s.nextEventAt()
		if next >= t {
			break
		}
		if err := s.stepAt(next); err != nil {
			return err
		}
		if s.stop != nil && s.steps&4095 == 0 {
			if err := s.stop.Err(); err != nil {
				return err
			}
		}
	}
	s.now = t
	return s.sync()
}

// nextEventAt is the earliest next event across the lanes (the horizon when none is left).
func (s *sim) nextEventAt() time.Duration {
	next := s.sc.Horizon
	for _, lane := range s.lanes {
		next = min(next, lane.NextEventAt())
	}
	return next
}

// step runs one event: it moves every lane to the earliest next event across the lanes,
// and every lane whose next event is at that instant runs it. The same arrival is one
// event in every lane, so a step shows one request meeting every limiter.
func (s *sim) step() error {
	t := s.nextEventAt()
	if t >= s.sc.Horizon {
		return s.advanceTo(s.sc.Horizon)
	}
	if err := s.stepAt(t); err != nil {
		return err
	}
	return s.sync()
}

// stepAt runs step number s.steps+1, whose instant t is nextEventAt: every lane whose next
// event is at t runs it. The other lanes' clocks stay behind until sync.
func (s *sim) stepAt(t time.Duration) error {
	for k := int(t / s.slice); len(s.starts) <= k; {
		s.starts = append(s.starts, sliceStart{steps: s.steps, seen: append([]laneSeen(nil), s.seen...)})
	}
	s.steps++
	s.now, s.lastAt = t, t
	for _, lane := range s.lanes {
		if lane.NextEventAt() == t {
			if _, err := lane.Step(); err != nil {
				return fmt.Errorf("lane %s: %w", lane.Spec.Label(), err)
			}
		}
	}
	return nil
}

// sync moves every lane's clock to now, so that all of them read as of the same instant;
// it runs no event (none is left before now).
func (s *sim) sync() error {
	for _, lane := range s.lanes {
		if err := lane.RunUntil(s.now); err != nil {
			return fmt.Errorf("lane %s: %w", lane.Spec.Label(), err)
		}
	}
	return nil
}

// forward runs steps until stop says so, the horizon is reached, or budget ends (checked
// every 64 steps; a zero budget has no end). It reports whether it stopped for stop or the
// horizon, and leaves every lane synced to now.
func (s *sim) forward(stop func() bool, budget time.Duration) (bool, error) {
	start := time.Now() // wall clock only chunks the work: each step is the same whatever the chunks
	for n := 0; ; n++ {
		if stop() {
			return true, s.sync()
		}
		t := s.nextEventAt()
		if t >= s.sc.Horizon {
			return true, s.advanceTo(s.sc.Horizon)
		}
		if err := s.stepAt(t); err != nil {
			return true, err
		}
		if budget > 0 && n%64 == 63 && time.Since(start) >= budget {
			return false, s.sync()
		}
	}
}

// rewindSlice is the chart slice a rewind to target (the slice of the position gone back to)
// re-simulates from: far enough back that each lane's log fills again (logCapacity records,
// counted by the charts), else 0.
func (s *sim) rewindSlice(target int) int {
	target = min(target, len(s.starts)-1)
	k := target
	for ; k > 0; k-- {
		full := true
		for i := range s.charts {
			n := 0
			for j := k; j <= target && j < len(s.charts[i]); j++ {
				n += s.charts[i][j].admitted + s.charts[i][j].rejected
			}
			full = full && n >= logCapacity
		}
		if full {
			break
		}
	}
	return max(k, 0)
}

// rewind returns a new sim at the start of chart slice k (at most where s has been): the
// steps before it re-run quietly (no OnEvent, so the engine explains no decision), and what
// they would have recorded — the charts' earlier slices, the marks, the mark finder's memory —
// is copied from s, which the deterministic engine makes the same. The new sim's log holds
// only what it records from there on: rewindSlice picks k so that it fills.
func (s *sim) rewind(k int) (*sim, error) {
	fresh, err := newSim(s.sc)
	if err != nil {
		return nil, err
	}
	k = min(k, len(s.starts)-1)
	if k <= 0 {
		return fresh, nil
	}
	start := s.starts[k]
	observers := make([]func(engine.Record), len(fresh.lanes))
	for i, lane := range fresh.lanes {
		observers[i], lane.OnEvent = lane.OnEvent, nil
	}
	if _, err := fresh.forward(func() bool { return fresh.steps >= start.steps }, 0); err != nil {
		fresh.close()
		return nil, err
	}
	for i, lane := range fresh.lanes {
		lane.OnEvent = observers[i]
		copy(fresh.charts[i][:k], s.charts[i][:k])
		for _, mk := range s.marks[i] {
			if mk.step <= start.steps {
				fresh.marks[i] = append(fresh.marks[i], mk)
			}
		}
	}
	copy(fresh.seen, start.seen)
	fresh.starts = append(fresh.starts[:0], s.starts[:k+1]...)
	return fresh, nil
}

// sliceOfStep is the chart slice in which step n ran (0 for the start).
func (s *sim) sliceOfStep(n uint64) int {
	k := 0
	for j, st := range s.starts {
		if st.steps < n {
			k = j
		}
	}
	return k
}

// recordRing keeps the newest logCapacity records. A record's State, which the lane lends
// for the call (engine.Lane.LazyReasons), is copied into the ring's own slot, so a sentence
// made when the log is drawn reads the state its decision saw; the copy reuses the slot, so a
// push allocates nothing.
type recordRing struct {
	buf    [logCapacity]engine.Record
	states [logCapacity]limiters.State
	next   int
	count  int
}

func (r *recordRing) push(rec engine.Record) {
	if rec.State != nil {
		st := &r.states[r.next]
		slots := st.Slots[:0]
		*st = *rec.State
		if rec.State.Slots != nil {
			st.Slots = append(slots, rec.State.Slots...) // the lane reuses its own
		}
		rec.State = st
	}
	r.buf[r.next] = rec
	r.next = (r.next + 1) % logCapacity
	r.count = min(r.count+1, logCapacity)
}

// last returns up to n records, oldest first. Their states are the ring's: read them before
// the next push.
func (r *recordRing) last(n int) []engine.Record {
	n = min(n, r.count)
	out := make([]engine.Record, 0, n)
	for k := n; k > 0; k-- {
		out = append(out, r.buf[(r.next-k+logCapacity)%logCapacity])
	}
	return out
}
