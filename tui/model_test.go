package tui

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/internal/goldenfile"
	"github.com/ratelab/ratelab/scenarios"
)

var update = flag.Bool("update", false, "rewrite tui/testdata/*.golden from the current views")

var goldenFiles = goldenfile.Options{Update: update, Rerun: "go test ./tui"}

func TestMain(m *testing.M) {
	// Goldens are plain text: no colour, so a view must say everything in characters.
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// open returns the workbench on the built-in scenario name at a w×h terminal.
func open(t *testing.T, name string, w, h int) *Model {
	t.Helper()
	sc, err := scenarios.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(sc)
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// press sends keys to m: single characters, or names such as "tab", "enter", "esc",
// "right", "ctrl+u", "space".
func press(m *Model, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		_, cmd = m.Update(keyMsg(k))
		settle(m)
	}
	return cmd
}

func keyMsg(k string) tea.KeyMsg {
	switch k {
	case "space":
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	case "shift+tab":
		return tea.KeyMsg{Type: tea.KeyShiftTab}
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "right":
		return tea.KeyMsg{Type: tea.KeyRight}
	case "left":
		return tea.KeyMsg{Type: tea.KeyLeft}
	case "home":
		return tea.KeyMsg{Type: tea.KeyHome}
	case "end":
		return tea.KeyMsg{Type: tea.KeyEnd}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "ctrl+u":
		return tea.KeyMsg{Type: tea.KeyCtrlU}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

// settle finishes a time-travel move that outlasted keyBudget, as its frames would.
func settle(m *Model) {
	for m.moving != nil || len(m.queued) > 0 {
		for m.moving != nil {
			m.move(time.Second)
		}
		m.drainKeys()
	}
}

// frames plays n frames the way the program would deliver them, without sleeping.
func frames(m *Model, n int) {
	for i := 0; i < n; i++ {
		m.Update(tickMsg{gen: m.tickGen})
	}
}

// checkFits fails when the view has more lines than h or a line wider than w.
func checkFits(t *testing.T, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) > h {
		t.Errorf("view has %d lines, terminal %d", len(lines), h)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got > w {
			t.Errorf("line %d is %d cells wide, terminal %d: %q", i+1, got, w, l)
		}
	}
}

func mustContain(t *testing.T, view string, facts ...string) {
	t.Helper()
	for _, f := range facts {
		if !strings.Contains(view, f) {
			t.Errorf("view lacks %q:\n%s", f, view)
		}
	}
}

// golden compares view with testdata/name.golden, whose first lines (starting "# ") say the
// guarantee it pins. -update rewrites it; a mismatch writes name.golden.got beside it.
func golden(t *testing.T, name, pins, view string) {
	t.Helper()
	var header strings.Builder
	for _, l := range strings.Split(pins, "\n") {
		header.WriteString("# " + l + "\n")
	}
	goldenfile.Compare(t, filepath.Join("testdata", name+".golden"), []byte(header.String()+view+"\n"), goldenFiles)
}

func TestBurstAfterIdleStepped80x24(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	for i := 0; i < 4; i++ {
		if cmd := press(m, "."); cmd != nil {
			t.Fatalf("a step scheduled a command: stepping must not start a tick")
		}
	}
	view := m.View()
	checkFits(t, view, 80, 24)
	// Four events: the first four requests of the 50ms burst, in both lanes at once.
	mustContain(t, view,
		"t=50ms of 250ms", "paused",
		"▸ token-bucket:capacity=3,rate=100/1s  admitted 3/4 · refused 1",
		"leaky-bucket:rate=100/1s  admitted 1/4 · refused 3",
		"TAT 80ms (+30ms) · T 10ms · 0/3 free", // the bucket spent its three accumulated permits
		"TAT 60ms (+10ms) · T 10ms · 0/1 free", // the leaky bucket had one
	)
	// The log wraps a sentence with a two-space indent; read it unwrapped.
	mustContain(t, strings.ReplaceAll(view, "\n  ", " "),
		"t=50ms req #4 (1 permit) rejected by token-bucket: next permit due at 80ms, 30ms ahead; 1 more (T=10ms) would put it 40ms ahead, over the 30ms tolerance")
	golden(t, "burst-after-idle-stepped-80x24",
		"burst-after-idle after four steps at 80×24: both lanes at t=50ms; the token bucket admitted\n"+
			"3 of 4 (its capacity), the leaky bucket 1; the log explains request 4's rejection.", view)
}

func TestPoissonPlayed100x30(t *testing.T) {
	m := open(t, "poisson", 100, 30)
	cmd := press(m, "space")
	if cmd == nil || !m.playing {
		t.Fatal("space did not start playing")
	}
	frames(m, 8) // 8 frames of 50ms at 5s per second: 2s of virtual time
	press(m, "space")
	view := m.View()
	checkFits(t, view, 100, 30)
	mustContain(t, view, "ratelab · poisson", "t=2s of 1m", "paused", "speed 5s/s",
		"token-bucket:capacity=10,rate=100/1s", "leaky-bucket:rate=100/1s",
		"sliding-window:limit=100,window=1s,slots=10", "fixed-window:limit=100,window=1s",
		"warm-up:capacity=10,rate=100/1s,warmup=10s", "concurrency:max=5",
		"window [2s, 3s) · resets in 1s", // the fixed window is at its boundary
		"warming 2s/10s, T 26ms")
	for _, lane := range m.sim.lanes {
		if lane.Now() != m.sim.now {
			t.Errorf("lane %s at %v, workbench at %v: lanes must move in lockstep", lane.Spec().Label(), lane.Now(), m.sim.now)
		}
	}
	golden(t, "poisson-played-100x30",
		"poisson played for 8 frames at 5s/s at 100×30: all six lanes at t=2s, charts, counters and\n"+
			"each limiter's state; the log shows the focused token bucket's last decisions.", view)
}

func TestPausedSchedulesNothing(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	if cmd := m.Init(); cmd != nil {
		t.Fatal("Init scheduled a command: the workbench opens paused")
	}
	if press(m, "space") == nil {
		t.Fatal("play scheduled no frame")
	}
	old := m.tickGen
	if cmd := press(m, "space"); cmd != nil {
		t.Fatal("pause scheduled a command")
	}
	if _, cmd := m.Update(tickMsg{gen: old}); cmd != nil {
		t.Fatal("a frame that arrived after pausing scheduled another: paused must be idle")
	}
	now := m.sim.now
	press(m, "space", "space") // play, pause
	if _, cmd := m.Update(tickMsg{gen: old}); cmd != nil || m.sim.now != now {
		t.Fatal("a frame of an earlier play advanced time or scheduled a frame")
	}
	for _, k := range []string{"+", "-", "tab", "?", "?", "r"} {
		if cmd := press(m, k); cmd != nil {
			t.Errorf("key %q scheduled a command while paused", k)
		}
	}
}

func TestStepAdvancesEveryLaneToTheEarliestEvent(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	press(m, "right")
	if m.sim.now != 50e6 {
		t.Fatalf("after one step t=%v, want 50ms (the first arrival)", m.sim.now)
	}
	for _, lane := range m.sim.lanes {
		if got := lane.Result().Totals.Offered; got != 1 || lane.Now() != m.sim.now {
			t.Errorf("lane %s: offered %d at %v, want 1 at 50ms", lane.Spec().Label(), got, lane.Now())
		}
	}
}

func TestPlayingToTheEndMatchesTheEngine(t *testing.T) {
	for _, name := range []string{"burst-after-idle", "slow-downstream", "retry-storm"} {
		t.Run(name, func(t *testing.T) {
			m := open(t, name, 100, 30)
			for i := 0; i < 20; i++ {
				press(m, "+") // up to max: the frames' chunking must not change any decision
			}
			press(m, "space")
			for i := 0; i < 100000 && m.playing; i++ {
				frames(m, 1)
			}
			if !m.sim.done() || m.playing {
				t.Fatalf("did not reach the horizon: t=%v", m.sim.now)
			}
			sc, _ := scenarios.Get(name)
			res, err := engine.Run(context.Background(), sc, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, lane := range m.sim.lanes {
				if got, want := lane.Result().Totals, res.Lanes[i].Totals; got != want {
					t.Errorf("lane %d: workbench %+v, engine.Run %+v", i, got, want)
				}
			}
			mustContain(t, m.View(), "end of the run")
		})
	}
}

func TestSpeedKeys(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	mustContain(t, m.View(), "speed 10ms/s")
	press(m, "+")
	mustContain(t, m.View(), "speed 20ms/s")
	press(m, "-", "-", "-", "-", "-")
	mustContain(t, m.View(), "speed 1ms/s") // the slowest
	for i := 0; i < 30; i++ {
		press(m, "+")
	}
	mustContain(t, m.View(), "speed max")
}

func TestEditValidatesAndRestarts(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	press(m, ".", ".")
	press(m, "e")
	mustContain(t, m.View(), "edit lane 1", "spec> token-bucket:capacity=3,rate=100/1s")

	press(m, "ctrl+u", "token-bucket:capacity=0,rate=100/1s", "enter")
	view := m.View()
	checkFits(t, view, 80, 24)
	mustContain(t, strings.ReplaceAll(view, "\n", " "), `limiter spec "token-bucket:capacity=0,rate=100/1s": capacity=0: must be at least 1`)
	if got := m.sim.sc.Lanes[0].Label(); got != "token-bucket:capacity=3,rate=100/1s" || m.sim.now != 50e6 {
		t.Fatalf("a bad value changed the lane to %s or restarted (t=%v)", got, m.sim.now)
	}
	golden(t, "edit-error-80x24",
		"editing the token bucket's capacity to 0 at 80×24: the error is shown, the lane and the\n"+
			"run (t=50ms) are unchanged.", view)

	press(m, "ctrl+u", "bogus:x=1", "enter")
	mustContain(t, m.View(), `unknown kind "bogus"`)

	press(m, "ctrl+u", "token-bucket:capacity=5,rate=100/1s", "enter")
	view = m.View()
	mustContain(t, view, "▸ token-bucket:capacity=5,rate=100/1s  admitted 0/0", "t=0s of 250ms",
		"5/5 free", "restarted")
	press(m, ".", ".", ".", ".", ".")
	mustContain(t, m.View(), "admitted 5/5") // capacity 5: the whole burst passes

	press(m, "tab", "e", "esc")
	if m.mode != modeMain || m.sim.sc.Lanes[1].Label() != "leaky-bucket:rate=100/1s" {
		t.Fatal("esc did not cancel the edit unchanged")
	}
}

func TestPickerExplainsAndSwitches(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	press(m, "s")
	view := m.View()
	checkFits(t, view, 80, 24)
	mustContain(t, view, "choose a scenario", "▸ burst-after-idle", "steady", "replay",
		"sit idle for 50ms", "lanes:", "leaky-bucket:rate=100/1s")
	golden(t, "picker-80x24", "the scenario picker at 80×24 on burst-after-idle: every scenario listed, the\n"+
		"selected one's explanation and lanes beside the list.", view)

	press(m, "down", "enter")
	view = m.View()
	mustContain(t, view, "ratelab · boundary-attack", "fixed-window:limit=100,window=1s", "t=0s of 3s")
}

// The ? page lists every key with its meaning and explains every glyph and symbol the
// views draw; at 80×24 it scrolls, and its first page is pinned.
func TestHelpExplainsEveryKeyAndGlyph(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	press(m, "?")
	view := m.View()
	checkFits(t, view, 80, 24)
	mustContain(t, view, "ratelab · help", "space  play/pause", ",/←    step back one event",
		"[      back to the last burst/refusal", "g      go to a typed time", "k          keyed lanes: top keys instead of the chart (again: the chart)", "↑/↓ scroll (lines 1–22 of", "? or esc closes · q quit")
	golden(t, "help-80x24", "the help page (?) at 80×24, first page: the time keys first; ↑/↓ scrolls to the rest.", view)

	page := strings.Join(m.helpLines(80), "\n")
	for _, group := range m.keys.FullHelp() {
		for _, b := range group {
			if !strings.Contains(page, b.Help().Key) || !strings.Contains(strings.ReplaceAll(page, "\n    ", " "), b.Help().Desc) {
				t.Errorf("the help page lacks the key %q (%s)", b.Help().Key, b.Help().Desc)
			}
		}
	}
	// Every glyph and symbol the lanes, states and log draw (lane_view.go, state_view.go).
	for _, glyph := range []string{"▸", "ok", "no", "▁", "█", "TAT", "T", "τ", "●", "▓", "·", "├", "┤",
		"backlog+T", "ramp[", "━", "╸", "~n", "│", "#", "[██░░]", "pool", "queue", "window [", "1:", "req #", "t=",
		"#0 [", "ok/no", "+n more", "total ok", "limit", "×", "max", "store down", "cut off", "down", // fleet_view.go
		"most offered", "most refused", "fairness", "held", "evicted", "full"} { // top_keys.go
		if !strings.Contains(page, glyph) {
			t.Errorf("the help page does not explain %q", glyph)
		}
	}
	for i := 0; i < 100; i++ {
		press(m, "down")
	}
	mustContain(t, m.View(), "req #n", "x shows them exact")
	if press(m, "esc"); m.showHelp {
		t.Error("esc did not close the help")
	}
}

func TestEveryScenarioFitsEverySize(t *testing.T) {
	sizes := [][2]int{{80, 24}, {100, 30}, {132, 43}, {60, 14}, {40, 10}}
	for _, sc := range scenarios.All() {
		m := open(t, sc.Name, 80, 24)
		press(m, ".", ".", ".")
		frames(m, 0)
		press(m, "space")
		frames(m, 3)
		for _, size := range sizes {
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			for _, focus := range []int{0, len(m.sim.lanes) - 1} {
				m.focus = focus
				view := m.View()
				checkFits(t, view, size[0], size[1])
				if size[0] >= 80 && !strings.Contains(view, m.sim.sc.Lanes[focus].Label()) {
					t.Errorf("%s at %v: the focused lane %s is not on screen", sc.Name, size, m.sim.sc.Lanes[focus].Label())
				}
			}
		}
	}
}

func TestKeysReadTogetherActOneByOne(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	press(m, "....") // four steps typed faster than the terminal was read
	if got := m.sim.lanes[0].Result().Totals.Offered; got != 4 {
		t.Fatalf("offered %d after \"....\", want 4 steps", got)
	}
}

func TestSlowDownstreamShowsPoolAndStack100x30(t *testing.T) {
	m := open(t, "slow-downstream", 100, 30)
	press(m, "+", "+", "+", "space") // 20s of virtual time per second: 1s per frame
	frames(m, 15)
	press(m, "space", "tab", "tab")
	view := m.View()
	checkFits(t, view, 100, 30)
	mustContain(t, view, "t=15s of 30s",
		"  token-bucket:capacity=10,rate=10/1s  admitted", // the rate limiter alone: the pool fails
		"pool [", "of 20 in flight",
		"▸ token-bucket:capacity=10,rate=10/1s+concurrency:max=20", // a stack: each stage drawn
		"1:TAT", "2:", "failed 0")
	if got := m.sim.lanes[0].Result().Totals.Failed; got == 0 {
		t.Error("the token bucket alone had no downstream failures by 15s; the scenario says a third fail")
	}
	mustContain(t, strings.ReplaceAll(view, "\n  ", " "), "admitted by all 2 stages; token-bucket:")
	golden(t, "slow-downstream-played-100x30",
		"slow-downstream at t=15s, 100×30, the stacked lane focused: the pool bar in every lane, the\n"+
			"token bucket alone failing at the downstream, the stack's two stages drawn 1: and 2:.", view)
}

func TestEditingPausesThePlay(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	press(m, "space")
	press(m, "e")
	if m.playing {
		t.Fatal("still playing under the editor")
	}
	now := m.sim.now
	if _, cmd := m.Update(tickMsg{gen: m.tickGen}); cmd != nil || m.sim.now != now {
		t.Fatal("a frame ran under the editor")
	}
	press(m, "esc")
	mustContain(t, m.View(), "paused")
}

func TestPickerKeepsAnOpenedFile(t *testing.T) {
	sc, err := scenarios.Get("burst-after-idle")
	if err != nil {
		t.Fatal(err)
	}
	sc.Name = "my-file"
	m, err := New(sc)
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(m, "s")
	mustContain(t, m.View(), "▸ my-file", "steady")
	press(m, "down", "enter") // steady
	mustContain(t, m.View(), "ratelab · steady")
	press(m, "s", "up", "enter") // back to the file, as it was opened
	if m.sim.sc != sc {
		t.Fatal("the opened file's scenario was not reopened")
	}
	mustContain(t, m.View(), "ratelab · my-file")
}

func TestLanesScrollWithTheFocus(t *testing.T) {
	sc, err := scenarios.Get("poisson")
	if err != nil {
		t.Fatal(err)
	}
	sc.Lanes = append(sc.Lanes, sc.Lanes[0], sc.Lanes[1]) // eight lanes: six fit at 80×24
	m, err := New(sc)
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	mustContain(t, m.View(), "lanes 1–6 of 8")
	press(m, "tab", "tab", "tab", "tab", "tab", "tab")
	mustContain(t, m.View(), "lanes 2–7 of 8", "▸ token-bucket")
	press(m, "shift+tab")
	mustContain(t, m.View(), "lanes 2–7 of 8", "▸ concurrency") // still on screen: nothing moves
	for i := 0; i < 5; i++ {
		press(m, "shift+tab")
	}
	mustContain(t, m.View(), "lanes 1–6 of 8", "▸ token-bucket")
}
