package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/internal/outfile"
)

// ratelab runs the CLI in-process with buffers for its streams.
func ratelab(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), err
}

// isUsage is whether err exits 2: a usage error, or an output that is an input.
func isUsage(err error) bool {
	var u *usageError
	var same *outfile.SameFileError
	return errors.As(err, &u) || errors.As(err, &same)
}

func TestNoArgumentsOffTerminalPrintsTheDefaultTable(t *testing.T) {
	out, _, err := ratelab(t)
	require.NoError(t, err)
	assert.Contains(t, out, "poisson — seed 1, 1m of virtual time")
	for _, lane := range []string{"token-bucket:capacity=10,rate=100/1s", "leaky-bucket:rate=100/1s",
		"sliding-window:limit=100,window=1s,slots=10", "fixed-window:limit=100,window=1s",
		"warm-up:capacity=10,rate=100/1s,warmup=10s", "concurrency:max=5"} {
		assert.Contains(t, out, lane)
	}
	assert.NotContains(t, out, "\x1b[", "piped output carries no terminal styling")
}

func TestRunTableShowsTheFixedWindowBoundaryBurst(t *testing.T) {
	out, _, err := ratelab(t, "run", "boundary-attack")
	require.NoError(t, err)
	lines := strings.Split(out, "\n")
	var fixed []string
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "fixed-window") {
			fixed = strings.Fields(l)
		}
	}
	require.NotEmpty(t, fixed, out)
	// limiter offered admitted rejected admit% window max bound ...
	assert.Equal(t, []string{"200", "200", "0", "100.0", "1s", "200", "200"}, fixed[1:8])
}

func TestRunJSONIsCompleteAndDeterministic(t *testing.T) {
	first, _, err := ratelab(t, "run", "--format", "json", "retry-storm")
	require.NoError(t, err)
	prev := runtime.GOMAXPROCS(1)
	second, _, err := ratelab(t, "run", "retry-storm", "--format=json")
	runtime.GOMAXPROCS(prev)
	require.NoError(t, err)
	assert.Equal(t, first, second, "same scenario and seed, byte-identical JSON whatever GOMAXPROCS")

	var res engine.Results
	require.NoError(t, json.Unmarshal([]byte(first), &res))
	assert.Equal(t, "retry-storm", res.Scenario)
	require.Len(t, res.Lanes, 3)
	assert.Len(t, res.Lanes[0].Bins, engine.DefaultBins)
	assert.Equal(t, res.Lanes[0].Totals.Offered, res.Lanes[1].Totals.Offered, "every lane is offered the same traffic")

	other, _, err := ratelab(t, "run", "--format", "json", "--seed", "2", "retry-storm")
	require.NoError(t, err)
	assert.NotEqual(t, first, other, "another seed, other Poisson arrivals")
}

func TestRunCSVHasOneRowPerLimiter(t *testing.T) {
	out, _, err := ratelab(t, "run", "--format", "csv", "--limiter", "leaky-bucket:rate=10/1s",
		"--limiter", "token-bucket:capacity=5,rate=10/1s", "--horizon", "2s", "burst-after-idle")
	require.NoError(t, err)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	assert.Equal(t, "limiter", rows[0][0])
	assert.Equal(t, "leaky-bucket:rate=10/1s", rows[1][0])
	assert.Equal(t, "token-bucket:capacity=5,rate=10/1s", rows[2][0], "a spec with a comma stays one field")
	assert.Equal(t, len(rows[0]), len(rows[1]))
}

func TestUsageErrorsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"frobnicate"},
		{"run", "--bogus"},
		{"run", "no-such-scenario"},
		{"run", "poisson", "steady"},
		{"run", "--format", "xml"},
		{"run", "--horizon", "-1s"},
		{"run", "--horizon", "2000000h"},
		{"run", "--limiter", "token-bucket:capacity=x,rate=1/1s"},
		{"list", "extra"},
		{"replay"},
		{"replay", "--in", "x.csv"},
	} {
		_, _, err := ratelab(t, args...)
		require.Error(t, err, "%v", args)
		assert.True(t, isUsage(err), "%v: %v is a usage error (exit 2)", args, err)
		assert.NotContains(t, err.Error(), "\n", "one clear line")
	}
}

