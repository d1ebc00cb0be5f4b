package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
)

// totals is every lane's Totals at the model's position.
func totals(m *Model) []engine.Totals {
	var out []engine.Totals
	for _, lane := range m.sim.lanes {
		out = append(out, lane.Result().Totals)
	}
	return out
}

// exportAndRun writes the session with w, loads the file back and runs it to its horizon.
func exportAndRun(t *testing.T, m *Model) []engine.Totals {
	t.Helper()
	m.ExportDir = t.TempDir()
	press(m, "w")
	path := filepath.Join(m.ExportDir, m.sim.sc.Name+"-session.yaml")
	mustContain(t, strings.ReplaceAll(m.View(), "\n", " "), "wrote "+m.ExportDir)
	sc, err := scenarios.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(context.Background(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []engine.Totals
	for _, lane := range res.Lanes {
		out = append(out, lane.Totals)
	}
	return out
}

// b sends a burst at the current time; it is part of the run: what came before is
// unchanged, a step back before it shows the run without it, r replays it, and the
// session's file (w) reproduces the run exactly.
func TestBurstIsRecordedInTheRun(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	press(m, "g", "ctrl+u", "100ms", "enter")
	before := totals(m)
	press(m, "b")
	mustContain(t, m.View(), "sent a burst of 10 requests at t=100ms", "t=100ms of 250ms")
	if got := totals(m); got[0] != before[0] || got[1] != before[1] {
		t.Fatalf("sending a burst changed what came before it: %+v, was %+v", got, before)
	}
	press(m, ".")
	mustContain(t, m.View(), "admitted 5/7 · refused 2", "t=100ms req #7 (1 permit) admitted by token-bucket")
	press(m, "end")
	mustContain(t, m.View(), "admitted 11/23", "admitted 5/23") // 13 requests of the scenario, 10 sent
	atEnd := totals(m)

	press(m, "g", "ctrl+u", "90ms", "enter")
	mustContain(t, m.View(), "admitted 4/6 · refused 2") // before the burst: as without it
	press(m, "r", "end")
	if got := totals(m); got[0] != atEnd[0] || got[1] != atEnd[1] {
		t.Fatalf("r did not replay the burst: %+v, want %+v", got, atEnd)
	}
	if got := exportAndRun(t, m); got[0] != atEnd[0] || got[1] != atEnd[1] {
		t.Fatalf("the session's file runs to %+v, the workbench %+v", got, atEnd)
	}

	// B sets the size; a bad size is refused with the reason.
	press(m, "B", "ctrl+u", "x", "enter")
	mustContain(t, m.View(), `"x" is not a number of requests`)
	press(m, "ctrl+u", "0", "enter")
	mustContain(t, m.View(), "0: a burst is 1 to 100000 requests")
	press(m, "ctrl+u", "3", "enter", "home", "b", "end")
	mustContain(t, m.View(), "admitted 14/26") // three more at 0: the full bucket admits them
}

// A burst sent right after a step at that instant comes after the events that ran, which
// stay as they were.
func TestBurstAfterAStepKeepsTheStep(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	press(m, ".", ".")
	before := totals(m)
	steps := m.sim.steps
	press(m, "b")
	if got := totals(m); got[0] != before[0] || m.sim.steps != steps {
		t.Fatalf("after b: %+v at event %d, want %+v at %d", got[0], m.sim.steps, before[0], steps)
	}
	mustContain(t, m.View(), "sent a burst of 10 requests at t=50ms")
	if at := m.sim.sc.Sources[len(m.sim.sc.Sources)-1].Script[0].At; at != 50e6+1 {
		t.Fatalf("the burst is at %v, want 1ns after the step's 50ms", at)
	}
}

// ↑/↓ change the running source's rate from now on, also recorded in the run.
func TestRateChangesLive(t *testing.T) {
	m := open(t, "poisson", 100, 30)
	press(m, "g", "ctrl+u", "10s", "enter")
	before := totals(m)
	press(m, "up")
	mustContain(t, m.View(), "source 1: poisson 118.75/s from t=10s (was 95/s)")
	press(m, "up", "up")
	if n := len(m.sim.sc.Sources); n != 2 {
		t.Fatalf("%d sources after three changes at one instant, want 2 (the source split once)", n)
	}
	mustContain(t, m.View(), "poisson 185.546875/s from t=10s")
	if got := totals(m); got[0] != before[0] {
		t.Fatalf("the change altered the past: %+v, was %+v", got[0], before[0])
	}
	press(m, "end")
	atEnd := totals(m)
	if atEnd[0].Offered < 5689+4000 {
		t.Fatalf("offered %d by the end: the rate did not rise (5689 without the change)", atEnd[0].Offered)
	}
	for i, got := range exportAndRun(t, m) {
		if got != atEnd[i] {
			t.Errorf("lane %d: the session's file runs to %+v, the workbench %+v", i, got, atEnd[i])
		}
	}
	press(m, "home", "down")
	mustContain(t, m.View(), "poisson 76/s from t=0s (was 95/s)") // at 0 the rate changes in place
}

// a adds a lane, d duplicates the focused one into the editor: the new lane joins at the
// current time, as if it had run from the start.
func TestAddAndDuplicateLanes(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	press(m, "g", "ctrl+u", "100ms", "enter")
	press(m, "d")
	mustContain(t, m.View(), "new lane 3", "spec> token-bucket:capacity=3,rate=100/1s")
	press(m, "ctrl+u", "token-bucket:capacity=5,rate=100/1s", "enter")
	view := m.View()
	mustContain(t, view, "lane 3 added: token-bucket:capacity=5,rate=100/1s", "t=100ms of 250ms",
		"▸ token-bucket:capacity=5,rate=100/1s  admitted 6/6 · refused 0", // capacity 5: the burst passes
		"  token-bucket:capacity=3,rate=100/1s  admitted 4/6 · refused 2")
	checkLegible(t, m, "three lanes")
	press(m, "a", "bogus", "enter")
	mustContain(t, m.View(), `unknown kind "bogus"`)
	press(m, "esc")
	if len(m.sim.lanes) != 3 {
		t.Fatalf("%d lanes after a cancelled add", len(m.sim.lanes))
	}
	press(m, "a", "token-bucket:capacity=1,rate=1000/2000000h", "enter")
	mustContain(t, m.View(), "lane not added:") // its stage passes its own check, not the scenario's: said, not silent
	if len(m.sim.lanes) != 3 {
		t.Fatalf("%d lanes after an add the scenario refused", len(m.sim.lanes))
	}
	press(m, "a", "fixed-window:limit=4,window=100ms", "enter", "end")
	mustContain(t, m.View(), "▸ fixed-window:limit=4,window=100ms  admitted")
	atEnd := totals(m)
	for i, got := range exportAndRun(t, m) {
		if got != atEnd[i] {
			t.Errorf("lane %d: the session's file runs to %+v, the workbench %+v", i, got, atEnd[i])
		}
	}
}
