package tui

import (
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// keyBudget is how long a key may re-simulate before the screen answers: a time-travel move
// that needs more goes on frame by frame (maxFrameWork each), showing its progress. A
// variable for the tests, which make every move long.
var keyBudget = 80 * time.Millisecond

// travelTo is what a time-travel move stops at.
type travelTo int

const (
	toStep travelTo = iota // the position after step n
	toTime                 // time t: every event before t
	toMark                 // the focused lane's next mark
)

// travel is a move along the run in progress: going back re-simulates from 0 (the engine is
// deterministic, so the same steps reach the same state), going forward runs steps.
type travel struct {
	to    travelTo
	step  uint64
	at    time.Duration
	lane  int // toMark: the lane, and how many marks it had when the move began
	marks int
	done  string // the status once arrived
	// light: the move may run light steps (sim.forward): one forward, which can be long; a
	// move back re-simulates at most a few thousand observed steps from a point (sim.rewind),
	// and a refill would cost as much again.
	light bool
}

// updateMoving answers keys while a long time-travel move goes on: esc stops it where it
// is (and forgets the keys that waited), q quits; every other key waits its turn, in order,
// and is applied once the move has arrived (drainKeys): three steps back pressed during a
// long one are three more steps back.
func (m *Model) updateMoving(msg tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Stop):
		m.moving = nil
		m.status = fmt.Sprintf("stopped at t=%s (event %d)", short(m.sim.now), m.sim.steps)
		if n := len(m.queued); n > 0 {
			m.status += fmt.Sprintf("; %d keys pressed meanwhile forgotten", n)
			m.queued = nil
		}
	case key.Matches(msg, m.keys.Quit):
		return tea.Quit
	default:
		m.queued = append(m.queued, msg)
		m.status = fmt.Sprintf("travelling… t=%s (%d keys wait; %s %s)", short(m.sim.now), len(m.queued), m.keys.Stop.Help().Key, m.keys.Stop.Help().Desc)
	}
	return nil
}

// drainKeys applies the keys that waited for a move, in order, until none is left or one
// of them starts another long move (the rest wait for that one).
func (m *Model) drainKeys() tea.Cmd {
	var cmds []tea.Cmd
	for len(m.queued) > 0 && m.moving == nil {
		k := m.queued[0]
		m.queued = m.queued[1:]
		_, cmd := m.Update(k)
		cmds = append(cmds, cmd)
	}
	if len(m.queued) == 0 {
		m.queued = nil
	}
	return tea.Batch(cmds...)
}

// updateTravel takes the keys that move along the run (step, step back, the marks, home,
// end) and reports whether msg was one of them.
func (m *Model) updateTravel(msg tea.KeyMsg) (tea.Cmd, bool) {
	switch {
	case key.Matches(msg, m.keys.Step):
		m.playing = false
		if m.sim.done() {
			m.status = "the run is over: r restarts it"
			return nil, true
		}
		m.fail(m.sim.step())
		if m.predictor.decided() {
			m.predictor.reveal()
			m.sim.watch = nil
		}
	case key.Matches(msg, m.keys.StepBack):
		m.playing = false
		if m.sim.steps == 0 {
			m.status = "at the start: nothing to step back to"
			return nil, true
		}
		n := m.sim.steps - 1
		return m.travel(travel{to: toStep, step: n, done: fmt.Sprintf("back one event: event %d", n)}), true
	case key.Matches(msg, m.keys.PrevMark):
		m.playing = false
		marks := m.sim.marks[m.focus]
		for k := len(marks) - 1; k >= 0; k-- {
			if marks[k].step < m.sim.steps {
				return m.travel(travel{to: toStep, step: marks[k].step, done: "back to " + marks[k].String()}), true
			}
		}
		m.status = "no earlier burst or refusal in this lane"
	case key.Matches(msg, m.keys.NextMark):
		m.playing = false
		if m.sim.done() {
			m.status = "the run is over: r restarts it"
			return nil, true
		}
		return m.travel(travel{to: toMark, lane: m.focus, marks: len(m.sim.marks[m.focus])}), true
	case key.Matches(msg, m.keys.Home):
		m.playing = false
		return m.travel(travel{to: toStep, step: 0, done: "back at the start"}), true
	case key.Matches(msg, m.keys.End):
		m.playing = false
		return m.travel(travel{to: toTime, at: m.sim.sc.Horizon, done: "at the end of the run"}), true
	default:
		return nil, false
	}
	return nil, true
}

// travel starts a move along the run: a target behind the position re-simulates from the
// nearest checkpoint before it (sim.rewind). It runs for keyBudget at once; what is left goes
// on in frames.
func (m *Model) travel(tr travel) tea.Cmd {
	s := m.sim
	behind := tr.to == toStep && tr.step < s.steps || tr.to == toTime && tr.at < s.now
	return m.startMove(tr, behind)
}

// startMove begins tr, first rewinding the run to a position before its target when back;
// it goes on in frames when keyBudget does not finish it.
func (m *Model) startMove(tr travel, back bool) tea.Cmd {
	if back {
		s := m.sim
		fresh, err := s.rewind(tr.step, tr.at, tr.to == toTime)
		if err != nil {
			m.fail(err)
			return nil
		}
		s.close()
		m.sim, m.err = fresh, nil
	}
	tr.light = !back
	m.moving = &tr
	if m.move(keyBudget) {
		return nil
	}
	m.tickGen++
	return tickCmd(m.tickGen)
}

// move goes on with the move in progress for at most budget and reports whether it is over.
func (m *Model) move(budget time.Duration) bool {
	tr, s := m.moving, m.sim
	var stop func() bool
	switch tr.to {
	case toStep:
		stop = func() bool { return s.steps >= tr.step }
	case toTime:
		stop = func() bool { return s.nextEventAt() >= tr.at }
	case toMark:
		stop = func() bool { return len(s.marks[tr.lane]) > tr.marks }
	}
	// A move forward that lasts goes light after a quarter of its budget (a near target is
	// reached observed; a far one refills the logs once, on arrival).
	lightFrom := time.Duration(-1)
	if tr.light {
		lightFrom = budget / 4
	}
	var lightUntil time.Duration // a move to a step or a mark is made step by step
	if tr.to == toTime {
		lightUntil = tr.at
	}
	arrived, err := s.forward(stop, budget, lightFrom, lightUntil)
	m.fail(err)
	if !arrived && m.err == nil {
		m.status = fmt.Sprintf("travelling… t=%s (%s %s)", short(s.now), m.keys.Stop.Help().Key, m.keys.Stop.Help().Desc)
		return false
	}
	m.moving = nil
	if m.err != nil {
		return true
	}
	switch tr.to {
	case toTime:
		m.fail(s.advanceTo(tr.at))
		m.status = tr.done
	case toMark:
		if marks := s.marks[tr.lane]; len(marks) > tr.marks {
			m.status = "at " + marks[len(marks)-1].String()
		} else {
			m.status = "no burst or refusal until the end of the run"
		}
	default:
		m.status = tr.done
	}
	return true
}
