package tui

import (
	"context"
	"fmt"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
	"strings"
	"testing"
	"time"
)

// screenOf is the view without the footer's status line, which says how a position was
// reached: two ways to one position must draw the same screen above it.
func screenOf(m *Model) string {
	m.status = ""
	return m.View()
}

// A step back is the state the forward run had one event earlier: the same counters,
// limiter states, charts and log, whether the position was reached by playing, stepping,
// or going back.
func TestStepBackIsTheEarlierState(t *testing.T) {
	for _, name := range []string{"burst-after-idle", "poisson", "retry-storm", "slow-downstream"} {
		t.Run(name, func(t *testing.T) {
			m := open(t, name, 100, 30)
			press(m, "space")
			frames(m, 3)
			press(m, "space")
			press(m, ".", ".", ".", ".", ".")
			var screens []string
			var steps []uint64
			for i := 0; i < 4; i++ {
				screens = append(screens, screenOf(m))
				steps = append(steps, m.sim.steps)
				press(m, ".")
			}
			for i := 3; i >= 0; i-- {
				press(m, "left")
				if m.sim.steps != steps[i] {
					t.Fatalf("after %d steps back at event %d, want %d", 4-i, m.sim.steps, steps[i])
				}
				if got := screenOf(m); got != screens[i] {
					t.Fatalf("step back %d: the screen differs from the forward run's\nforward:\n%s\nback:\n%s", 4-i, screens[i], got)
				}
			}
			// A fresh run stepped as far draws the same screen too.
			fresh := open(t, name, 100, 30)
			for fresh.sim.steps < steps[0] {
				press(fresh, ".")
			}
			if fresh.sim.now != m.sim.now || screenOf(fresh) != screens[0] {
				t.Fatalf("a fresh run stepped to event %d is at %v, the travelled one at %v", steps[0], fresh.sim.now, m.sim.now)
			}
		})
	}
}

func TestJumpsBetweenBurstsAndRefusals(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	press(m, "]")
	mustContain(t, m.View(), "at the burst at t=50ms (event 1)", "t=50ms of 250ms", "admitted 1/1")
	press(m, "]") // the token bucket admits 3 of the burst, refuses the 4th
	mustContain(t, m.View(), "at the refusal at t=50ms (event 4)", "admitted 3/4 · refused 1")
	press(m, "]")
	mustContain(t, m.View(), "at the burst at t=80ms")
	press(m, "[")
	mustContain(t, m.View(), "back to the refusal at t=50ms (event 4)", "admitted 3/4 · refused 1")
	press(m, "[", "[")
	mustContain(t, m.View(), "no earlier burst or refusal in this lane", "t=50ms of 250ms")
	press(m, "tab", "]") // the leaky bucket refuses the burst's second request
	mustContain(t, m.View(), "at the refusal at t=50ms (event 2)")
	for i := 0; i < 20 && !m.sim.done(); i++ {
		press(m, "]")
	}
	mustContain(t, m.View(), "no burst or refusal until the end of the run", "t=250ms of 250ms")
}

func TestHomeEndAndSeek(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	press(m, "end")
	mustContain(t, m.View(), "t=250ms of 250ms", "at the end of the run", "admitted 8/13")
	press(m, "home")
	mustContain(t, m.View(), "t=0s of 250ms", "back at the start", "admitted 0/0")
	press(m, "left")
	mustContain(t, m.View(), "at the start: nothing to step back to")

	press(m, "g")
	mustContain(t, m.View(), "seek to t=")
	press(m, "1")
	press(m, "enter")
	mustContain(t, m.View(), `"1" is not a time: it needs a unit`)
	press(m, "ctrl+u", "1s", "enter")
	mustContain(t, m.View(), "1s: the run ends at 250ms")
	press(m, "ctrl+u", "-1ms", "enter")
	mustContain(t, m.View(), "-1ms: the run starts at 0")
	press(m, "ctrl+u", "151ms", "enter")
	view := m.View()
	mustContain(t, view, "t=151ms of 250ms", "at t=151ms")
	press(m, "g", "ctrl+u", "60ms", "enter") // backwards: re-simulated from 0
	mustContain(t, m.View(), "t=60ms of 250ms", "admitted 3/5 · refused 2")
	press(m, "g", "esc")
	if m.mode != modeMain || m.sim.now != 60*time.Millisecond {
		t.Fatal("esc did not cancel the seek")
	}
}

