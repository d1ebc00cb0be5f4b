package web

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/scenarios"
)

// LogLines is how many of each lane's newest log sentences a View carries.
const LogLines = 12

// Session is the page's workbench: the scenario's lanes in lockstep (engine.Lockstep), each
// lane's decisions counted per chart column (engine.ChartSlice: 400 at most) and its newest
// records kept for the log.
//
// Going back (Back, Seek to an earlier time, and the re-run after a burst or a rate change)
// starts a fresh Lockstep — the engine is deterministic, so the same steps reach the same
// state, decision for decision — but not from the observed start: the session notes, at each
// column's first step, its position and counts (a checkpoint), and re-runs quietly (no
// OnEvent, so the engine explains no decision) to the latest checkpoint from which each lane's
// log fills again, restores the counts and columns before it, and observes only from there.
// Quiet steps cost a tenth to a thirtieth of observed ones: poisson's step back at t=9s went
// from 174ms (an observed re-run from 0) to 10.5ms natively (BenchmarkBackLate; the browser
// test measures it in WebAssembly).
type Session struct {
	sc       *engine.Scenario
	ls       *engine.Lockstep
	slice    time.Duration
	lanes    []laneLog
	starts   []checkpoint // starts[k]: where column k began (k ≤ the column of the last step)
	injected int          // the script source bursts go to (engine.InjectBurst), -1 before the first
	events   uint64       // records observed since the session began, across re-runs: the speed meter
	exact    bool         // the log's durations exact (engine.Readable)

	predictOn  bool
	moments    engine.Moments // lane 0's, for the bursts predict mode pauses before
	lastBurst  mark           // the last burst lane 0 has seen
	momentSeen uint64         // the position of the last decisive moment asked about
	question   *question
}

// checkpoint is the session at the start of a chart column: the position and what had been
// counted before it.
type checkpoint struct {
	steps     uint64
	counts    []counts
	moments   engine.Moments
	lastBurst mark
}

// mark is a burst's first step and instant.
type mark struct {
	step uint64
	at   time.Duration
}

type counts struct{ admitted, rejected int }

// laneLog is what a Session keeps of one lane's records since t=0.
type laneLog struct {
	counts
	columns     []Column
	ring        [LogLines]engine.Record
	next, count int
}

// Column is what one lane decided in one time slice.
type Column struct {
	Admitted int `json:"a"`
	Rejected int `json:"r"`
}

// question is predict mode's question: why the play paused, and once guessed, the prediction.
type question struct {
	why      string
	first    uint64
	p        *engine.Prediction
	revealed bool
}

// NewSession starts the scenario text at t=0.
func NewSession(text string) (*Session, error) {
	sc, err := Load(text)
	if err != nil {
		return nil, err
	}
	sc.Trace = false // the log listens to OnEvent
	s := &Session{sc: sc, injected: -1, slice: engine.ChartSlice(sc.Horizon)}
	ls, err := engine.NewLockstep(sc)
	if err != nil {
		return nil, err
	}
	s.ls = ls
	s.lanes = make([]laneLog, len(ls.Lanes))
	for i := range s.lanes {
		s.lanes[i].columns = make([]Column, s.columnCount())
	}
	s.starts = []checkpoint{{counts: make([]counts, len(ls.Lanes))}}
	s.listen()
	return s, nil
}

func (s *Session) columnCount() int { return int(s.sc.Horizon/s.slice) + 1 }

// listen attaches the session's observers to s.ls: each lane's counts, columns, log and lane
// 0's moments, and the checkpoints at each column's first step.
func (s *Session) listen() {
	n := s.columnCount()
	s.ls.BeforeStep = func(at time.Duration) {
		for k := min(int(at/s.slice), n-1); len(s.starts) <= k; {
			cp := checkpoint{steps: s.ls.Steps(), counts: make([]counts, len(s.lanes)), moments: s.moments, lastBurst: s.lastBurst}
			for i := range s.lanes {
				cp.counts[i] = s.lanes[i].counts
			}
			s.starts = append(s.starts, cp)
		}
	}
	idle := engine.BurstIdleSlices * s.slice
	for i, lane := range s.ls.Lanes {
		lg := &s.lanes[i]
		lane.OnEvent = func(r engine.Record) {
			s.events++
			if i == 0 {
				if burst, _ := s.moments.See(r, idle); burst {
					s.lastBurst = mark{step: s.ls.Steps(), at: r.At}
				}
			}
			if q := s.question; q != nil && q.p != nil && !q.revealed {
				q.p.Watch(i, r)
			}
			switch r.Outcome {
			case engine.OutcomeAdmitted:
				lg.admitted++
				lg.columns[min(int(r.At/s.slice), n-1)].Admitted++
			case engine.OutcomeRejected, engine.OutcomeNever:
				lg.rejected++
				lg.columns[min(int(r.At/s.slice), n-1)].Rejected++
			case engine.OutcomeCompleted:
				return // routine: the log keeps what teaches, as the TUI's
			}
			lg.ring[lg.next] = r
			lg.next = (lg.next + 1) % LogLines
			lg.count = min(lg.count+1, LogLines)
		}
	}
}

