package tui

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
)

// perfScenario is the perf scenario (scenarios/testdata/perf-poisson-1h.yaml: six lanes,
// Poisson at 10,000/s) cut to horizon.
func perfScenario(tb testing.TB, horizon time.Duration) *engine.Scenario {
	tb.Helper()
	sc, err := scenarios.LoadFile("../scenarios/testdata/perf-poisson-1h.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	if horizon > 0 {
		sc.Horizon = horizon
	}
	if err := sc.Validate(); err != nil {
		tb.Fatal(err)
	}
	return sc
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTUIVsRun is the TUI's simulation against run's on the perf scenario cut to 10
// virtual seconds (600,000 requests over six lanes): run is engine.Run, the lanes in parallel,
// untraced; tui is the workbench at maximum speed, its sim moved in frames of maxFrameWork as
// Model.tick moves it, every decision observed for the log and the charts. Both report
// virtual-s/cpu-s, virtual seconds simulated per second of the process's CPU time (rusage),
// the measure: run in parallel spends no less CPU than one lane after another. The
// sub-benchmarks alternate under -count, so their ratio is read inside one run:
//
//	go test -run '^$' -bench TUIVsRun -count 5 -benchtime 3x ./tui/
func BenchmarkTUIVsRun(b *testing.B) {
	const horizon = 10 * time.Second
	report := func(b *testing.B, cpu time.Duration) {
		b.ReportMetric(float64(b.N)*horizon.Seconds()/cpu.Seconds(), "virtual-s/cpu-s")
	}
	b.Run("run", func(b *testing.B) {
		sc := perfScenario(b, horizon)
		start := cpuTime()
		for b.Loop() {
			if _, err := engine.Run(context.Background(), sc, nil); err != nil {
				b.Fatal(err)
			}
		}
		report(b, cpuTime()-start)
	})
	b.Run("tui", func(b *testing.B) {
		sc := perfScenario(b, horizon)
		start := cpuTime()
		for b.Loop() {
			s, err := newSim(sc)
			if err != nil {
				b.Fatal(err)
			}
			for !s.done() {
				arrived, err := s.forward(func() bool { return s.nextEventAt() >= sc.Horizon }, maxFrameWork, 0, sc.Horizon)
				if err != nil {
					b.Fatal(err)
				}
				if arrived {
					if err := s.advanceTo(sc.Horizon); err != nil {
						b.Fatal(err)
					}
				}
			}
			s.close()
		}
		report(b, cpuTime()-start)
	})
}

// BenchmarkTravelLate is time travel late in the one-hour perf scenario, at 3m39s (where the
// issue measured a step back at 2.7–4.2 s) and at 10m: a step back (←), a jump back to the
// focused lane's previous mark ([), and seeks back by 1s and to 1m (g). Each op is the whole
// move, until the screen shows the target; the position is put back between ops (the move
// from a copy of the model's sim, which it leaves as it was). ns/op is wall time; cpu-ms/op
// the process's CPU time (rusage), steadier on a shared machine. Setup simulates the first 10
// minutes once (~20 s of CPU), so run it with a few iterations:
//
//	go test -run '^$' -bench TravelLate -benchtime 5x ./tui/
func BenchmarkTravelLate(b *testing.B) {
	sc := perfScenario(b, time.Hour)
	m, err := New(sc)
	if err != nil {
		b.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	for _, at := range []time.Duration{3*time.Minute + 39*time.Second, 10 * time.Minute} {
		if err := m.sim.advanceTo(at); err != nil {
			b.Fatal(err)
		}
		moves := []struct {
			name string
			keys []string
		}{
			{"step-back", []string{"left"}},
			{"jump-back", []string{"["}},
			{"seek-back-1s", []string{"g", "ctrl+u", (at - time.Second).String(), "enter"}},
			{"seek-1m", []string{"g", "ctrl+u", "1m", "enter"}},
		}
		for _, mv := range moves {
			b.Run(fmt.Sprintf("%s/%s", short(at), mv.name), func(b *testing.B) {
				orig := m.sim
				cpu := cpuTime()
				for b.Loop() {
					m.sim = orig
					for _, k := range mv.keys {
						m.Update(keyMsg(k))
					}
					for m.moving != nil {
						m.move(time.Second)
					}
					if m.err != nil || m.sim.steps >= orig.steps {
						b.Fatalf("at event %d of %d (%v)", m.sim.steps, orig.steps, m.err)
					}
					_ = m.View()
				}
				b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
				m.sim, m.status = orig, ""
			})
		}
	}
}
