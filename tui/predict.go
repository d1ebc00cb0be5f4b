package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/engine"
)

// predictCount is how many of the next requests a prediction is about.
const predictCount = engine.PredictCount

// Predict, then reveal (p): while playing, the workbench pauses just before a decisive
// moment — the first request after an idle (a burst), or a full fixed window reaching its
// boundary — and asks how many of the next predictCount requests each lane will admit. Enter
// plays until every lane has decided them, then shows each lane's answer beside the guess.
// The pause before a burst is found after the fact: the burst's first step runs, then the
// run steps back one event (deterministic, so nothing is lost). What is decisive, what ends a
// request and how a guess reads are package engine's (engine.Prediction, engine.Moments,
// engine.FullWindowAhead, engine.ParseGuesses), which the page in the browser asks with too.

// prediction is one question: requests first..last, and once guessed, each lane's guess and
// what it did (engine.Prediction).
type prediction struct {
	first, last uint64
	*engine.Prediction
	revealed bool
}

// watch counts lane i's record r if it ends one of the predicted requests.
func (p *prediction) watch(i int, r engine.Record) { p.Watch(i, r) }

// done reports whether every lane has ended every predicted request.
func (p *prediction) done() bool { return p.Done() }

// momentStop is the play's stop in predict mode: it reports a decisive moment the workbench
// has not asked about yet — a burst mark in lane 0 (every lane is offered the same requests),
// or, before a step, a full fixed window whose boundary the next event reaches.
func (m *Model) momentStop(burstMarks int, why *string) func() bool {
	s := m.sim
	return func() bool {
		if marks := s.marks[0]; len(marks) > burstMarks {
			last := marks[len(marks)-1]
			if last.burst && last.step > m.predictor.momentSeen {
				*why = "burst"
				return true
			}
			burstMarks = len(marks)
		}
		if s.steps+1 <= m.predictor.momentSeen {
			return false
		}
		next := s.nextEventAt()
		if next >= s.sc.Horizon {
			return false
		}
		if end, ok := engine.FullWindowAhead(s.lanes, s.now, next); ok {
			*why = fmt.Sprintf("the boundary at %s of a full window", short(end))
			return true
		}
		return false
	}
}

// predictFrame is a playing frame in predict mode, at the play's speed; it reports whether
// the play stopped (for a question or an answer).
func (m *Model) predictFrame() (tea.Cmd, bool) {
	s := m.sim
	target := s.sc.Horizon
	if v := speeds[m.speed]; v > 0 {
		target = min(s.now+perFrame(v), s.sc.Horizon)
	}
	atTarget := func() bool { return s.nextEventAt() >= target }
	// goOn moves to the frame's target when the frame's steps reached it.
	goOn := func(arrived bool) (tea.Cmd, bool) {
		if arrived && m.err == nil {
			m.fail(s.advanceTo(target))
		}
		return nil, false
	}
	if m.predictor.asking() {
		p := m.predictor.predict
		arrived, err := s.forward(func() bool { return p.done() || atTarget() }, maxFrameWork, -1, 0)
		m.fail(err)
		if !arrived || m.err != nil || !p.done() && !s.done() {
			return goOn(arrived)
		}
		m.predictor.reveal()
		s.watch, m.playing = nil, false
		m.status = ""
		return nil, true
	}
	why := ""
	moment := m.momentStop(len(s.marks[0]), &why)
	arrived, err := s.forward(func() bool { return moment() || atTarget() }, maxFrameWork, -1, 0)
	m.fail(err)
	if !arrived || why == "" || m.err != nil {
		return goOn(arrived)
	}
	m.playing = false
	if why == "burst" {
		n := s.marks[0][len(s.marks[0])-1].step
		m.predictor.seen(n)
		why = "a burst after idle at t=" + short(s.marks[0][len(s.marks[0])-1].at)
		m.travel(travel{to: toStep, step: n - 1})
		for m.moving != nil && m.err == nil { // the question needs the position before the burst
			m.move(time.Second)
		}
	} else {
		m.predictor.seen(s.steps + 1)
	}
	m.mode, m.status = modeGuess, ""
	m.predictor.ask(why, m.sim.seen[0].LastRequest+1, len(m.sim.lanes))
	return nil, true
}

// defaultGuessKeys are the guess prompt's own keys; every other key is the text's.
func defaultGuessKeys() promptKeys {
	return promptKeys{
		Go:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "plays")),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "skips")),
	}
}

// predictor is predict mode's state: whether it is on, the question asked and its answer,
// how far moments have been asked about, and the guess prompt. The root finds the moments
// and plays the run (predictFrame); the predictor asks, reads the guesses and shows the
// answer.
type predictor struct {
	keys       promptKeys
	predictOn  bool        // predict mode: the play pauses before decisive moments
	predict    *prediction // the question asked, then its answer
	momentSeen uint64      // moments up to this step have been asked about
	why        string      // what the question's moment is
	in         textinput.Model
	err        string // why the last guesses were refused
}

func newPredictor() predictor {
	return predictor{keys: defaultGuessKeys(), in: newPromptInput("guess> ", "")}
}

