package engine

// Benchmarks of the simulation kernel. Run:
//
//	go test -run '^$' -bench . -count 5 ./engine/ | tee new.txt   # benchstat old.txt new.txt
//
// BenchmarkKernel/lane is ns per event of one lane with ~1000 events pending (10,000/s
// through a bulkhead to a 100ms downstream); BenchmarkKernel/floor is the same model doing
// nothing but the kernel's own heap work (floorModel): per arrival its successor and one push
// of a bare 32-byte completion, per completion one pop. BenchmarkLanePoisson is the perf
// scenario's model per lane, with its floor. scripts/bench.sh runs them all and prints the
// ratios; instruction counts (valgrind --tool=callgrind, GOMAXPROCS=1) are steadier than
// times on a shared machine.
//
// Whole runs are measured outside the test suite (36M requests per lane take a while):
//
//	go build -o /tmp/ratelab ./cmd/ratelab
//	/usr/bin/time -v /tmp/ratelab run scenarios/testdata/perf-poisson-1h.yaml
//
// (the six poisson lanes at 10,000/s for one virtual hour; change horizon to 6m or 10h to see
// that the peak RSS does not grow with the run's length).

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
)

// kernelScenario keeps ~1000 events pending in one lane: 10,000 requests per second, evenly
// spaced, through a bulkhead that never refuses, to a downstream that holds each for 100ms.
func kernelScenario(tb testing.TB) *Scenario {
	return &Scenario{Horizon: 24 * time.Hour, Client: Client{Policy: PolicyDrop},
		Lanes:      stacks(tb, "concurrency:max=100000"),
		Sources:    []Source{{Kind: SourceConstant, Rate: 10_000}},
		Downstream: &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: 100 * time.Millisecond}}}}}
}

func benchLane(b *testing.B, sc *Scenario, lane int) {
	if err := sc.Validate(); err != nil {
		b.Fatal(err)
	}
	l, err := NewLane(sc, lane)
	if err != nil {
		b.Fatal(err)
	}
	if more, err := l.StepN(200_000); err != nil || !more { // to steady state: every slice at its working size
		b.Fatal(err, more)
	}
	b.ReportAllocs()
	b.ResetTimer()
	// As Run runs a lane: StepN, in batches of 16384 events (ns/op is ns per event).
	for ran := 0; ran < b.N; ran += 1 << 14 {
		if more, err := l.StepN(min(b.N-ran, 1<<14)); err != nil || !more {
			b.Fatal(err, more)
		}
	}
	b.ReportMetric(float64(l.pendingEvents()), "pending")
}

// BenchmarkKernel/lane is one event of a lane with ~1000 pending (ns/op = ns per event);
// BenchmarkKernel/floor is the same model with nothing but its heap work (floorModel). The
// lane is a pool lane (Lane.pool): flatArrivals admits each arrival into service and
// completes it itself, counting what is the same for every request once per batch. Its heap
// work is the floor's (one push per admission, one pop per completion, the arrival replaced
// in its slot). 473 instructions per event against the floor's 384 (callgrind, 1.23×; 746
// before the pool path): beside that heap work (~280), the constant source's fill (~27), the
// bulkhead's AcquireAt and Release through their interface with an atomic CAS each (~25),
// the request's slot, the busy area, the latency histogram and the loop.
func BenchmarkKernel(b *testing.B) {
	b.Run("lane", func(b *testing.B) { benchLane(b, kernelScenario(b), 0) })
	b.Run("floor", func(b *testing.B) {
		// 10,000/s evenly spaced, each held 100ms: ~1000 completions pending.
		var f floorModel
		at := int64(0)
		f.next = floorEvent{at: at}
		for range 200_000 {
			if f.step() {
				at += 100_000
				f.arrived(at, at-100_000+100_000_000)
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if f.step() {
				at += 100_000
				f.arrived(at, at-100_000+100_000_000)
			}
		}
		b.ReportMetric(float64(len(f.heap.items)+1), "pending")
	})
}

// BenchmarkLanePoisson is one event of each standard lane under Poisson traffic at 10,000/s
// (the perf-poisson-1h scenario's load), no tracing, stepped as Run steps it (StepN); floor is
// the least that model needs per event: the arrival's exponential variate (the lane's
// generator, expRand: math/rand/v2's PCG and ExpFloat64, the same stream), its time rounded to
// the ns as the source does, one token bucket decision (AcquireAt), and the heap work of
// floorStep (an admitted request's completion 50ms later). BenchmarkVariate is the variate
// alone.
func BenchmarkLanePoisson(b *testing.B) {
	for _, text := range []string{"token-bucket:capacity=10,rate=100/1s", "leaky-bucket:rate=100/1s",
		"sliding-window:limit=100,window=1s,slots=10", "fixed-window:limit=100,window=1s",
		"warm-up:capacity=10,rate=100/1s,warmup=10s", "concurrency:max=5"} {
		sc := &Scenario{Horizon: 24 * time.Hour, Client: Client{Policy: PolicyDrop}, Lanes: stacks(b, text),
			Sources:    []Source{{Kind: SourcePoisson, Rate: 10_000}},
			Downstream: &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: 50 * time.Millisecond}}}}}
		b.Run(string(sc.Lanes[0].Stack[0].Kind()), func(b *testing.B) { benchLane(b, sc, 0) })
	}
	b.Run("floor", func(b *testing.B) {
		tb, err := limiters.NewTokenBucket(10, limiters.PerSecond(100), virtualclock.New())
		if err != nil {
			b.Fatal(err)
		}
		rng := newExpRand(1, 0x5eed0000)
		var f floorModel
		target := 0.0
		poissonStep := func() {
			if !f.step() {
				return
			}
			target += rng.exp()
			at := int64(math.Round(target / 10_000 * 1e9))
			now := f.now
			if tb.AcquireAt(time.Duration(now), 1) == limiters.Admitted {
				f.arrived(at, now+50_000_000)
			} else {
				f.arrived(at, -1)
			}
		}
		for range 200_000 {
			poissonStep()
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			poissonStep()
		}
		b.ReportMetric(float64(len(f.heap.items)+1), "pending")
	})
}

