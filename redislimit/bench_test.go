//go:build unix

package redislimit

// Benchmarks of one decision's cost, each beside its floor: redis-benchmark (Redis's own C
// client, Debian's) sending the very same EVALSHA — the same script, the same argument bytes,
// the same kind of key — over one connection to the same server, at the same pipeline depth.
//
//	BenchmarkRedisFloor/depth=1/client=redislimit       Acquire: one round trip per decision
//	BenchmarkRedisFloor/depth=1/client=redis-benchmark  redis-benchmark -c 1 -P 1
//	BenchmarkRedisFloor/depth=64/client=redislimit      AcquireBatch of 64: one round trip per 64
//	BenchmarkRedisFloor/depth=64/client=redis-benchmark redis-benchmark -c 1 -P 64
//	BenchmarkRedisFloor/depth=8/client=redislimit-parallel  Acquire from 8 goroutines, 8 connections
//
// The limiter is a token bucket of 1,000,000,000/s with capacity 100 on Redis's TIME (T = 1ns,
// τ = 100ns): every decision is admitted (admits/decision 1), so every one runs the script's
// whole path (TIME, GET, SET PX), in both clients. Compare ns/decision (decisions/s): the
// redis-benchmark rows time its own loop, not its process start. Reproduce (interleaved, so
// that a slow spell of the shared machine falls on both):
//
//	go test -run '^$' -bench RedisFloor -benchmem -count 6 ./redislimit/ | tee /tmp/redis.txt
//	benchstat -col /client /tmp/redis.txt

import (
	"context"
	"encoding/csv"
	"net"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelab/ratelab/internal/redistest"
	"github.com/ratelab/ratelab/limiters"
)

var benchSpec = limiters.TokenBucketSpec{Capacity: 100, Rate: limiters.Rate{Permits: 1_000_000_000, Window: time.Second}}

func BenchmarkRedisFloor(b *testing.B) {
	srv := redistest.Start(b)
	ctx := context.Background()
	remote := func(b *testing.B, pool int) *Limiter {
		l, err := New(client(b, srv, pool), "bench:"+b.Name(), benchSpec, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Reset(ctx); err != nil {
			b.Fatal(err)
		}
		return l
	}
	for _, depth := range []int{1, 64} {
		b.Run("depth="+strconv.Itoa(depth)+"/client=redislimit", func(b *testing.B) {
			l := remote(b, 1)
			reqs, out := make([]Request, depth), make([]Result, depth)
			for i := range reqs {
				reqs[i].Permits = 1
			}
			b.ReportAllocs()
			admitted := 0
			for b.Loop() {
				if depth == 1 {
					r, err := l.Acquire(ctx, 1)
					if err != nil {
						b.Fatal(err)
					}
					out[0] = r
				} else if err := l.AcquireBatch(ctx, reqs, out); err != nil {
					b.Fatal(err)
				}
				for _, r := range out {
					if r.Decision == limiters.Admitted {
						admitted++
					}
				}
			}
			report(b, b.N*depth, admitted)
		})
		b.Run("depth="+strconv.Itoa(depth)+"/client=redis-benchmark", func(b *testing.B) {
			l := remote(b, 1)
			args := l.Command(0, 1)
			if _, err := l.Acquire(ctx, 1); err != nil { // loads the script: redis-benchmark stops at NOSCRIPT
				b.Fatal(err)
			}
			rps := redisBenchmark(b, srv.Addr, b.N*depth, depth, args)
			b.ReportMetric(rps, "decisions/s")
			b.ReportMetric(1e9/rps, "ns/decision")
		})
	}
	b.Run("depth=8/client=redislimit-parallel", func(b *testing.B) {
		l := remote(b, 8)
		b.ReportAllocs()
		b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0))) // 8 goroutines for GOMAXPROCS 1, 2, 4 or 8
		var admitted atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r, err := l.Acquire(ctx, 1)
				if err != nil {
					b.Error(err)
					return
				}
				if r.Decision == limiters.Admitted {
					admitted.Add(1)
				}
			}
		})
		report(b, b.N, int(admitted.Load()))
	})
}

// redisBenchmark runs redis-benchmark with one connection sending requests of the command
// args, depth at a time, and returns the requests per second it reports.
func redisBenchmark(b *testing.B, addr string, requests, depth int, args []string) float64 {
	b.Helper()
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		b.Skip("redis-benchmark is not installed (apt-get install redis-tools)")
	}
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, append([]string{"-h", host, "-p", port, "-c", "1", "-n", strconv.Itoa(max(requests, depth)),
		"-P", strconv.Itoa(depth), "--csv"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("%s: %v", cmd, err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil || len(rows) < 2 || len(rows[1]) < 2 {
		b.Fatalf("redis-benchmark's CSV: %v: %q", err, out)
	}
	rps, err := strconv.ParseFloat(rows[1][1], 64)
	if err != nil || rps <= 0 {
		b.Fatalf("redis-benchmark's rps %q: %v", rows[1][1], err)
	}
	return rps
}

// report adds decisions/s and the admitted fraction (which shows the path that ran).
func report(b *testing.B, decisions, admitted int) {
	b.ReportMetric(float64(decisions)/b.Elapsed().Seconds(), "decisions/s")
	b.ReportMetric(float64(admitted)/float64(decisions), "admits/decision")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(decisions), "ns/decision")
}
