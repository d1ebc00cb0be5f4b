package lessons

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// QuestionKind is what a question asks the learner to predict.
type QuestionKind string

// The kinds of question. Every answer is computed by running the step's scenario in the
// engine (engine.Lockstep) up to the question's instant At and on; a lesson file never
// writes one.
const (
	// Pass: how many of the next N requests after At lane Lane admits (0 to N).
	Pass QuestionKind = "pass"
	// FirstRefusal: which lane refuses a request first after At (a lane's name), or none.
	FirstRefusal QuestionKind = "first-refusal"
	// NextPermit: at what instant, if nothing else arrived after At, lane Lane would next
	// admit a one-permit request (a time such as 80ms, right within Within).
	NextPermit QuestionKind = "next-permit"
)

var questionKinds = []string{string(Pass), string(FirstRefusal), string(NextPermit)}

// Question is one prediction a step asks for.
type Question struct {
	Kind   QuestionKind
	At     time.Duration // the instant it is asked: the scenario has run every event before it
	Lane   string        // pass, next-permit: the lane's label
	N      int           // pass: how many requests
	Within time.Duration // next-permit: how far off a guess may be and still be right (default 1ms)
	Ask    string        // the question in the lesson's words; "" for the standard wording
}

// Prompt is the question as the learner reads it.
func (q *Question) Prompt() string {
	if q.Ask != "" {
		return q.Ask
	}
	at := limiters.FormatDuration(q.At)
	switch q.Kind {
	case Pass:
		return fmt.Sprintf("At t=%s: of the next %d requests, how many will %s admit? (0 to %d)", at, q.N, q.Lane, q.N)
	case FirstRefusal:
		return fmt.Sprintf("From t=%s: which lane refuses a request first? (a lane's name, or none)", at)
	default:
		return fmt.Sprintf("At t=%s, if nothing more arrived: when would %s next admit a request? (a time, e.g. 80ms)", at, q.Lane)
	}
}

// Answer is the engine's answer to a question, with the decisions that make it.
type Answer struct {
	Text    string        // the answer as the learner would write it: "3", "fixed-window:…", "80ms"
	Count   int           // pass: requests admitted
	Lanes   []string      // first-refusal: the lanes whose first refusal is at the earliest instant (none: empty)
	Next    time.Duration // next-permit: the instant
	Until   time.Duration // the instant the last deciding event happened: play to it to see them
	Explain []string      // the decision log's sentences that explain it (engine.Sentence)
}

// Answer runs sc (which must be the question's step's scenario, valid) and computes the
// answer.
func (q *Question) Answer(sc *engine.Scenario) (*Answer, error) {
	sc = cloneScenario(sc)
	sc.Trace = false
	ls, err := engine.NewLockstep(sc)
	if err != nil {
		return nil, err
	}
	defer ls.Close()
	lane := -1
	if q.Kind != FirstRefusal {
		if lane = laneIndex(sc, q.Lane); lane < 0 {
			return nil, fmt.Errorf("no lane %s in %s", q.Lane, sc.Name)
		}
	}
	// Before At: remember the last request each lane has seen.
	var last uint64
	var watch func(i int, r engine.Record)
	for i, l := range ls.Lanes {
		l.OnEvent = func(r engine.Record) {
			if r.Request > last {
				last = r.Request
			}
			if watch != nil {
				watch(i, r)
			}
		}
	}
	if err := ls.AdvanceTo(q.At); err != nil {
		return nil, err
	}
	switch q.Kind {
	case Pass:
		return q.pass(ls, lane, last, &watch)
	case FirstRefusal:
		return q.firstRefusal(ls, &watch)
	default:
		return q.nextPermit(ls, lane)
	}
}

// pass counts, in lane, how the N requests after the last one before At end.
func (q *Question) pass(ls *engine.Lockstep, lane int, last uint64, watch *func(int, engine.Record)) (*Answer, error) {
	first := last + 1
	ended := make([]bool, q.N)
	a := &Answer{}
	left := q.N
	stages := ls.Lanes[lane].Stages()
	explained := make([]bool, q.N) // the request's refusal was already said
	*watch = func(i int, r engine.Record) {
		if i != lane || r.Request < first || r.Request >= first+uint64(q.N) || ended[r.Request-first] {
			return
		}
		k := r.Request - first
		switch r.Outcome {
		case engine.OutcomeAdmitted, engine.OutcomeDelayed:
			if r.Reason == engine.ReasonWaitEnded {
				return
			}
			a.Count++
		case engine.OutcomeRejected, engine.OutcomeNever:
			if !explained[k] { // the attempt's refusal says why; a retry's says it again
				a.Explain = append(a.Explain, engine.Sentence(stages, r))
				explained[k] = true
			}
			return // the request ends when the client stops trying
		case engine.OutcomeRefused, engine.OutcomeGaveUp, engine.OutcomeTimedOut:
		default:
			return
		}
		ended[k] = true
		left--
		a.Until = r.At
		if !explained[k] {
			a.Explain = append(a.Explain, engine.Sentence(stages, r))
		}
	}
	for left > 0 && !ls.Done() {
		if err := ls.Step(); err != nil {
			return nil, err
		}
	}
	if left > 0 {
		return nil, fmt.Errorf("only %d of the %d requests after t=%s end before the horizon %s in %s",
			q.N-left, q.N, limiters.FormatDuration(q.At), limiters.FormatDuration(ls.Scenario.Horizon), q.Lane)
	}
	a.Text = strconv.Itoa(a.Count)
	return a, nil
}

