package tui

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// Going back through a checkpoint gives exactly the state a fresh run to the same instant
// gives: the same lanes (every lane's result, bins included), charts, marks, logs and screen,
// for seeks back and steps back that restore a checkpoint, and for going on from there. The
// fresh runs take no checkpoint (the clones are not in their way).
func TestBackThroughACheckpointIsAFreshRun(t *testing.T) {
	defer func(p, c uint64) { pointEvery, ckptEvery = p, c }(pointEvery, ckptEvery)
	pointEvery, ckptEvery = 64, 512
	for _, name := range []string{"poisson", "retry-storm", "diurnal", "noisy-neighbour"} {
		t.Run(name, func(t *testing.T) {
			m := open(t, name, 120, 40)
			h := m.sim.sc.Horizon
			press(m, "end")
			if len(m.sim.ckpts) < 3 {
				t.Fatalf("%d checkpoints over the run: the test needs some", len(m.sim.ckpts))
			}
			for _, at := range []time.Duration{h * 7 / 10, h / 3, h / 2} {
				press(m, "g", "ctrl+u", at.String(), "enter")
				fresh := unchecked(t, name)
				press(fresh, "g", "ctrl+u", at.String(), "enter")
				same(t, fmt.Sprintf("seek back to %v", at), m, fresh)
				press(m, "left", "left", "left")
				want := unchecked(t, name)
				for want.sim.steps < m.sim.steps {
					press(want, ".")
				}
				same(t, fmt.Sprintf("3 steps back from %v", at), m, want)
				press(m, ".", ".", ".", ".")
				press(want, ".", ".", ".", ".")
				same(t, fmt.Sprintf("on from 3 steps back from %v", at), m, want)
			}
		})
	}
}

// same fails unless m and want are at the same position with the same lanes and screen.
func same(t *testing.T, what string, m, want *Model) {
	t.Helper()
	a, b := m.sim, want.sim
	if a.steps != b.steps || a.now != b.now {
		t.Fatalf("%s: at event %d, t=%v; the fresh run at event %d, t=%v", what, a.steps, a.now, b.steps, b.now)
	}
	for i := range a.lanes {
		if got, w := a.lanes[i].Result(), b.lanes[i].Result(); !reflect.DeepEqual(got, w) {
			t.Fatalf("%s: lane %d's result differs from the fresh run's", what, i+1)
		}
	}
	if !reflect.DeepEqual(a.charts, b.charts) || fmt.Sprint(a.marks) != fmt.Sprint(b.marks) || !reflect.DeepEqual(a.seen, b.seen) {
		t.Fatalf("%s: the charts, marks or mark finder differ from the fresh run's", what)
	}
	for i := range a.logs {
		if ga, gb := a.logs[i].last(logCapacity), b.logs[i].last(logCapacity); len(ga) != len(gb) {
			t.Fatalf("%s: lane %d's log holds %d records, the fresh run's %d", what, i+1, len(ga), len(gb))
		} else {
			for k := range ga {
				if sa, sb := sentence(a.lanes[i].Stages(), ga[k]), sentence(b.lanes[i].Stages(), gb[k]); sa != sb {
					t.Fatalf("%s: lane %d's log record %d reads %q, the fresh run's %q", what, i+1, k, sa, sb)
				}
			}
		}
	}
	if got, w := screenOf(m), screenOf(want); got != w {
		t.Fatalf("%s: the screen differs\ntravelled:\n%s\nfresh:\n%s", what, got, w)
	}
}

// unchecked opens name in a workbench that takes no checkpoint.
func unchecked(t *testing.T, name string) *Model {
	m := open(t, name, 120, 40)
	m.sim.noCkpt = true
	return m
}
