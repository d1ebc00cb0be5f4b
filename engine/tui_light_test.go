package engine_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/scenarios"
)

// StepsHeard, in chunks of a seventh of the horizon, runs what Step after Step runs: on every
// built-in scenario, each lane heard by OnDecide, the same decisions heard (instant, request,
// decision), the same event instants, and the same result at the horizon, bins included.
func TestStepsHeardIsStepAfterStep(t *testing.T) {
	type heard struct {
		at       time.Duration
		request  uint64
		decision limiters.Decision
	}
	lightLanes := 0
	for _, sc := range scenarios.All() {
		t.Run(sc.Name, func(t *testing.T) {
			for i := range sc.Lanes {
				var lanes [2]*engine.Lane
				var decisions [2][]heard
				var instants [2][]time.Duration
				for k := range lanes {
					lane, err := engine.NewLane(sc, i)
					if err != nil {
						t.Fatal(err)
					}
					lane.OnDecide = func(at time.Duration, request uint64, d limiters.Decision) {
						decisions[k] = append(decisions[k], heard{at, request, d})
					}
					lanes[k] = lane
				}
				for to := sc.Horizon / 7; ; to += sc.Horizon / 7 {
					if err := lanes[0].StepsHeard(min(to, sc.Horizon), &instants[0]); err != nil {
						t.Fatal(err)
					}
					if to >= sc.Horizon {
						break
					}
				}
				for {
					at := lanes[1].NextEventAt()
					if at >= sc.Horizon {
						break
					}
					if _, err := lanes[1].Step(); err != nil {
						t.Fatal(err)
					}
					instants[1] = append(instants[1], at)
				}
				for _, lane := range lanes {
					if err := lane.RunUntil(sc.Horizon); err != nil {
						t.Fatal(err)
					}
				}
				if lanes[0].AtOnce() {
					lightLanes++
				}
				if !reflect.DeepEqual(decisions[0], decisions[1]) || !reflect.DeepEqual(instants[0], instants[1]) {
					t.Fatalf("lane %d: %d decisions and %d events heard in chunks, %d and %d step after step",
						i, len(decisions[0]), len(instants[0]), len(decisions[1]), len(instants[1]))
				}
				if !reflect.DeepEqual(lanes[0].Result(), lanes[1].Result()) {
					t.Fatalf("lane %d: the result differs from step after step's", i)
				}
			}
		})
	}
	if lightLanes == 0 {
		t.Fatal("no lane decides at arrival: flatArrivalsHeard went untested")
	}
}
