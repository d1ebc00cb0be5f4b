package tui

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// logCapacity is how many records each lane's event log keeps (the newest ones): a power
// of two (recordRing.skip wraps by a mask).
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
	// events[i] is how many events lane i has run (Lane.Step): a step runs at most one in
	// each lane, a lane may have none at a step's instant. A rewind runs each lane to a
	// point's count at once (Lane.StepN), unobserved, as run does.
	events []uint64
	marks  [][]mark // per lane, the moments `[` and `]` jump between, in step order
	seen   []laneSeen
	// windows[i] is the window of lane i's fixed-window stage (the first), whose boundaries
	// are marks; 0 when it has none.
	windows []time.Duration
	// lightOK[i]: lane i can be light (sim.setLight): it decides each request at its arrival
	// and logs nothing else (no downstream pool to fail at).
	lightOK []bool
	light   bool   // the lanes that can are light now (forward)
	lit     uint64 // decisions heard light (decider), for the tests
	// A light batch (sim.batch) runs each lane on its own up to a time, then numbers the
	// steps by merging the lanes' event instants (inst). While it runs, batching is set: a
	// mark found meanwhile in lane i carries pendingStep|len(inst[i]) (its event in the batch)
	// as its step until the merge numbers it.
	batching bool
	inst     [][]time.Duration
	marksAt  []int         // where each lane's marks of the batch begin
	chunk    time.Duration // a light batch's virtual length, adapted to last about a millisecond
	// tail is how much virtual time before a light move's end (forward's lightUntil) the lanes
	// are observed again, so that the logs are whole on arrival without a refill: 5/4 of the
	// longest a lane's whole log spanned when last seen whole (0 until then).
	tail time.Duration
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
	watch  *prediction // the requests a prediction is about, counted as they end
	// stop, when set, ends a long advance (a recording's frame over hours of virtual time)
	// once it is done: checked every 4096 steps.
	stop context.Context
}

// pointEvery and ckptEvery are how often, in steps, the sim notes a point and checkpoints
// its lanes (at the first step, or the first light batch's end, at or past each multiple).
// A move back re-simulates from the checkpoint before the point before the one whose logs
// it needs, each lane on its own and unobserved up to that point (Lane.StepN: run's path),
// light to the logs' oldest record (lightTo), observed after: on the perf scenario (six
// lanes at 10,000/s: a step is an arrival in every lane) at most 16·4,096 quiet steps, 4,096
// light ones and 4,096 + 256 observed ones, 14–27ms of CPU at 3m39s and at 10m
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
	events      []uint64 // sim.events
	seen        []laneSeen
	chart       []sliceCount // each lane's count so far in the slice of lastAt
	marks       []int        // how many marks each lane had
	// fill is the instant of the oldest record any lane's log still holds (0 when a log
	// holds every record since the start): a re-run that observes from a point before it
	// (lastAt < fill) fills the logs.
	fill time.Duration
}

