package tui

import (
	"fmt"
	"strings"
	"time"

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
			if last.burst && last.step > m.momentSeen {
				*why = "burst"
				return true
			}
			burstMarks = len(marks)
		}
		if s.steps+1 <= m.momentSeen {
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
	if p := m.predict; p != nil && !p.revealed {
		arrived, err := s.forward(func() bool { return p.done() || atTarget() }, maxFrameWork)
		m.fail(err)
		if !arrived || m.err != nil || !p.done() && !s.done() {
			return goOn(arrived)
		}
		p.revealed, s.watch, m.playing = true, nil, false
		m.status = ""
		return nil, true
	}
	why := ""
	moment := m.momentStop(len(s.marks[0]), &why)
	arrived, err := s.forward(func() bool { return moment() || atTarget() }, maxFrameWork)
	m.fail(err)
	if !arrived || why == "" || m.err != nil {
		return goOn(arrived)
	}
	m.playing = false
	if why == "burst" {
		n := s.marks[0][len(s.marks[0])-1].step
		m.momentSeen = n
		why = "a burst after idle at t=" + short(s.marks[0][len(s.marks[0])-1].at)
		m.travel(travel{to: toStep, step: n - 1})
		for m.moving != nil && m.err == nil { // the question needs the position before the burst
			m.move(time.Second)
		}
	} else {
		m.momentSeen = s.steps + 1
	}
	m.ask(why)
	return nil, true
}

// ask opens the guess prompt about the next predictCount requests.
func (m *Model) ask(why string) {
	s := m.sim
	first := s.seen[0].LastRequest + 1
	m.predict = &prediction{first: first, last: first + predictCount - 1}
	m.mode, m.editErr, m.status = modeGuess, "", ""
	m.why = why
	m.seekIn.Prompt, m.seekIn.Placeholder = "guess> ", strings.TrimSpace(strings.Repeat("3 ", len(s.lanes)))
	m.seekIn.SetValue("")
	m.seekIn.Focus()
}

// updateGuess reads the guesses: one whole number per lane, each from 0 to predictCount.
func (m *Model) updateGuess(msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		m.mode, m.predict = modeMain, nil
		m.seekIn.Blur()
		m.status = "no guess: space plays on (p leaves predict mode)"
		return nil
	case "enter":
		guesses, err := engine.ParseGuesses(m.seekIn.Value(), len(m.sim.lanes))
		if err != nil {
			m.editErr = err.Error()
			return nil
		}
		p := m.predict
		p.Prediction = engine.NewPrediction(p.first, guesses)
		m.sim.watch = p
		m.mode = modeMain
		m.seekIn.Blur()
		m.status = "playing until every lane has decided them…"
		return m.play()
	}
	var cmd tea.Cmd
	m.seekIn, cmd = m.seekIn.Update(msg)
	return cmd
}

// guessFooter is the prompt's lines.
func (m *Model) guessFooter(w int) []string {
	sty, p := m.styles, m.predict
	lines := strings.Split(ansi.Wrap(fmt.Sprintf("predict · next: %s. Of the next %d requests (#%d–#%d), how many will each lane admit? One number per lane, top to bottom · enter plays · esc skips",
		m.why, predictCount, p.first, p.last), w, ""), "\n")
	for i := range lines {
		lines[i] = sty.Header.Render(lines[i])
	}
	lines = append(lines, m.seekIn.View())
	if m.editErr != "" {
		lines = append(lines, sty.Error.Render(fitWords(m.editErr, w)))
	}
	return lines
}

// revealFooter is each lane's answer against its guess.
func (m *Model) revealFooter(w int) []string {
	sty, p := m.styles, m.predict
	right := 0
	var lines []string
	for i, lane := range m.sim.lanes {
		verdict := "✓ right"
		if d := p.Admitted[i] - p.Guesses[i]; d != 0 {
			verdict = fmt.Sprintf("✗ off by %d", max(d, -d))
		} else {
			right++
		}
		if p.Ended[i] < int(p.last-p.first+1) {
			verdict += fmt.Sprintf(" (%d still undecided at the end)", int(p.last-p.first+1)-p.Ended[i])
		}
		counters := []string{fmt.Sprintf("admitted %d of %d", p.Admitted[i], p.last-p.first+1), fmt.Sprintf("you said %d %s", p.Guesses[i], verdict)}
		lines = append(lines, laneTitle("  ", lane.Spec.Label(), counters, 2, w, sty.Lane))
	}
	head := fmt.Sprintf("reveal · requests #%d–#%d: %d of %d lanes guessed right · any key goes on", p.first, p.last, right, len(m.sim.lanes))
	always := "? help · q quit"
	if last := lines[len(lines)-1]; ansi.StringWidth(last)+2+len(always) <= w {
		lines[len(lines)-1] = last + strings.Repeat(" ", w-ansi.StringWidth(last)-ansi.StringWidth(always)) + sty.Dim.Render(always)
	} else {
		lines = append(lines, strings.Repeat(" ", w-ansi.StringWidth(always))+sty.Dim.Render(always))
	}
	return append([]string{sty.Header.Render(fitWords(head, w))}, lines...)
}
