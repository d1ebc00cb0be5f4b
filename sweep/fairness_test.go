package sweep

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// jainFromTrace is Jain's index computed apart from the engine's per-key counters: from the
// lane's trace, the permits of each admitted record summed per key, over every key that sent
// a request, (Σx)²/(n·Σx²) in exact rational arithmetic.
func jainFromTrace(t *testing.T, records []engine.Record) (float64, int) {
	t.Helper()
	admitted := map[string]int64{}
	for _, r := range records {
		if _, ok := admitted[r.Key]; !ok {
			admitted[r.Key] = 0
		}
		if r.Outcome == engine.OutcomeAdmitted {
			admitted[r.Key] += int64(r.Permits)
		}
	}
	var sum, squares int64
	for _, x := range admitted {
		sum += x
		squares += x * x
	}
	require.Positive(t, squares)
	j, _ := new(big.Rat).SetFrac(big.NewInt(sum*sum), big.NewInt(int64(len(admitted))*squares)).Float64()
	return j, len(admitted)
}

// The fairness metric is Jain's index of the permits each key was admitted: swept over the
// noisy-neighbour scenario's capacity, every cell's value is the index computed from that
// cell's trace, and it moves as it should. A bucket per key admits every quiet client's few
// requests and refuses the neighbour: close to fair (0.93 at capacity 1); a larger bucket lets
// the neighbour's bursts through, so fairness falls (0.86 at 100). One bucket for all refuses
// without looking at who asks, so the neighbour takes 60% of what passes: 0.03, near the
// least, 1/101.
func TestFairnessIsJainsIndexOverTheKeys(t *testing.T) {
	sc := scenario(t, "noisy-neighbour")
	sc.Lanes = sc.Lanes[:2] // one bucket for all, and a bucket per key
	g := grid(t, sc, Steps{N: 4}, "token-bucket.capacity=1..100")
	fairness, ok := LookupMetric("fairness")
	require.True(t, ok)
	require.NoError(t, g.Check(fairness))
	rows, err := Run(context.Background(), g, Options{})
	require.NoError(t, err)
	require.Len(t, rows, 8)
	for i, row := range rows {
		one := *sc
		one.Lanes, one.Trace = []engine.LaneSpec{g.Cells[i].Spec}, true
		res, err := engine.Run(context.Background(), &one, nil)
		require.NoError(t, err)
		require.False(t, res.Lanes[0].Truncated, "every decision traced")
		want, keys := jainFromTrace(t, res.Lanes[0].Trace)
		assert.Equal(t, 101, keys, "100 clients and the neighbour")
		assert.Equal(t, keys, row.Keys, "cell %d", i)
		got, ok := fairness.Value(row.Metrics)
		require.True(t, ok)
		assert.InDelta(t, want, got, 1e-12, "cell %d (%s)", i, row.Spec)
	}
	value := func(i int) float64 { v, _ := fairness.Value(rows[i].Metrics); return v }
	for i := range 4 {
		assert.Less(t, value(i), 0.04, "one bucket for all, %s", rows[i].Spec)
		assert.Greater(t, value(i), 1.0/101)
	}
	for i := 5; i < 8; i++ {
		assert.Less(t, value(i), value(i-1), "a bucket per key: a larger capacity is less fair (%s)", rows[i].Spec)
	}
	assert.Greater(t, value(4), 0.93)
	assert.Less(t, value(7), 0.87)

	// The CSV carries the index exactly: read back, it is the same float.
	back, err := ReadCSV(strings.NewReader(csvOf(t, rows)), "x.csv")
	require.NoError(t, err)
	for i := range rows {
		assert.Equal(t, rows[i].Metrics, back[i].Metrics)
	}
}

// A scenario whose requests all carry one key has no fairness to measure: the metric is
// refused, naming the scenario, before any cell runs (and from the rows of one, as a merge
// sees them), instead of a column of zeros or NaN.
func TestFairnessOfAScenarioWithoutKeysIsRefused(t *testing.T) {
	fairness, _ := LookupMetric("fairness")
	refused, _ := LookupMetric("refused%")
	g := grid(t, scenario(t, "steady"), Steps{N: 2}, "token-bucket.capacity=1..100")
	want := "sweep: fairness: scenario steady has no keys: its requests all carry one key and no stage is keyed, so there is no per-key fairness to measure (sweep a scenario whose sources draw keys, such as noisy-neighbour)"
	assert.EqualError(t, g.Check(fairness), want)
	assert.NoError(t, g.Check(refused))
	rows, err := Run(context.Background(), g, Options{})
	require.NoError(t, err)
	for _, r := range rows {
		assert.Zero(t, r.Keys)
		_, ok := fairness.Value(r.Metrics)
		assert.False(t, ok, "a cell without keys has no value")
	}
	assert.Contains(t, csvOf(t, rows), ",0,,", "keys 0, fairness empty")
	res, err := Assemble(rows)
	require.NoError(t, err)
	assert.EqualError(t, res.Check(fairness), want)

	// Keys from a keyed stage alone are keys: a table per key of one client is one key.
	sc := scenario(t, "steady")
	sc.Lanes = []engine.LaneSpec{{Stack: mustStack(t, "keys(max=10):token-bucket:capacity=5,rate=10/1s")}}
	g = grid(t, sc, Steps{N: 2}, "token-bucket.capacity=1..100")
	assert.NoError(t, g.Check(fairness))
	rows, err = Run(context.Background(), g, Options{})
	require.NoError(t, err)
	assert.Equal(t, 1, rows[0].Keys)
	assert.Equal(t, 1.0, rows[0].Fairness, "one key is fair to itself")
}

func mustStack(t *testing.T, text string) []limiters.Spec {
	t.Helper()
	stack, err := engine.ParseStack(text)
	require.NoError(t, err)
	return stack
}