// Close releases the lanes' sources.
func (s *Session) Close() { s.ls.Close() }

// Events is how many records the session has simulated, re-runs included: the page divides
// its growth by wall time to say how many decisions per second it simulates.
func (s *Session) Events() uint64 { return s.events }

// SetExact shows the log's durations exact (t=1.0105263s) rather than rounded (t=1.011s), as
// the TUI's x key does.
func (s *Session) SetExact(exact bool) { s.exact = exact }

// Step runs one step: the next arrival or completion meets every lane.
func (s *Session) Step() error { return s.ls.Step() }

// Back goes one step back (to t=0 from the first step).
func (s *Session) Back() error {
	if s.ls.Steps() == 0 {
		return nil
	}
	return s.goTo(s.ls.Steps()-1, -1)
}

// goTo goes back (or on) to position steps, then on to time at when at is later.
func (s *Session) goTo(steps uint64, at time.Duration) error {
	if steps < s.ls.Steps() || at >= 0 && at < s.ls.Now() {
		if err := s.rewind(steps); err != nil {
			return err
		}
	}
	if err := s.ls.StepTo(steps); err != nil {
		return err
	}
	return s.ls.AdvanceTo(at)
}

// rewind starts a fresh Lockstep at the checkpoint from which a run to position target fills
// every lane's log again (LogLines records, counted by the columns), else at 0: run there
// quietly, the counts and columns before it restored, observed from there.
func (s *Session) rewind(target uint64) error {
	s.question = nil
	tc := 0 // the column in which step target ran
	for k, cp := range s.starts {
		if cp.steps < target {
			tc = k
		}
	}
	k := tc
	for ; k > 0; k-- {
		full := true
		for i := range s.lanes {
			n := 0
			for _, c := range s.lanes[i].columns[k : tc+1] {
				n += c.Admitted + c.Rejected
			}
			full = full && n >= LogLines
		}
		if full {
			break
		}
	}
	cp := s.starts[k]
	ls, err := engine.NewLockstep(s.sc)
	if err != nil {
		return err
	}
	if err := ls.StepTo(cp.steps); err != nil {
		ls.Close()
		return err
	}
	s.ls.Close()
	s.ls = ls
	s.starts = s.starts[:k+1]
	for i := range s.lanes {
		lg := &s.lanes[i]
		lg.counts = cp.counts[i]
		clear(lg.columns[k:])
		lg.next, lg.count = 0, 0
	}
	s.moments, s.lastBurst = cp.moments, cp.lastBurst
	s.listen()
	return nil
}

// Seek moves to time t (clamped to [0, horizon]): forward by running on, back by a re-run.
func (s *Session) Seek(t time.Duration) error {
	t = min(max(t, 0), s.sc.Horizon)
	if t < s.ls.Now() {
		// Every step before column k's checkpoint ran before t: go back there, then on.
		target := s.ls.Steps()
		if k := int(t / s.slice); k < len(s.starts) {
			target = s.starts[k].steps
		}
		if err := s.rewind(target); err != nil {
			return err
		}
		if err := s.ls.StepTo(target); err != nil {
			return err
		}
	}
	return s.ls.AdvanceTo(t)
}

// Burst sends n requests now (engine.InjectBurst at Lockstep.InjectionAt): they become part of
// the scenario (Session.YAML writes them out, a permalink carries them), and the run is
// re-simulated to where it was, which repeats every decision made so far.
func (s *Session) Burst(n int) error {
	if s.ls.Done() {
		return fmt.Errorf("the run is over: go back to send a burst inside it")
	}
	at := s.ls.InjectionAt()
	k, err := engine.InjectBurst(s.sc, s.injected, at, n)
	if err != nil {
		return err
	}
	s.injected = k
	return s.reSimulate()
}

