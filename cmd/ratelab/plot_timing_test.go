package main

import (
	"context"
	"io"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// --timing reports, on standard error, the run's wall time (simulation included), each
// chart's rendering and the total; without it plot writes nothing there.
func TestPlotTimingReportsRunAndRenderTimes(t *testing.T) {
	dir := t.TempDir()
	_, errOut, err := ratelab(t, "plot", "steady", "--chart", "rate", "--chart", "state", "--out", dir, "--timing")
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`^plot: [0-9,]+ requests per lane simulated in [0-9.]+(µs|ms|s); `+
		`rendered rate [0-9.]+(µs|ms|s), state [0-9.]+(µs|ms|s); total [0-9.]+(µs|ms|s)\n$`), errOut)
	_, errOut, err = ratelab(t, "plot", "steady", "--chart", "rate", "--out", dir)
	require.NoError(t, err)
	assert.Empty(t, errOut)
}

// A window of a run too long to trace whole gets the window's trace, and only it: the
// rerun records the events of [from, to) and stops at to. The whole of a short run is traced
// as before; the whole of a long one is not traced at all.
func TestRunForChartsTracesTheWindowOfALongRun(t *testing.T) {
	long := func() *engine.Scenario {
		return &engine.Scenario{Name: "long", Seed: 1, Horizon: 60 * time.Second, Client: engine.Client{Policy: engine.PolicyDrop},
			Lanes:   []engine.LaneSpec{{Stack: tokenBucketStack(t)}},
			Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 2000}}} // 120,000 attempts
	}
	e := &env{stdout: io.Discard, stderr: io.Discard}
	res, err := runForCharts(context.Background(), e, long(), 0, 0)
	require.NoError(t, err)
	require.Greater(t, res.Lanes[0].Totals.Attempts, int64(traceLimit))
	assert.Empty(t, res.Lanes[0].Trace, "too long to trace whole")

	from, to := 30*time.Second, 31*time.Second
	res, err = runForCharts(context.Background(), e, long(), from, to)
	require.NoError(t, err)
	lane := res.Lanes[0]
	require.NotEmpty(t, lane.Trace)
	assert.Equal(t, from, lane.TraceFrom)
	assert.Equal(t, to, lane.TraceTo)
	for _, r := range lane.Trace {
		require.True(t, r.At >= from && r.At < to, "a record at %v", r.At)
	}
	assert.InDelta(t, 4000, float64(len(lane.Trace)), 600, "about a second of 2000/s, mostly rejected then refused, two records each")

	short := long()
	short.Horizon = 5 * time.Second
	res, err = runForCharts(context.Background(), e, short, 0, 0)
	require.NoError(t, err)
	assert.Zero(t, res.Lanes[0].TraceFrom)
	assert.Zero(t, res.Lanes[0].TraceTo)
	tot := res.Lanes[0].Totals
	assert.Equal(t, 2*tot.Attempts-tot.Admitted, int64(len(res.Lanes[0].Trace)),
		"a drop client, no downstream: admitted (one record) or rejected then refused (two), for the whole run")
}

func tokenBucketStack(t *testing.T) []limiters.Spec {
	st, err := engine.ParseStack("token-bucket:capacity=10,rate=100/1s")
	require.NoError(t, err)
	return st
}
