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

// The new clients from YAML: octokit's group, aws-adaptive's quota, header-paced's attempts;
// a group that is none of Bottleneck's, or on another policy, is an error at its line.
func TestLoopClientsFromYAML(t *testing.T) {
	sc, err := Load("f.yaml", []byte(`horizon: 10s
sources: [{kind: constant, rate: 5}]
limiters:
  - spec: fixed-window:limit=1,window=1s
    client: {policy: octokit, group: write}
  - spec: fixed-window:limit=1,window=1s
    client: {policy: aws-adaptive, retry_quota: 50}
  - spec: fixed-window:limit=1,window=1s
    client: {policy: header-paced, delay: 1s, max_attempts: 3}
  - spec: fixed-window:limit=1,window=1s
    client: {policy: stripe-lock-timeout}
`))
	require.NoError(t, err)
	assert.Equal(t, engine.Client{Policy: engine.PolicyOctokit, Group: "write"}, *sc.Lanes[0].Client)
	assert.Equal(t, engine.Client{Policy: engine.PolicyAWSAdaptive, RetryQuota: 50}, *sc.Lanes[1].Client)
	assert.Equal(t, engine.Client{Policy: engine.PolicyHeaderPaced, Delay: s, MaxAttempts: 3}, *sc.Lanes[2].Client)
	assert.Equal(t, engine.PolicyStripeLock, sc.Lanes[3].Client.Policy)
	_, err = engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)

	_, err = Load("f.yaml", []byte("horizon: 10s\nsources: [{kind: constant, rate: 5}]\nlimiters: [concurrency:max=1]\nclient: {policy: octokit, group: reads}\n"))
	assert.ErrorContains(t, err, `f.yaml:4:`)
	assert.ErrorContains(t, err, `client.group: unknown Bottleneck group "reads" (global, write, search, notifications)`)
	_, err = Load("f.yaml", []byte("horizon: 10s\nsources: [{kind: constant, rate: 5}]\nlimiters: [concurrency:max=1]\nclient: {policy: header-paced, delay: 1s}\n"))
	assert.ErrorContains(t, err, "client.max_attempts: must be at least 1 for header-paced")
}
