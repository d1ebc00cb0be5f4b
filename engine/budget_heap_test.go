package engine

import (
	"context"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// heapFactor is the stated factor: the heap a run grows to, sampled through the run and
// measured once more at its end with its results alive, stays within heapFactor times the
// memory its estimate names (plus heapSlack for the runtime's own).
const (
	heapFactor = 2.0
	heapSlack  = 8 << 20
)

// The budget's memory estimate covers what runs keep: random scenarios — poisson and bursts,
// keyed and not, traced and not, sliding windows with many slots, keyed tables, retrying
// clients — each run while a sampler reads the live heap every 200µs; the peak over the
// heap before the run is within heapFactor of the estimate. Seeded: the same scenarios
// every time.
func TestMeasuredHeapIsWithinTheEstimate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a dozen scenarios")
	}
	specs := []string{
		"token-bucket:capacity=20,rate=100/1s",
		"sliding-window:limit=100,window=1s,slots=64",
		"sliding-window:limit=1000,window=10s,slots=128",
		"fixed-window:limit=100,window=1s",
		"keys(max=20000):token-bucket:capacity=5,rate=10/1s",
		"keys(max=5000,evict=lru):sliding-window:limit=10,window=1s,slots=16",
		"leaky-bucket:rate=300/1s+concurrency:max=20",
		"warm-up:capacity=50,rate=200/1s,warmup=2s",
	}
	rng := rand.New(rand.NewPCG(26, 4))
	worst := 0.0
	for i := range 12 {
		sc := &Scenario{Name: "random", Seed: uint64(i + 1), Horizon: time.Duration(1+rng.IntN(5)) * sec,
			Client: Client{Policy: PolicyDrop}, Bins: 100 + rng.IntN(5000), Trace: rng.IntN(3) == 0}
		src := Source{Kind: SourcePoisson, Rate: float64(200 + rng.IntN(5000))}
		if rng.IntN(2) == 0 {
			src.Keys = &KeyPopulation{Kind: PopulationUniform, Clients: 1 + rng.IntN(50000)}
		}
		sc.Sources = []Source{src, {Kind: SourceBursts, Bursts: []Burst{{At: sc.Horizon / 2, Count: 1 + rng.IntN(3000)}}}}
		var texts []string
		for range 1 + rng.IntN(3) {
			texts = append(texts, specs[rng.IntN(len(specs))])
		}
		sc.Lanes = stacks(t, texts...)
		if rng.IntN(3) == 0 {
			sc.Lanes[0].Client = &Client{Policy: PolicyBackoff, Delay: 5 * ms, MaxDelay: 100 * ms, MaxAttempts: 4}
		}
		require.NoError(t, sc.Validate())
		est := sc.Estimate()
		peak := peakHeapOf(t, sc)
		ratio := float64(peak) / float64(est.Memory)
		worst = max(worst, ratio)
		t.Logf("%2d: %d lanes %v, trace %v, %s, %d bins: estimate %s, peak %s (%.2f×)", i, len(sc.Lanes), texts, sc.Trace,
			sc.Horizon, sc.Bins, Bytes(est.Memory), Bytes(peak), ratio)
		if float64(peak) > heapFactor*float64(est.Memory)+heapSlack {
			t.Errorf("scenario %d (%v, trace %v): the heap grew by %s, over %.0f× the estimate %s (%v)", i, texts, sc.Trace,
				Bytes(peak), heapFactor, Bytes(est.Memory), est.Parts)
		}
	}
	t.Logf("worst peak over estimate: %.2f×", worst)
}

// peakHeapOf runs sc and returns the most its run added to the live heap: sampled every
// 200µs through the run (runtime/metrics, without stopping the world), and after it with the
// results alive and garbage collected.
func peakHeapOf(t *testing.T, sc *Scenario) int64 {
	t.Helper()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() int64 {
		metrics.Read(sample)
		return int64(sample[0].Value.Uint64())
	}
	runtime.GC()
	base := read()
	var most atomic.Int64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			most.Store(max(most.Load(), read()))
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	res, err := Run(context.Background(), sc, nil)
	close(done)
	<-stopped
	require.NoError(t, err)
	runtime.GC()
	end := read()
	runtime.KeepAlive(res)
	return max(most.Load(), end) - base
}
