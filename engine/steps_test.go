package engine

import (
	"encoding/json"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stepsScenarios are lanes whose one flat source's arrivals StepN runs in its own loop
// (flatArrivals), each with something that loop must leave to Step or count as Step does.
func stepsScenarios(t *testing.T) map[string]*Scenario {
	poissonDown := &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: 50 * ms}}}}
	return map[string]*Scenario{
		// The perf scenario's model: 99% plain refusals, completions between arrivals.
		"perf": {Horizon: 3 * sec, Client: Client{Policy: PolicyDrop}, Downstream: poissonDown,
			Sources: []Source{{Kind: SourcePoisson, Rate: 10_000}},
			Lanes: stacks(t, "token-bucket:capacity=10,rate=100/1s", "leaky-bucket:rate=100/1s",
				"sliding-window:limit=100,window=1s,slots=10", "fixed-window:limit=100,window=1s",
				"warm-up:capacity=10,rate=100/1s,warmup=10s", "concurrency:max=5")},
		// Stacks of two stages (Stack.Acquire, permits wasted or given back), 3 permits a
		// request, a pool that fails admissions, odd bins; and ties: a request completes 8ms
		// after it started, at the same instant as the second arrival after it, and runs
		// first, by its earlier sequence number.
		"stacks": {Horizon: 2 * sec, Bins: 7, Client: Client{Policy: PolicyDrop},
			Sources:    []Source{{Kind: SourceConstant, Rate: 250, Permits: 3}},
			Downstream: &Downstream{Pool: 2, Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: 8 * ms}}}},
			Lanes: []LaneSpec{
				stacks(t, "token-bucket:capacity=9,rate=300/1s+concurrency:max=2")[0],
				{Stack: stacks(t, "token-bucket:capacity=9,rate=300/1s+fixed-window:limit=20,window=100ms")[0].Stack, Waste: true},
				stacks(t, "fixed-window:limit=20,window=100ms+token-bucket:capacity=9,rate=300/1s")[0]}},
		// A request larger than the limiter can ever grant (Never), no downstream.
		"never": {Horizon: sec, Client: Client{Policy: PolicyDrop},
			Sources: []Source{{Kind: SourcePoisson, Rate: 500, Permits: 4}},
			Lanes:   stacks(t, "token-bucket:capacity=3,rate=100/1s", "concurrency:max=2")},
		// A source that starts late, stops before the horizon, and is on and off.
		"on-off": {Horizon: 4 * sec, Client: Client{Policy: PolicyDrop}, Downstream: poissonDown,
			Sources: []Source{{Kind: SourceOnOff, Poisson: true, Rate: 3000, On: 300 * ms, Off: 200 * ms, From: 250 * ms, Until: 3300 * ms}},
			Lanes:   stacks(t, "token-bucket:capacity=10,rate=100/1s", "sliding-window:limit=50,window=500ms,slots=5")},
		// A narrowed trace: the lane is observed from 0.6s to 1.3s, and the loop stops there.
		"trace-window": {Horizon: 2 * sec, Client: Client{Policy: PolicyDrop}, Downstream: poissonDown,
			Trace: true, TraceFrom: 600 * ms, TraceTo: 1300 * ms,
			Sources: []Source{{Kind: SourcePoisson, Rate: 2000}},
			Lanes:   stacks(t, "token-bucket:capacity=10,rate=100/1s", "leaky-bucket:rate=100/1s")},
	}
}

// StepN, RunUntil and Step give the same lane, to the byte, for lanes that take the flat
// source's own loop; and the loop does run for them.
func TestStepNIsStep(t *testing.T) {
	requireDrivesAgree(t, stepsScenarios(t), 3000, 37*ms, 7, func(name string, i int, l *Lane) {
		require.NotNil(t, l.flatOnly, "%s lane %d: the flat loop is not taken", name, i)
	}, nil)
}

// requireDrivesAgree runs every lane of every scenario three ways and requires the same
// result, byte for byte: Step one event at a time, StepN in random batches of 1 to maxBatch
// (seeded by the lane and seed), and RunUntil every `every` of virtual time. first checks a
// lane before it is stepped, afterBatch (when not nil) after each StepN.
func requireDrivesAgree(t *testing.T, scenarios map[string]*Scenario, maxBatch int, every time.Duration, seed uint64,
	first func(name string, i int, l *Lane), afterBatch func(name string, i int, l *Lane)) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(scenarios)) {
		sc := scenarios[name]
		require.NoError(t, sc.Validate(), name)
		for i := range sc.Lanes {
			one := laneResultJSON(t, sc, i, func(l *Lane) {
				first(name, i, l)
				for {
					more, err := l.Step()
					require.NoError(t, err)
					if !more {
						return
					}
				}
			})
			rng := rand.New(rand.NewPCG(uint64(i), seed))
			batched := laneResultJSON(t, sc, i, func(l *Lane) {
				for {
					more, err := l.StepN(1 + rng.IntN(maxBatch))
					require.NoError(t, err)
					if afterBatch != nil {
						afterBatch(name, i, l)
					}
					if !more {
						return
					}
				}
			})
			until := laneResultJSON(t, sc, i, func(l *Lane) {
				for at := time.Duration(0); !l.Done(); at += every {
					require.NoError(t, l.RunUntil(at))
				}
			})
			assert.True(t, one == batched, "%s lane %d: StepN differs from Step", name, i)
			assert.True(t, one == until, "%s lane %d: RunUntil differs from Step", name, i)
		}
	}
}

func laneResultJSON(t *testing.T, sc *Scenario, i int, drive func(*Lane)) string {
	t.Helper()
	l, err := NewLane(sc, i)
	require.NoError(t, err)
	drive(l)
	res := l.Result()
	require.Positive(t, res.Totals.Offered)
	out, err := json.Marshal(res)
	require.NoError(t, err)
	return string(out)
}