// toggle turns predict mode on or off at step steps, dropping any question, and returns the
// status that says so.
func (p *predictor) toggle(steps uint64) string {
	p.predictOn, p.predict, p.momentSeen = !p.predictOn, nil, steps
	if p.predictOn {
		return "predict mode: space plays until just before a burst after idle or a full window's boundary, then asks"
	}
	return "predict mode off"
}

// seen marks the moments up to step n as asked about.
func (p *predictor) seen(n uint64) { p.momentSeen = n }

// asking reports whether a question is out and its answer not yet shown.
func (p *predictor) asking() bool { return p.predict != nil && !p.predict.revealed }

// answered reports whether the answer is on screen.
func (p *predictor) answered() bool { return p.predict != nil && p.predict.revealed }

// decided reports whether every lane has ended every request of the question out.
func (p *predictor) decided() bool { return p.asking() && p.predict.done() }

// reveal shows the answer of the question out.
func (p *predictor) reveal() { p.predict.revealed = true }

// closeAnswer drops the question and its answer.
func (p *predictor) closeAnswer() { p.predict = nil }

// ask opens the guess prompt about the predictCount requests from first, of lanes lanes.
func (p *predictor) ask(why string, first uint64, lanes int) {
	p.predict = &prediction{first: first, last: first + predictCount - 1}
	p.why, p.err = why, ""
	p.in.Placeholder = strings.TrimSpace(strings.Repeat("3 ", lanes))
	p.in.SetValue("")
	p.in.Focus()
}

// guessOutcome is what a key did to the guess prompt.
type guessOutcome int

const (
	guessTyping  guessOutcome = iota // the prompt stays open
	guessSkipped                     // esc: no guess, the question dropped
	guessMade                        // enter with one guess per lane: the question is watched
)

// updateGuess reads the guesses of lanes lanes: one whole number per lane, each from 0 to
// predictCount. With guessMade, the root plays and counts the question's requests (watch).
func (p *predictor) updateGuess(msg tea.KeyMsg, lanes int) (cmd tea.Cmd, out guessOutcome, watch *prediction) {
	switch {
	case key.Matches(msg, p.keys.Cancel):
		p.predict = nil
		p.in.Blur()
		return nil, guessSkipped, nil
	case key.Matches(msg, p.keys.Go):
		guesses, err := engine.ParseGuesses(p.in.Value(), lanes)
		if err != nil {
			p.err = err.Error()
			return nil, guessTyping, nil
		}
		q := p.predict
		q.Prediction = engine.NewPrediction(q.first, guesses)
		p.in.Blur()
		return nil, guessMade, q
	}
	p.in, cmd = p.in.Update(msg)
	return cmd, guessTyping, nil
}

// guessFooter is the prompt's lines.
func (p *predictor) guessFooter(w int, sty Styles) []string {
	q := p.predict
	lines := strings.Split(ansi.Wrap(fmt.Sprintf("predict · next: %s. Of the next %d requests (#%d–#%d), how many will each lane admit? One number per lane, top to bottom · %s %s · %s %s",
		p.why, predictCount, q.first, q.last, p.keys.Go.Help().Key, p.keys.Go.Help().Desc, p.keys.Cancel.Help().Key, p.keys.Cancel.Help().Desc), w, ""), "\n")
	for i := range lines {
		lines[i] = sty.Header.Render(lines[i])
	}
	lines = append(lines, p.in.View())
	if p.err != "" {
		lines = append(lines, sty.Error.Render(fitWords(p.err, w)))
	}
	return lines
}

// revealFooter is each lane's answer against its guess.
func (p *predictor) revealFooter(w int, sty Styles, lanes []*engine.Lane) []string {
	q := p.predict
	right := 0
	var lines []string
	for i, lane := range lanes {
		verdict := "✓ right"
		if d := q.Admitted[i] - q.Guesses[i]; d != 0 {
			verdict = fmt.Sprintf("✗ off by %d", max(d, -d))
		} else {
			right++
		}
		if q.Ended[i] < int(q.last-q.first+1) {
			verdict += fmt.Sprintf(" (%d still undecided at the end)", int(q.last-q.first+1)-q.Ended[i])
		}
		counters := []string{fmt.Sprintf("admitted %d of %d", q.Admitted[i], q.last-q.first+1), fmt.Sprintf("you said %d %s", q.Guesses[i], verdict)}
		lines = append(lines, laneTitle("  ", lane.Spec().Label(), counters, 2, w, sty.Lane))
	}
	head := fmt.Sprintf("reveal · requests #%d–#%d: %d of %d lanes guessed right · any key goes on", q.first, q.last, right, len(lanes))
	always := "? help · q quit"
	if last := lines[len(lines)-1]; ansi.StringWidth(last)+2+len(always) <= w {
		lines[len(lines)-1] = last + strings.Repeat(" ", w-ansi.StringWidth(last)-ansi.StringWidth(always)) + sty.Dim.Render(always)
	} else {
		lines = append(lines, strings.Repeat(" ", w-ansi.StringWidth(always))+sty.Dim.Render(always))
	}
	return append([]string{sty.Header.Render(fitWords(head, w))}, lines...)
}
