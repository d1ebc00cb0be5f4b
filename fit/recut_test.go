package fit

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/trace"
)

// Segments cut again at a faster rate (recut), the ones whose bound is below a floor left
// whole, give the curve over every row for every rate between that rate and the rate whose
// need is the floor, whatever the segments' lengths: the pieces' bounds and the uncut
// segments' are both at least the needs there.
func TestCurveOverRecutSegmentsIsTheCurve(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 23))
	pieces, segs := 0, 0
	for i := range 40 {
		reqs := randomTrace(rng, 1+rng.IntN(5000), int64(1+rng.IntN(3_000_000)), 1+rng.IntN(3))
		if i%2 == 0 { // the same traffic twice, an hour apart: segments tie
			span := reqs[len(reqs)-1].at + int64(time.Hour)
			for _, r := range slices.Clone(reqs) {
				reqs = append(reqs, req{r.at + span, r.n})
			}
		}
		tb, basis, seg := segmentedTable(t, rng, reqs)
		below := limiters.PerSecond(basis.Permits + rng.IntN(basis.Permits))
		above := limiters.PerSecond(below.Permits + 1 + rng.IntN(2*basis.Permits))
		floor := int64(0)
		if i%3 > 0 {
			top, err := tb.curve(context.Background(), []limiters.Rate{above})
			require.NoError(t, err)
			floor = int64(top[0].Need)
		}
		cut := tb.recut(seg, below, floor, int64(1+rng.IntN(64)))
		require.NotNil(t, cut)
		require.Equal(t, int64(0), cut.start[0])
		require.True(t, slices.IsSorted(cut.start) && len(slices.Compact(slices.Clone(cut.start))) == len(cut.start), "trace %d: segments overlap", i)
		pieces, segs = pieces+len(cut.start), segs+len(seg.start)
		rates := []limiters.Rate{below, above}
		for range 8 {
			rates = append(rates, limiters.PerSecond(below.Permits+rng.IntN(above.Permits-below.Permits+1)))
		}
		want, err := tb.curve(context.Background(), rates)
		require.NoError(t, err)
		got, err := tb.curveOver(context.Background(), cut, rates)
		require.NoError(t, err)
		require.Equal(t, want, got, "trace %d, basis %s, cut at %s, floor %d: %d segments from %d", i, basis, below, floor, len(cut.start), len(seg.start))
	}
	require.Greater(t, pieces, segs, "recut cut nothing")
}

// A spec asked twice of the table's replay (replayed once) answers as it does asked once.
func TestTableReplayOfARepeatedSpec(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 24))
	reqs := randomTrace(rng, 3000, 2_000_000, 3)
	tb, err := load(context.Background(), Text("t.csv", csvOf(reqs)), nil, DefaultMaxMemory,
		func(*table, *trace.Row, uint32) error { return nil })
	require.NoError(t, err)
	a, b := "token-bucket:capacity=3,rate=400/1s", "fixed-window:limit=5,window=10ms"
	once, err := tb.replay(context.Background(), []string{a, b})
	require.NoError(t, err)
	twice, err := tb.replay(context.Background(), []string{a, b, a, b, a})
	require.NoError(t, err)
	require.Equal(t, []Replayed{once[0], once[1], once[0], once[1], once[0]}, twice)
	require.Less(t, once[0].Admitted, int64(len(reqs)), "nothing refused: the test tells nothing")
}
