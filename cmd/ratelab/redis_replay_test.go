//go:build unix

package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/internal/redistest"
)

// TestReplayRedisPipelinedCommand: `ratelab replay --redis` on the recorded API-gateway trace
// with lanes that pipeline (each one redis/ stage, or in process) writes, column for column,
// what the in-process twins decide, and the replay's summary.
func TestReplayRedisPipelinedCommand(t *testing.T) {
	srv := redistest.Start(t)
	specs := []string{"token-bucket:capacity=3,rate=20/1s", "fixed-window:limit=10,window=1s", "leaky-bucket:rate=15/1s"}
	args := []string{"replay", "--in", "../../scenarios/traces/api-gateway.csv", "--redis", srv.Addr}
	local := []string{"replay", "--in", "../../scenarios/traces/api-gateway.csv"}
	for _, s := range specs {
		args = append(args, "--limiter", "redis/"+s)
		local = append(local, "--limiter", s)
	}
	got, stderr, err := ratelab(t, args...)
	require.NoError(t, err, stderr)
	want, wantErr, err := ratelab(t, local...)
	require.NoError(t, err)
	gotHeader, gotRows, _ := strings.Cut(got, "\n")
	_, wantRows, _ := strings.Cut(want, "\n")
	require.Equal(t, `t_ns,permits,"redis/token-bucket:capacity=3,rate=20/1s","redis/fixed-window:limit=10,window=1s",redis/leaky-bucket:rate=15/1s`, gotHeader)
	if gotRows != wantRows {
		t.Fatalf("the redis/ columns differ from the in-process ones: %s", firstDifference(wantRows, gotRows))
	}
	require.Equal(t, 1919, strings.Count(gotRows, "\n"))
	admitted := regexp.MustCompile(`admitted \d+ \([\d.]+%\)`)
	require.Equal(t, admitted.FindAllString(wantErr, -1), admitted.FindAllString(stderr, -1))
	require.Len(t, admitted.FindAllString(stderr, -1), 3)
}
