package tui

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/lessons"
)

// Lesson mode (`ratelab learn NAME`): one step of a lesson at a time, "step 3/7" in the
// header. A step's text is read, then its question asked; the answer is the engine's
// (lessons.Answer, computed when the lesson was loaded), and a wrong guess is answered with
// the decision log's sentences that make the right one (engine.Sentence, each reason a
// limiter's State.Explain). A goal takes a spec for its lane and runs the scenario with it,
// check by check. Tab shows the step's scenario in the workbench, at the question's instant
// (after the answer, at the last decision it was made of), and takes the keys there; tab
// comes back.

type lessonPhase int

const (
	phaseRead    lessonPhase = iota // the step's text
	phaseGuess                      // the question, the guess being typed
	phaseReveal                     // the answer against the guess
	phaseGoal                       // the goal, a spec being typed (and the last try's verdict)
	phaseGoalMet                    // the goal reached
	phaseDone                       // the lesson's end
)

// LessonModel is the lesson mode's bubbletea model.
type LessonModel struct {
	ctx                                context.Context
	lesson                             *lessons.Lesson
	step                               int
	phase                              lessonPhase
	bench                              *Model // the step's scenario in the workbench
	onBench                            bool   // the workbench is shown and takes the keys
	input                              textinput.Model
	guess                              string
	right                              bool
	verdict                            *lessons.Verdict
	err                                string
	styles                             Styles
	width, height                      int
	asked, rightCount, goalsMet, goals int
}

// NewLesson opens lesson l at its first step.
func NewLesson(ctx context.Context, l *lessons.Lesson) (*LessonModel, error) {
	m := &LessonModel{ctx: ctx, lesson: l, styles: DefaultStyles(), width: 80, height: 24}
	m.input = textinput.New()
	m.input.Cursor.SetMode(cursor.CursorStatic)
	if err := m.enter(0); err != nil {
		return nil, err
	}
	return m, nil
}

// RunLesson shows lesson l in the terminal of in and out until the learner quits or ctx
// ends (a nil in reads the keys from /dev/tty, as Run does).
func RunLesson(ctx context.Context, l *lessons.Lesson, in io.Reader, out io.Writer) error {
	m, err := NewLesson(ctx, l)
	if err != nil {
		return err
	}
	return runPainted(ctx, m, in, out)
}

// enter opens step i: its workbench at the question's instant (0 without one).
func (m *LessonModel) enter(i int) error {
	m.step, m.phase, m.onBench, m.err, m.verdict, m.guess = i, phaseRead, false, "", nil, ""
	m.input.Blur()
	s := m.lesson.Steps[i]
	sc := *s.Scenario
	sc.Lanes, sc.Sources = slices.Clone(sc.Lanes), slices.Clone(sc.Sources)
	bench, err := New(&sc)
	if err != nil {
		return err
	}
	bench.Update(tea.WindowSizeMsg{Width: m.width, Height: m.height})
	if s.Question != nil {
		if err := bench.sim.advanceTo(s.Question.At); err != nil {
			return err
		}
		bench.status = "t=" + short(s.Question.At) + ": the question's instant · tab: the lesson"
	}
	m.bench = bench
	return nil
}

// Init starts nothing.
func (m *LessonModel) Init() tea.Cmd { return nil }

// Update handles a message.
func (m *LessonModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.input.Width = max(msg.Width-len(m.input.Prompt)-1, 10)
		m.bench.Update(msg)
		return m, nil
	case tickMsg:
		_, cmd := m.bench.Update(msg)
		return m, cmd
	case tea.KeyMsg:
		if msg.String() == "ctrl+c" {
			return m, tea.Quit
		}
		if msg.String() == "tab" {
			m.onBench = !m.onBench
			return m, nil
		}
		if m.onBench {
			if msg.String() == "q" && m.bench.mode == modeMain {
				m.onBench = false // q on the workbench goes back to the lesson, not out of it
				return m, nil
			}
			_, cmd := m.bench.Update(msg)
			return m, cmd
		}
		return m, m.key(msg)
	}
	return m, nil
}

