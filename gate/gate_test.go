package gate

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
)

func run(t *testing.T, name string) (*engine.Scenario, *engine.Results) {
	t.Helper()
	sc, err := scenarios.Get(name)
	require.NoError(t, err)
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	return sc, res
}

// boundary-attack: the fixed window admits 200 (rate overshoot 2), the sliding window 100,
// the token bucket 101; a check names each lane that breaks it, with its value.
func TestVerifyNamesEachBrokenLane(t *testing.T) {
	sc, res := run(t, "boundary-attack")
	parse := func(text string) Check {
		c, err := Parse(text)
		require.NoError(t, err, text)
		return c
	}
	require.NoError(t, Verify([]Check{parse("sliding-window.admitted == 100"), parse("all.overshoot <= 1")}, sc, res))
	err := Verify([]Check{parse("all.admitted < 150")}, sc, res)
	require.Error(t, err)
	assert.Equal(t, "assertion failed: all.admitted < 150: fixed-window:limit=100,window=1s has admitted 200", err.Error())

	out, err := parse("all.rate_overshoot <= 1.05").Measure(sc, res)
	require.NoError(t, err)
	require.Len(t, out, 3)
	assert.Equal(t, 2.0, out[0].Value)
	assert.False(t, out[0].Held)
	assert.InDelta(t, 1.01, out[2].Value, 1e-9, "the token bucket's 101 of 100")
	assert.True(t, out[2].Held)
}

// A check written wrong is an *Error that reads as the command line's, with did-you-mean.
func TestParseErrors(t *testing.T) {
	for text, want := range map[string]string{
		"all.refusd < 1":     `--assert "all.refusd < 1": unknown metric refusd (did you mean refused?); metrics: offered, admitted,`,
		"all.p99 < 5":        `p99 is a wait: compare it with a duration such as 50ms, not "5"`,
		"refused < 1":        `"refused" is not LANES.METRIC`,
		"all.refused% 1":     `no comparison; write LANES.METRIC OP VALUE, e.g. 'all.refused% < 1'`,
		"all.admitted% >= x": `admitted% compares with a number, not "x"`,
	} {
		_, err := Parse(text)
		var ge *Error
		require.True(t, errors.As(err, &ge), text)
		assert.Contains(t, err.Error(), want, text)
		assert.True(t, strings.HasPrefix(err.Error(), "--assert "), text)
	}
	sc, _ := run(t, "burst-after-idle")
	c, err := Parse("tokn-bucket.refused < 1")
	require.NoError(t, err)
	_, err = c.Select(sc)
	assert.EqualError(t, err, `--assert "tokn-bucket.refused < 1": no lane of burst-after-idle is tokn-bucket; LANES is all, a lane's name, or a kind of one of its stages (did you mean token-bucket?)`)
}

// noisy-neighbour: the global bucket admits the quiet clients' requests as seldom as the
// neighbour's (fairness 0.03); a bucket per client admits every quiet request (0.94).
func TestKeyMetrics(t *testing.T) {
	sc, res := run(t, "noisy-neighbour")
	quiet, ok := Lookup("quiet_admitted%")
	require.True(t, ok)
	fair, _ := Lookup("fairness")
	global, ok := quiet.Value(sc.Lanes[0], res.Lanes[0])
	require.True(t, ok)
	perKey, _ := quiet.Value(sc.Lanes[1], res.Lanes[1])
	assert.Less(t, global, 25.0)
	assert.Equal(t, 100.0, perKey)
	f0, _ := fair.Value(sc.Lanes[0], res.Lanes[0])
	f1, _ := fair.Value(sc.Lanes[1], res.Lanes[1])
	assert.InDelta(t, 0.03, f0, 0.01)
	assert.InDelta(t, 0.94, f1, 0.01)

	// One key: no value, and a check of it cannot be answered.
	sc, res = run(t, "burst-after-idle")
	c, err := Parse("all.fairness > 0.5")
	require.NoError(t, err)
	_, err = c.Measure(sc, res)
	assert.EqualError(t, err, "assert all.fairness > 0.5: no selected lane has a value for fairness (Jain's index of admitted permits over the keys offered (1: every key admitted alike))")
}

// A metric registered twice is a bug found at start-up.
func TestRegisterRefusesATakenName(t *testing.T) {
	assert.PanicsWithValue(t, "gate: metric p99 registered twice", func() {
		Register(Metric{Name: "p99", Kind: Wait, Value: func(engine.LaneSpec, engine.LaneResult) (float64, bool) { return 0, true }})
	})
	assert.Equal(t, "50ms", Metric{Kind: Wait}.Format(50e6))
	assert.Equal(t, "14.82%", Metric{Kind: Percent}.Format(14.8249))
}