// ChangeRate multiplies the rate of the flat-rate source active now by factor from now on
// (engine.ChangeRate, as the TUI's ↑/↓: engine.RateStep and its inverse): the change is part
// of the scenario, as a burst is.
func (s *Session) ChangeRate(factor float64) (engine.RateChange, error) {
	if s.ls.Done() {
		return engine.RateChange{}, fmt.Errorf("the run is over: go back to change a rate inside it")
	}
	c, err := engine.ChangeRate(s.sc, s.ls.InjectionAt(), factor)
	if err != nil {
		return c, err
	}
	if err := s.sc.Validate(); err != nil {
		return c, err
	}
	return c, s.reSimulate()
}

// reSimulate re-runs the changed scenario to where the session was: every change lies at or
// after InjectionAt, so every step so far is the same.
func (s *Session) reSimulate() error {
	steps, now := s.ls.Steps(), s.ls.Now()
	if err := s.rewind(steps); err != nil {
		return err
	}
	if err := s.ls.StepTo(steps); err != nil {
		return err
	}
	return s.ls.AdvanceTo(now)
}

// YAML is the session's scenario as a scenario file, bursts included: what the TUI's w key
// writes, and what a permalink carries.
func (s *Session) YAML() (string, error) {
	data, err := scenarios.YAML(s.sc)
	return string(data), err
}

// Moment is a position on the run: Steps steps from t=0, then on to Now (at or after the last
// step's instant). A fresh Session moved to it (Session.GoTo) is in the same state.
type Moment struct {
	Steps uint64        `json:"steps"`
	Now   time.Duration `json:"now_ns"`
}

// Moment is where the session is.
func (s *Session) Moment() Moment { return Moment{Steps: s.ls.Steps(), Now: s.ls.Now()} }

// GoTo moves to m.
func (s *Session) GoTo(m Moment) error {
	if m.Now < 0 || m.Now > s.sc.Horizon {
		return fmt.Errorf("moment t=%v: outside the run [0, %v]", m.Now, s.sc.Horizon)
	}
	if m.Steps < s.ls.Steps() || m.Now < s.ls.Now() {
		if err := s.rewind(m.Steps); err != nil {
			return err
		}
	}
	if err := s.ls.StepTo(m.Steps); err != nil {
		return err
	}
	return s.ls.AdvanceTo(m.Now)
}

// View is what the page draws: every lane as of Now.
type View struct {
	Scenario string        `json:"scenario"`
	Now      time.Duration `json:"now_ns"`
	Steps    uint64        `json:"steps"`
	Horizon  time.Duration `json:"horizon_ns"`
	Slice    time.Duration `json:"slice_ns"` // a column's width
	Done     bool          `json:"done"`
	Events   uint64        `json:"events"`
	Lanes    []LaneView    `json:"lanes"`
	Predict  *PredictView  `json:"predict,omitempty"` // predict mode's question or answer
}

// LaneView is one lane as of the View's Now.
type LaneView struct {
	Label    string           `json:"label"`
	Color    string           `json:"color"` // "#rrggbb", the first stage's kind's
	Stages   []limiters.State `json:"stages"`
	Shapes   []limiters.Shape `json:"shapes"`   // how each stage's state is drawn (State.Shape)
	Admitted int              `json:"admitted"` // decisions since t=0
	Rejected int              `json:"rejected"`
	InFlight int              `json:"in_flight"` // at the downstream
	Queue    int              `json:"queue"`     // in the client's queue
	Columns  []Column         `json:"columns"`   // up to Now's slice
	Log      []string         `json:"log"`       // the newest sentences, oldest first (engine.Sentence, engine.Readable)
}

// View is the session's lanes as of now.
func (s *Session) View() View {
	now := s.ls.Now()
	v := View{Scenario: s.sc.Name, Now: now, Steps: s.ls.Steps(), Horizon: s.sc.Horizon, Slice: s.slice,
		Done: s.ls.Done(), Events: s.events, Predict: s.predictView()}
	upto := int(now/s.slice) + 1
	for i, lane := range s.ls.Lanes {
		lg := &s.lanes[i]
		lv := LaneView{Label: lane.Spec().Label(), Color: laneColor(lane.Spec()), Admitted: lg.admitted, Rejected: lg.rejected,
			InFlight: lane.InFlight(), Queue: lane.QueueLen(), Columns: lg.columns[:min(upto, len(lg.columns))], Log: []string{}}
		for _, st := range lane.Stages() {
			snap := st.Snapshot(now)
			lv.Stages = append(lv.Stages, snap)
			lv.Shapes = append(lv.Shapes, snap.Shape())
		}
		for k := lg.count; k > 0; k-- {
			r := lg.ring[(lg.next-k+LogLines)%LogLines]
			lv.Log = append(lv.Log, engine.Readable(engine.Sentence(lane.Stages(), r), s.exact))
		}
		v.Lanes = append(v.Lanes, lv)
	}
	return v
}