// key is a key on the lesson's page.
func (m *LessonModel) key(msg tea.KeyMsg) tea.Cmd {
	s := m.lesson.Steps[m.step]
	typing := m.phase == phaseGuess || m.phase == phaseGoal
	switch msg.String() {
	case "q":
		if !typing {
			return tea.Quit
		}
	case "esc":
		if typing { // skip the question or the goal
			m.err = ""
			if m.phase == phaseGuess && s.Goal != nil {
				m.startGoal()
				return nil
			}
			return m.next()
		}
	case "enter":
		switch m.phase {
		case phaseRead:
			switch {
			case s.Question != nil:
				m.phase = phaseGuess
				m.input.Prompt, m.input.Placeholder = "your answer> ", ""
				m.input.SetValue("")
				m.input.Focus()
			case s.Goal != nil:
				m.startGoal()
			default:
				return m.next()
			}
			return nil
		case phaseGuess:
			right, err := s.Question.Check(s.Answer, m.input.Value())
			if err != nil {
				m.err = err.Error()
				return nil
			}
			m.err, m.guess, m.right, m.phase = "", strings.TrimSpace(m.input.Value()), right, phaseReveal
			m.input.Blur()
			m.asked++
			if right {
				m.rightCount++
			}
			// The workbench shows the decisions the answer is made of.
			if err := m.bench.sim.advanceTo(s.Answer.Until + 1); err != nil {
				m.err = err.Error()
			}
			m.bench.status = "t=" + short(m.bench.sim.now) + ": the answer's decisions are in the log · tab: the lesson"
			return nil
		case phaseReveal:
			if s.Goal != nil {
				m.startGoal()
				return nil
			}
			return m.next()
		case phaseGoal:
			v, err := s.Goal.Try(m.ctx, s.Scenario, m.input.Value())
			if err != nil {
				m.err = err.Error()
				return nil
			}
			m.err, m.verdict = "", v
			if v.Met {
				m.goalsMet++
				m.phase = phaseGoalMet
				m.input.Blur()
			}
			return nil
		case phaseGoalMet:
			return m.next()
		case phaseDone:
			return tea.Quit
		}
	}
	if typing {
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return cmd
	}
	return nil
}

func (m *LessonModel) startGoal() {
	g := m.lesson.Steps[m.step].Goal
	m.phase, m.verdict, m.err = phaseGoal, nil, ""
	m.goals++
	m.input.Prompt, m.input.Placeholder = g.Lane+"> ", ""
	m.input.SetValue(g.Start)
	m.input.CursorEnd()
	m.input.Focus()
}

// next goes to the next step, or to the lesson's end.
func (m *LessonModel) next() tea.Cmd {
	m.input.Blur()
	if m.step+1 >= len(m.lesson.Steps) {
		m.phase = phaseDone
		return nil
	}
	if err := m.enter(m.step + 1); err != nil {
		m.err = err.Error()
	}
	return nil
}

// View is the lesson's page, or the workbench.
func (m *LessonModel) View() string {
	if m.onBench {
		return m.bench.View()
	}
	lines := m.page()
	if len(lines) > m.height {
		lines = lines[:m.height]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "")
	}
	return strings.Join(lines, "\n")
}

