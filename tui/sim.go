package tui

import (
	"context"
	"fmt"
	"math"
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

	// steps is the position on the run for time travel: how many steps (step) have run since
	// 0. Every move is made of steps, so re-running as many from a fresh start reaches the
	// same state, decision for decision: that is how the workbench goes back.
	steps  uint64
	lastAt time.Duration // the instant of the last step
	marks  [][]mark      // per lane, the moments `[` and `]` jump between, in step order
	seen   []laneSeen
	// windows[i] is the window of lane i's fixed-window stage (the first), whose boundaries
	// are marks; 0 when it has none.
	windows []time.Duration
	// lightOK[i]: lane i can be light (sim.setLight): it decides each request at its arrival
	// and logs nothing else (no downstream pool to fail at).
	lightOK []bool
	light   bool   // the lanes that can are light now (forward)
	lit     uint64 // decisions heard light (decider), for the tests
	// next[i] is lane i's next event (Lane.NextEventAt) when nextOK: a step reads every
	// lane's, and asking each lane three times a step was a tenth of a light step.
	next   []time.Duration
	nextOK bool
	// points are the observer's state every pointEvery steps, and ckpts the lanes' every
	// ckptEvery: going back restores the nearest checkpoint, re-runs quietly to the point
	// from which the logs fill again, and observes from there (rewind).
	points []point
	ckpts  []checkpoint
	noCkpt bool        // a lane cannot be checkpointed (engine.ErrNotClonable): re-run from 0
	quiet  bool        // a rewind's quiet re-run: its steps note no point
	watch  *prediction // the requests a prediction is about, counted as they end
	// stop, when set, ends a long advance (a recording's frame over hours of virtual time)
	// once it is done: checked every 4096 steps.
	stop context.Context
}

// pointEvery and ckptEvery are how often, in steps, the sim notes a point and checkpoints
// its lanes. A move back re-simulates from the checkpoint before the point before the one
// whose logs it needs, quietly (no OnEvent) up to that point, observed after: on the perf
// scenario (six lanes at 10,000/s: a step is an arrival in every lane) at most 16·4,096
// quiet steps and 2·4,096 observed ones, 32–57 ms of CPU at 3m39s and at 10m
// (BenchmarkTravelLate), with a 100 kB checkpoint every 6.5 virtual seconds (55 MB for the
// hour).
// Variables for the tests, whose scenarios are shorter.
var (
	pointEvery uint64 = 4096
	ckptEvery         = 16 * pointEvery
)

// point is what the observer had seen after a step: what a rewind to it restores besides
// the lanes.
type point struct {
	steps       uint64
	now, lastAt time.Duration
	seen        []laneSeen
	chart       []sliceCount // each lane's count so far in the slice of lastAt
	marks       []int        // how many marks each lane had
	// fill is the oldest step whose records any lane's log still holds (0 when a log holds
	// every record since the start): a re-run that observes from before it fills the logs.
	fill uint64
}

