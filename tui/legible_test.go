package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/scenarios"
)

// negativeTime is a duration with a minus sign as the views would print it.
var negativeTime = regexp.MustCompile(`(^|[\s\[(=,])-\d+(\.\d+)?(ns|µs|ms|s|m|h)`)

// checkLegible fails when a line of the screen needed the safety truncation (so something
// would be cut where it was not meant to be), when the footer lacks "? help" and "q quit",
// when a visible lane's counters are not there in full, or when a time is negative.
func checkLegible(t *testing.T, m *Model, what string) {
	t.Helper()
	lines := m.screen()
	if len(lines) > m.height {
		t.Errorf("%s: %d lines for a terminal of %d", what, len(lines), m.height)
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got > m.width {
			t.Errorf("%s: line %d is %d cells, the terminal %d: it would be cut\n%q", what, i+1, got, m.width, l)
		}
	}
	view := m.View()
	last := lines[len(lines)-1]
	if !strings.Contains(last, "?") || !strings.Contains(last, "q quit") || !m.showHelp && !strings.Contains(last, "? help") {
		t.Errorf("%s: the footer %q lacks ? and q", what, last)
	}
	if !m.showHelp {
		_, visible := m.laneLayout(len(m.footer(m.width)))
		for i := m.top; i < m.top+visible && i < len(m.sim.lanes); i++ {
			tot := m.sim.lanes[i].Result().Totals
			counters := fmt.Sprintf("admitted %d/%d · refused %d", tot.Admitted, tot.Offered, tot.Refused)
			if !strings.Contains(view, counters) {
				t.Errorf("%s: lane %d's counters %q are not on screen in full:\n%s", what, i+1, counters, view)
			}
		}
	}
	if loc := negativeTime.FindString(view); loc != "" {
		t.Errorf("%s: a negative time %q on screen:\n%s", what, loc, view)
	}
}

// Every built-in, at 80×24 and 120×40, opened, played, stepped back, each lane focused in
// turn and with the help page open: nothing is cut by the terminal's edge, the footer
// always says ? and q, the counters are whole, no time is negative.
func TestEveryScreenIsLegible(t *testing.T) {
	for _, sc := range scenarios.All() {
		for _, size := range [][2]int{{80, 24}, {120, 40}} {
			m := open(t, sc.Name, size[0], size[1])
			what := fmt.Sprintf("%s at %d×%d", sc.Name, size[0], size[1])
			checkLegible(t, m, what+" opened")
			press(m, ".", ".", ".", "space")
			frames(m, 7)
			press(m, "space", "left")
			for range m.sim.lanes {
				checkLegible(t, m, fmt.Sprintf("%s at t=%v, lane %d focused", what, m.sim.now, m.focus+1))
				press(m, "tab")
			}
			press(m, "x")
			checkLegible(t, m, what+" exact")
			press(m, "?")
			checkLegible(t, m, what+" help")
			press(m, "end", "?", "end")
			checkLegible(t, m, what+" help at its end")
		}
	}
}

// A long lane name is elided; the numbers beside it stay whole.
func TestALongNameIsElidedNotTheCounters(t *testing.T) {
	sc, err := scenarios.Get("retry-storm")
	if err != nil {
		t.Fatal(err)
	}
	sc.Lanes[0].Name = "a lane whose name is far too long for any terminal: " + strings.Repeat("token-bucket ", 5)
	m, err := New(sc)
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(m, "end")
	checkLegible(t, m, "retry-storm with a long name")
	view := m.View()
	mustContain(t, view, "▸ a lane whose na…  admitted 2006/2355 · refused 0 · gave up 349 · retried 11482",
		"  backoff + jitter  admitted 2009/2355 · refused 0 · gave up 346 · retried 4336",
		"backlog+T 208.3ms > τ 200ms: refused",
		"── log · a lane whose name is far too long for any terminal: token-bucket to… ──")
	// The focused lane's client loop takes most of its panel (loopLines): the first lane's
	// drawing shows whole once another has the focus.
	press(m, "tab")
	checkLegible(t, m, "retry-storm with a long name, the second lane focused")
	mustContain(t, m.View(), "TAT 20.16s (+158.3ms) · 4/20 free") // T gave way to the permits' count
}

