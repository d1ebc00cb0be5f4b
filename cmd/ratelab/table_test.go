package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
)

func runScenario(t *testing.T, name string, lanes ...string) (*engine.Scenario, *engine.Results) {
	t.Helper()
	sc, err := scenarios.Get(name)
	require.NoError(t, err)
	if len(lanes) > 0 {
		sc.Lanes = nil
		for _, l := range lanes {
			lane, err := parseLane(l)
			require.NoError(t, err)
			sc.Lanes = append(sc.Lanes, lane)
		}
	}
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	return sc, res
}

// The terminal table fits the terminal: at 80 columns and at 160, for every built-in
// scenario, no line is wider than the terminal, and every lane's numbers are there.
func TestTermTableFitsTheWidth(t *testing.T) {
	for _, name := range scenarios.Names() {
		sc, res := runScenario(t, name)
		rows := summarize(sc, res)
		for _, width := range []int{80, 160} {
			t.Run(fmt.Sprintf("%s/%d", name, width), func(t *testing.T) {
				out := termTable(sc, res, width)
				for _, line := range strings.Split(out, "\n") {
					assert.LessOrEqual(t, ansi.StringWidth(line), width, "%q", line)
				}
				plain := ansi.Strip(out)
				waits := false
				for _, r := range rows {
					waits = waits || r.maxWait != "0s"
				}
				for _, r := range rows {
					assert.Contains(t, plain, r.admitted)
					if waits {
						assert.Contains(t, plain, r.p999)
						assert.Contains(t, plain, r.maxWait)
					}
				}
				assert.Equal(t, waits, strings.Contains(plain, "p99.9"), "the wait columns are shown when some lane waits")
			})
		}
	}
}

func TestTermTableLayouts(t *testing.T) {
	sc, res := runScenario(t, "poisson")
	plain := func(width int) string { return ansi.Strip(termTable(sc, res, width)) }

	wide := plain(0)
	assert.Contains(t, wide, "│ sliding-window:limit=100,window=1s,slots=10 │", "unknown width: the full table")
	assert.Contains(t, wide, "max in window")
	assert.Equal(t, wide, plain(300), "room enough: the full table")

	// poisson's client drops refused requests: no lane waits, so the table has no wait
	// columns and fits 160 columns in full.
	assert.NotContains(t, wide, "p50")
	assert.Equal(t, wide, plain(160), "160 columns: the full table")

	at140 := plain(140)
	assert.Contains(t, at140, "│ sliding-window:limit=100,window=1s,slots=10 │", "140 columns: every lane in a row")
	assert.Contains(t, at140, "│ max/win │", "abbreviated headers")
	assert.Contains(t, at140, "max/win: most admitted in one window", "explained")

	at120 := plain(120)
	assert.Contains(t, at120, "  3  sliding-window:limit=100,window=1s,slots=10\n", "numbered lanes, named in a legend")

	at80 := plain(80)
	assert.Contains(t, at80, "\nsliding-window:limit=100,window=1s,slots=10\n  offered 5689", "80 columns: one block per lane")
	assert.Contains(t, at80, "max in window 109")
	assert.NotContains(t, at80, "│")
	// The blocks line up: every lane's first line of numbers has its items in the same places.
	var firsts []string
	for _, l := range strings.Split(at80, "\n") {
		if strings.HasPrefix(l, "  offered") {
			firsts = append(firsts, l)
		}
	}
	require.Len(t, firsts, 6)
	for _, l := range firsts {
		assert.Equal(t, strings.Index(firsts[0], "admitted"), strings.Index(l, "admitted"), l)
	}
}

// A lane whose name is wider than the terminal is elided, not wrapped.
func TestTermTableElidesALongName(t *testing.T) {
	sc, res := runScenario(t, "steady", "a-very-long-lane-name-that-goes-on-and-on-and-on-past-the-edge-of-the-screen=leaky-bucket:rate=100/1s")
	out := termTable(sc, res, 60)
	for _, line := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, ansi.StringWidth(line), 60, "%q", line)
	}
	assert.Contains(t, out, "a-very-long-lane-name-that-goes-on")
	assert.Contains(t, out, "…")
}

// The real binary in a real terminal (tmux) measures it: at 80 columns the table is blocks
// that need no wrapping, at 160 a table, and no line is wider than the terminal (capture-pane
// -J joins the lines the terminal wrapped, so a wrapped one would show).
func TestBinaryTableFitsTheTerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	bin := ratelabBinary(t)
	for _, width := range []int{80, 160} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			socket := fmt.Sprintf("ratelab-table-%d-%d", os.Getpid(), width)
			tmux := func(args ...string) (string, error) {
				out, err := exec.Command("tmux", append([]string{"-L", socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
				return string(out), err
			}
			t.Cleanup(func() { _, _ = tmux("kill-server") })
			out, err := tmux("new-session", "-d", "-s", "rl", "-x", fmt.Sprint(width), "-y", "60",
				"env TERM=xterm-256color "+bin+" run poisson; echo END-OF-RUN; sleep 30")
			require.NoError(t, err, out)
			screen := ""
			deadline := time.Now().Add(15 * time.Second)
			for !strings.Contains(screen, "END-OF-RUN") {
				require.False(t, time.Now().After(deadline), "the run never finished:\n%s", screen)
				time.Sleep(50 * time.Millisecond)
				screen, _ = tmux("capture-pane", "-p", "-J", "-t", "rl")
			}
			for _, line := range strings.Split(screen, "\n") {
				assert.LessOrEqual(t, ansi.StringWidth(line), width, "%q", line)
			}
			assert.Contains(t, screen, "poisson — seed 1, 1m of virtual time")
			if width == 80 {
				assert.Contains(t, screen, "\nwarm-up:capacity=10,rate=100/1s,warmup=10s\n  offered 5689")
			} else {
				assert.Contains(t, screen, "│ warm-up:capacity=10,rate=100/1s,warmup=10s  │    5689 │")
			}
		})
	}
}
