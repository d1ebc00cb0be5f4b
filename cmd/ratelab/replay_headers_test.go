package main

import (
	"encoding/csv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replay --headers writes, beside each decision, the RateLimit and Retry-After fields a
// server would send: a bucket of 1 per key refilling every 2s refuses a's second request at 0
// with Retry-After 2, admits b's, and at 1.5s tells a 1 more second; a fixed window of 2 per
// 10s refuses the third request of its window until the boundary, 10s (then 9s) away.
func TestReplayHeaders(t *testing.T) {
	trace := "t_ns,permits,key\n0,1,a\n0,1,a\n0,1,b\n1500000000,1,a\n"
	out, stderr, err := ratelabIn(t, trace, "replay", "--in", "-", "--headers",
		"--limiter", "keys(max=10):token-bucket:capacity=1,rate=1/2s", "--limiter", "fixed-window:limit=2,window=10s")
	require.NoError(t, err)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 5)
	assert.Equal(t, []string{"0", "1", "a", "1", `"token-bucket";r=0;t=2;pk=:YQ==:`, "", "1", `"fixed-window";r=1;t=10`, ""}, rows[1])
	assert.Equal(t, []string{"0", "1", "a", "0", `"token-bucket";r=0;t=2;pk=:YQ==:`, "2", "1", `"fixed-window";r=0;t=10`, ""}, rows[2])
	assert.Equal(t, []string{"0", "1", "b", "1", `"token-bucket";r=0;t=2;pk=:Yg==:`, "", "0", `"fixed-window";r=0;t=10`, "10"}, rows[3])
	assert.Equal(t, []string{"1500000000", "1", "a", "0", `"token-bucket";r=0;t=1;pk=:YQ==:`, "1", "0", `"fixed-window";r=0;t=9`, "9"}, rows[4])
	assert.Contains(t, stderr, `fixed-window:limit=2,window=10s: RateLimit-Policy: "fixed-window";q=2;w=10`)

	_, _, err = ratelabIn(t, trace, "replay", "--in", "-", "--headers", "--compare", "--limiter", "fixed-window:limit=2,window=10s")
	require.Error(t, err)
}