// BenchmarkVariate is the generator's cost per arrival of a Poisson source: one exponential
// variate from expRand, as a flat stream draws it (exp), from math/rand/v2's ExpFloat64 on a
// PCG, the same stream (math-rand), and the PCG's Uint64 alone (pcg).
func BenchmarkVariate(b *testing.B) {
	b.Run("exp", func(b *testing.B) {
		rng := newExpRand(1, 0x5eed0000)
		sum := 0.0
		for b.Loop() {
			sum += rng.exp()
		}
		floatSink = sum
	})
	b.Run("math-rand", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 0x5eed0000))
		sum := 0.0
		for b.Loop() {
			sum += rng.ExpFloat64()
		}
		floatSink = sum
	})
	b.Run("pcg", func(b *testing.B) {
		pcg := rand.NewPCG(1, 0x5eed0000)
		var sum uint64
		for b.Loop() {
			sum += pcg.Uint64()
		}
		floatSink = float64(sum)
	})
}

var floatSink float64

// floorModel is the least a discrete-event kernel does per event for one source and one
// downstream, with Lane.Step's heap work and nothing else: the source's next arrival waits in
// a slot of its own (the lane's arrivals heap, of one source), an admitted arrival's
// completion is pushed onto a typed binary heap of bare 32-byte events and popped when due.
// Per arrival, one push (when admitted); per completion, one pop. (The floor this benchmark
// had before did a pop and a push on a heap of 1000 for every event, twice the work of a
// kernel that replaces an arrival by its successor in place.)
type floorModel struct {
	heap floorHeap
	next floorEvent // the source's next arrival
	now  int64
}

// step runs the earliest event and reports whether it was the arrival (the caller then
// calls arrived with its successor).
func (f *floorModel) step() bool {
	if len(f.heap.items) > 0 && f.heap.items[0].at < f.next.at {
		f.now = f.heap.pop().at
		return false
	}
	f.now = f.next.at
	return true
}

// arrived schedules the source's next arrival at next and, when done ≥ 0, the arrival's
// completion at done.
func (f *floorModel) arrived(next, done int64) {
	f.next.at = next
	if done >= 0 {
		f.heap.push(floorEvent{at: done})
	}
}

// floorEvent has event's 32-byte layout; the fields the floor never reads are blank.
type floorEvent struct {
	at  int64
	seq uint64
	_   uint8
	_   int32
	_   int32
	_   uint32
}

type floorHeap struct {
	items []floorEvent
	seq   uint64
}

func floorLess(a, b *floorEvent) bool { return a.at < b.at || (a.at == b.at && a.seq < b.seq) }

func (h *floorHeap) push(e floorEvent) {
	h.seq++
	e.seq = h.seq
	h.items = append(h.items, e)
	i := len(h.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !floorLess(&h.items[i], &h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *floorHeap) pop() floorEvent {
	top := h.items[0]
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	h.items = h.items[:n]
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && floorLess(&h.items[r], &h.items[c]) {
			c = r
		}
		if !floorLess(&h.items[c], &h.items[i]) {
			break
		}
		h.items[i], h.items[c] = h.items[c], h.items[i]
		i = c
	}
	return top
}

// BenchmarkFleetLane is one event of a fleet lane: Poisson traffic at 10,000/s through three
// instances behind a round-robin balancer, each with the full token bucket (local) or a third
// of it (split), in the default 1000 bins; every admission also counts in its instance's bin.
func BenchmarkFleetLane(b *testing.B) {
	for _, model := range []Coordination{CoordLocal, CoordSplit} {
		lane := stacks(b, "token-bucket:capacity=30,rate=6000/1s")[0]
		lane.Fleet = &LaneFleet{Model: model}
		sc := &Scenario{Horizon: 24 * time.Hour, Client: Client{Policy: PolicyDrop}, Lanes: []LaneSpec{lane},
			Fleet:   &Fleet{Instances: 3, Balancer: BalanceRoundRobin},
			Sources: []Source{{Kind: SourcePoisson, Rate: 10_000}}}
		b.Run(string(model), func(b *testing.B) { benchLane(b, sc, 0) })
	}
}
