package tui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
)

// rateStep is what ↑ multiplies a source's rate by (↓ divides): five presses double it
// (1.25⁵ ≈ 3.05; three presses ≈ 1.95).
const rateStep = engine.RateStep

// maxBurst is the largest burst b sends: more would be a trace, not a burst.
const maxBurst = engine.MaxBurst

// The workbench changes traffic by changing the scenario, never a lane: what b and ↑/↓ do is
// written into m.sim.sc (a script source of the sent bursts; a source split at the moment
// its rate changed), and the run is re-simulated to where it was. The engine is
// deterministic and every change lies at or after the current time, so the re-simulation
// repeats every decision made so far, and the change plays from now on: r replays it, w
// writes it out, and a step back before it shows the run without it.

// injectionAt is the instant a change made now takes effect: now, unless events at now have
// already run (a step landed on them), then 1ns later, so that none of those is undone.
func (s *sim) injectionAt() time.Duration {
	if s.steps > 0 && s.lastAt == s.now {
		return s.now + 1
	}
	return s.now
}

// reSimulate rebuilds the run on the changed scenario and returns to the position it had:
// every event before at is the same in the changed run.
func (m *Model) reSimulate(at time.Duration, status string) tea.Cmd {
	s := m.sim
	tr := travel{to: toTime, at: s.now, done: status}
	if at > s.now {
		tr = travel{to: toStep, step: s.steps, done: status}
	}
	// The lanes' checkpoints are of the scenario before the change (its sources are built
	// into them), and so are the observer's points from at on; those before at still hold.
	s.ckpts = nil
	for len(s.points) > 0 && s.points[len(s.points)-1].lastAt >= at {
		s.points = s.points[:len(s.points)-1]
	}
	return m.startMove(tr, true)
}

// burst sends burstSize requests at the current time: they are added to the scenario's
// script source of injected arrivals (made on the first burst).
func (m *Model) burst() tea.Cmd {
	s := m.sim
	if s.done() {
		m.status = "the run is over: go back (←, home, g) to send a burst inside it"
		return nil
	}
	at := s.injectionAt()
	k, err := engine.InjectBurst(s.sc, m.injected, at, m.burstSize)
	if err != nil {
		m.fail(err)
		return nil
	}
	m.injected = k
	return m.reSimulate(at, fmt.Sprintf("sent a burst of %d requests at t=%s (B sets the size; w writes the session)", m.burstSize, short(at)))
}

// changeRate multiplies the rate of the first flat-rate source active now (constant or
// Poisson) by factor from now on (engine.ChangeRate: the source ends now and a copy at the
// new rate starts).
func (m *Model) changeRate(factor float64) tea.Cmd {
	s := m.sim
	if s.done() {
		m.status = "the run is over: go back (←, home, g) to change a rate inside it"
		return nil
	}
	at := s.injectionAt()
	c, err := engine.ChangeRate(s.sc, at, factor)
	switch {
	case errors.Is(err, engine.ErrNoFlatSource):
		m.status = "no source with a flat rate (constant or poisson) is active now: ↑/↓ change those"
		return nil
	case err != nil:
		m.status = err.Error()
		return nil
	}
	if err := s.sc.Validate(); err != nil {
		m.fail(err)
		return nil
	}
	return m.reSimulate(at, c.String())
}

// parseBurstSize reads the burst size prompt.
func parseBurstSize(text string) (int, error) {
	text = strings.TrimSpace(text)
	n, err := strconv.Atoi(text)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a number of requests (e.g. 10)", text)
	case n < 1 || n > maxBurst:
		return 0, fmt.Errorf("%d: a burst is 1 to %d requests", n, maxBurst)
	}
	return n, nil
}

// addLane appends lane to the scenario and re-simulates to the current time: the new lane
// shows what it would have done from the start, beside the others.
func (m *Model) addLane(lane engine.LaneSpec, what string) tea.Cmd {
	sc := m.sim.sc
	sc.Lanes = append(sc.Lanes, lane)
	if err := sc.Validate(); err != nil {
		sc.Lanes = sc.Lanes[:len(sc.Lanes)-1]
		// The editor has closed (a, enter) or never opened (d on a lane built in code): the
		// error goes on the workbench's status line, where the lane would have been announced
		// (a stage whose window passes its own Validate but not the scenario's, 1000/2000000h).
		m.fail(fmt.Errorf("lane not added: %w", err))
		return nil
	}
	m.focus = len(sc.Lanes) - 1
	at := m.sim.injectionAt()
	fresh, err := newSim(sc)
	if err != nil {
		sc.Lanes = sc.Lanes[:len(sc.Lanes)-1]
		m.fail(err)
		return nil
	}
	m.sim.close()
	m.sim, m.err = fresh, nil
	m.moving = &travel{to: toTime, at: at, done: fmt.Sprintf("lane %d added: %s (e edits it)", m.focus+1, what), light: true}
	if m.move(keyBudget) {
		return nil
	}
	m.tickGen++
	return tickCmd(m.tickGen)
}

// export writes the session's scenario (the lanes as edited, the traffic with what was
// injected) as a YAML file that `ratelab run` and `ratelab tui` load back.
func (m *Model) export() {
	sc := m.sim.sc
	data, err := scenarios.YAML(sc)
	if err != nil {
		m.status = "cannot write this session: " + err.Error()
		return
	}
	path := filepath.Join(m.ExportDir, sc.Name+"-session.yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		m.status = "cannot write the session: " + err.Error()
		return
	}
	m.status = fmt.Sprintf("wrote %s: ratelab run %s replays this session", path, path)
}
