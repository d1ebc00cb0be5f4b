//go:build unix

package redislanes

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/internal/redistest"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/redislimit"
	"github.com/ratelab/ratelab/virtualclock"
)

// connect is a replay against srv's Redis, failing closed, its keys under prefix.
func connect(t testing.TB, srv *redistest.Server, prefix string, timeout time.Duration) *Replay {
	t.Helper()
	c, err := redislimit.NewClient(redislimit.ClientOptions{Addr: srv.Addr, PoolSize: 1, Timeout: timeout})
	require.NoError(t, err)
	return NewReplay(c, ReplayOptions{Addr: srv.Addr, KeyPrefix: prefix, Timeout: timeout, OnFailure: limiters.FailClosed})
}

// replayBoth replays trace through lanes twice against srv: pipelined (Replay.Replay)
// and a row at a time (engine.ReplayStacks, the path before pipelining), each from fresh keys.
func replayBoth(t *testing.T, srv *redistest.Server, trace string, specs []string) (pipelined, oneByOne string, sums [2]engine.ReplaySummary) {
	t.Helper()
	ctx := context.Background()
	var outs [2]bytes.Buffer
	for pass := range 2 {
		store := connect(t, srv, fmt.Sprintf("pass%d:", pass), 2e9)
		var err error
		clock := virtualclock.New()
		var lanes []Lane
		var names []string
		var built []*engine.Stack
		for i, s := range specs {
			lane, err := ParseLane(s)
			require.NoError(t, err)
			st, err := store.Build(ctx, i, lane, clock)
			require.NoError(t, err)
			lanes, names, built = append(lanes, lane), append(names, lane.Name()), append(built, st)
		}
		if pass == 0 {
			_, ok := store.pipelineLanes(lanes, built)
			require.True(t, ok, "%v pipelines", specs)
			sums[pass], err = store.Replay(ctx, strings.NewReader(trace), &outs[pass], names, lanes, built, clock)
		} else {
			sums[pass], err = engine.ReplayStacks(strings.NewReader(trace), &outs[pass], names, built, clock)
		}
		require.NoError(t, err)
		lines, err := store.Failures()
		require.NoError(t, err, lines)
		require.NoError(t, store.Close())
	}
	return outs[0].String(), outs[1].String(), sums
}

// TestReplayRedisPipelinedSameBytes: replay --redis pipelined 64 deep writes the bytes the
// one-row-at-a-time path writes, and the same summary, on random traces (bursts at one
// instant, idles, requests larger than a capacity: Never) through every stored kind, two
// redis/ lanes at once (32 rows per batch), and in-process lanes beside them; and on a trace
// of fewer rows than a batch.
func TestReplayRedisPipelinedSameBytes(t *testing.T) {
	srv := redistest.Start(t)
	specs := []string{
		"redis/token-bucket:capacity=5,rate=100/1s",
		"token-bucket:capacity=5,rate=100/1s",
		"redis/fixed-window:limit=7,window=333333334ns",
		"concurrency:max=2",
		"redis/leaky-bucket:rate=50/1s",
	}
	for seed := range uint64(3) {
		rng := rand.New(rand.NewPCG(seed, 27))
		var trace strings.Builder
		trace.WriteString("t_ns,permits\n")
		at, rows := int64(0), 1000+rng.IntN(300) // not a multiple of a batch
		for range rows {
			switch k := rng.IntN(10); {
			case k < 3: // the same instant
			case k < 9:
				at += rng.Int64N(20e6)
			default:
				at += rng.Int64N(2e9)
			}
			fmt.Fprintf(&trace, "%d,%d\n", at, 1+rng.IntN(8))
		}
		for _, lanes := range [][]string{specs, specs[:1], {specs[2]}} {
			pipelined, oneByOne, sums := replayBoth(t, srv, trace.String(), lanes)
			require.Equal(t, oneByOne, pipelined, "seed %d, %v", seed, lanes)
			require.Equal(t, sums[1], sums[0])
			require.Equal(t, int64(rows), sums[0].Rows)
			require.Contains(t, pipelined, ",1")
			require.Contains(t, pipelined, ",0")
		}
	}
	pipelined, oneByOne, _ := replayBoth(t, srv, "t_ns\n0\n5\n5\n", specs)
	require.Equal(t, oneByOne, pipelined)
	require.Equal(t, `t_ns,permits,"redis/token-bucket:capacity=5,rate=100/1s","token-bucket:capacity=5,rate=100/1s",`+
		`"redis/fixed-window:limit=7,window=333.333334ms",concurrency:max=2,redis/leaky-bucket:rate=50/1s`+"\n"+
		"0,1,1,1,1,1,1\n5,1,1,1,1,1,0\n5,1,1,1,1,1,0\n", pipelined)
}

