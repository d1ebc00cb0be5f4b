package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/sweep"
)

// A sweep's table heads a lane's column with its template, the varied fields starred: the
// template's own capacity=10 is in no row of a sweep over capacity.
func TestSweepHeaderStarsWhatVaries(t *testing.T) {
	dims := []sweep.Dimension{{Target: "token-bucket", Kind: "token-bucket", Field: "capacity"}, {Target: "cap", Field: "max"}}
	for label, want := range map[string]string{
		"token-bucket:capacity=10,rate=100/1s":                              "token-bucket:capacity=*,rate=100/1s",
		"keys(max=100):token-bucket:capacity=3,rate=1/1s+concurrency:max=5": "keys(max=100):token-bucket:capacity=*,rate=1/1s+concurrency:max=5",
		"fixed-window:limit=100,window=1s":                                  "fixed-window:limit=100,window=1s",
		"cap":                                                               "cap",
	} {
		assert.Equal(t, want, laneTemplate(label, dims), label)
	}
	out, _, err := ratelab(t, "sweep", "poisson", "--vary", "token-bucket.capacity=1..3")
	require.NoError(t, err)
	assert.Contains(t, out, "token-bucket.capacity  token-bucket:capacity=*,rate=100/1s")
	assert.False(t, strings.Contains(out, "capacity=10,"), "the template's own value is in no row")
}
