package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --assert gates a run: held assertions print a count and exit 0; a broken one fails (exit 1)
// naming the assertion, the lane and its value, after the output was written.
func TestAssertGatesARun(t *testing.T) {
	out, errOut, err := ratelab(t, "run", "boundary-attack", "--assert", "all.overshoot <= 1", "--assert", "token-bucket.refused% < 60",
		"--assert", "sliding-window.admitted == 100", "--assert", "fixed-window.max_in_window >= 200")
	require.NoError(t, err)
	assert.Contains(t, out, "boundary-attack — seed 1")
	assert.Equal(t, "4 assertions held\n", errOut)

	// The fixed window admits 200 in 1s against a nominal 100: its rate overshoot is 2, the
	// others' at most 1.01 (the token bucket's 101).
	out, _, err = ratelab(t, "run", "boundary-attack", "--format", "csv", "--assert", "all.rate_overshoot <= 1.05")
	require.Error(t, err)
	assert.False(t, isUsage(err), "a broken assertion is a failure, exit 1")
	assert.Equal(t, "assertion failed: all.rate_overshoot <= 1.05: fixed-window:limit=100,window=1s has rate_overshoot 2", err.Error())
	assert.Contains(t, out, "limiter,offered", "the output is written before the verdict")

	// Every lane a selector picks is checked; each broken one is named.
	_, _, err = ratelab(t, "run", "boundary-attack", "--assert", "all.admitted < 150")
	require.Error(t, err)
	assert.Equal(t, "assertion failed: all.admitted < 150: fixed-window:limit=100,window=1s has admitted 200", err.Error())

	// A named lane, and a wait compared with a duration.
	_, errOut, err = ratelab(t, "run", "burst-after-idle", "--limiter", "cap10=token-bucket:capacity=10,rate=100/1s",
		"--assert", "cap10.p99 <= 50ms", "--assert", "cap10.refused == 0")
	require.NoError(t, err)
	assert.Equal(t, "2 assertions held\n", errOut)
	_, _, err = ratelab(t, "run", "retry-storm", "--assert", "all.gave_up% < 14.7")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "immediate retry has gave_up% 14.82%")
}

// A bad assertion is a usage error (exit 2) before anything runs, saying what is wrong.
func TestAssertRefusesBadChecks(t *testing.T) {
	for _, tc := range []struct{ check, want string }{
		{"all.refused% 1", `--assert "all.refused% 1": no comparison; write LANES.METRIC OP VALUE, e.g. 'all.refused% < 1' (OP: < <= > >= == !=)`},
		{"refused < 1", `--assert "refused < 1": "refused" is not LANES.METRIC (LANES: all, a lane's name or a kind)`},
		{"all.refusd < 1", `unknown metric refusd (did you mean refused?); metrics: offered, admitted, refused,`},
		{"all.p99 < 5", `p99 is a wait: compare it with a duration such as 50ms, not "5"`},
		{"all.refused < lots", `refused compares with a number, not "lots"`},
		{"all.refused <", `no value after <`},
		{"tokn-bucket.refused < 1", `no lane of boundary-attack is tokn-bucket; LANES is all, a lane's name, or a kind of one of its stages (did you mean token-bucket?)`},
	} {
		_, _, err := ratelab(t, "run", "boundary-attack", "--assert", tc.check)
		require.Error(t, err, tc.check)
		assert.True(t, isUsage(err), tc.check)
		assert.Contains(t, err.Error(), tc.want)
	}
	// A metric no selected lane has is a failure, not a pass.
	_, _, err := ratelab(t, "run", "slow-downstream", "--limiter", "concurrency:max=5", "--assert", "all.overshoot <= 1")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no selected lane has a value for overshoot")
}

// A lane's spec may hold dots: the metric is what follows the last one.
func TestAssertLaneSpecWithDots(t *testing.T) {
	a, err := parseAssertion("token-bucket:capacity=2,rate=0.5/1s.admitted>=1")
	require.NoError(t, err)
	assert.Equal(t, "token-bucket:capacity=2,rate=0.5/1s", a.Selector)
	assert.Equal(t, "admitted", a.Metric.Name)
	assert.Equal(t, ">=", a.Op)
	assert.Equal(t, 1.0, a.Value)
}
