package sweep

import (
	"context"
	"testing"
)

// BenchmarkSweep runs a 10 × 10 grid over the replay trace (1919 requests, 20s) and the
// poisson scenario (5689 requests, 60s): cells/s is the throughput, and -cpu 1,2 gives the
// speed-up from a second core (Workers follows GOMAXPROCS). The loop is b.N's, not b.Loop's:
// with b.Loop the first result of a -cpu list is measured before the testing package sets
// GOMAXPROCS for it, so the first "-cpu 1" run used both cores (golang/go#49980; engine's
// BenchmarkRunSixLanes says the same).
//
//	go test ./sweep -run X -bench Sweep -cpu 1,2 -count 5 | benchstat
func BenchmarkSweep(b *testing.B) {
	for _, name := range []string{"replay", "poisson"} {
		b.Run(name, func(b *testing.B) {
			sc := scenario(b, name)
			sc.Lanes = sc.Lanes[:1]
			g := grid(b, sc, Steps{}, "token-bucket.capacity=1..100", "token-bucket.rate=50/1s..200/1s")
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := Run(context.Background(), g, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(g.Cells)*b.N)/b.Elapsed().Seconds(), "cells/s")
		})
	}
}
