package engine_test

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
)

func runJSON(t *testing.T, sc *engine.Scenario) []byte {
	t.Helper()
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	out, err := json.Marshal(res)
	require.NoError(t, err)
	return out
}

// Every built-in scenario gives byte-identical results run after run and whatever
// GOMAXPROCS: lanes share nothing and the kernel orders ties by scheduling sequence.
func TestRunIsDeterministic(t *testing.T) {
	for _, name := range scenarios.Names() {
		t.Run(name, func(t *testing.T) {
			sc, err := scenarios.Get(name)
			require.NoError(t, err)
			first := runJSON(t, sc)
			prev := runtime.GOMAXPROCS(1)
			defer runtime.GOMAXPROCS(prev)
			sc1, _ := scenarios.Get(name)
			one := runJSON(t, sc1)
			runtime.GOMAXPROCS(4)
			sc4, _ := scenarios.Get(name)
			four := runJSON(t, sc4)
			runtime.GOMAXPROCS(prev)
			assert.True(t, string(first) == string(one), "the second run (GOMAXPROCS 1) differs")
			assert.True(t, string(first) == string(four), "the third run (GOMAXPROCS 4) differs")

			// The last lane run alone gives the same result as in company: no shared state.
			i := len(sc.Lanes) - 1
			solo, _ := scenarios.Get(name)
			solo.Lanes = solo.Lanes[i:]
			res, err := engine.Run(context.Background(), solo, nil)
			require.NoError(t, err)
			var all engine.Results
			require.NoError(t, json.Unmarshal(first, &all))
			// Meter lengths are the union over the scenario's lanes; compare the shared ones.
			together, alone := all.Lanes[i], res.Lanes[0]
			for _, w := range alone.Windows {
				assert.Contains(t, together.Windows, w, "lane %d alone: window meter", i)
			}
			together.Windows, alone.Windows = nil, nil
			a, _ := json.Marshal(together)
			b, _ := json.Marshal(alone)
			assert.True(t, string(a) == string(b), "lane %d alone differs from the lane in company", i)

			// Run steps lanes in batches (Lane.StepN, which runs a flat source's arrivals in a
			// loop of their own); one Step at a time gives each lane the same result.
			for i := range sc.Lanes {
				l, err := engine.NewLane(sc, i)
				require.NoError(t, err)
				for more := true; more; {
					more, err = l.Step()
					require.NoError(t, err)
				}
				stepped, err := json.Marshal(l.Result())
				require.NoError(t, err)
				batched, _ := json.Marshal(all.Lanes[i])
				assert.True(t, string(stepped) == string(batched), "lane %d stepped one event at a time differs", i)
			}
		})
	}
}

// Every lane is offered the identical traffic: the same count, and (traced) the same first
// attempts at the same times with the same request ids. A lane whose clients hold attempts
// back (Client.Holds: pacing) makes the same requests' first attempts, each at or after
// its arrival.
func TestEveryLaneGetsTheSameOfferedTraffic(t *testing.T) {
	for _, name := range scenarios.Names() {
		t.Run(name, func(t *testing.T) {
			sc, err := scenarios.Get(name)
			require.NoError(t, err)
			if sc.Horizon > 60e9 {
				sc.Horizon = 60e9 // keep the trace under its limit
			}
			sc.Trace = true
			res, err := engine.Run(context.Background(), sc, nil)
			require.NoError(t, err)
			type first struct {
				at      int64
				id      uint64
				permits int
				key     string
			}
			// The first record of each request is its arrival: decided, or queued behind others.
			firsts := func(l engine.LaneResult) []first {
				var out []first
				seen := map[uint64]bool{}
				for _, r := range l.Trace {
					if seen[r.Request] {
						continue
					}
					seen[r.Request] = true
					out = append(out, first{int64(r.At), r.Request, r.Permits, r.Key})
				}
				return out
			}
			holds := func(i int) bool {
				if c := sc.Lanes[i].Client; c != nil {
					return c.Holds()
				}
				return sc.Client.Holds()
			}
			b := 0
			for b < len(res.Lanes)-1 && holds(b) {
				b++
			}
			base := res.Lanes[b]
			require.False(t, base.Truncated)
			want := firsts(base)
			assert.Len(t, want, int(base.Totals.Offered))
			for i, l := range res.Lanes {
				if i == b {
					continue
				}
				assert.Equal(t, base.Totals.Offered, l.Totals.Offered, l.Name)
				assert.Equal(t, base.Totals.OfferedPermits, l.Totals.OfferedPermits, l.Name)
				got := firsts(l)
				if holds(i) {
					arrived := map[uint64]int64{}
					for _, f := range want {
						arrived[f.id] = f.at
					}
					for _, f := range got {
						at, ok := arrived[f.id]
						if !assert.True(t, ok && f.at >= at, "%s: request %d first tried at %d, arrived at %d", l.Name, f.id, f.at, at) {
							return
						}
					}
					continue
				}
				if !assert.Equal(t, len(want), len(got), l.Name) || !assert.True(t, equalFirsts(want, got), l.Name) {
					return
				}
			}
		})
	}
}

func equalFirsts[T comparable](a, b []T) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The slow-downstream scenario teaches that rate is not concurrency.
func TestSlowDownstream(t *testing.T) {
	sc, err := scenarios.Get("slow-downstream")
	require.NoError(t, err)
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	require.Len(t, res.Lanes, 3)
	tb, conc, stacked := res.Lanes[0].Totals, res.Lanes[1].Totals, res.Lanes[2].Totals
	assert.Greater(t, tb.Failed, int64(0), "the token bucket alone lets the pool fail")
	assert.Equal(t, 20, tb.MaxInFlight, "and fills the pool")
	assert.Zero(t, conc.Failed, "concurrency:max=20 protects the pool")
	assert.Zero(t, stacked.Failed, "so does the stack")
	assert.LessOrEqual(t, conc.MaxInFlight, 20)
	assert.LessOrEqual(t, stacked.MaxInFlight, 20)
	assert.Zero(t, stacked.Wasted, "token bucket permits of requests the bulkhead refused are refunded")
	assert.Greater(t, stacked.RefusedAttempts, int64(0), "the bulkhead refuses")
}