// firstRefusal steps until a lane refuses an attempt; every lane refusing at that instant is
// an answer.
func (q *Question) firstRefusal(ls *engine.Lockstep, watch *func(int, engine.Record)) (*Answer, error) {
	a := &Answer{}
	found := time.Duration(-1)
	*watch = func(i int, r engine.Record) {
		if r.Outcome != engine.OutcomeRejected && r.Outcome != engine.OutcomeNever {
			return
		}
		if found >= 0 && r.At > found {
			return
		}
		name := ls.Lanes[i].Spec().Label()
		if slices.Contains(a.Lanes, name) {
			return
		}
		found = r.At
		a.Lanes = append(a.Lanes, name)
		a.Explain = append(a.Explain, name+": "+engine.Sentence(ls.Lanes[i].Stages(), r))
	}
	for found < 0 && !ls.Done() {
		if err := ls.Step(); err != nil {
			return nil, err
		}
	}
	// Finish the instant: the other lanes deciding at it.
	for found >= 0 && !ls.Done() && ls.NextEventAt() == found {
		if err := ls.Step(); err != nil {
			return nil, err
		}
	}
	if found < 0 {
		a.Text, a.Until = "none", ls.Scenario.Horizon
		a.Explain = []string{"no lane refuses a request before the horizon " + limiters.FormatDuration(ls.Scenario.Horizon)}
		return a, nil
	}
	a.Until = found
	a.Text = strings.Join(a.Lanes, " or ")
	return a, nil
}

// nextPermit finds the first instant at or after At at which every stage of lane has a
// permit, if nothing else arrived: the least t with AvailableAt(t) ≥ 1 in each stage, by
// bisection to the nanosecond (a time-based stage's availability only grows while nothing
// arrives). The explanation is each stage's state at At, as the log would explain a
// refusal (or an admission) there.
func (q *Question) nextPermit(ls *engine.Lockstep, lane int) (*Answer, error) {
	stages := ls.Lanes[lane].Stages()
	free := func(t time.Duration) bool {
		for _, s := range stages {
			if s.AvailableAt(t) < 1 {
				return false
			}
		}
		return true
	}
	horizon := ls.Scenario.Horizon
	if !free(horizon) {
		return nil, fmt.Errorf("%s has no permit before the horizon %s unless requests end (a bulkhead frees permits when they complete, not with time): ask next-permit of a time-based lane",
			q.Lane, limiters.FormatDuration(horizon))
	}
	lo, hi := q.At, horizon // free(hi); the answer is in [lo, hi]
	if free(lo) {
		hi = lo
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if free(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	a := &Answer{Next: hi, Until: hi, Text: limiters.FormatDuration(hi)}
	for i, s := range stages {
		st := s.Snapshot(q.At)
		d := limiters.Rejected
		if s.AvailableAt(q.At) >= 1 {
			d = limiters.Admitted
		}
		line := fmt.Sprintf("at t=%s %s: %s", limiters.FormatDuration(q.At), s.Kind(), st.Explain(1, d))
		if len(stages) > 1 {
			line = fmt.Sprintf("at t=%s stage %d (%s): %s", limiters.FormatDuration(q.At), i+1, s.Kind(), st.Explain(1, d))
		}
		a.Explain = append(a.Explain, line)
	}
	if hi > q.At {
		a.Explain = append(a.Explain, fmt.Sprintf("so the next permit comes at t=%s, %s later", a.Text, limiters.FormatDuration(hi-q.At)))
	} else {
		a.Explain = append(a.Explain, "so a request at t="+a.Text+" passes at once")
	}
	return a, nil
}

// Check reads the learner's guess and says whether it is right. A guess that cannot be read
// as this kind of answer is an error saying what to write.
func (q *Question) Check(a *Answer, guess string) (bool, error) {
	guess = strings.TrimSpace(guess)
	switch q.Kind {
	case Pass:
		n, err := strconv.Atoi(guess)
		if err != nil || n < 0 || n > q.N {
			return false, fmt.Errorf("%q is not a count from 0 to %d", guess, q.N)
		}
		return n == a.Count, nil
	case FirstRefusal:
		if strings.EqualFold(guess, "none") {
			return len(a.Lanes) == 0, nil
		}
		for _, l := range a.Lanes {
			if strings.EqualFold(l, guess) {
				return true, nil
			}
		}
		return false, nil
	default:
		t, err := time.ParseDuration(strings.TrimPrefix(guess, "t="))
		if err != nil {
			return false, fmt.Errorf("%q is not a time such as 80ms", guess)
		}
		d := t - a.Next
		return max(d, -d) <= q.Within, nil
	}
}

func laneIndex(sc *engine.Scenario, label string) int {
	return slices.IndexFunc(sc.Lanes, func(l engine.LaneSpec) bool { return l.Label() == label })
}

func laneLabels(sc *engine.Scenario) []string {
	out := make([]string, len(sc.Lanes))
	for i, l := range sc.Lanes {
		out[i] = l.Label()
	}
	return out
}

// cloneScenario copies what a lesson changes (lanes, sources, horizon) so that steps and
// runs never share slices they might change.
func cloneScenario(sc *engine.Scenario) *engine.Scenario {
	c := *sc
	c.Lanes = slices.Clone(sc.Lanes)
	c.Sources = slices.Clone(sc.Sources)
	return &c
}
