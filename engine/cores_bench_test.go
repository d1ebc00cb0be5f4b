//go:build unix

package engine

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// perfScenario is the model of scenarios/testdata/perf-poisson-1h.yaml (the six standard
// lanes of 100/s, Poisson arrivals at 10,000/s, a 50ms downstream, drop) over horizon.
func perfScenario(tb testing.TB, horizon time.Duration) *Scenario {
	return &Scenario{Name: "perf-poisson", Seed: 1, Horizon: horizon, Client: Client{Policy: PolicyDrop},
		Lanes: stacks(tb, "token-bucket:capacity=10,rate=100/1s", "leaky-bucket:rate=100/1s",
			"sliding-window:limit=100,window=1s,slots=10", "fixed-window:limit=100,window=1s",
			"warm-up:capacity=10,rate=100/1s,warmup=10s", "concurrency:max=5"),
		Sources:    []Source{{Kind: SourcePoisson, Rate: 10_000}},
		Downstream: &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: 50 * time.Millisecond}}}}}
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRunSixLanes is one Run of the perf scenario's six lanes over 60 virtual seconds
// (600,000 arrivals per lane, 3.6M events in all: about 60ms of a core per lane, so that a
// run's own costs, its lanes' setup and its bins, do not hide how the lanes share the cores;
// over 10 virtual seconds a run took 10ms). Compare GOMAXPROCS 1 and 2:
//
//	go test -run '^$' -bench RunSixLanes -cpu 1,2 -count 6 ./engine/ > cores.txt
//	benchstat -col /cpu cores.txt
//
// ns/event is wall time per event over all lanes; cpu-ns/event the process's CPU time per
// event (equal at both settings when the lanes share nothing: a lane costs the same wherever it
// runs); cpu/wall is how many cores the run kept busy, all three over the same runs. The loop
// is b.N's, not b.Loop's: with b.Loop, the first result of a -cpu list is measured in the
// benchmark's first call, before the testing package sets GOMAXPROCS for it (golang/go#49980;
// it reported 1.8 cores busy at GOMAXPROCS 1).
func BenchmarkRunSixLanes(b *testing.B) {
	sc := perfScenario(b, 60*time.Second)
	var events uint64
	b.ReportAllocs()
	wall0, cpu0 := time.Now(), cpuTime(b)
	b.ResetTimer()
	for range b.N {
		res, err := Run(context.Background(), sc, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range res.Lanes {
			events += l.Events
		}
	}
	wall, cpu := time.Since(wall0), cpuTime(b)-cpu0
	b.ReportMetric(float64(wall.Nanoseconds())/float64(events), "ns/event")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(events), "cpu-ns/event")
	b.ReportMetric(float64(cpu)/float64(wall), "cpu/wall")
}
