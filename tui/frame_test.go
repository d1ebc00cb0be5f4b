package tui

import (
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ratelab/ratelab/scenarios"
)

// openPerf is the workbench on the one-hour perf scenario (six lanes, 10,000 requests per
// second: 36M requests a lane) at 120×40, playing at the maximum speed.
func openPerf(tb testing.TB) *Model {
	sc, err := scenarios.LoadFile("../scenarios/testdata/perf-poisson-1h.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	m, err := New(sc)
	if err != nil {
		tb.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.speed = len(speeds) - 1 // max
	m.Update(keyMsg("space"))
	return m
}

// BenchmarkFrameAtMaxSpeed is one frame of the perf scenario at the maximum speed, as the
// program runs it: Update(tick) then View. The issue asks for at least 15 frames a second,
// under 66ms a frame.
func BenchmarkFrameAtMaxSpeed(b *testing.B) {
	m := openPerf(b)
	for i := 0; i < 3; i++ { // past the first frames' allocations
		m.Update(tickMsg{gen: m.tickGen})
		_ = m.View()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Update(tickMsg{gen: m.tickGen})
		_ = m.View()
	}
	b.ReportMetric(float64(m.sim.now)/float64(time.Second)/float64(b.N+3), "virtual-s/frame")
}

// BenchmarkKeyWhilePlaying is a key (tab: focus the next lane) answered while the perf
// scenario plays at the maximum speed: the key's Update and the View that shows it. A key
// waits for at most the frame being computed, so the answer takes at most a frame plus this.
func BenchmarkKeyWhilePlaying(b *testing.B) {
	m := openPerf(b)
	m.Update(tickMsg{gen: m.tickGen})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Update(keyMsg("tab"))
		_ = m.View()
	}
}

// A frame at the maximum speed on the perf scenario ends within its budget (maxFrameWork
// of simulation, then the view), and the play goes on: the screen never freezes for a slice
// of 10s of virtual time (600,000 decisions), as it did before. The budget is read from a
// clock of the test's own that moves 1ms each time forward reads it (a step of work per
// read), so the check holds whatever the machine's load: a frame that ran past its budget
// would read it far more often, and one that ignored it would run to the hour's end.
func TestFrameStaysWithinBudgetOnThePerfScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the perf scenario for a few frames")
	}
	var fake time.Time
	reads := 0
	wallNow = func() time.Time { reads++; fake = fake.Add(time.Millisecond); return fake }
	defer func() { wallNow = time.Now }()
	m := openPerf(t)
	for i := 0; i < 5; i++ {
		before, was := fake, m.sim.now
		_, cmd := m.Update(tickMsg{gen: m.tickGen})
		_ = m.View()
		// The budget, then the steps until the logs are whole again (~256, checked every 64)
		// and one last batch: a few reads past it.
		if took := fake.Sub(before); took > 2*maxFrameWork {
			t.Errorf("frame %d took %v of its clock (budget %v of simulation and a view)", i+1, took, maxFrameWork)
		}
		if m.sim.now <= was {
			t.Fatalf("frame %d did not advance the run (at %v)", i+1, m.sim.now)
		}
		if cmd == nil || !m.playing {
			t.Fatal("the play stopped")
		}
	}
	t.Logf("five frames: %v of the hour, %d reads of the clock", m.sim.now, reads)
	if reads == 0 {
		t.Fatal("forward never read its clock: the budget cannot have been kept")
	}
	if m.sim.now >= 10*time.Minute {
		t.Fatalf("five frames of %v ran the perf scenario to %v: the budget was not kept", maxFrameWork, m.sim.now)
	}
}
