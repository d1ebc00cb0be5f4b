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

// Columns is how many time slices a lane's strip chart has at most: a horizon of 10s is 400
// columns of 25ms.
const Columns = 400

// Session is the page's workbench: the scenario's lanes in lockstep (engine.Lockstep), each
// lane's decisions counted per time slice and its newest sentences kept for the log. Moving
// back (Back, Seek to an earlier time) re-runs a fresh Lockstep to the position: the engine is
// deterministic, so it is the same state, decision for decision.
type Session struct {
	sc       *engine.Scenario
	ls       *engine.Lockstep
	slice    time.Duration
	lanes    []laneLog
	injected int    // the script source bursts go to (engine.InjectBurst), -1 before the first
	events   uint64 // records observed since the session began, across re-runs: the speed meter
}

// laneLog is what a Session keeps of one lane's records since t=0.
type laneLog struct {
	admitted, rejected int
	columns            []Column
	ring               [LogLines]string
	next, count        int
}

// Column is what one lane decided in one time slice.
type Column struct {
	Admitted int `json:"a"`
	Rejected int `json:"r"`
}

// NewSession starts the scenario text at t=0.
func NewSession(text string) (*Session, error) {
	sc, err := Load(text)
	if err != nil {
		return nil, err
	}
	sc.Trace = false // the log listens to OnEvent
	s := &Session{sc: sc, injected: -1}
	s.slice = max((sc.Horizon+Columns-1)/Columns, 1)
	if err := s.restart(); err != nil {
		return nil, err
	}
	return s, nil
}

// restart makes a fresh Lockstep at t=0 with empty logs.
func (s *Session) restart() error {
	ls, err := engine.NewLockstep(s.sc)
	if err != nil {
		return err
	}
	if s.ls != nil {
		s.ls.Close()
	}
	s.ls = ls
	n := int(s.sc.Horizon/s.slice) + 1
	s.lanes = make([]laneLog, len(ls.Lanes))
	for i, lane := range ls.Lanes {
		s.lanes[i].columns = make([]Column, n)
		lg, stages := &s.lanes[i], lane.Stages
		lane.OnEvent = func(r engine.Record) {
			s.events++
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
			lg.ring[lg.next] = engine.Sentence(stages, r)
			lg.next = (lg.next + 1) % LogLines
			lg.count = min(lg.count+1, LogLines)
		}
	}
	return nil
}

// Close releases the lanes' sources.
func (s *Session) Close() { s.ls.Close() }

// Events is how many records the session has simulated, re-runs included: the page divides
// its growth by wall time to say how many decisions per second it simulates.
func (s *Session) Events() uint64 { return s.events }

// Step runs one step: the next arrival or completion meets every lane.
func (s *Session) Step() error { return s.ls.Step() }

// Back goes one step back (to t=0 from the first step).
func (s *Session) Back() error {
	if s.ls.Steps() == 0 {
		return nil
	}
	return s.goTo(s.ls.Steps()-1, -1)
}

// goTo re-runs from t=0 to position steps, then on to time at when at is later.
func (s *Session) goTo(steps uint64, at time.Duration) error {
	if err := s.restart(); err != nil {
		return err
	}
	if err := s.ls.StepTo(steps); err != nil {
		return err
	}
	return s.ls.AdvanceTo(at)
}

// Seek moves to time t (clamped to [0, horizon]): forward by running on, back by a re-run.
func (s *Session) Seek(t time.Duration) error {
	t = min(max(t, 0), s.sc.Horizon)
	if t < s.ls.Now() {
		if err := s.restart(); err != nil {
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
	if at > s.ls.Now() { // a step ran at now: return to that step, the burst comes next
		return s.goTo(s.ls.Steps(), -1)
	}
	return s.goTo(0, at)
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
	return s.goTo(m.Steps, m.Now)
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
	Log      []string         `json:"log"`       // the newest sentences, oldest first
}

// View is the session's lanes as of now.
func (s *Session) View() View {
	now := s.ls.Now()
	v := View{Scenario: s.sc.Name, Now: now, Steps: s.ls.Steps(), Horizon: s.sc.Horizon, Slice: s.slice,
		Done: s.ls.Done(), Events: s.events}
	upto := int(now/s.slice) + 1
	for i, lane := range s.ls.Lanes {
		lg := &s.lanes[i]
		lv := LaneView{Label: lane.Spec.Label(), Color: laneColor(lane.Spec), Admitted: lg.admitted, Rejected: lg.rejected,
			InFlight: lane.InFlight(), Queue: lane.QueueLen(), Columns: lg.columns[:min(upto, len(lg.columns))], Log: []string{}}
		for _, st := range lane.Stages {
			snap := st.Snapshot(now)
			lv.Stages = append(lv.Stages, snap)
			lv.Shapes = append(lv.Shapes, snap.Shape())
		}
		for k := lg.count; k > 0; k-- {
			lv.Log = append(lv.Log, lg.ring[(lg.next-k+LogLines)%LogLines])
		}
		v.Lanes = append(v.Lanes, lv)
	}
	return v
}