func TestBadLimiterNamesTheField(t *testing.T) {
	_, _, err := ratelab(t, "run", "--limiter", "token-bucket:capacity=3,rate=100/1s,burst=4")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "burst=4")
	assert.Contains(t, err.Error(), "not a field of token-bucket")
}

func TestBadScenarioFileIsAFailureWithItsPosition(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(path, []byte("horizon: 1s\nsources:\n  - kind: constant\n    rate: -5\nlimiters: [concurrency:max=1]\n"), 0o644))
	_, _, err := ratelab(t, "run", path)
	require.Error(t, err)
	assert.False(t, isUsage(err), "the command line was fine; the file is not")
	assert.Contains(t, err.Error(), "bad.yaml:4:11: sources[0].rate")
}

func TestListNamesEveryScenarioAndKind(t *testing.T) {
	out, _, err := ratelab(t, "list")
	require.NoError(t, err)
	for _, name := range []string{"burst-after-idle", "boundary-attack", "slot-edge", "cold-start", "slow-downstream",
		"retry-storm", "on-off", "diurnal", "replay", "token-bucket", "leaky-bucket", "sliding-window",
		"fixed-window", "warm-up", "concurrency"} {
		assert.Contains(t, out, name)
	}
}

func TestReplayWritesOneColumnPerLimiter(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "trace.csv")
	// 5 requests at the same instant, then one 10ms later, one asking for 2 permits.
	require.NoError(t, os.WriteFile(in, []byte("t_ns,permits,key,ignored\n0,1,a,x\n0,1,a,x\n0,1,b,x\n0,1,b,x\n0,1,b,x\n10000000,2,c,x\n"), 0o644))
	out := filepath.Join(dir, "decisions.csv")
	_, stderr, err := ratelab(t, "replay", "--in", in, "--out", out,
		"--limiter", "token-bucket:capacity=3,rate=100/1s", "--limiter", "leaky-bucket:rate=100/1s")
	require.NoError(t, err)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "t_ns,permits,\"token-bucket:capacity=3,rate=100/1s\",leaky-bucket:rate=100/1s\n"+
		"0,1,1,1\n0,1,1,0\n0,1,1,0\n0,1,0,0\n0,1,0,0\n"+
		"10000000,2,0,0\n", string(got), "10ms later the bucket has refilled one permit, not two; the leaky bucket never grants 2")
	assert.Contains(t, stderr, "replayed 6 requests (7 permits)")
}

func TestReplayRefusesAnOutOfOrderTraceAndLeavesNothingBehind(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "trace.csv")
	require.NoError(t, os.WriteFile(in, []byte("t\n0.5\n0.25\n"), 0o644))
	out := filepath.Join(dir, "decisions.csv")
	_, _, err := ratelab(t, "replay", "--in", in, "--out", out, "--limiter", "leaky-bucket:rate=1/1s")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 3")
	assert.Contains(t, err.Error(), "time order")
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "nothing half-written at --out, no temporary file left")
}

func TestRoundedDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 999: "999ns", 18874367: "18.9ms", 218103807: "218ms", 26214399: "26.2ms", 3 * time.Second: "3s",
		227254 * time.Microsecond: "227ms", 1294 * time.Millisecond: "1.29s", 45678 * time.Microsecond: "45.7ms",
		3*time.Minute + 7*time.Second: "3m7s", 812 * time.Nanosecond: "812ns", 2490367 * time.Nanosecond: "2.49ms",
		999*time.Second + 400*time.Millisecond: "16m39s", 1234567 * time.Millisecond: "20m35s", 3*time.Hour + 25*time.Minute + 45*time.Second: "3h25m45s",
		1<<62 - 1: "1281023h53m38s", math.MaxInt64: "2562047h47m16.854775807s",
	} {
		assert.Equal(t, want, roundedDuration(d), "%d", d)
	}
}

// show prints a built-in as a file that run loads back to the same output.
func TestShowThenRunIsTheSameRun(t *testing.T) {
	text, _, err := ratelab(t, "show", "peers", "--horizon", "3s")
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "mine.yaml")
	require.NoError(t, os.WriteFile(file, []byte(text), 0o644))
	want, _, err := ratelab(t, "run", "peers", "--horizon", "3s", "--format", "json")
	require.NoError(t, err)
	got, _, err := ratelab(t, "run", file, "--format", "json")
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.True(t, strings.HasPrefix(text, "name: peers\ndescription: >-\n  One intent"), text[:80])
}