// checkpoint is every lane frozen after a step.
type checkpoint struct {
	steps  uint64
	events []uint64 // sim.events
	lanes  []*engine.Checkpoint
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
	s := &sim{sc: sc, slice: sliceFor(sc.Horizon), chunk: time.Millisecond}
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
		s.events = append(s.events, 0)
		s.inst = append(s.inst, nil)
		s.marksAt = append(s.marksAt, 0)
		var window time.Duration
		for _, st := range lane.Stages() {
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
			s.logs[i].push(r)
		}
		burst, refusal := s.seen[i].See(r, burstIdleSlices*s.slice)
		s.markMoments(i, r.At, r.Outcome, burst, refusal)
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
// decision's record, but for the log, of which it keeps only the instant (recordRing.skip): its
// sentence is never made, since the frame observes again before it ends (forward).
//
// It holds lane i's log, mark finder and chart, which no rewind or refill replaces while it
// is set (setLight makes it anew each time the lanes go light), and the chart's current
// slice, so that most decisions divide nothing: on the perf scenario it is heard 60,000
// times a virtual second.
func (s *sim) decider(i int) func(time.Duration, uint64, limiters.Decision) {
	ring, moments, chart := &s.logs[i], &s.seen[i].Moments, s.charts[i]
	idle, slice := burstIdleSlices*s.slice, s.slice
	k, from, until := -1, time.Duration(0), time.Duration(0) // chart[k] counts [from, until)
	return func(at time.Duration, request uint64, d limiters.Decision) {
		outcome := engine.OutcomeNever
		switch d {
		case limiters.Admitted:
			outcome = engine.OutcomeAdmitted
		case limiters.Rejected:
			outcome = engine.OutcomeRejected
		}
		s.lit++
		ring.skip(at)
		burst, refusal := seeDecision(moments, at, request, outcome, idle)
		if burst || refusal || s.windows[i] > 0 {
			s.markMoments(i, at, outcome, burst, refusal)
		}
		if at < from || at >= until {
			k = int(at / slice)
			from, until = time.Duration(k)*slice, time.Duration(k+1)*slice
		}
		if k < len(chart) {
			if d == limiters.Admitted {
				chart[k].admitted++
			} else {
				chart[k].rejected++
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
	if _, err := fresh.forward(func() bool { return fresh.steps >= target }, 0, -1, 0); err != nil {
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
// running now. burst and refusal are what engine.Moments.See (or seeDecision) said of
// the record, made at at with outcome o.
func (s *sim) markMoments(i int, at time.Duration, o engine.Outcome, burst, refusal bool) {
	step := s.steps
	if s.batching {
		step = pendingStep | uint64(len(s.inst[i])) // numbered once the batch's steps are (sim.batch)
	}
	if burst {
		s.marks[i] = append(s.marks[i], mark{step: step, at: at, burst: true})
	}
	if w := s.windows[i]; w > 0 && decision(o) {
		if seen, k := &s.seen[i], int64(at/w); !seen.inWindow || k != seen.window {
			if seen.inWindow && !burst { // a burst at the boundary is marked already
				s.marks[i] = append(s.marks[i], mark{step: step, at: at, window: true})
			}
			seen.window, seen.inWindow = k, true
		}
	}
	if refusal {
		if n := len(s.marks[i]); n == 0 || s.marks[i][n-1].step != step {
			s.marks[i] = append(s.marks[i], mark{step: step, at: at})
		}
	}
}

// seeDecision is engine.Moments.See for a decision heard light (sim.decider: admitted,
// rejected or never; no Record to copy, a tenth of a light step): the same burst and refusal,
// the same Moments after (TestLightFramesShowWhatAnObservedRunShows compares them).
func seeDecision(m *engine.Moments, at time.Duration, request uint64, o engine.Outcome, idle time.Duration) (burst, refusal bool) {
	if request > m.LastRequest {
		burst = m.LastRequest == 0 || at-m.LastArrival >= idle
		m.LastRequest, m.LastArrival = request, at
	}
	if o == engine.OutcomeAdmitted {
		m.LastDecision = engine.OutcomeAdmitted
	} else {
		refusal = m.LastDecision == engine.OutcomeAdmitted
		m.LastDecision = o
	}
	return burst, refusal
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
	if s.steps%pointEvery == 0 && s.steps > 0 {
		s.note()
	}
	s.steps++
	s.now, s.lastAt = t, t
	s.nextEventAt() // the lanes' next events known
	for i, lane := range s.lanes {
		if s.next[i] == t {
			_, err := lane.Step()
			s.events[i]++
			s.next[i] = lane.NextEventAt()
			if err != nil {
				s.nextOK = false
				return fmt.Errorf("lane %s: %w", lane.Spec().Label(), err)
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
			return fmt.Errorf("lane %s: %w", lane.Spec().Label(), err)
		}
	}
	return nil
}

// wallNow is the wall clock forward chunks its work by (a variable so that a test can give it
// a clock of its own and check the budget is kept whatever the machine's load).
var wallNow = time.Now

// minLightBudget is the least budget forward runs light steps in.
const minLightBudget = 10 * time.Millisecond

// forward runs steps until stop says so, the horizon is reached, or budget ends (checked
// every 64 steps; a zero budget has no end). It reports whether it stopped for stop or the
// horizon, and leaves every lane synced to now. From lightFrom of the budget on (never when
// negative), until fifteen sixteenths of it, the lanes that can run light (setLight); when
// lightUntil is after now, stop holds for no position whose next event is before it, and the
// light steps before it run in batches (sim.batch), each lane on its own. A run that ends
// light refills the logs (refill), so what it leaves on screen is what an observed run
// leaves. The perf scenario at maximum speed, batched: BenchmarkTUIVsRun.
func (s *sim) forward(stop func() bool, budget, lightFrom, lightUntil time.Duration) (bool, error) {
	start := wallNow() // wall clock only chunks the work: each step is the same whatever the chunks
	// A budget too short to observe the logs whole again after light steps stays observed.
	canLight := budget >= minLightBudget && lightFrom >= 0 && s.watch == nil
	defer s.setLight(false)
	end := func(arrived bool, err error) (bool, error) {
		s.setLight(false)
		if err == nil && s.stale() {
			err = s.refill()
		}
		if err == nil {
			s.measureTail()
		}
		return arrived, err
	}
	// Light until lightEnd: a light move observes its last tail again, so that it arrives
	// with its logs whole.
	lightEnd := time.Duration(math.MaxInt64)
	if lightUntil > 0 {
		lightEnd = lightUntil - s.tail
	}
	if canLight && lightFrom == 0 {
		s.setLight(true)
	}
	observing := start // when the lanes were last observed again after light steps
	for n := 0; ; n++ {
		if stop() {
			return end(true, s.sync())
		}
		t := s.nextEventAt()
		if t >= s.sc.Horizon {
			return end(true, s.advanceTo(s.sc.Horizon))
		}
		if s.light && t >= lightEnd {
			s.setLight(false)
			observing = wallNow()
		}
		if s.light && lightUntil > 0 {
			began := wallNow()
			if err := s.batch(min(lightEnd, t+s.chunk)); err != nil {
				return end(true, err)
			}
			// A batch of about a millisecond: the frame's budget is kept to within one. A
			// batch is at most maxChunk long, so that traffic that thickens after a quiet
			// stretch (on-off's bursts) makes one batch slow, not one frame.
			if took := wallNow().Sub(began); took < time.Millisecond/2 && s.chunk < maxChunk {
				s.chunk *= 2
			} else if took > 2*time.Millisecond && s.chunk > time.Microsecond {
				s.chunk /= 2
			}
			el := wallNow().Sub(start)
			s.setLight(el >= lightFrom && el < budget*lightShare/16)
			if !s.light {
				observing = wallNow()
			}
			continue
		}
		if err := s.stepAt(t); err != nil {
			return end(true, err)
		}
		if budget > 0 && n%64 == 63 {
			el := wallNow().Sub(start)
			if canLight {
				was := s.light
				s.setLight(el >= lightFrom && el < budget*lightShare/16 && t < lightEnd)
				if was && !s.light {
					observing = wallNow()
				}
			}
			// Past the budget once the logs are whole again, or, if some lane's log is slow to
			// fill (a lane that rarely decides), a budget after the lanes were observed again
			// (not after the frame began: on a loaded machine the light part can outlast the
			// budget, and a refill costs more than the ~256 observed steps that make the logs
			// whole), refilled.
			if el >= budget && (!s.stale() || wallNow().Sub(observing) >= budget) {
				return end(false, s.sync())
			}
		}
	}
}

// lightShare is the share of forward's budget until which its lanes may run light, in
// 16ths: the rest observes, until the logs are whole (~256 observed steps on the perf
// scenario, about a millisecond).
const lightShare = 15

// measureTail notes how much virtual time the logs span, when they are whole (sim.tail).
func (s *sim) measureTail() {
	if s.stale() {
		return
	}
	var span time.Duration
	for i := range s.logs {
		span = max(span, s.lastAt-s.logs[i].oldest())
	}
	s.tail = span + span/4
}

// maxChunk is the longest a light batch is, in virtual time.
const maxChunk = time.Second

// pendingStep marks the step of a mark found in a light batch before the batch's steps are
// numbered: pendingStep | the lane's event in the batch.
const pendingStep = uint64(1) << 63

// batch runs every event before to, each lane on its own (its events one after another,
// as run does, with no step across the lanes between them), and then numbers the steps
// they make: a step runs the next event of every lane whose next event is at the earliest
// instant, so merging the lanes' event instants counts them (an instant at which some lane
// has k events is k steps) and numbers the marks found meanwhile. Every lane is left as the
// same steps one at a time leave it (TestLightFramesShowWhatAnObservedRunShows).
func (s *sim) batch(to time.Duration) error {
	s.batching = true
	for i, lane := range s.lanes {
		s.marksAt[i] = len(s.marks[i])
		s.inst[i] = s.inst[i][:0]
		if err := lane.StepsHeard(to, &s.inst[i]); err != nil {
			s.batching, s.nextOK = false, false
			return fmt.Errorf("lane %s: %w", lane.Spec().Label(), err)
		}
		s.events[i] += uint64(len(s.inst[i]))
	}
	s.batching, s.nextOK = false, false
	before := s.steps
	pos := make([]int, len(s.lanes)) // each lane's next event in the merge
	for {
		t := time.Duration(math.MaxInt64)
		for i, inst := range s.inst {
			if p := pos[i]; p < len(inst) && inst[p] < t {
				t = inst[p]
			}
		}
		if t == math.MaxInt64 {
			break
		}
		most := 0
		for i, inst := range s.inst {
			k := 0
			for p := pos[i]; p < len(inst) && inst[p] == t; p++ {
				marks := s.marks[i]
				for m := s.marksAt[i]; m < len(marks) && marks[m].step == pendingStep|uint64(p); m++ {
					marks[m].step = s.steps + 1 + uint64(k)
					s.marksAt[i]++
				}
				k++
			}
			pos[i] += k
			most = max(most, k)
		}
		s.steps += uint64(most)
		s.now, s.lastAt = t, t
	}
	if s.steps/pointEvery > before/pointEvery {
		s.note()
	}
	return nil
}

// note notes a point at the position (and checkpoints the lanes once ckptEvery more steps
// have run since the last checkpoint's multiple), once: a re-run that passes it again
// changes nothing.
func (s *sim) note() {
	if n := len(s.points); n > 0 && s.points[n-1].steps >= s.steps {
		return
	}
	k := int(s.lastAt / s.slice)
	p := point{steps: s.steps, now: s.now, lastAt: s.lastAt, events: append([]uint64(nil), s.events...),
		seen: append([]laneSeen(nil), s.seen...), fill: math.MaxInt64}
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
	var last uint64
	if n := len(s.ckpts); n > 0 {
		last = s.ckpts[n-1].steps
	}
	if s.steps/ckptEvery <= last/ckptEvery || s.noCkpt {
		return
	}
	c := checkpoint{steps: s.steps, events: p.events}
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
// logs, re-filled from there, hold what the target's do), runs each lane unobserved (no
// OnEvent: the engine explains nothing) to its event count at that point, and takes the
// observer's state there from the point and from s, which has been further: the charts of
// earlier slices, the marks. The deterministic engine makes every event the same as s's.
func (s *sim) rewind(n uint64, at time.Duration, byTime bool) (*sim, error) {
	// The latest point at or before the target, then the latest before its logs' oldest record.
	i := len(s.points) - 1
	for ; i >= 0; i-- {
		if p := s.points[i]; byTime && p.lastAt < at || !byTime && p.steps <= n {
			break
		}
	}
	var fill time.Duration
	if i >= 0 {
		fill = s.points[i].fill
		for ; i >= 0 && s.points[i].lastAt >= fill; i-- {
		}
	}
	fresh, err := newSim(s.sc)
	if err != nil {
		return nil, err
	}
	if i < 0 {
		return fresh.lightTo(fill) // from the start
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
		copy(fresh.events, ck.events)
		fresh.ckpts = append(fresh.ckpts, s.ckpts[:c+1]...)
	}
	fresh.noCkpt = s.noCkpt
	for j, lane := range fresh.lanes {
		observer := lane.OnEvent
		lane.OnEvent = nil
		if k := p.events[j] - fresh.events[j]; k > 0 {
			if _, err := lane.StepN(int(k)); err != nil {
				fresh.close()
				return nil, fmt.Errorf("lane %s: %w", lane.Spec().Label(), err)
			}
		}
		lane.OnEvent = observer
	}
	copy(fresh.events, p.events)
	fresh.steps, fresh.now, fresh.lastAt, fresh.nextOK = p.steps, p.lastAt, p.lastAt, false
	if err := fresh.sync(); err != nil {
		fresh.close()
		return nil, err
	}
	k := int(p.lastAt / s.slice)
	for j := range fresh.lanes {
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
	return fresh.lightTo(fill)
}

// lightTo runs, light and in one batch, every event before fill, the instant of the oldest
// record the logs must show (rewind): those before it are counted into the charts and marks
// but never shown, and the observed steps from fill on fill every log (each lane has at
// least logCapacity records from fill to the target). Up to pointEvery steps that a move
// back re-ran observed run at the light batches' speed. It returns s, or the error (s closed).
func (s *sim) lightTo(fill time.Duration) (*sim, error) {
	if fill <= 0 || s.nextEventAt() >= fill {
		return s, nil
	}
	s.setLight(true)
	err := s.batch(fill)
	s.setLight(false)
	if err == nil {
		err = s.sync()
	}
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// recordRing keeps the newest logCapacity records. A record's State, which the lane lends
// for the call (engine.Lane.LazyReasons), is copied into the ring's own slot, so a sentence
// made when the log is drawn reads the state its decision saw; the copy reuses the slot, so a
// push allocates nothing.
type recordRing struct {
	buf    [logCapacity]engine.Record
	states [logCapacity]limiters.State
	ats    [logCapacity]time.Duration // each record's instant (that of the step it came in)
	next   int
	count  int
	whole  int // how many of the newest records are kept (push); the older ones were skipped
}

// skip counts a record made at without keeping it (a light lane's: sim.decider).
func (r *recordRing) skip(at time.Duration) {
	r.ats[r.next] = at // the record itself stays as it was: stale, never shown (refill)
	r.next = (r.next + 1) & (logCapacity - 1)
	if r.count < logCapacity {
		r.count++
	}
	r.whole = 0
}

// stale reports whether a record skipped is still among those the ring holds.
func (r *recordRing) stale() bool { return r.whole < r.count }

// oldest is the instant of the oldest record kept, 0 while every record since the start is.
func (r *recordRing) oldest() time.Duration {
	if r.count < logCapacity {
		return 0
	}
	return r.ats[r.next]
}

func (r *recordRing) push(rec engine.Record) {
	r.ats[r.next] = rec.At
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