// A move longer than keyBudget goes on in frames, esc stops it, and nothing else runs under it.
func TestLongMoveGoesOnInFrames(t *testing.T) {
	m := open(t, "poisson", 100, 30)
	m.moving = &travel{to: toTime, at: m.sim.sc.Horizon, done: "at the end of the run"}
	if m.move(time.Nanosecond) {
		t.Skip("the whole minute ran in the first 64 steps")
	}
	mustContain(t, m.View(), "travelling… t=")
	m.Update(keyMsg("space"))
	m.Update(keyMsg("."))
	if m.playing || m.moving == nil || len(m.queued) != 2 {
		t.Fatalf("a key other than esc acted during the move (%d wait)", len(m.queued))
	}
	m.moving.at = 2 * time.Second
	for i := 0; i < 1000 && m.moving != nil; i++ {
		m.Update(tickMsg{gen: m.tickGen})
	}
	// Arrived at 2s, then the keys that waited: space plays, . pauses and steps one event.
	if m.playing || len(m.queued) != 0 || m.sim.now <= 2*time.Second || m.sim.now > 2*time.Second+50*time.Millisecond {
		t.Fatalf("the move and its keys ended at %v (playing %v, %d keys wait), want one event past 2s", m.sim.now, m.playing, len(m.queued))
	}
	m.moving = &travel{to: toTime, at: m.sim.sc.Horizon}
	m.Update(keyMsg("esc"))
	if m.moving != nil || !strings.Contains(m.View(), "stopped at t=2.0") {
		t.Fatalf("esc did not stop the move:\n%s", m.View())
	}
}

// BenchmarkStepBack is one step back from near the end of the one-minute poisson scenario
// (six lanes, about 70,000 events): a re-simulation from 0. The issue asks under 100ms.
func BenchmarkStepBack(b *testing.B) {
	m := open(&testing.T{}, "poisson", 100, 30)
	press(m, "g", "ctrl+u", "59.9s", "enter")
	for m.moving != nil {
		m.move(time.Second)
	}
	if m.sim.now != 59900*time.Millisecond {
		b.Fatalf("at %v, want 59.9s", m.sim.now)
	}
	b.ReportMetric(float64(m.sim.steps), "events")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		press(m, "left")
		for m.moving != nil {
			m.move(time.Second)
		}
		press(m, ".")
	}
}

// Far into a run, a step back skips the early part quietly (rewind): its screen, marks and
// mark finder still equal those of a run that went forward only, and going on from there
// ends where engine.Run ends.
func TestRewindFarIntoARunIsExact(t *testing.T) {
	defer func(p, c uint64) { pointEvery, ckptEvery = p, c }(pointEvery, ckptEvery)
	pointEvery, ckptEvery = 64, 512 // these runs are a few thousand steps: checkpoints in them
	for _, name := range []string{"poisson", "retry-storm", "diurnal"} {
		t.Run(name, func(t *testing.T) {
			m := open(t, name, 120, 40)
			half := m.sim.sc.Horizon / 2
			press(m, "g", "ctrl+u", half.String(), "enter")
			press(m, ".", ".", ".")
			forward := screenOf(m)
			marks := fmt.Sprint(m.sim.marks)
			steps := m.sim.steps
			press(m, ".")
			if len(m.sim.ckpts) < 2 {
				t.Fatalf("%d checkpoints at event %d: this test must restore one", len(m.sim.ckpts), m.sim.steps)
			}
			press(m, "left")
			if len(m.sim.ckpts) == 0 || len(m.sim.points) == 0 {
				t.Fatalf("the rewind started from 0: this test must restore a checkpoint and skip quietly")
			}
			if m.sim.steps != steps {
				t.Fatalf("at event %d, want %d", m.sim.steps, steps)
			}
			if got := screenOf(m); got != forward {
				t.Fatalf("the rewound screen differs:\nforward:\n%s\nrewound:\n%s", forward, got)
			}
			if got := fmt.Sprint(m.sim.marks); got != marks {
				t.Fatalf("the rewound marks differ from the forward run's")
			}
			press(m, "tab", "[", "]", "]") // the mark finder goes on as the forward run's would
			press(m, "end")
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
			straight := open(t, name, 120, 40)
			press(straight, "end")
			if fmt.Sprint(straight.sim.marks) != fmt.Sprint(m.sim.marks) {
				t.Error("the marks of the travelled run differ from a straight run's")
			}
		})
	}
}

// `]` stops at each lane's own moments: on boundary-attack's fixed window (lane 1), the
// burst at 990ms, then the boundary at 1s where the count starts again, and a refusal run's
// start; `[` comes back to the boundary. Before, `]` from the burst jumped to the end: the
// second window's 100 requests are all admitted, so no refusal follows (#25).
func TestJumpsStopAtWindowBoundaries(t *testing.T) {
	m := open(t, "boundary-attack", 100, 30)
	press(m, "]")
	mustContain(t, m.View(), "at the burst at t=990ms")
	press(m, "]")
	mustContain(t, m.View(), "at the new window at t=1s")
	if m.sim.now < time.Second || m.sim.now > 1010*time.Millisecond {
		t.Fatalf("the boundary's mark is at %v, want in [1s, 1.01s]", m.sim.now)
	}
	press(m, "]") // the last request is at 1.01s: nothing further
	mustContain(t, m.View(), "no burst or refusal until the end of the run")
	press(m, "[")
	mustContain(t, m.View(), "back to the new window at t=1s")
	press(m, "[")
	mustContain(t, m.View(), "back to the burst at t=990ms")
}
