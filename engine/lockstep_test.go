package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
)

// lockstepScenario: 100/s constant for 200ms against a bucket of 3 and a fixed window of 5.
func lockstepScenario(t *testing.T) *engine.Scenario {
	t.Helper()
	var lanes []engine.LaneSpec
	for _, text := range []string{"token-bucket:capacity=3,rate=10/1s", "fixed-window:limit=5,window=100ms"} {
		stack, err := engine.ParseStack(text)
		if err != nil {
			t.Fatal(err)
		}
		lanes = append(lanes, engine.LaneSpec{Stack: stack})
	}
	return &engine.Scenario{Name: "lockstep", Seed: 1, Horizon: 200 * time.Millisecond,
		Sources: []engine.Source{{Kind: engine.SourceConstant, Rate: 100}}, Lanes: lanes}
}

type logged struct {
	lines []string
}

func listen(s *engine.Lockstep) []*logged {
	logs := make([]*logged, len(s.Lanes))
	for i, lane := range s.Lanes {
		lg := &logged{}
		logs[i] = lg
		stages := lane.Stages()
		lane.OnEvent = func(r engine.Record) { lg.lines = append(lg.lines, engine.Sentence(stages, r)) }
	}
	return logs
}

// A step is one arrival in every lane at once: the constant source's request k at (k−1)×10ms.
func TestLockstepStepsEveryLaneAtTheSameInstant(t *testing.T) {
	s, err := engine.NewLockstep(lockstepScenario(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	logs := listen(s)
	for k := 1; k <= 5; k++ {
		if err := s.Step(); err != nil {
			t.Fatal(err)
		}
		if want := time.Duration(k-1) * 10 * time.Millisecond; s.Now() != want || s.Steps() != uint64(k) {
			t.Fatalf("step %d: now %v, steps %d; want %v, %d", k, s.Now(), s.Steps(), want, k)
		}
		for i, lane := range s.Lanes {
			if lane.Now() != s.Now() {
				t.Fatalf("lane %d at %v, lockstep at %v", i, lane.Now(), s.Now())
			}
		}
	}
	// The bucket of 3 at 10/s refuses the 4th request at 30ms; the window of 5 admits all 5.
	if got := logs[0].lines[3]; !strings.HasPrefix(got, "t=30ms req #4 (1 permit) rejected by token-bucket: ") {
		t.Fatalf("bucket's 4th line %q", got)
	}
	if got := logs[1].lines[4]; !strings.HasPrefix(got, "t=40ms req #5 (1 permit) admitted by fixed-window") {
		t.Fatalf("window's 5th line %q", got)
	}
}

// Going back is a fresh Lockstep run to one step fewer: the same sentences, the same state.
func TestLockstepStepToRepeatsTheRun(t *testing.T) {
	a, err := engine.NewLockstep(lockstepScenario(t))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	la := listen(a)
	if err := a.StepTo(9); err != nil {
		t.Fatal(err)
	}
	at9 := []int{len(la[0].lines), len(la[1].lines)}
	state9 := a.Lanes[0].Stages()[0].Snapshot(a.Now())
	if err := a.AdvanceTo(95 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if a.Steps() != 10 || a.Now() != 95*time.Millisecond {
		t.Fatalf("at 95ms: %d steps, now %v; want 10 steps", a.Steps(), a.Now())
	}
	b, err := engine.NewLockstep(lockstepScenario(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	lb := listen(b)
	if err := b.StepTo(9); err != nil {
		t.Fatal(err)
	}
	if b.Now() != 80*time.Millisecond {
		t.Fatalf("step 9 at %v, want 80ms", b.Now())
	}
	for i := range la {
		if got, want := strings.Join(lb[i].lines, "\n"), strings.Join(la[i].lines[:at9[i]], "\n"); got != want {
			t.Fatalf("lane %d: step back differs:\n%s\nwant\n%s", i, got, want)
		}
	}
	if got := b.Lanes[0].Stages()[0].Snapshot(b.Now()); got.Arrival != state9.Arrival || got.Available != state9.Available {
		t.Fatalf("state after going back %+v, want %+v", got, state9)
	}
	if err := b.StepTo(3); err == nil {
		t.Fatal("StepTo behind the position was accepted")
	}
	if err := b.StepTo(1 << 40); err != nil || !b.Done() {
		t.Fatalf("StepTo past the end: %v, done %v", err, b.Done())
	}
}

// A burst injected at InjectionAt is part of the scenario: a fresh Lockstep repeats every step
// before it, and the burst's requests meet the limiter after the step that ran at that instant.
func TestInjectBurst(t *testing.T) {
	sc := lockstepScenario(t)
	s, err := engine.NewLockstep(sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StepTo(2); err != nil { // requests at 0 and 10ms
		t.Fatal(err)
	}
	at := s.InjectionAt()
	if at != 10*time.Millisecond+1 {
		t.Fatalf("injection at %v, want 10ms+1ns (a step ran at 10ms)", at)
	}
	s.Close()
	k, err := engine.InjectBurst(sc, -1, at, 3)
	if err != nil || k != 1 || len(sc.Sources[1].Script) != 3 {
		t.Fatalf("InjectBurst: k %d, err %v, sources %+v", k, err, sc.Sources)
	}
	if k2, err := engine.InjectBurst(sc, k, at, 2); err != nil || k2 != k || len(sc.Sources[k].Script) != 5 {
		t.Fatalf("second burst: k %d, err %v", k2, err)
	}
	for _, bad := range []struct {
		at time.Duration
		n  int
	}{{at, 0}, {at, engine.MaxBurst + 1}, {-1, 1}, {sc.Horizon, 1}} {
		if _, err := engine.InjectBurst(sc, k, bad.at, bad.n); err == nil {
			t.Fatalf("burst of %d at %v accepted", bad.n, bad.at)
		}
	}
	s, err = engine.NewLockstep(sc)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	logs := listen(s)
	if err := s.StepTo(3); err != nil {
		t.Fatal(err)
	}
	// Step 3 is the burst's first request, at its instant, in both lanes.
	if s.Now() != at || !strings.HasPrefix(logs[1].lines[2], "t=10.000001ms req #3 ") {
		t.Fatalf("step 3 at %v, want %v: %q", s.Now(), at, logs[1].lines[2])
	}
	if err := s.AdvanceTo(at + 1); err != nil {
		t.Fatal(err)
	}
	// The bucket of 3 had 1 permit left: 1 of the burst's 5 admitted, 4 rejected.
	admitted, rejected := 0, 0
	for _, line := range logs[0].lines[2:] {
		admitted += strings.Count(line, "admitted by")
		rejected += strings.Count(line, "rejected by")
	}
	if admitted != 1 || rejected != 4 {
		t.Fatalf("bucket after the burst: %d admitted, %d rejected; want 1 admitted and 4 rejected:\n%s", admitted, rejected, strings.Join(logs[0].lines, "\n"))
	}
}

func TestSentenceNamesTheStageOfAStack(t *testing.T) {
	clock := virtualclock.New()
	bucket, err := limiters.Parse("token-bucket:capacity=3,rate=100/1s", clock)
	if err != nil {
		t.Fatal(err)
	}
	bulkhead, err := limiters.Parse("concurrency:max=2", clock)
	if err != nil {
		t.Fatal(err)
	}
	r := engine.Record{At: 20 * time.Millisecond, Request: 4, Attempt: 2, Permits: 1, Outcome: engine.OutcomeRejected, Stage: 1, Reason: "2 of 2 in flight"}
	if got, want := engine.Sentence([]limiters.Limiter{bucket, bulkhead}, r), "t=20ms req #4 attempt 2 (1 permit) rejected by stage 2 (concurrency): 2 of 2 in flight"; got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	r.Stage = 0
	if got, want := engine.Sentence([]limiters.Limiter{bucket}, r), "t=20ms req #4 attempt 2 (1 permit) rejected by token-bucket: 2 of 2 in flight"; got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
