//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/internal/redistest"
)

// redisStat is one field of the server's INFO (commandstats' "cmdstat_evalsha" line, or a
// stats field such as total_commands_processed), as a whole number.
func redisStat(t *testing.T, srv *redistest.Server, section, field string) int64 {
	t.Helper()
	info, ok := srv.MustDo("INFO", section).(string)
	require.True(t, ok)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(field) + `:(?:calls=)?(\d+)`).FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	require.NoError(t, err)
	return n
}

// TestRunRedisCentralLanesMatchInProcess runs the built-in fleet (two central token buckets,
// an outage) and testdata/central-redis.yaml (a leaky bucket falling back to local limiters,
// a fixed window on the callers' clocks with one clock ahead, keyed tables evicting by lru and
// only when fresh, a partition, a latency spike and a leave) in process and then twice with
// their central stores in a real redis-server: the JSON is the same to the byte every time;
// each --redis run sent its decisions to Redis (EVALSHAs counted by the server) and left no key
// behind.
func TestRunRedisCentralLanesMatchInProcess(t *testing.T) {
	srv := redistest.Start(t)
	for _, scenario := range []string{"fleet", "testdata/central-redis.yaml"} {
		t.Run(filepath.Base(scenario), func(t *testing.T) {
			want, stderr, err := ratelab(t, "run", scenario, "--format", "json")
			require.NoError(t, err, stderr)
			for rerun := range 2 {
				before := redisStat(t, srv, "commandstats", "cmdstat_evalsha")
				got, stderr, err := ratelab(t, "run", scenario, "--format", "json", "--redis", srv.Addr)
				require.NoError(t, err, stderr)
				if got != want {
					t.Fatalf("run %d: --redis changed the JSON: %s", rerun+1, firstDifference(want, got))
				}
				require.Regexp(t, `^central stores in Redis at 127\.0\.0\.1:\d+, keys ratelab:run:[a-z-]+:\d+:[0-9a-f]{8}:\*: \d+ keys, deleted after the run\n$`, stderr)
				sent := redisStat(t, srv, "commandstats", "cmdstat_evalsha") - before
				require.Greater(t, sent, int64(2000), "run %d: the decisions went to Redis", rerun+1)
				keys := srv.MustDo("DBSIZE")
				require.Zero(t, keys, "run %d: its keys are deleted", rerun+1)
			}
		})
	}
}

// firstDifference is the first line where got differs from want, with the line before it.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range min(len(w), len(g)) {
		if w[i] != g[i] {
			return fmt.Sprintf("line %d, after %q: want %q, got %q", i+1, w[max(i-1, 0)], w[i], g[i])
		}
	}
	return fmt.Sprintf("want %d lines, got %d", len(w), len(g))
}

// TestRunRedisRefusals: what Redis cannot hold is refused before any work, naming the lane
// and its kind, as a usage error (exit 2) with nothing on standard output.
func TestRunRedisRefusals(t *testing.T) {
	dir := t.TempDir()
	scenario := func(name, spec string) string {
		path := filepath.Join(dir, name+".yaml")
		text := "name: " + name + "\nhorizon: 1s\nsources: [{kind: constant, rate: 10}]\nlimiters:\n" +
			"  - {spec: " + spec + ", name: mine, fleet: {model: central, on_failure: fail-open, timeout: 10ms}}\n" +
			"  - {spec: \"token-bucket:capacity=3,rate=1/1s\", fleet: {model: local}}\n" +
			"fleet: {instances: 2, balancer: round-robin}\n"
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		return path
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{scenario("sliding", `"sliding-window:limit=3,window=1s"`), "--redis", "127.0.0.1:1"},
			`--redis 127.0.0.1:1: lane "mine" (limiters[0]) is a central sliding-window:limit=3,window=1s,slots=10: kind sliding-window cannot run in Redis (token-bucket, leaky-bucket and fixed-window can)`},
		{[]string{scenario("keyed", `"keys(max=10):sliding-window:limit=3,window=1s"`), "--redis", "127.0.0.1:1"},
			`sliding-window:limit=3,window=1s,slots=10: kind sliding-window cannot run in Redis`},
		{[]string{scenario("stacked", `"token-bucket:capacity=3,rate=1/1s+fixed-window:limit=2,window=1s"`), "--redis", "127.0.0.1:1"},
			`--redis 127.0.0.1:1: lane "mine" (limiters[0]) is a stack of 2 stages: a central store runs in Redis as one stage`},
		{[]string{"fleet", "--limiter", "token-bucket:capacity=3,rate=1/1s", "--redis", "127.0.0.1:1"},
			"--redis 127.0.0.1:1: scenario fleet has no central fleet lane (fleet: {model: central, …}) to keep in Redis"},
		{[]string{"--redis", "127.0.0.1:1"}, "has no central fleet lane"},
		{[]string{"fleet", "--redis-prefix", "x:"}, "--redis-prefix and --redis-timeout set where the central stores' keys go: they need --redis ADDR"},
		{[]string{"fleet", "--redis", "127.0.0.1:1", "--replications", "3"}, "--redis runs one run's central stores in Redis; it does not combine with --replications"},
		{[]string{"fleet", "--redis", "127.0.0.1:1", "--redis-timeout", "0s"}, "--redis-timeout 0s: must be positive"},
	} {
		stdout, _, err := ratelab(t, append([]string{"run"}, c.args...)...)
		require.ErrorContains(t, err, c.want, "%v", c.args)
		require.True(t, isUsage(err), "a usage error (exit 2): %v", err)
		require.Empty(t, stdout)
	}
	// A server that is not there: one line, before the run.
	stdout, _, err := ratelab(t, "run", "fleet", "--redis", "127.0.0.1:1", "--redis-timeout", "300ms")
	require.ErrorContains(t, err, "--redis 127.0.0.1:1: no answer to PING within 300ms: dial tcp 127.0.0.1:1: connect: connection refused")
	require.False(t, isUsage(err))
	require.Empty(t, stdout)
}