// TestReplayRedisStackNotPipelined: a redis/ stage in a stack (whose later stage depends on its
// answer) is replayed a row at a time, as before.
func TestReplayRedisStackNotPipelined(t *testing.T) {
	store := &Replay{}
	lane, err := ParseLane("redis/token-bucket:capacity=3,rate=20/1s+concurrency:max=5")
	require.NoError(t, err)
	st, err := engine.NewStack(lane.Specs, virtualclock.New())
	require.NoError(t, err)
	_, ok := store.pipelineLanes([]Lane{lane}, []*engine.Stack{st})
	require.False(t, ok)
}

// BenchmarkReplayRedis: replay --redis of 6,400 rows (1µs apart, every one admitted: a token
// bucket of 10^9/s, capacity 10^9) through one redis/ lane, pipelined 64 deep, beside
// redis-benchmark -c 1 -P 64 sending the lane's EVALSHA (its arguments at t = 1µs, also
// admitted every time) the same 6,400 times to the same server; and, for the record, the same
// replay a row at a time (engine.ReplayStacks, the path before pipelining). Compare
// ns/decision:
//
//	go test -run '^$' -bench ReplayRedis -count 6 ./redislimit/redislanes/
func BenchmarkReplayRedis(b *testing.B) {
	srv := redistest.Start(b)
	ctx := context.Background()
	const rows = 6400
	var trace strings.Builder
	trace.WriteString("t_ns\n")
	for i := range rows {
		fmt.Fprintf(&trace, "%d\n", int64(i)*1000)
	}
	spec := "redis/token-bucket:capacity=1000000000,rate=1000000000/1s"
	store := connect(b, srv, "bench:", 5e9)
	defer store.Close()
	lane, err := ParseLane(spec)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := store.Build(ctx, 0, lane, virtualclock.New()); err != nil { // the lane's Guarded, for its Command
		b.Fatal(err)
	}
	b.Run("client=replay-pipelined", func(b *testing.B) {
		var admitted int64
		for b.Loop() {
			clock := virtualclock.New()
			st, err := store.Build(ctx, 0, lane, clock)
			if err != nil {
				b.Fatal(err)
			}
			sum, err := store.Replay(ctx, strings.NewReader(trace.String()), io.Discard, []string{spec}, []Lane{lane}, []*engine.Stack{st}, clock)
			if err != nil {
				b.Fatal(err)
			}
			admitted += sum.Admitted[0]
		}
		b.ReportMetric(float64(admitted)/float64(b.N*rows), "admits/decision")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/decision")
	})
	b.Run("client=replay-one-at-a-time", func(b *testing.B) { // engine.ReplayStacks: before pipelining
		var admitted int64
		for b.Loop() {
			clock := virtualclock.New()
			st, err := store.Build(ctx, 0, lane, clock)
			if err != nil {
				b.Fatal(err)
			}
			sum, err := engine.ReplayStacks(strings.NewReader(trace.String()), io.Discard, []string{spec}, []*engine.Stack{st}, clock)
			if err != nil {
				b.Fatal(err)
			}
			admitted += sum.Admitted[0]
		}
		b.ReportMetric(float64(admitted)/float64(b.N*rows), "admits/decision")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/decision")
	})
	b.Run("client=redis-benchmark", func(b *testing.B) {
		remote := store.guarded[0].Remote()
		bin, err := exec.LookPath("redis-benchmark")
		if err != nil {
			b.Skip("redis-benchmark is not installed")
		}
		host, port, _ := net.SplitHostPort(srv.Addr)
		args := append([]string{"-h", host, "-p", port, "-c", "1", "-n", strconv.Itoa(b.N * rows), "-P", "64", "--csv"}, remote.Command(time.Microsecond, 1)...)
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			b.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
		if err != nil || len(recs) < 2 {
			b.Fatalf("%v: %q", err, out)
		}
		rps, err := strconv.ParseFloat(recs[1][1], 64)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(1e9/rps, "ns/decision")
	})
}

// TestParseLane: a redis/ stage keeps its prefix in the lane's name; a kind Redis cannot
// hold, a keyed redis/ stage and a keys(…) stage beside a redis/ one are refused, naming the
// stage.
func TestParseLane(t *testing.T) {
	lane, err := ParseLane("redis/token-bucket:capacity=3,rate=100/1s+concurrency:max=20")
	require.NoError(t, err)
	require.True(t, lane.HasRemote())
	require.Equal(t, []bool{true, false}, lane.Remote)
	require.Equal(t, "redis/token-bucket:capacity=3,rate=100/1s+concurrency:max=20", lane.Name())

	lane, err = ParseLane("token-bucket:capacity=3,rate=100/1s")
	require.NoError(t, err)
	require.False(t, lane.HasRemote())

	for text, want := range map[string]string{
		"redis/concurrency:max=2":                                                               "redis/concurrency:max=2: kind concurrency cannot run in Redis (",
		"redis/keys(max=10):token-bucket:capacity=3,rate=100/1s":                                "a keys(…) stage cannot run in Redis",
		"keys(max=10):token-bucket:capacity=3,rate=100/1s+redis/fixed-window:limit=3,window=1s": "a keys(…) stage and a redis/ stage cannot share a lane",
	} {
		_, err := ParseLane(text)
		require.ErrorContains(t, err, want, text)
	}
}
