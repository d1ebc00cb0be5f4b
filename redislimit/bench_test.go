//go:build unix

package redislimit

// Benchmarks of a token bucket (capacity 100, 1,000,000/s: T = 1µs) deciding one permit per
// call, now advancing by T per call so that every call is admitted:
//
//	BenchmarkDecision/store=in-process                 limiters.TokenBucket.AcquireAt
//	BenchmarkDecision/store=redis/mode=one-by-one      AcquireAt: one round trip per decision
//	BenchmarkDecision/store=redis/mode=parallel-8      AcquireAt from 8 goroutines, 8 connections
//	BenchmarkDecision/store=redis/mode=pipelined-64    AcquireBatch of 64: one round trip per 64
//
// against a redis-server of the benchmark's own on loopback. Each reports decisions/s.
//
// Reproduce:
//
//	go test -run '^$' -bench Decision -benchmem -count 5 ./redislimit/ > /tmp/redis-bench.txt
//	benchstat /tmp/redis-bench.txt

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelab/ratelab/internal/redistest"
	"github.com/ratelab/ratelab/limiters"
)

var benchSpec = limiters.TokenBucketSpec{Capacity: 100, Rate: limiters.Rate{Permits: 1_000_000, Window: time.Second}}

func BenchmarkDecision(b *testing.B) {
	b.Run("store=in-process", func(b *testing.B) {
		l, err := limiters.NewTokenBucket(benchSpec.Capacity, benchSpec.Rate, fixedClock(0))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		admitted := 0
		for i := 0; b.Loop(); i++ {
			if l.AcquireAt(time.Duration(i)*time.Microsecond, 1) == limiters.Admitted {
				admitted++
			}
		}
		report(b, admitted)
	})
	srv := redistest.Start(b)
	ctx := context.Background()
	remote := func(b *testing.B, pool int) *Limiter {
		l, err := New(client(b, srv, pool), "bench:"+b.Name(), benchSpec, Options{Clock: CallerClock})
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Reset(ctx); err != nil {
			b.Fatal(err)
		}
		return l
	}
	b.Run("store=redis/mode=one-by-one", func(b *testing.B) {
		l := remote(b, 1)
		b.ReportAllocs()
		admitted := 0
		for i := 0; b.Loop(); i++ {
			r, err := l.AcquireAt(ctx, time.Duration(i)*time.Microsecond, 1)
			if err != nil {
				b.Fatal(err)
			}
			if r.Decision == limiters.Admitted {
				admitted++
			}
		}
		report(b, admitted)
	})
	b.Run("store=redis/mode=parallel-8", func(b *testing.B) {
		l := remote(b, 8)
		b.ReportAllocs()
		b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0))) // 8 goroutines for GOMAXPROCS 1, 2, 4 or 8
		var now, admitted atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				// The times are taken in order but sent in any: a decision at an older
				// time than the stored schedule is judged against it and may be refused.
				r, err := l.AcquireAt(ctx, time.Duration(now.Add(1))*time.Microsecond, 1)
				if err != nil {
					b.Error(err)
					return
				}
				if r.Decision == limiters.Admitted {
					admitted.Add(1)
				}
			}
		})
		report(b, int(admitted.Load()))
	})
	b.Run("store=redis/mode=pipelined-64", func(b *testing.B) {
		l := remote(b, 1)
		const batch = 64
		reqs, out := make([]Request, batch), make([]Result, batch)
		b.ReportAllocs()
		admitted, decisions := 0, 0
		for i := 0; b.Loop(); i++ {
			for j := range reqs {
				reqs[j] = Request{At: time.Duration(i*batch+j) * time.Microsecond, Permits: 1}
			}
			if err := l.AcquireBatch(ctx, reqs, out); err != nil {
				b.Fatal(err)
			}
			for _, r := range out {
				if r.Decision == limiters.Admitted {
					admitted++
				}
			}
			decisions += batch
		}
		b.ReportMetric(float64(decisions)/b.Elapsed().Seconds(), "decisions/s")
		b.ReportMetric(float64(admitted)/float64(decisions), "admits/decision")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(decisions), "ns/decision")
	})
}

// report adds decisions/s and the admitted fraction (which shows the path that ran).
func report(b *testing.B, admitted int) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	b.ReportMetric(float64(admitted)/float64(b.N), "admits/decision")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/decision")
}