func TestBelow80x24SaysTooSmall(t *testing.T) {
	m := open(t, "poisson", 80, 24)
	for _, size := range [][2]int{{79, 24}, {80, 23}, {40, 10}, {20, 5}} {
		m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		view := m.View()
		checkFits(t, view, size[0], size[1])
		mustContain(t, strings.ReplaceAll(view, "\n", " "), "terminal too small", fmt.Sprintf("this one is %d×%d", size[0], size[1]))
		if strings.Contains(view, "admitted") {
			t.Errorf("%v: lanes drawn in a too-small terminal", size)
		}
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	if strings.Contains(m.View(), "too small") {
		t.Error("80×24 is big enough")
	}
	if press(m, "q") == nil {
		t.Error("q does not quit")
	}
}

func TestFitWordsCutsBetweenWords(t *testing.T) {
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"backlog+T 40ms > τ 30ms: 1 more refused", 80, "backlog+T 40ms > τ 30ms: 1 more refused"},
		{"backlog+T 40ms > τ 30ms: 1 more refused", 30, "backlog+T 40ms > τ 30ms: 1…"},
		{"window [1s, 2s) · resets in 430ms", 20, "window [1s, 2s)…"},
		{"supercalifragilistic word", 10, "supercali…"},
	} {
		if got := fitWords(c.in, c.w); got != c.want || ansi.StringWidth(got) > c.w {
			t.Errorf("fitWords(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
}

func TestReadableRoundsAndNeverGoesNegative(t *testing.T) {
	in := "t=1.0105263s live slots [-900ms, 100ms) hold 3; next permit due at 2.022376458s, 194.712345ms ahead; rate=100/1s T=10ms #4"
	if got, want := readable(in, false), "t=1.011s live slots [0s, 100ms) hold 3; next permit due at 2.022s, 194.7ms ahead; rate=100/1s T=10ms #4"; got != want {
		t.Errorf("rounded:\n got %s\nwant %s", got, want)
	}
	if got, want := readable(in, true), "t=1.0105263s live slots [0s, 100ms) hold 3; next permit due at 2.022376458s, 194.712345ms ahead; rate=100/1s T=10ms #4"; got != want {
		t.Errorf("exact:\n got %s\nwant %s", got, want)
	}
}

// x shows the exact durations in the log, one key away from the rounded ones.
func TestExactIsOneKeyAway(t *testing.T) {
	m := open(t, "poisson", 100, 30)
	press(m, "g", "ctrl+u", "2s", "enter")
	rounded := strings.ReplaceAll(m.View(), "\n  ", " ")
	mustContain(t, rounded, "t=1.998s req #171 (1 permit) admitted by token-bucket: next permit due at 2.022s, 24.1ms ahead")
	press(m, "x")
	exact := strings.ReplaceAll(m.View(), "\n  ", " ")
	mustContain(t, exact, "next permit due at 2.022376458s, 24.12076ms ahead", "durations exact")
	press(m, "x")
	mustContain(t, strings.ReplaceAll(m.View(), "\n  ", " "), "24.1ms ahead", "rounded for reading")
}

// Poisson's six lanes at 80×24 after 10s: every lane on screen with its counters whole, its
// state drawn, the footer with ? and q.
func TestPoissonGolden80x24(t *testing.T) {
	m := open(t, "poisson", 80, 24)
	press(m, "g", "ctrl+u", "10s", "enter")
	m.status = ""
	view := m.View()
	checkLegible(t, m, "poisson at 10s")
	mustContain(t, view, "ratelab · poisson  t=10s of 1m  ❚❚ paused  speed 5s/s",
		"▸ token-bucket:capacity=10,rate=100/1s  admitted 887/909 · refused 22",
		"  leaky-bucket:rate=100/1s  admitted ", "  sliding-window:limit=100,window=1s,slots=10  admitted ",
		"  fixed-window:limit=100,window=1s  admitted ", "  warm-up:capacity=10,rate=100/1s,warmup=10s  admitted ",
		"  concurrency:max=5  admitted ", "window [10s, 11s) · resets in 1s",
		"space play · . step · , back · [ ] jump · g go to · tab lane     ? help · q quit")
	golden(t, "poisson-10s-80x24", "poisson at t=10s at 80×24: all six lanes, each title with its counters whole;\n"+
		"the log shows the focused token bucket's newest decision.", view)
}

// Retry-storm at 120×40 at its end: the request outcomes in the header's words (admitted,
// refused, gave up; retried counts attempts), the log rounded for reading.
func TestRetryStormGolden120x40(t *testing.T) {
	m := open(t, "retry-storm", 120, 40)
	press(m, "end")
	m.status = ""
	view := m.View()
	checkLegible(t, m, "retry-storm at its end")
	mustContain(t, view, "ratelab · retry-storm  t=20s of 20s",
		"▸ immediate retry  admitted 2006/2355 · refused 0 · gave up 349 · retried 11482",
		"  backoff + jitter  admitted 2009/2355 · refused 0 · gave up 346 · retried 4336",
		"── log · immediate retry ─",
		"? help · q quit")
	golden(t, "retry-storm-end-120x40", "retry-storm at its end at 120×40: each lane's requests end as admitted or gave up\n"+
		"(2006 + 349 = 2355 offered); retries are attempts, counted apart.", view)
}
