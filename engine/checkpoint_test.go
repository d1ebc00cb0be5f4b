package engine_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
)

// A clone made part way decides exactly what the original does from there, and stepping the
// clone leaves the original as it was: on every built-in scenario (retrying and queueing
// clients, pool and server downstreams, keyed, shaping and adaptive stacks, fleets), each
// lane traced and cloned at a third of its horizon; the clone runs to the end first (had it
// shared anything with the original, the original would then read what the clone did), then
// the original, and both match a lane never cloned, trace record for record.
func TestCloneDecidesAsTheOriginal(t *testing.T) {
	for _, sc := range scenarios.All() {
		t.Run(sc.Name, func(t *testing.T) {
			sc.Trace = true
			for i := range sc.Lanes {
				fresh := runLane(t, sc, i, nil)
				orig, err := engine.NewLane(sc, i)
				if err != nil {
					t.Fatal(err)
				}
				if err := orig.RunUntil(sc.Horizon / 3); err != nil {
					t.Fatal(err)
				}
				cl, err := orig.Clone()
				if errors.Is(err, engine.ErrNotClonable) {
					t.Logf("lane %d: %v", i, err) // a trace file, a peer library's clock
					continue
				}
				if err != nil {
					t.Fatalf("lane %d: %v", i, err)
				}
				heard := 0
				orig.OnEvent = func(engine.Record) { heard++ } // the original keeps its listener; the clone has none
				runLane(t, sc, i, cl)
				if heard != 0 || cl.OnEvent != nil {
					t.Fatalf("lane %d: the clone's events reached the original's OnEvent", i)
				}
				runLane(t, sc, i, orig)
				if heard == 0 {
					t.Fatalf("lane %d: the original lost its OnEvent to Clone", i)
				}
				orig.OnEvent = nil
				want := fresh.Result()
				for name, l := range map[string]*engine.Lane{"clone": cl, "original": orig} {
					if got := l.Result(); !reflect.DeepEqual(got, want) {
						gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
						for f := range gv.NumField() {
							if !reflect.DeepEqual(gv.Field(f).Interface(), wv.Field(f).Interface()) {
								t.Errorf("lane %d, the %s: %s differs from a lane never cloned", i, name, gv.Type().Field(f).Name)
							}
						}
					}
				}
			}
		})
	}
}

// runLane runs l (a new lane i of sc when nil) to sc's horizon.
func runLane(t *testing.T, sc *engine.Scenario, i int, l *engine.Lane) *engine.Lane {
	t.Helper()
	if l == nil {
		var err error
		if l, err = engine.NewLane(sc, i); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.RunUntil(sc.Horizon); err != nil {
		t.Fatal(err)
	}
	return l
}

// A lane restored from a checkpoint goes on as the lane did: checkpointed at a third of the
// horizon, the original run on to two thirds (its closed bins are what Restore copies), the
// restored lane runs to the end and matches a lane never stopped, bins and trace included;
// a second Restore of the same checkpoint does too.
func TestCheckpointRestoresTheLane(t *testing.T) {
	for _, name := range []string{"poisson", "retry-storm", "slow-downstream", "noisy-neighbour", "mild-overload", "cold-start"} {
		t.Run(name, func(t *testing.T) {
			sc, err := scenarios.Get(name)
			if err != nil {
				t.Fatal(err)
			}
			sc.Trace = true
			for i := range sc.Lanes {
				want := runLane(t, sc, i, nil).Result()
				orig, err := engine.NewLane(sc, i)
				if err != nil {
					t.Fatal(err)
				}
				if err := orig.RunUntil(sc.Horizon / 3); err != nil {
					t.Fatal(err)
				}
				ck, err := orig.Checkpoint()
				if errors.Is(err, engine.ErrNotClonable) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := orig.RunUntil(2 * sc.Horizon / 3); err != nil {
					t.Fatal(err)
				}
				for round := range 2 {
					back, err := ck.Restore(orig)
					if err != nil {
						t.Fatal(err)
					}
					if got := runLane(t, sc, i, back).Result(); !reflect.DeepEqual(got, want) {
						t.Errorf("lane %d, restore %d: the result differs from a lane never stopped (%d events, want %d)", i, round+1, got.Events, want.Events)
					}
				}
			}
		})
	}
}
