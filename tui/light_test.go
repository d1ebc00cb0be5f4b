package tui

import (
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
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