// page is the lesson page's lines: the header with the progress, the text, what the phase
// asks or shows, and the keys at the bottom (kept whatever the height).
func (m *LessonModel) page() []string {
	w, sty := max(m.width, 20), m.styles
	s := m.lesson.Steps[m.step]
	wrap := func(text string, indent string) []string {
		var out []string
		for _, para := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			out = append(out, wrapWords(indent+para, w)...)
		}
		return out
	}
	head := fmt.Sprintf("ratelab learn · %s · step %d/%d", m.lesson.Name, m.step+1, len(m.lesson.Steps))
	if s.Title != "" {
		head += " · " + s.Title
	}
	lines := []string{sty.Header.Render(fitWords(head, w)), sty.Rule.Render(strings.Repeat("─", w))}
	var body []string
	if m.phase == phaseDone {
		body = append(body, wrap(fmt.Sprintf("%s: the end. %d of %d predictions right; %d of %d goals reached.",
			m.lesson.Title, m.rightCount, m.asked, m.goalsMet, m.goals), "")...)
	} else {
		body = append(body, sty.Dim.Render(fitWords("scenario: "+s.Scenario.Name, w)))
		body = append(body, wrap(s.Text, "")...)
		body = append(body, "")
		switch m.phase {
		case phaseGuess, phaseReveal:
			for _, l := range wrap(s.Question.Prompt(), "") {
				body = append(body, sty.Header.Render(l))
			}
			if m.phase == phaseGuess {
				body = append(body, m.input.View())
				break
			}
			a := s.Answer
			if m.right {
				body = append(body, sty.Admitted.Render(fitWords("✓ right: "+a.Text, w)))
			} else {
				body = append(body, sty.Rejected.Render(fitWords(fmt.Sprintf("✗ you said %s; the engine says %s. What the decision log says:", m.guess, a.Text), w)))
			}
			for _, e := range a.Explain {
				body = append(body, wrap(e, "  ")...)
			}
		case phaseGoal, phaseGoalMet:
			g := s.Goal
			body = append(body, wrap("Goal: "+g.Text, "")...)
			for _, c := range g.Checks {
				body = append(body, sty.Dim.Render(fitWords("  "+c.Text, w)))
			}
			if m.phase == phaseGoal {
				body = append(body, wrap("Type the spec of lane "+g.Lane+" (stack stages with +); enter runs the scenario with it.", "")...)
				body = append(body, m.input.View())
			}
			if m.verdict != nil {
				for _, l := range strings.Split(strings.TrimSpace(m.verdict.String()), "\n") {
					st := sty.Rejected
					if m.verdict.Met {
						st = sty.Admitted
					}
					for _, wl := range wrap(l, "") {
						body = append(body, st.Render(wl))
					}
				}
			}
		}
		if m.err != "" {
			body = append(body, wrap(m.err, "")...)
		}
	}
	keys := m.keysLine()
	room := m.height - len(lines) - 1
	if len(body) > room {
		cut := len(body) - room + 1
		body = append(body[:room-1], sty.Dim.Render(fitWords(fmt.Sprintf("… %d more lines (a larger terminal shows them)", cut), w)))
	}
	lines = append(lines, body...)
	for len(lines) < m.height-1 {
		lines = append(lines, "")
	}
	return append(lines, sty.Status.Render(fitWords(keys, w)))
}

// keysLine says what the keys do in this phase.
func (m *LessonModel) keysLine() string {
	switch m.phase {
	case phaseGuess:
		return "enter answers · esc skips · tab workbench at t=" + short(m.lesson.Steps[m.step].Question.At) + " · ctrl+c quits"
	case phaseGoal:
		return "enter runs it · esc skips · tab workbench · ctrl+c quits"
	case phaseDone:
		return "enter or q quits"
	}
	return "enter goes on · tab workbench · q quits"
}

// wrapWords breaks text into lines of at most w cells at spaces only (a spec's hyphens and
// commas stay whole); a word longer than w is cut. Leading spaces (an indent) are kept.
func wrapWords(text string, w int) []string {
	indent := text[:len(text)-len(strings.TrimLeft(text, " "))]
	var lines []string
	line := indent
	for _, word := range strings.Fields(text) {
		for ansi.StringWidth(word) > w-len(indent) && w-len(indent) > 0 {
			if strings.TrimSpace(line) != "" {
				lines = append(lines, line)
			}
			cut := ansi.Truncate(word, w-len(indent), "")
			lines = append(lines, indent+cut)
			word, line = word[len(cut):], indent
		}
		switch {
		case strings.TrimSpace(line) == "":
			line = indent + word
		case ansi.StringWidth(line)+1+ansi.StringWidth(word) <= w:
			line += " " + word
		default:
			lines = append(lines, line)
			line = indent + word
		}
	}
	return append(lines, line)
}
