package engine

// Benchmarks of the simulation kernel. Run:
//
//	go test -run '^$' -bench . -count 5 ./engine/ | tee new.txt   # benchstat old.txt new.txt
//
// BenchmarkKernel/lane is ns per event of one lane with ~1000 events pending (10,000/s
// through a bulkhead to a 100ms downstream); BenchmarkKernel/floor is one pop and one push of
// a bare 32-byte event on a typed binary heap of 1000, the least a discrete-event kernel can
// do per event. Measured on the 2-core development machine (one core busy with other work):
// lane 72–74 ns/event, floor 79–81 ns, 0 allocs/event (before the arrival's successor
// replaced it at the heap's top: 119 ns, 1.5× the floor).
//
// Whole runs are measured outside the test suite (36M requests per lane take a while):
//
//	go build -o /tmp/ratelab ./cmd/ratelab
//	/usr/bin/time -v /tmp/ratelab run scenarios/testdata/perf-poisson-1h.yaml
//
// (the six poisson lanes at 10,000/s for one virtual hour; change horizon to 6m or 10h to see
// that the peak RSS does not grow with the run's length).

import (
	"math/rand/v2"
	"testing"
	"time"
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
	for range 200_000 { // to steady state: every slice at its working size
		if _, err := l.Step(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if more, err := l.Step(); err != nil || !more {
			b.Fatal(err, more)
		}
	}
	b.ReportMetric(float64(l.events.len()), "pending")
}

// BenchmarkKernel/lane is one event of a lane with ~1000 pending (ns/op = ns per event);
// BenchmarkKernel/floor is the floor: one pop and one push of a bare 32-byte event on a
// typed binary heap of ~1000.
func BenchmarkKernel(b *testing.B) {
	b.Run("lane", func(b *testing.B) { benchLane(b, kernelScenario(b), 0) })
	b.Run("floor", func(b *testing.B) {
		var h floorHeap
		rng := rand.New(rand.NewPCG(1, 1))
		for i := range 1000 {
			h.push(floorEvent{at: rng.Int64N(100_000_000), req: int32(i)})
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			e := h.pop()
			e.at += 100_000_000 + rng.Int64N(1000)
			h.push(e)
		}
		b.ReportMetric(float64(len(h.items)), "pending")
	})
}

// BenchmarkLanePoisson is one event of each standard lane under Poisson traffic at 10,000/s
// (the perf-poisson-1h scenario's load), no tracing.
func BenchmarkLanePoisson(b *testing.B) {
	for _, text := range []string{"token-bucket:capacity=10,rate=100/1s", "leaky-bucket:rate=100/1s",
		"sliding-window:limit=100,window=1s,slots=10", "fixed-window:limit=100,window=1s",
		"warm-up:capacity=10,rate=100/1s,warmup=10s", "concurrency:max=5"} {
		sc := &Scenario{Horizon: 24 * time.Hour, Client: Client{Policy: PolicyDrop}, Lanes: stacks(b, text),
			Sources:    []Source{{Kind: SourcePoisson, Rate: 10_000}},
			Downstream: &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: 50 * time.Millisecond}}}}}
		b.Run(string(sc.Lanes[0].Stack[0].Kind()), func(b *testing.B) { benchLane(b, sc, 0) })
	}
}

// floorEvent has event's 32-byte layout; the fields the floor never reads are blank.
type floorEvent struct {
	at  int64
	seq uint64
	_   uint8
	_   int32
	req int32
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