// checkpoint is every lane frozen after a step.
type checkpoint struct {
	steps uint64
	lanes []*engine.Checkpoint
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
// the window its fixed-window stage last decided in.
type laneSeen struct {
	engine.Moments
	window   int64 // the window's number: t / its length
	inWindow bool  // a decision was made: window is set
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
		var window time.Duration
		for _, st := range lane.Stages {
			if snap := st.Snapshot(0); window == 0 && snap.Shape() == limiters.ShapeWindow {
				window = snap.Window
			}
		}
		s.windows = append(s.windows, window)
		s.lightOK = append(s.lightOK, lane.AtOnce() && (sc.Downstream == nil || sc.Downstream.Pool == 0))
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
		// The log keeps what teaches: decisions and what the client and the downstream did
		// about them. A completion is routine, and a dropping client's refusal only repeats
		// the rejection before it.
		if r.Outcome != engine.OutcomeCompleted && (r.Outcome != engine.OutcomeRefused || !dropping) {
			s.logs[i].push(r, s.steps)
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

// decider is lane i's observer while light (engine.Lane.OnDecide): what observer does with a
// decision's record, but for the log, of which it keeps only the step (recordRing.skip): its
// sentence is never made, since the frame observes again before it ends (forward).
func (s *sim) decider(i int) func(time.Duration, uint64, limiters.Decision) {
	return func(at time.Duration, request uint64, d limiters.Decision) {
		outcome := engine.OutcomeNever
		switch d {
		case limiters.Admitted:
			outcome = engine.OutcomeAdmitted
		case limiters.Rejected:
			outcome = engine.OutcomeRejected
		}
		s.lit++
		s.logs[i].skip(s.steps)
		s.markMoments(i, engine.Record{At: at, Request: request, Outcome: outcome})
		if k := int(at / s.slice); k < len(s.charts[i]) {
			if d == limiters.Admitted {
				s.charts[i][k].admitted++
			} else {
				s.charts[i][k].rejected++
			}
		}
	}
}

// decision reports whether o is a limiter's decision.
func decision(o engine.Outcome) bool {
	switch o {
	case engine.OutcomeAdmitted, engine.OutcomeDelayed, engine.OutcomeRejected, engine.OutcomeNever:
		return true
	}
	return false
}

// setLight makes the lanes that can (lightOK) light, or observed again: a light lane runs
// unobserved, as run's do (its decisions at once, no record, no state), and tells decider
// only what the charts and marks need. The log misses what a light lane decides: forward
// observes again before a frame ends, and refills the logs if it stopped light.
func (s *sim) setLight(on bool) {
	if on == s.light {
		return
	}
	s.light = on
	for i, lane := range s.lanes {
		if !s.lightOK[i] {
			continue
		}
		if on {
			lane.OnEvent, lane.OnDecide = nil, s.decider(i)
		} else {
			lane.OnEvent, lane.OnDecide = s.observer(i), nil
		}
	}
}

// stale reports whether some lane's log misses records a light step skipped.
func (s *sim) stale() bool {
	for i := range s.logs {
		if s.logs[i].stale() {
			return true
		}
	}
	return false
}

// refill makes the logs whole again after light steps: the sim is replaced, in place, by
// its rewind to the same position (sim.rewind: the logs re-observed from a point before
// their oldest record).
func (s *sim) refill() error {
	fresh, err := s.rewind(s.steps, 0, false)
	if err != nil {
		return err
	}
	target, now := s.steps, s.now
	if _, err := fresh.forward(func() bool { return fresh.steps >= target }, 0, -1); err != nil {
		fresh.close()
		return err
	}
	if fresh.now < now {
		if err := fresh.advanceTo(now); err != nil {
			fresh.close()
			return err
		}
	}
	s.close()
	stop, watch, lit := s.stop, s.watch, s.lit
	*s = *fresh
	s.stop, s.watch, s.lit = stop, watch, lit
	for i, lane := range s.lanes {
		lane.OnEvent = s.observer(i) // fresh's observers count into fresh, which is gone
	}
	return nil
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
	if w := s.windows[i]; w > 0 && decision(r.Outcome) {
		if seen, k := &s.seen[i], int64(r.At/w); !seen.inWindow || k != seen.window {
			if seen.inWindow && !burst { // a burst at the boundary is marked already
				s.marks[i] = append(s.marks[i], mark{step: s.steps, at: r.At, window: true})
			}
			seen.window, seen.inWindow = k, true
		}
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
	if !s.nextOK {
		s.next = s.next[:0]
		for _, lane := range s.lanes {
			s.next = append(s.next, lane.NextEventAt())
		}
		s.nextOK = true
	}
	next := s.sc.Horizon
	for _, t := range s.next {
		next = min(next, t)
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
	if s.steps%pointEvery == 0 && s.steps > 0 && !s.quiet {
		s.note()
	}
	s.steps++
	s.now, s.lastAt = t, t
	s.nextEventAt() // the lanes' next events known
	for i, lane := range s.lanes {
		if s.next[i] == t {
			_, err := lane.Step()
			s.next[i] = lane.NextEventAt()
			if err != nil {
				s.nextOK = false
				return fmt.Errorf("lane %s: %w", lane.Spec.Label(), err)
			}
		}
	}
	return nil
}

// sync moves every lane's clock to now, so that all of them read as of the same instant;
// it runs no event (none is left before now).
func (s *sim) sync() error {
	s.nextOK = false
	for _, lane := range s.lanes {
		if err := lane.RunUntil(s.now); err != nil {
			return fmt.Errorf("lane %s: %w", lane.Spec.Label(), err)
		}
	}
	return nil
}

// minLightBudget is the least budget forward runs light steps in.
const minLightBudget = 10 * time.Millisecond

// forward runs steps until stop says so, the horizon is reached, or budget ends (checked
// every 64 steps; a zero budget has no end). It reports whether it stopped for stop or the
// horizon, and leaves every lane synced to now. From lightFrom of the budget on (never when
// negative), until seven eighths of it, the lanes that can run light (setLight): the
// perf scenario at maximum speed simulates ~75 virtual seconds per CPU second, ~45 observed
// throughout (BenchmarkTUIVsRun; run: ~490). A run that ends light refills the logs
// (refill), so what it leaves on screen is what an observed run leaves.
func (s *sim) forward(stop func() bool, budget, lightFrom time.Duration) (bool, error) {
	start := time.Now() // wall clock only chunks the work: each step is the same whatever the chunks
	// A budget too short to observe the logs whole again after light steps stays observed.
	canLight := budget >= minLightBudget && lightFrom >= 0 && s.watch == nil
	defer s.setLight(false)
	end := func(arrived bool, err error) (bool, error) {
		s.setLight(false)
		if err == nil && s.stale() {
			err = s.refill()
		}
		return arrived, err
	}
	if canLight && lightFrom == 0 {
		s.setLight(true)
	}
	for n := 0; ; n++ {
		if stop() {
			return end(true, s.sync())
		}
		t := s.nextEventAt()
		if t >= s.sc.Horizon {
			return end(true, s.advanceTo(s.sc.Horizon))
		}
		if err := s.stepAt(t); err != nil {
			return end(true, err)
		}
		if budget > 0 && n%64 == 63 {
			el := time.Since(start)
			if canLight {
				s.setLight(el >= lightFrom && el < budget*7/8)
			}
			// Past the budget once the logs are whole again, or, if some lane's log is slow to
			// fill (a lane that rarely decides), at twice the budget, refilled.
			if el >= budget && (!s.stale() || el >= 2*budget) {
				return end(false, s.sync())
			}
		}
	}
}

// note notes a point at the position (and checkpoints the lanes every ckptEvery steps),
// once: a re-run that passes it again changes nothing.
func (s *sim) note() {
	if n := len(s.points); n > 0 && s.points[n-1].steps >= s.steps {
		return
	}
	k := int(s.lastAt / s.slice)
	p := point{steps: s.steps, now: s.now, lastAt: s.lastAt,
		seen: append([]laneSeen(nil), s.seen...), fill: math.MaxUint64}
	for i := range s.lanes {
		var c sliceCount
		if k < len(s.charts[i]) {
			c = s.charts[i][k]
		}
		p.chart = append(p.chart, c)
		p.marks = append(p.marks, len(s.marks[i]))
		p.fill = min(p.fill, s.logs[i].oldest())
	}
	s.points = append(s.points, p)
	if s.steps%ckptEvery != 0 || s.noCkpt {
		return
	}
	c := checkpoint{steps: s.steps}
	for _, lane := range s.lanes {
		ck, err := lane.Checkpoint()
		if err != nil { // a trace file, a peer library's clock: going back re-runs from 0
			s.noCkpt = true
			return
		}
		c.lanes = append(c.lanes, ck)
	}
	s.ckpts = append(s.ckpts, c)
}

// rewind returns a new sim at a position from which going forward reaches the target
// exactly, logs included: the target is the position after step n, or, byTime, every step
// before at. The new sim restores the latest checkpoint before the point it needs (whose
// logs, re-filled from there, hold what the target's do), runs quietly (no OnEvent: the
// engine explains nothing) to that point, and takes the observer's state there from the
// point and from s, which has been further: the charts of earlier slices, the marks. The
// deterministic engine makes every step the same as s's.
func (s *sim) rewind(n uint64, at time.Duration, byTime bool) (*sim, error) {
	// The latest point at or before the target, then the latest before its logs' oldest record.
	i := len(s.points) - 1
	for ; i >= 0; i-- {
		if p := s.points[i]; byTime && p.lastAt < at || !byTime && p.steps <= n {
			break
		}
	}
	if i >= 0 {
		fill := s.points[i].fill
		for ; i >= 0 && s.points[i].steps >= fill; i-- {
		}
	}
	fresh, err := newSim(s.sc)
	if err != nil {
		return nil, err
	}
	if i < 0 {
		return fresh, nil // from the start
	}
	p := s.points[i]
	// The latest checkpoint at or before p.
	c := len(s.ckpts) - 1
	for ; c >= 0 && s.ckpts[c].steps > p.steps; c-- {
	}
	if c >= 0 {
		ck := s.ckpts[c]
		for j := range fresh.lanes {
			lane, err := ck.lanes[j].Restore(s.lanes[j])
			if err != nil {
				fresh.close()
				return nil, err
			}
			lane.OnEvent, lane.LazyReasons = fresh.lanes[j].OnEvent, true
			fresh.lanes[j].Close()
			fresh.lanes[j] = lane
		}
		fresh.nextOK = false
		// The position of the checkpoint is a point's (ckptEvery is a multiple of pointEvery).
		for _, q := range s.points {
			if q.steps == ck.steps {
				fresh.steps, fresh.now, fresh.lastAt = q.steps, q.now, q.lastAt
			}
		}
		fresh.ckpts = append(fresh.ckpts, s.ckpts[:c+1]...)
	}
	fresh.noCkpt = s.noCkpt
	observers := make([]func(engine.Record), len(fresh.lanes))
	for j, lane := range fresh.lanes {
		observers[j], lane.OnEvent = lane.OnEvent, nil
	}
	fresh.quiet = true
	_, err = fresh.forward(func() bool { return fresh.steps >= p.steps }, 0, -1)
	fresh.quiet = false
	if err != nil {
		fresh.close()
		return nil, err
	}
	k := int(p.lastAt / s.slice)
	for j, lane := range fresh.lanes {
		lane.OnEvent = observers[j]
		if k < len(fresh.charts[j]) {
			copy(fresh.charts[j][:k], s.charts[j][:k])
			fresh.charts[j][k] = p.chart[j]
		} else {
			copy(fresh.charts[j], s.charts[j])
		}
		fresh.marks[j] = append(fresh.marks[j][:0], s.marks[j][:p.marks[j]]...)
	}
	copy(fresh.seen, p.seen)
	fresh.points = append(fresh.points, s.points[:i+1]...)
	return fresh, nil
}

// recordRing keeps the newest logCapacity records. A record's State, which the lane lends
// for the call (engine.Lane.LazyReasons), is copied into the ring's own slot, so a sentence
// made when the log is drawn reads the state its decision saw; the copy reuses the slot, so a
// push allocates nothing.
type recordRing struct {
	buf    [logCapacity]engine.Record
	states [logCapacity]limiters.State
	steps  [logCapacity]uint64 // the step each record came in
	next   int
	count  int
	whole  int // how many of the newest records are kept (push); the older ones were skipped
}

// skip counts a record that came in step without keeping it (a light lane's: sim.decider).
func (r *recordRing) skip(step uint64) {
	r.steps[r.next] = step // the record itself stays as it was: stale, never shown (refill)
	r.next = (r.next + 1) % logCapacity
	r.count = min(r.count+1, logCapacity)
	r.whole = 0
}

// stale reports whether a record skipped is still among those the ring holds.
func (r *recordRing) stale() bool { return r.whole < r.count }

// oldest is the step of the oldest record kept, 0 while every record since the start is.
func (r *recordRing) oldest() uint64 {
	if r.count < logCapacity {
		return 0
	}
	return r.steps[r.next]
}

func (r *recordRing) push(rec engine.Record, step uint64) {
	r.steps[r.next] = step
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
	r.whole = min(r.whole+1, logCapacity)
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