// A run over its budget is refused before it starts (exit 1), saying by how much and which
// flag raises it; the flags take counts and sizes with units, and 0 for no limit.
func TestRunBudget(t *testing.T) {
	_, _, err := ratelab(t, "run", "steady", "--horizon", "100000h")
	require.Error(t, err)
	assert.False(t, isUsage(err))
	assert.Equal(t, "steady: about 324G events (18G requests through 6 lanes; 9h at 100ns an event), over the budget of 10G events: "+
		"shorten the horizon, or raise the budget with --max-events 330G", err.Error())
	_, _, err = ratelab(t, "run", "steady", "--max-memory", "1KiB")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "over the budget of 1 KiB: raise it with --max-memory 2MiB")
	_, _, err = ratelab(t, "run", "steady", "--horizon", "2s", "--max-events", "0", "--max-memory", "0")
	require.NoError(t, err, "0 is no limit")
	_, _, err = ratelab(t, "run", "steady", "--horizon", "2s", "--max-events", "1k")
	require.Error(t, err, "steady offers 100 requests in 2s: 3 events a request (arrival, decision, completion) in 6 lanes")
	_, _, err = ratelab(t, "run", "steady", "--horizon", "2s", "--max-events", "2k", "--max-memory", "64 MiB")
	require.NoError(t, err)
	for flag, value := range map[string]string{"--max-events": "lots", "--max-memory": "2 GB"} {
		_, _, err = ratelab(t, "run", "steady", flag, value)
		require.Error(t, err)
		assert.True(t, isUsage(err), flag)
	}
	n, err := parseCount("5e10")
	require.NoError(t, err)
	assert.Equal(t, int64(5e10), n)
	size, err := parseSize("1.5GiB")
	require.NoError(t, err)
	assert.Equal(t, int64(3<<29), size)
}

// tui --record needs no terminal: it writes the asciicast file (or standard output), the same
// bytes each time; a bad --size is a usage error.
func TestTUIRecord(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.cast")
	_, errOut, err := ratelab(t, "tui", "burst-after-idle", "--record", file)
	require.NoError(t, err)
	assert.Equal(t, "recorded burst-after-idle (250ms of virtual time) to "+file+"\n", errOut)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	out, _, err := ratelab(t, "tui", "burst-after-idle", "--record", "-")
	require.NoError(t, err)
	assert.Equal(t, string(data), out)
	assert.True(t, strings.HasPrefix(out, `{"version":2,"width":100,"height":30,`))
	for _, size := range []string{"10x5", "100", "100x30x2", "80x23"} {
		_, _, err = ratelab(t, "tui", "steady", "--record", "-", "--size", size)
		assert.True(t, isUsage(err), size)
	}
}

// A queueing client's waits are in every output: the table's p90, p99.9 and max columns, the
// CSV's wait_*_ns, the same numbers as the results.
func TestRunShowsTheWaitPercentiles(t *testing.T) {
	out, _, err := ratelab(t, "run", "diurnal")
	require.NoError(t, err)
	for _, h := range []string{"p50 wait", "p90 wait", "p99 wait", "p99.9 wait", "max wait"} {
		assert.Contains(t, out, h)
	}
	_, res := runScenario(t, "diurnal")
	fixed := res.Lanes[3]
	require.Equal(t, "fixed-window:limit=100,window=1s", fixed.Name)
	require.Less(t, fixed.Wait.P90, fixed.Wait.P999, "the scenario spreads the fixed window's waits")
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), fixed.Name) {
			f := strings.Fields(l)
			assert.Equal(t, []string{roundedDuration(fixed.Wait.P50), roundedDuration(fixed.Wait.P90), roundedDuration(fixed.Wait.P99),
				roundedDuration(fixed.Wait.P999), roundedDuration(fixed.Wait.Max)}, f[len(f)-5:], l)
		}
	}
	csvOut, _, err := ratelab(t, "run", "diurnal", "--format", "csv")
	require.NoError(t, err)
	rows, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	require.NoError(t, err)
	col := func(name string) int {
		i := slices.Index(rows[0], name)
		require.GreaterOrEqual(t, i, 0, name)
		return i
	}
	assert.Equal(t, fmt.Sprint(int64(fixed.Wait.P999)), rows[4][col("wait_p999_ns")])
	assert.Equal(t, fmt.Sprint(int64(fixed.Wait.Max)), rows[4][col("wait_max_ns")])
}
