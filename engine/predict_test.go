package engine_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/engine"
)

func TestParseGuesses(t *testing.T) {
	got, err := engine.ParseGuesses(" 3, 5;0 ", 3)
	if err != nil || len(got) != 3 || got[0] != 3 || got[1] != 5 || got[2] != 0 {
		t.Fatalf("ParseGuesses = %v, %v", got, err)
	}
	for text, want := range map[string]string{"3 5": "2 numbers for 3 lanes", "3 6 1": `lane 2: "6" is not a count from 0 to 5`, "3 x 1": `lane 2: "x"`} {
		if _, err := engine.ParseGuesses(text, 3); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseGuesses(%q): %v, want %q", text, err, want)
		}
	}
}

// A prediction counts a request once, when it ends for good: admitted (not the end of a wait),
// or given up; a rejection a retrying client will try again ends nothing.
func TestPredictionCountsEachRequestOnce(t *testing.T) {
	p := engine.NewPrediction(10, []int{2, 5})
	rec := func(req uint64, o engine.Outcome) engine.Record { return engine.Record{Request: req, Outcome: o} }
	for req := uint64(9); req <= 15; req++ { // 9 and 15 are outside the question
		p.Watch(0, rec(req, engine.OutcomeRejected))
		p.Watch(0, rec(req, engine.OutcomeAdmitted))
		p.Watch(0, rec(req, engine.OutcomeAdmitted)) // seen once
		p.Watch(1, rec(req, engine.OutcomeGaveUp))
	}
	p.Watch(0, engine.Record{Request: 12, Outcome: engine.OutcomeAdmitted, Reason: engine.ReasonWaitEnded})
	if p.Admitted[0] != 5 || p.Ended[0] != 5 || p.Admitted[1] != 0 || p.Ended[1] != 5 || !p.Done() {
		t.Fatalf("admitted %v ended %v done %v", p.Admitted, p.Ended, p.Done())
	}
	if p.Right() != 0 {
		t.Fatalf("%d right: lane 1 guessed 2 of 5, lane 2 guessed 5 of 0", p.Right())
	}
	q := engine.NewPrediction(1, []int{0})
	q.Watch(0, rec(1, engine.OutcomeRejected))
	if q.Done() || q.Ended[0] != 0 {
		t.Fatal("a rejection ended a request")
	}
}

// burst-after-idle's requests at 50ms, 80ms and 150ms start bursts (an idle of 10 columns of
// 1ms), the one at 152ms does not; a rejection after an admission is a refusal moment.
func TestMoments(t *testing.T) {
	if got := engine.ChartSlice(250 * time.Millisecond); got != time.Millisecond {
		t.Fatalf("ChartSlice(250ms) = %v", got)
	}
	if got := engine.ChartSlice(10 * time.Second); got != 50*time.Millisecond {
		t.Fatalf("ChartSlice(10s) = %v", got)
	}
	idle := engine.BurstIdleSlices * engine.ChartSlice(250*time.Millisecond)
	var m engine.Moments
	var bursts []time.Duration
	refusals := 0
	for i, at := range []time.Duration{50, 51, 80, 150, 152} {
		o := engine.OutcomeAdmitted
		if i == 1 || i == 4 {
			o = engine.OutcomeRejected
		}
		b, r := m.See(engine.Record{Request: uint64(i + 1), At: at * time.Millisecond, Outcome: o}, idle)
		if b {
			bursts = append(bursts, at)
		}
		if r {
			refusals++
		}
	}
	if len(bursts) != 3 || bursts[0] != 50 || bursts[1] != 80 || bursts[2] != 150 || refusals != 2 {
		t.Fatalf("bursts at %v ms, %d refusals", bursts, refusals)
	}
}

// A rate change ends the flat source at the instant and appends a copy at the new rate; again
// at the same instant it changes the copy; a scenario without a flat source says so.
func TestChangeRate(t *testing.T) {
	sc := &engine.Scenario{Horizon: 10 * time.Second, Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 100}}}
	c, err := engine.ChangeRate(sc, 2*time.Second, engine.RateStep)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.String(); got != "source 1: poisson 125/s from t=2s (was 100/s)" {
		t.Fatalf("%s", got)
	}
	if len(sc.Sources) != 2 || sc.Sources[0].Until != 2*time.Second || sc.Sources[1].From != 2*time.Second || sc.Sources[1].Rate != 125 {
		t.Fatalf("sources %+v", sc.Sources)
	}
	if _, err := engine.ChangeRate(sc, 2*time.Second, engine.RateStep); err != nil || len(sc.Sources) != 2 || sc.Sources[1].Rate != 156.25 {
		t.Fatalf("again at the same instant: %v, %+v", err, sc.Sources)
	}
	if _, err := engine.ChangeRate(sc, 2*time.Second, 1e9); err == nil || !strings.Contains(err.Error(), "the rate stays 156.25/s") {
		t.Fatalf("a rate past 10,000,000/s: %v", err)
	}
	script := &engine.Scenario{Horizon: time.Second, Sources: []engine.Source{{Kind: engine.SourceScript}}}
	if _, err := engine.ChangeRate(script, 0, 2); !errors.Is(err, engine.ErrNoFlatSource) {
		t.Fatalf("a script source: %v", err)
	}
}
