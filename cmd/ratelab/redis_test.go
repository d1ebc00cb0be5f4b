//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/internal/redistest"
)

// decisionColumns reads replay's CSV: the header and each column's values.
func decisionColumns(t *testing.T, out string) (header []string, columns map[string][]string) {
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	header, columns = rows[0], map[string][]string{}
	for _, row := range rows[1:] {
		for i, v := range row {
			columns[header[i]] = append(columns[header[i]], v)
		}
	}
	return header, columns
}

// TestReplayAgainstRealRedis replays the recorded API-gateway trace through in-process lanes
// and the same specs as redis/ stages of a real redis-server: every decision of a redis/
// column is its in-process twin's, refusals included.
func TestReplayAgainstRealRedis(t *testing.T) {
	srv := redistest.Start(t)
	specs := []string{
		"token-bucket:capacity=3,rate=20/1s",
		"fixed-window:limit=10,window=1s",
		"leaky-bucket:rate=15/1s",
	}
	args := []string{"replay", "--in", "../../scenarios/traces/api-gateway.csv", "--redis", srv.Addr}
	for _, s := range specs {
		args = append(args, "--limiter", s, "--limiter", "redis/"+s)
	}
	args = append(args, "--limiter", "redis/token-bucket:capacity=3,rate=20/1s+concurrency:max=5")
	for range 2 { // a second replay finds the keys of the first and starts afresh all the same
		stdout, stderr, err := ratelab(t, args...)
		require.NoError(t, err, stderr)
		header, cols := decisionColumns(t, stdout)
		require.Len(t, header, 2+2*len(specs)+1)
		require.Len(t, cols["t_ns"], 1919)
		for _, s := range specs {
			local, remote := cols[s], cols["redis/"+s]
			require.Len(t, remote, 1919, "column redis/%s", s)
			require.Equal(t, local, remote, "redis/%s decides as %s", s, s)
			require.Contains(t, local, "0", "%s refuses some", s)
			require.Contains(t, local, "1", "%s admits some", s)
		}
		require.Equal(t, cols[specs[0]], cols["redis/token-bucket:capacity=3,rate=20/1s+concurrency:max=5"])
		require.Contains(t, stderr, "replayed 1919 requests")
		require.NotContains(t, stderr, "did not make")
	}
}

// TestReplayRedisKilledMidRun kills the server halfway through a replay read from a pipe: the
// rows after the kill are the policy's (fail-open: admitted, where the in-process twin refuses
// some), the run ends with an error naming the server, the count and the cause, and the rows
// before it are written all the same.
func TestReplayRedisKilledMidRun(t *testing.T) {
	srv := redistest.Start(t)
	const rows = 400 // every 1ms: 1,000/s against 100/s
	var first, second bytes.Buffer
	first.WriteString("t_ns\n")
	for i := range rows {
		buf := &first
		if i >= rows/2 {
			buf = &second
		}
		fmt.Fprintf(buf, "%d\n", int64(i)*int64(time.Millisecond))
	}
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write(first.Bytes())
		time.Sleep(300 * time.Millisecond) // the first half is read: let it be decided
		srv.Kill()
		_, _ = pw.Write(second.Bytes())
		_ = pw.Close()
	}()
	var out, errOut bytes.Buffer
	spec := "token-bucket:capacity=5,rate=100/1s"
	err := run(context.Background(), []string{"replay", "--in", "-", "--redis", srv.Addr, "--redis-on-failure", "fail-open",
		"--redis-timeout", "200ms", "--limiter", spec, "--limiter", "redis/" + spec}, pr, &out, &errOut)
	require.Error(t, err)
	require.Regexp(t, `^--redis 127\.0\.0\.1:\d+: \d+ decisions failed; the first: redislimit: token-bucket at key "ratelab:replay:2:1:`+
		`token-bucket:capacity=5,rate=100/1s": the store gave no decision: .+ \(fail-open: admitted\)$`, err.Error())
	require.Contains(t, errOut.String(), "limiter 2: ")
	require.Contains(t, errOut.String(), "decisions Redis did not make, decided fail-open instead")
	_, cols := decisionColumns(t, out.String())
	local, remote := cols[spec], cols["redis/"+spec]
	require.Len(t, remote, rows)
	require.Equal(t, local[:50], remote[:50], "before the kill the store decides as in process")
	for i := rows / 2; i < rows; i++ {
		require.Equal(t, "1", remote[i], "row %d, after the kill: fail-open admits", i)
	}
	require.Contains(t, local[rows/2:], "0", "where the in-process twin refuses")
}

func TestReplayRedisUsageErrors(t *testing.T) {
	trace := "../../scenarios/traces/api-gateway.csv"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--limiter", "redis/token-bucket:capacity=3,rate=20/1s"}, "--limiter redis/token-bucket:capacity=3,rate=20/1s: a redis/ stage needs --redis ADDR"},
		{[]string{"--redis", "127.0.0.1:1", "--limiter", "leaky-bucket:rate=1/1s"}, "--redis 127.0.0.1:1: no --limiter has a redis/ stage (write one as redis/leaky-bucket:rate=1/1s)"},
		{[]string{"--redis", "127.0.0.1:1", "--limiter", "redis/sliding-window:limit=3,window=1s"}, "--limiter: redis/sliding-window:limit=3,window=1s: kind sliding-window cannot run in Redis (token-bucket, leaky-bucket and fixed-window can)"},
		{[]string{"--redis", "127.0.0.1:1", "--redis-on-failure", "open", "--limiter", "redis/leaky-bucket:rate=1/1s"}, `--redis-on-failure: unknown failure mode "open"`},
		{[]string{"--redis", "127.0.0.1:1", "--redis-timeout", "0s", "--limiter", "redis/leaky-bucket:rate=1/1s"}, "--redis-timeout 0s: must be positive"},
	} {
		_, _, err := ratelab(t, append([]string{"replay", "--in", trace}, c.args...)...)
		require.ErrorContains(t, err, c.want)
		var usage *usageError
		require.ErrorAs(t, err, &usage, "a usage error (exit 2): %v", err)
	}
	// A server that is not there: one clear line, before any row is written.
	stdout, _, err := ratelab(t, "replay", "--in", trace, "--redis", "127.0.0.1:1", "--redis-timeout", "300ms", "--limiter", "redis/leaky-bucket:rate=1/1s")
	require.ErrorContains(t, err, "--redis 127.0.0.1:1: no answer to PING within 300ms: dial tcp 127.0.0.1:1: connect: connection refused")
	require.Empty(t, stdout)
}
