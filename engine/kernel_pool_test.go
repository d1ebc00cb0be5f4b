package engine

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// poolScenarios are lanes whose admissions flatArrivals sends to the downstream and completes
// itself (Lane.pool), each with something that path must count as decidedAtOnce, admitted and
// complete do: a bulkhead released at every completion (Stack.soleRelease), two bulkheads
// (Stack.Complete), a stage told nothing (no completes), a full pool that fails admissions
// (they go through decidedAtOnce), service times drawn (exponential, in two phases) or fixed,
// two permits a request, window meters and bins of odd widths.
func poolScenarios(t *testing.T) map[string]*Scenario {
	lanes := func() []LaneSpec {
		return stacks(t, "concurrency:max=40", "concurrency:max=60+concurrency:max=30",
			"token-bucket:capacity=20,rate=900/1s", "token-bucket:capacity=20,rate=900/1s+concurrency:max=25")
	}
	return map[string]*Scenario{
		"drawn": {Horizon: 3 * sec, Bins: 7, Client: Client{Policy: PolicyDrop}, Windows: []time.Duration{100 * ms},
			Sources: []Source{{Kind: SourcePoisson, Rate: 2000, Permits: 2}},
			Downstream: &Downstream{Phases: []Phase{
				{Service: Distribution{Kind: DistExponential, Mean: 20 * ms}},
				{From: 1500 * ms, Service: Distribution{Kind: DistExponential, Mean: 40 * ms}}}},
			Lanes: lanes()},
		"fixed-pool": {Horizon: 2 * sec, Bins: 13, Client: Client{Policy: PolicyDrop},
			Sources:    []Source{{Kind: SourceConstant, Rate: 1500}},
			Downstream: &Downstream{Pool: 35, Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: 30 * ms}}}},
			Lanes:      lanes()},
	}
}

// A pool lane's StepN, RunUntil and Step give the same lane, to the byte, and StepN takes
// the pool path.
func TestPoolLaneIsStep(t *testing.T) {
	requireDrivesAgree(t, poolScenarios(t), 2000, 29*ms, 11, func(name string, i int, l *Lane) {
		require.True(t, l.pool, "%s lane %d: not a pool lane", name, i)
	}, func(name string, i int, l *Lane) {
		require.Zero(t, l.poolCounts, "%s lane %d: counts left uncounted after StepN", name, i)
	})
}

// The pool path runs for those lanes and is not empty: it admitted and completed requests,
// and the pool of 35 failed some that went the slow way.
func TestPoolLaneCounts(t *testing.T) {
	sc := poolScenarios(t)["fixed-pool"]
	require.NoError(t, sc.Validate())
	l, err := NewLane(sc, 0)
	require.NoError(t, err)
	for {
		more, err := l.StepN(1 << 14)
		require.NoError(t, err)
		if !more {
			break
		}
	}
	tot := l.Result().Totals
	assert.Positive(t, tot.Completed)
	assert.Positive(t, tot.Failed, "the pool never filled")
	assert.Equal(t, 35, tot.MaxInFlight)
	assert.Equal(t, tot.Admitted, tot.Completed+tot.Failed+int64(l.InFlight()))
}

// addN and addZeros are n calls of add, histogram for histogram.
func TestHistogramAddN(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var one, many histogram
	for range 500 {
		v, n := rng.Int64N(1<<40), 1+rng.Int64N(5)
		if rng.IntN(4) == 0 {
			v = 0
			many.addZeros(n)
		} else {
			many.addN(v, n)
		}
		for range n {
			one.add(v)
		}
		many.addN(v, 0) // nothing
		require.Equal(t, one, many)
	}
}

// A pool lane's copy (Clone, the TUI's checkpoints) releases its own bulkhead: the original
// run on to the end, then the copy, and a lane run from 0 give the same results.
func TestPoolLaneClone(t *testing.T) {
	sc := poolScenarios(t)["drawn"]
	require.NoError(t, sc.Validate())
	for i := range sc.Lanes {
		run := func(l *Lane) {
			for {
				more, err := l.StepN(1 << 12)
				require.NoError(t, err)
				if !more {
					return
				}
			}
		}
		ref := laneResultJSON(t, sc, i, run)
		var copied *Lane
		original := laneResultJSON(t, sc, i, func(l *Lane) {
			require.NoError(t, l.RunUntil(1300*ms))
			var err error
			copied, err = l.Clone()
			require.NoError(t, err)
			run(l)
		})
		require.True(t, copied.pool)
		run(copied)
		out, err := json.Marshal(copied.Result())
		require.NoError(t, err)
		assert.True(t, ref == original, "lane %d: the original differs after Clone", i)
		assert.True(t, ref == string(out), "lane %d: the copy differs", i)
	}
}
