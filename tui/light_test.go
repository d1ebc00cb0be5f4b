package tui

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ratelab/ratelab/scenarios"
)

// Played at maximum speed, where the lanes run light for most of each frame, the workbench
// shows what an observed run shows at the same position: the same lanes, charts, marks, logs
// and screen, frame after frame and at the end (where the last frame stops light and the
// logs are refilled).
func TestLightFramesShowWhatAnObservedRunShows(t *testing.T) {
	for _, name := range []string{"poisson", "cold-start", "boundary-attack", "on-off", "perf-6s"} {
		t.Run(name, func(t *testing.T) {
			m := openAny(t, name)
			m.speed = len(speeds) - 1 // max
			press(m, "space")
			n := 0
			for ; n < 400 && m.playing; n++ {
				frames(m, 1)
				want := unlit(t, name)
				w := want.sim
				if _, err := w.forward(func() bool { return w.steps >= m.sim.steps }, 0, -1, 0); err != nil {
					t.Fatal(err)
				}
				if err := w.advanceTo(m.sim.now); err != nil {
					t.Fatal(err)
				}
				want.speed, want.playing = m.speed, m.playing
				want.status = m.status
				same(t, "after a frame at max", m, want)
			}
			if !m.sim.done() {
				t.Fatal("the play did not reach the end")
			}
			t.Logf("%d frames, %d decisions light", n, m.sim.lit)
			if m.sim.lit == 0 {
				t.Fatal("no lane ran light: the test covers nothing")
			}
		})
	}
}

// openAny opens a built-in scenario, or perf-6s: the perf scenario cut to 6 seconds
// (360,000 requests over six lanes: several frames at max, each light, then observed).
func openAny(t *testing.T, name string) *Model {
	if name != "perf-6s" {
		return open(t, name, 120, 40)
	}
	m, err := New(perfScenario(t, 6*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	return m
}

// unlit opens name in a workbench whose lanes are always observed, with no checkpoint.
func unlit(t *testing.T, name string) *Model {
	m := openAny(t, name)
	m.sim.noCkpt = true
	for i := range m.sim.lightOK {
		m.sim.lightOK[i] = false
	}
	return m
}

// Light batches (sim.batch: each lane on its own up to a time, the steps numbered after by
// merging the lanes' event instants) reach the positions the lockstep reaches, with the same
// steps, marks, charts, mark finder and lanes, batch after batch, on a scenario where a
// lane often has two events at one instant (an arrival every millisecond, a completion 2ms
// after each admission: two steps at that instant) and the lanes' completions fall at
// different instants.
func TestBatchesNumberTheStepsTheLockstepRuns(t *testing.T) {
	const yaml = `
name: coincident
seed: 3
horizon: 1s
sources:
  - kind: constant
    rate: 1000
client:
  policy: drop
limiters:
  - token-bucket:capacity=5,rate=400/1s
  - concurrency:max=1
  - fixed-window:limit=3,window=10ms
downstream:
  service: {kind: constant, mean: 2ms}
`
	sc, err := scenarios.Load("coincident.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	b, err := newSim(sc)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	w, err := newSim(sc)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	b.setLight(true)
	doubled := false
	for to := 7 * time.Millisecond; b.nextEventAt() < sc.Horizon; to += 7 * time.Millisecond {
		before := b.steps
		if err := b.batch(to); err != nil {
			t.Fatal(err)
		}
		for i := range b.inst {
			for k := 1; k < len(b.inst[i]); k++ {
				doubled = doubled || b.inst[i][k] == b.inst[i][k-1]
			}
		}
		if err := b.sync(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.forward(func() bool { return w.steps >= b.steps }, 0, -1, 0); err != nil {
			t.Fatal(err)
		}
		if b.steps == before {
			continue
		}
		if b.steps != w.steps || b.lastAt != w.lastAt || b.now != w.now {
			t.Fatalf("batch to %v: event %d at t=%v; the lockstep at event %d, t=%v", to, b.steps, b.lastAt, w.steps, w.lastAt)
		}
		if fmt.Sprint(b.marks) != fmt.Sprint(w.marks) || !reflect.DeepEqual(b.charts, w.charts) || !reflect.DeepEqual(b.seen, w.seen) {
			t.Fatalf("batch to %v: the marks, charts or mark finder differ from the lockstep's", to)
		}
		for i := range b.lanes {
			if !reflect.DeepEqual(b.lanes[i].Result(), w.lanes[i].Result()) {
				t.Fatalf("batch to %v: lane %d's result differs from the lockstep's", to, i+1)
			}
		}
	}
	if !doubled {
		t.Fatal("no lane had two events at one instant: the test covers less than it says")
	}
	if b.lit == 0 || len(b.marks[2]) == 0 {
		t.Fatalf("%d decisions light, %d marks in the fixed window's lane: the test covers nothing", b.lit, len(b.marks[2]))
	}
}
