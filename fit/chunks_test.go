package fit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Over a table of several chunks (65,536 rows each), with windows holding from a few rows to
// more than a chunk, the fit answers as the streamed fit does: the peak's two cursors cross
// chunks apart, and the worst burst's permits are counted across chunks (table.worst).
func TestTableOfChunksFitIsTheStreamedFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 21))
	reqs := randomTrace(rng, 3*chunkRows+rng.IntN(chunkRows), 2000, 3)
	src := Text("chunks.csv", csvOf(reqs))
	for i, window := range []time.Duration{time.Microsecond, time.Millisecond, 100 * time.Millisecond, time.Second} {
		opt := Options{Window: window, Steps: 12, RefusePPM: 10000}
		requireStreamedIsInMemory(t, i, func(streamed bool) (any, error) {
			if streamed {
				opt.MaxMemory = 1
			}
			return Fit(context.Background(), src, opt)
		})
	}
}

// table.peak is the most permits in any window (t − W, t] ending at a request, the first
// such t, over chunks: against one cursor run over the requests themselves.
func TestTablePeakIsTheMostInAnyWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 22))
	reqs := randomTrace(rng, 2*chunkRows+rng.IntN(chunkRows), 300, 4)
	acc := newStatsAccumulator(time.Second, 10)
	tb, err := loadStats(context.Background(), Text("peak.csv", csvOf(reqs)), DefaultMaxMemory, acc)
	require.NoError(t, err)
	require.Len(t, tb.chunks, 3)
	for _, w := range []int64{1, 7, 1000, 30_000, 10_000_000, 1 << 40} {
		var want, wantAt, in int64
		behind := 0
		for _, r := range reqs {
			in += int64(r.n)
			for ; reqs[behind].at <= r.at-w; behind++ {
				in -= int64(reqs[behind].n)
			}
			if in > want {
				want, wantAt = in, r.at
			}
		}
		got, gotAt := tb.peak(w)
		require.Equal(t, fmt.Sprint(want, wantAt), fmt.Sprint(got, gotAt), "window %dns", w)
	}
}
