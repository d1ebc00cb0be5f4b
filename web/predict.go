package web

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// Predict, then reveal, as the TUI's p key: in predict mode, Advance pauses just before a
// decisive moment — the first request after an idle (a burst, engine.Moments), or a full fixed
// window's boundary (engine.FullWindowAhead) — and the view asks how many of the next
// engine.PredictCount requests each lane will admit; Guess takes the answer
// (engine.ParseGuesses) and Advance plays on until every lane has decided them, then the view
// reveals each lane's count beside its guess. The pause before a burst is found after the
// fact: the burst's first step runs, then the session steps back one (deterministic, so
// nothing is lost).

// PredictView is predict mode's question (Asking) or answer (Revealed) as the page shows it.
type PredictView struct {
	Why      string `json:"why"`   // "a burst after idle at t=50ms"
	First    uint64 `json:"first"` // the requests asked about, First..Last
	Last     uint64 `json:"last"`
	Asking   bool   `json:"asking"`   // waiting for a guess
	Playing  bool   `json:"playing"`  // guessed: the play goes on until every lane decided them
	Revealed bool   `json:"revealed"` // every lane has decided them (or the run ended)
	Guesses  []int  `json:"guesses,omitempty"`
	Admitted []int  `json:"admitted,omitempty"`
	Ended    []int  `json:"ended,omitempty"`
	Right    int    `json:"right"` // lanes guessed exactly
}

func (s *Session) predictView() *PredictView {
	q := s.question
	if q == nil {
		return nil
	}
	v := &PredictView{Why: q.why, First: q.first, Last: q.first + engine.PredictCount - 1, Asking: q.p == nil}
	if q.p != nil {
		v.Playing, v.Revealed = !q.revealed, q.revealed
		v.Guesses, v.Admitted, v.Ended, v.Right = q.p.Guesses, q.p.Admitted, q.p.Ended, q.p.Right()
	}
	return v
}

// SetPredict turns predict mode on or off (off drops a question or answer shown).
func (s *Session) SetPredict(on bool) {
	s.predictOn = on
	s.question = nil
}

// Guess answers the question: one count per lane (engine.ParseGuesses: "3 5 0"). The next
// Advance plays until every lane has decided the requests.
func (s *Session) Guess(text string) error {
	q := s.question
	if q == nil || q.p != nil {
		return fmt.Errorf("no question is open: predict mode asks before a burst or a full window's boundary")
	}
	guesses, err := engine.ParseGuesses(text, len(s.lanes))
	if err != nil {
		return err
	}
	q.p = engine.NewPrediction(q.first, guesses)
	return nil
}

// Dismiss closes the question (unanswered) or the answer: play goes on.
func (s *Session) Dismiss() { s.question = nil }

// Advance plays on by d of virtual time (to the horizon at most). In predict mode it stops
// early at a decisive moment not asked about yet (the view then asks), or, once a guess is in,
// when every lane has decided the requests (the view then reveals). An open question stops it
// where it is.
func (s *Session) Advance(d time.Duration) error {
	target := min(s.ls.Now()+d, s.sc.Horizon)
	if !s.predictOn {
		return s.ls.AdvanceTo(target)
	}
	q := s.question
	switch {
	case q != nil && q.p == nil:
		return nil // asking: the guess comes first
	case q != nil && q.revealed:
		s.question = nil // the answer was shown: play on
	case q != nil:
		stopped, err := s.forward(target, q.p.Done)
		if err != nil || !stopped && !s.ls.Done() {
			return err
		}
		q.revealed = true
		return nil
	}
	why, since := "", s.lastBurst.step
	stopped, err := s.forward(target, func() bool { return s.momentAhead(since, &why) })
	if err != nil || !stopped {
		return err
	}
	if why == "burst" {
		b := s.lastBurst
		s.momentSeen = b.step
		why = "a burst after idle at t=" + limiters.ShortDuration(b.at)
		if err := s.goTo(b.step-1, -1); err != nil { // the question needs the position before the burst
			return err
		}
	} else {
		s.momentSeen = s.ls.Steps() + 1
	}
	s.question = &question{why: why, first: s.moments.LastRequest + 1}
	return nil
}

// forward steps until stop holds (reporting true) or the next event is at or past target
// (then moving to target, reporting false).
func (s *Session) forward(target time.Duration, stop func() bool) (bool, error) {
	for {
		if stop() {
			return true, nil
		}
		if s.ls.NextEventAt() >= target {
			return false, s.ls.AdvanceTo(target)
		}
		if err := s.ls.StepTo(s.ls.Steps() + 1); err != nil {
			return false, err
		}
	}
}

// momentAhead reports a decisive moment not asked about yet: a burst lane 0 has seen since
// step since, or, before a step, a full fixed window whose boundary the next event reaches.
func (s *Session) momentAhead(since uint64, why *string) bool {
	if s.lastBurst.step > since && s.lastBurst.step > s.momentSeen {
		*why = "burst"
		return true
	}
	if s.ls.Steps()+1 <= s.momentSeen {
		return false
	}
	next := s.ls.NextEventAt()
	if next >= s.sc.Horizon {
		return false
	}
	if end, ok := engine.FullWindowAhead(s.ls.Lanes, s.ls.Now(), next); ok {
		*why = "the boundary at " + limiters.ShortDuration(end) + " of a full window"
		return true
	}
	return false
}
