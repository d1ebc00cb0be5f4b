package engine

import (
	"fmt"
	"slices"
	"time"
)

// Lockstep runs every lane of a scenario on one virtual time axis, as the workbench shows
// them side by side: a step runs the earliest next event across the lanes, in every lane whose
// next event is at that instant, then moves every lane's clock to it, so the lanes always read
// as of the same instant. The same arrival is one step in every lane (poisson's first request,
// at about 14ms, is step 1 in all six lanes). How moves are chunked (steps, AdvanceTo) does not
// change what any lane decides, and a fresh Lockstep on the same scenario run to the same
// number of steps is in the same state, decision for decision: that is how a view goes back.
type Lockstep struct {
	Scenario *Scenario
	Lanes    []*Lane
	// BeforeStep, when set, is called before each step with its instant, while Steps is
	// still the position before it: a view notes where each of its chart's columns begins
	// (the position to re-run to, quietly, when it goes back).
	BeforeStep func(at time.Duration)
	now        time.Duration
	lastAt     time.Duration // the instant of the last step
	steps      uint64
}

// NewLockstep prepares every lane of sc at time 0 (Scenario.Trace is left as it is; a view
// listens to Lane.OnEvent). sc is validated first.
func NewLockstep(sc *Scenario) (*Lockstep, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	s := &Lockstep{Scenario: sc}
	for i := range sc.Lanes {
		lane, err := NewLane(sc, i)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.Lanes = append(s.Lanes, lane)
	}
	return s, nil
}

// Close releases every lane's open sources; s is not used afterwards.
func (s *Lockstep) Close() {
	for _, lane := range s.Lanes {
		lane.Close()
	}
}

// Now is the instant every lane reads as of.
func (s *Lockstep) Now() time.Duration { return s.now }

// Steps is how many steps have run since 0: the position a fresh Lockstep reaches again with
// StepTo.
func (s *Lockstep) Steps() uint64 { return s.steps }

// Done reports whether every lane has reached the horizon.
func (s *Lockstep) Done() bool { return s.now >= s.Scenario.Horizon }

// NextEventAt is the earliest next event across the lanes (the horizon when none is left).
func (s *Lockstep) NextEventAt() time.Duration {
	next := s.Scenario.Horizon
	for _, lane := range s.Lanes {
		next = min(next, lane.NextEventAt())
	}
	return next
}

// Step runs one step; at the last event it moves to the horizon.
func (s *Lockstep) Step() error {
	t := s.NextEventAt()
	if t >= s.Scenario.Horizon {
		return s.AdvanceTo(s.Scenario.Horizon)
	}
	if err := s.stepAt(t); err != nil {
		return err
	}
	return s.sync()
}

// StepTo runs steps until the position is n (or the horizon is reached): n = Steps()−1 on a
// fresh Lockstep is one step back. It refuses an n behind the position.
func (s *Lockstep) StepTo(n uint64) error {
	if n < s.steps {
		return fmt.Errorf("engine: StepTo(%d) is behind the position %d: start a fresh Lockstep", n, s.steps)
	}
	for s.steps < n {
		t := s.NextEventAt()
		if t >= s.Scenario.Horizon {
			return s.AdvanceTo(s.Scenario.Horizon)
		}
		if err := s.stepAt(t); err != nil {
			return err
		}
	}
	return s.sync()
}

// AdvanceTo moves every lane to t (at most the horizon), running the events before t step by
// step, so that the position (Steps) stays exact. A t at or before Now does nothing.
func (s *Lockstep) AdvanceTo(t time.Duration) error {
	t = min(t, s.Scenario.Horizon)
	if t <= s.now {
		return nil
	}
	for {
		next := s.NextEventAt()
		if next >= t {
			break
		}
		if err := s.stepAt(next); err != nil {
			return err
		}
	}
	s.now = t
	return s.sync()
}

// stepAt runs step number steps+1, whose instant t is NextEventAt: every lane whose next event
// is at t runs it. The other lanes' clocks stay behind until sync.
func (s *Lockstep) stepAt(t time.Duration) error {
	if s.BeforeStep != nil {
		s.BeforeStep(t)
	}
	s.steps++
	s.now, s.lastAt = t, t
	for _, lane := range s.Lanes {
		if lane.NextEventAt() == t {
			if _, err := lane.Step(); err != nil {
				return fmt.Errorf("lane %s: %w", lane.spec.Label(), err)
			}
		}
	}
	return nil
}

// sync moves every lane's clock to now; it runs no event (none is left before now).
func (s *Lockstep) sync() error {
	for _, lane := range s.Lanes {
		if err := lane.RunUntil(s.now); err != nil {
			return fmt.Errorf("lane %s: %w", lane.spec.Label(), err)
		}
	}
	return nil
}

// InjectionAt is the instant a change to the traffic made now takes effect: Now, unless
// events at Now have already run (a step landed on them), then 1ns later, so that none of
// those is undone. A Lockstep on the changed scenario repeats every step before it.
func (s *Lockstep) InjectionAt() time.Duration {
	if s.steps > 0 && s.lastAt == s.now {
		return s.now + 1
	}
	return s.now
}

// InjectBurst adds n one-permit requests at instant at to sc's script source number k of
// injected arrivals, after any arrivals it already has at at; when k is not a script source
// (-1: none yet), a new script source is appended. It returns the source's index, to pass
// again for the next burst. The workbench's b key and the page's burst button send bursts
// this way, so a burst is part of the scenario: replayed, written out, and gone when the view
// steps back before it.
func InjectBurst(sc *Scenario, k int, at time.Duration, n int) (int, error) {
	if n < 1 || n > MaxBurst {
		return k, fmt.Errorf("engine: a burst of %d: a burst is 1 to %d requests", n, MaxBurst)
	}
	if at < 0 || at >= sc.Horizon {
		return k, fmt.Errorf("engine: a burst at %v: outside the run [0, %v)", at, sc.Horizon)
	}
	if k < 0 || k >= len(sc.Sources) || sc.Sources[k].Kind != SourceScript {
		sc.Sources = append(sc.Sources, Source{Kind: SourceScript})
		k = len(sc.Sources) - 1
	}
	script := sc.Sources[k].Script
	i, _ := slices.BinarySearchFunc(script, at, func(a Arrival, t time.Duration) int {
		if a.At <= t {
			return -1 // after the arrivals already at t: a later burst comes later
		}
		return 1
	})
	more := make([]Arrival, n)
	for j := range more {
		more[j] = Arrival{At: at}
	}
	sc.Sources[k].Script = slices.Insert(script, i, more...)
	return k, nil
}

// MaxBurst is the largest burst InjectBurst sends: more would be a trace, not a burst.
const MaxBurst = 100000
