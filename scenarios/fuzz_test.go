package scenarios

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ratelab/ratelab/engine"
)

// fuzzTrace stands in for every trace file a fuzzed scenario names: the fuzzer writes paths,
// and reading /dev/zero or a stranger's file is not what these targets test (the trace reader
// has its own target, trace.FuzzReader).
const fuzzTrace = "t_ns,permits,key\n0,1,a\n5,3,b\n1000000,1,\n2000000000,2,a\n"

// addExamples seeds f with every scenario file in testdata.
func addExamples(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
}

// checkRefusal holds a refusal to its promise: file:line:col: a reason.
func checkRefusal(t *testing.T, err error) {
	t.Helper()
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("not a *FileError (%T): %v", err, err)
	}
	if fe.Line < 1 || fe.Column < 1 || fe.Reason == "" || fe.File != "fuzz.yaml" {
		t.Fatalf("a refusal without its place or reason: %#v", fe)
	}
}

// FuzzLoad reads arbitrary bytes as a scenario file. It must never panic; it either refuses
// with a *FileError naming line and column, or returns a scenario that validates. Seeds:
// testdata/fuzz/FuzzLoad; go test runs them, scripts/fuzz.sh fuzzes.
func FuzzLoad(f *testing.F) {
	addExamples(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Load("fuzz.yaml", data)
		if err != nil {
			checkRefusal(t, err)
			return
		}
		if err := sc.Validate(); err != nil {
			t.Fatalf("Load accepted a scenario that does not validate: %v", err)
		}
	})
}

// fuzzLanes, fuzzBins and fuzzEvents bound the run of a fuzzed scenario, so that each input
// runs in milliseconds however long its horizon or fast its sources; a traced run keeps a
// snapshot of the deciding stage per event (4096 slots of a sliding window), so it runs
// fuzzTracedEvents.
const (
	fuzzLanes        = 3
	fuzzBins         = 1000
	fuzzEvents       = 3000
	fuzzTracedEvents = 100
)

// FuzzRun is the whole path: scenario text, loaded and validated, then a short run of every
// lane (its first fuzzEvents events). Whatever validation accepts must run: no panic, no
// error, and counters that add up. Seeds: testdata/fuzz/FuzzRun.
func FuzzRun(f *testing.F) {
	addExamples(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Load("fuzz.yaml", data)
		if err != nil {
			checkRefusal(t, err)
			return
		}
		for i := range sc.Sources {
			if sc.Sources[i].Kind == engine.SourceTrace {
				sc.Sources[i].TraceFile, sc.Sources[i].TraceData = "", fuzzTrace
			}
		}
		sc.Lanes = sc.Lanes[:min(len(sc.Lanes), fuzzLanes)]
		sc.Bins = min(sc.Bins, fuzzBins)
		if err := sc.Validate(); err != nil {
			t.Fatalf("a loaded scenario, bounded, does not validate: %v", err)
		}
		events := fuzzEvents
		if sc.Trace {
			events = fuzzTracedEvents
		}
		boundedRun(t, sc, events, "")
	})
}

// boundedRun runs each lane of sc for at most events events and checks its counters; a
// failure ends with label (the scenario, where it is not the fuzzer's input).
func boundedRun(t *testing.T, sc *engine.Scenario, events int, label string) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf(format+"\n%s", append(args, label)...)
	}
	for i := range sc.Lanes {
		lane, err := engine.NewLane(sc, i)
		if err != nil {
			fail("lane %d: a valid scenario fails to start: %v", i, err)
		}
		for range events {
			more, err := lane.Step()
			if err != nil {
				lane.Close()
				fail("lane %d at %v: a valid scenario fails to run: %v", i, lane.Now(), err)
			}
			if !more {
				break
			}
		}
		res := lane.Result()
		lane.Close()
		if err := checkTotals(i, res.Totals); err != nil {
			fail("%v", err)
		}
		for _, w := range res.Windows {
			if w.Bound != -1 && w.Bound < 1 {
				fail("lane %d: the %v meter's bound is %d (-1: none)", i, w.Length, w.Bound)
			}
		}
	}
}

// checkTotals holds a lane's totals to what they count: nothing negative (an overflowed sum
// would be), nothing admitted that was not offered.
func checkTotals(lane int, tot engine.Totals) error {
	for _, v := range []int64{tot.Offered, tot.OfferedPermits, tot.Attempts, tot.Retried, tot.Admitted, tot.AdmittedPermits,
		tot.RefusedAttempts, tot.GaveUp, tot.Never, tot.Queued, tot.TimedOut, tot.Completed, tot.Failed, tot.Wasted,
		int64(tot.MaxInFlight), int64(tot.MaxQueue)} {
		if v < 0 {
			return fmt.Errorf("lane %d: a negative total: %+v", lane, tot)
		}
	}
	if tot.Admitted+tot.GaveUp > tot.Offered || tot.AdmittedPermits > tot.OfferedPermits ||
		tot.Completed+tot.Failed > tot.Admitted || tot.OfferedPermits < tot.Offered {
		return fmt.Errorf("lane %d: totals that do not add up: %+v", lane, tot)
	}
	return nil
}
