package tui

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
)

// The client loop a retrying lane shows at 80×24 — goodput, amplification, the herd's
// synchrony, the time to success and the end-to-end latency, p50 and p99 — is what `run`
// measures of the same scenario cut at the same time: the same numbers (engine.Loop, every
// field) and the same words under each lane's title, all five when the lane has the focus
// and the first of them (as many as the drawing leaves room for) when not, at a third, at
// half and at the end of retry-storm and header-paced.
func TestLoopMeasuresAreRuns(t *testing.T) {
	for _, name := range []string{"retry-storm", "header-paced"} {
		t.Run(name, func(t *testing.T) {
			m := open(t, name, 80, 24)
			h := m.sim.sc.Horizon
			for _, at := range []time.Duration{h / 3, h / 2, h} {
				if at == h {
					press(m, "end")
				} else {
					press(m, "g", "ctrl+u", at.String(), "enter")
				}
				if m.sim.now != at {
					t.Fatalf("at t=%v, not %v", m.sim.now, at)
				}
				sc, err := scenarios.Get(name)
				if err != nil {
					t.Fatal(err)
				}
				sc.Horizon = at
				run, err := engine.Run(context.Background(), sc, nil)
				if err != nil {
					t.Fatal(err)
				}
				retried := false
				for i, lane := range m.sim.lanes {
					for m.focus != i {
						press(m, "tab")
					}
					screen := strings.Split(ansi.Strip(screenOf(m)), "\n")
					res := lane.Result()
					got, want := loopAt(&res, m.sim.now), run.Lanes[i].Loop
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("t=%v, lane %d: the workbench's loop %+v, run's %+v", at, i+1, got, want)
					}
					retried = retried || want.HerdPeak > 0
					title := -1
					for k, l := range screen {
						if strings.Contains(l, lane.Spec().Label()+"  admitted") {
							title = k
						}
					}
					if title < 0 {
						t.Fatalf("t=%v: lane %d (%s) is not on the screen\n%s", at, i+1, lane.Spec().Label(), strings.Join(screen, "\n"))
					}
					laneH, _ := m.laneLayout(len(m.footer(80)))
					wantLines := packLines(loopItems(want), stateWidth(80), laneH-1)
					if strings.Count(strings.Join(wantLines, " · "), " · ") != 4 {
						t.Fatalf("t=%v, lane %d: the five measures do not fit a lane of %d rows at 80 columns: %q", at, i+1, laneH, wantLines)
					}
					next := title + 1
					for _, w := range wantLines {
						if !strings.Contains(strings.Join(screen, "\n"), w) {
							t.Fatalf("t=%v, lane %d: %q is not on the screen\n%s", at, i+1, w, strings.Join(screen, "\n"))
						}
						for next < len(screen) && !strings.HasSuffix(screen[next], "│ "+w) {
							next++
						}
						if next-title > len(wantLines)+2 || next == len(screen) {
							t.Fatalf("t=%v, lane %d: %q is not under the title\n%s", at, i+1, w, strings.Join(screen, "\n"))
						}
					}
				}
				if name == "retry-storm" { // another lane's drawing leaves it one row: goodput and amplification
					press(m, "tab")
					screen := ansi.Strip(screenOf(m))
					for i, lane := range m.sim.lanes {
						res := lane.Result()
						if w := packLines(loopItems(loopAt(&res, at)), stateWidth(80), 1)[0]; i != m.focus && !strings.Contains(screen, "│ "+w+"\n") {
							t.Fatalf("t=%v: lane %d, not focused, lacks %q\n%s", at, i+1, w, screen)
						}
					}
				}
				if !retried {
					t.Fatalf("t=%v: no lane retried: the herd went untested", at)
				}
			}
		})
	}
}

// A lane whose clients drop a refusal shows no loop: poisson's are all such.
func TestNoLoopForDroppingClients(t *testing.T) {
	m := open(t, "poisson", 80, 24)
	press(m, "g", "ctrl+u", "5s", "enter")
	if screen := screenOf(m); strings.Contains(screen, "goodput") || strings.Contains(screen, "amplification") {
		t.Fatalf("a dropping client's lane shows the loop:\n%s", screen)
	}
}
