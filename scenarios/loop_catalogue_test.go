package scenarios

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
)

// header-paced: the client that paces itself from the headers is never refused, and every
// other one is; all but the deaf backoff admit every request. The numbers are the
// description's.
func TestHeaderPacedClientsSeeNoRefusal(t *testing.T) {
	sc, err := Get("header-paced")
	require.NoError(t, err)
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	paced, obeyed, backoff, octokit := res.Lanes[0], res.Lanes[1], res.Lanes[2], res.Lanes[3]
	assert.Zero(t, paced.Totals.RefusedAttempts)
	assert.Equal(t, []int64{520, 520, 520}, []int64{paced.Totals.Offered, paced.Totals.Attempts, paced.Totals.Admitted})
	assert.Equal(t, 1.0, paced.Loop.Amplification)
	for _, l := range []engine.LaneResult{obeyed, backoff, octokit} {
		assert.Positive(t, l.Totals.RefusedAttempts, l.Name)
	}
	assert.Equal(t, []int64{700, 180, 520}, []int64{obeyed.Totals.Attempts, obeyed.Totals.RefusedAttempts, obeyed.Totals.Admitted})
	assert.Equal(t, []int64{700, 180, 520}, []int64{octokit.Totals.Attempts, octokit.Totals.RefusedAttempts, octokit.Totals.Admitted})
	assert.Equal(t, []int64{1764, 1252, 8}, []int64{backoff.Totals.Attempts, backoff.Totals.RefusedAttempts, backoff.Totals.GaveUp})
	assert.Equal(t, "8.99s", paced.Loop.LatencyP99.Round(10*ms).String())
	assert.Equal(t, 9*s, obeyed.Loop.LatencyP99)
	assert.Equal(t, 10*s, octokit.Wait.Max, "octokit: the reset plus 1s")
}