// TestRunRedisKilledMidRun kills the server (SIGKILL) a quarter of the way through run fleet
// --redis. Nothing panics; the results are printed, and then the run fails (exit 1) with the
// count and the first error, which names the key and the cause. Each central lane's decisions
// that Redis did not make are its policy's: counted in its store failures beside the 600 of
// the simulated outage, as many as standard error says, fail-open admitting every request of
// the last second and fail-closed none. The lanes without a store are untouched.
func TestRunRedisKilledMidRun(t *testing.T) {
	srv := redistest.Start(t)
	want, _, err := ratelab(t, "run", "fleet", "--format", "json")
	require.NoError(t, err)
	var inProcess engine.Results
	require.NoError(t, json.Unmarshal([]byte(want), &inProcess))

	start := redisStat(t, srv, "stats", "total_commands_processed")
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) { // about 16,000 commands in a run: kill after 4,000
			if n, err := srv.Do("INFO", "stats"); err == nil {
				if m := regexp.MustCompile(`total_commands_processed:(\d+)`).FindStringSubmatch(n.(string)); m != nil {
					if v, _ := strconv.ParseInt(m[1], 10, 64); v-start > 4000 {
						break
					}
				}
			}
			time.Sleep(time.Millisecond)
		}
		srv.Kill()
	}()
	var out, errOut bytes.Buffer
	err = run(context.Background(), []string{"run", "fleet", "--format", "json", "--redis", srv.Addr, "--redis-timeout", "300ms"},
		strings.NewReader(""), &out, &errOut)
	<-killed
	require.Error(t, err)
	require.False(t, isUsage(err), "a failure (exit 1), not a usage error")
	require.Regexp(t, `^--redis 127\.0\.0\.1:\d+: \d+ decisions and \d+ state reads failed; the first: redislimit: token-bucket at key `+
		`"ratelab:run:fleet:1:[0-9a-f]{8}:[45]:token-bucket:capacity=30,rate=150/1s": the store gave no decision: .+$`, err.Error())
	require.Contains(t, errOut.String(), "\nwarning: --redis "+srv.Addr+": could not delete the run's keys")

	var got engine.Results
	require.NoError(t, json.Unmarshal(out.Bytes(), &got), "the results are printed")
	for _, i := range []int{0, 1, 2, 5} {
		require.Equal(t, inProcess.Lanes[i], got.Lanes[i], "lane %s has no store", got.Lanes[i].Name)
	}
	for _, c := range []struct {
		lane int
		mode string
	}{{3, "fail-open"}, {4, "fail-closed"}} {
		lane := got.Lanes[c.lane]
		m := regexp.MustCompile(regexp.QuoteMeta(lane.Name) + `: (\d+) decisions Redis did not make, decided ` + c.mode + ` instead`).FindStringSubmatch(errOut.String())
		require.NotNil(t, m, "standard error names %s: %s", lane.Name, errOut.String())
		failed, _ := strconv.ParseInt(m[1], 10, 64)
		require.Greater(t, failed, int64(500), "%s: half of its run or more came after the kill", lane.Name)
		require.Equal(t, inProcess.Lanes[c.lane].Fleet.StoreFailures+failed, lane.Fleet.StoreFailures, lane.Name)
		last := lane.Bins[len(lane.Bins)-100:] // the last second
		var offered, admitted int64
		for _, b := range last {
			offered, admitted = offered+b.Offered, admitted+b.Admitted
		}
		require.EqualValues(t, 300, offered)
		if c.mode == "fail-open" {
			require.Equal(t, offered, admitted, "fail-open admits every request Redis did not decide")
		} else {
			require.Zero(t, admitted, "fail-closed refuses them")
		}
	}
}
