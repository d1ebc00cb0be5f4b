package main

import (
	"encoding/csv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
)

// --limiter NAME=SPEC names a lane; the name is what the table, CSV and JSON call it, and the
// lane runs exactly as the unnamed spec does.
func TestNamedLanes(t *testing.T) {
	out, _, err := ratelab(t, "run", "burst-after-idle", "--format", "csv",
		"--limiter", "cap10=token-bucket:capacity=10,rate=100/1s",
		"--limiter", "token-bucket:capacity=10,rate=100/1s",
		"--limiter", "paced + bulkhead = leaky-bucket:rate=100/1s+concurrency:max=3")
	require.NoError(t, err)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 4)
	assert.Equal(t, "cap10", rows[1][0])
	assert.Equal(t, "token-bucket:capacity=10,rate=100/1s", rows[2][0], "a spec alone keeps its name")
	assert.Equal(t, "paced + bulkhead", rows[3][0])
	assert.Equal(t, rows[1][1:], rows[2][1:], "a name changes nothing else")

	table, _, err := ratelab(t, "run", "burst-after-idle", "--limiter", "cap10=token-bucket:capacity=10,rate=100/1s")
	require.NoError(t, err)
	assert.Contains(t, table, "\n  cap10  ")
	js, _, err := ratelab(t, "run", "burst-after-idle", "--format", "json", "--limiter", "cap10=token-bucket:capacity=10,rate=100/1s")
	require.NoError(t, err)
	assert.True(t, strings.Contains(js, `"name": "cap10",`), "the JSON names the lane")
}

func TestParseLane(t *testing.T) {
	for text, want := range map[string][2]string{
		"cap10=token-bucket:capacity=10,rate=100/1s":            {"cap10", "token-bucket:capacity=10,rate=100/1s"},
		"token-bucket:capacity=10,rate=100/1s":                  {"", "token-bucket:capacity=10,rate=100/1s"},
		"concurrency:max=5":                                     {"", "concurrency:max=5"},
		"fixed-window:limit=5,window=1s+concurrency:max=3":      {"", "fixed-window:limit=5,window=1s+concurrency:max=3"},
		"both=fixed-window:limit=5,window=1s+concurrency:max=3": {"both", "fixed-window:limit=5,window=1s+concurrency:max=3"},
		" spaced name =concurrency:max=5":                       {"spaced name", "concurrency:max=5"},
		// keys(…)'s = comes before the kind's colon: still a spec, not a lane named "keys(max".
		"keys(max=50,evict=lru):token-bucket:capacity=3,rate=10/1s":   {"", "keys(max=50,evict=lru):token-bucket:capacity=3,rate=10/1s"},
		"z=keys(max=50,evict=lru):token-bucket:capacity=3,rate=10/1s": {"z", "keys(max=50,evict=lru):token-bucket:capacity=3,rate=10/1s"},
	} {
		lane, err := parseLane(text)
		require.NoError(t, err, text)
		assert.Equal(t, want[0], lane.Name, text)
		assert.Equal(t, want[1], engine.StackString(lane.Stack), text)
	}
	for text, want := range map[string]string{
		"=concurrency:max=5":                `--limiter =concurrency:max=5: the lane's name before = is empty`,
		"token-bucket=capacity=1,rate=1/1s": "--limiter token-bucket=capacity=1,rate=1/1s: token-bucket is a limiter kind, not a lane's name; a spec is KIND:FIELD=VALUE,… (did you mean token-bucket:capacity=1,rate=1/1s?)",
		"Concurrency=max=3":                 "--limiter Concurrency=max=3: Concurrency is a limiter kind, not a lane's name; a spec is KIND:FIELD=VALUE,… (did you mean concurrency:max=3?)",
		"cap=token-bucket:capacity=1":       `--limiter: limiter spec "token-bucket:capacity=1": rate=: missing (e.g. token-bucket:capacity=3,rate=100/1s)`,
	} {
		_, err := parseLane(text)
		require.Error(t, err, text)
		assert.True(t, isUsage(err), text)
		assert.Equal(t, want, err.Error(), text)
	}
}

func TestNamedLaneErrors(t *testing.T) {
	_, _, err := ratelab(t, "run", "--limiter", "a=concurrency:max=1", "--limiter", "a=concurrency:max=2")
	require.Error(t, err)
	assert.True(t, isUsage(err))
	assert.Equal(t, "--limiter a=concurrency:max=2: two lanes are named a", err.Error())
	// replay names its columns by their specs: a name is refused, saying so.
	_, _, err = ratelab(t, "replay", "--in", "-", "--limiter", "cap10=token-bucket:capacity=10,rate=100/1s")
	require.Error(t, err)
	assert.True(t, isUsage(err))
	assert.Contains(t, err.Error(), `a lane cannot be named "cap10" here`)
}
