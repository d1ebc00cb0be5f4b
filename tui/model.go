// Package tui is ratelab's interactive workbench: every lane of a scenario stacked on one
// virtual time axis, each with a scrolling chart of what it admitted and rejected, its
// counters and its limiter's state drawn the way the algorithms document draws it, and a
// log that reads each decision as a sentence with the limiter's real numbers.
//
// The simulation is the engine's, run in lockstep (every lane RunUntil the same time);
// wall-clock time only paces the animation. While paused the model schedules nothing, so an
// idle workbench costs no CPU.
package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// frame is the animation's pace while playing: one tick, one advance, one redraw.
const frame = 50 * time.Millisecond

// maxFrameWork is how long one frame may simulate at the "max" speed.
const maxFrameWork = 30 * time.Millisecond

// speeds are virtual time per real second; the last, 0, means as fast as the machine goes.
var speeds = append(append([]time.Duration{}, niceDurations...), 2*time.Minute, 5*time.Minute, 0)

type mode int

const (
	modeMain mode = iota
	modePicker
	modeEdit
)

// Model is the workbench's root model.
type Model struct {
	keys   KeyMap
	styles Styles
	help   help.Model

	width, height int
	mode          mode
	showHelp      bool

	sim     *sim
	picker  picker
	input   textinput.Model
	editErr string
	status  string
	err     error // a simulation error: shown, the run stops

	focus   int
	playing bool
	speed   int // index into speeds
	tickGen int // ticks of an older play are ignored
	top     int // the first lane on screen when they do not all fit
}

// tickMsg advances a playing simulation by one frame.
type tickMsg struct{ gen int }

// New returns the workbench on sc (which it may modify: the editor changes its lanes).
func New(sc *engine.Scenario) (*Model, error) {
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	s, err := newSim(sc)
	if err != nil {
		return nil, err
	}
	m := &Model{keys: DefaultKeyMap(), styles: DefaultStyles(), help: help.New(), sim: s, width: 80, height: 24}
	m.speed = defaultSpeed(sc.Horizon)
	m.picker = newPicker(sc)
	m.input = textinput.New()
	m.input.Prompt = "spec> "
	m.input.Cursor.SetMode(cursor.CursorStatic)
	return m, nil
}

// defaultSpeed plays a scenario in about 25 seconds.
func defaultSpeed(horizon time.Duration) int {
	for i, v := range speeds {
		if v != 0 && v*25 >= horizon {
			return i
		}
	}
	return len(speeds) - 1
}

// Run shows the workbench on sc in the terminal of in and out until the user quits or ctx
// ends. A nil in reads the keys from the controlling terminal (/dev/tty), for when standard
// input is not one.
func Run(ctx context.Context, sc *engine.Scenario, in io.Reader, out io.Writer) error {
	m, err := New(sc)
	if err != nil {
		return err
	}
	input := tea.WithInputTTY()
	if in != nil {
		input = tea.WithInput(in)
	}
	p := tea.NewProgram(m, tea.WithContext(ctx), input, tea.WithOutput(out), tea.WithAltScreen())
	_, err = p.Run()
	if err != nil && ctx.Err() != nil {
		return nil // interrupted: leaving is what was asked
	}
	return err
}

// Init starts nothing: the workbench opens paused.
func (m *Model) Init() tea.Cmd { return nil }

// Update handles keys, resizes and frames.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	m.scroll()
	return m, cmd
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
		m.input.Width = max(msg.Width-len(m.input.Prompt)-1, 10) // long stacks scroll, the cursor stays on screen
		return nil
	case tickMsg:
		return m.tick(msg)
	case tea.KeyMsg:
		if msg.String() == "ctrl+c" {
			return tea.Quit
		}
		if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste && m.mode != modeEdit {
			// Keys typed faster than the terminal is read arrive as one message ("...."):
			// each is a command of its own.
			var cmds []tea.Cmd
			for _, r := range msg.Runes {
				_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
				cmds = append(cmds, cmd)
			}
			return tea.Batch(cmds...)
		}
		switch m.mode {
		case modePicker:
			return m.updatePicker(msg)
		case modeEdit:
			return m.updateEdit(msg)
		}
		return m.updateMain(msg)
	}
	return nil
}

func (m *Model) updateMain(msg tea.KeyMsg) tea.Cmd {
	m.status = ""
	switch {
	case key.Matches(msg, m.keys.Quit):
		return tea.Quit
	case key.Matches(msg, m.keys.Help):
		m.showHelp = !m.showHelp
	case msg.String() == "esc":
		m.showHelp = false
	case key.Matches(msg, m.keys.Play):
		if m.playing {
			m.playing = false
			return nil
		}
		if m.sim.done() {
			m.status = "the run is over: r restarts it"
			return nil
		}
		return m.play()
	case key.Matches(msg, m.keys.Step):
		m.playing = false
		if m.sim.done() {
			m.status = "the run is over: r restarts it"
			return nil
		}
		m.fail(m.sim.step())
	case key.Matches(msg, m.keys.Faster):
		m.speed = min(m.speed+1, len(speeds)-1)
	case key.Matches(msg, m.keys.Slower):
		m.speed = max(m.speed-1, 0)
	case key.Matches(msg, m.keys.Restart):
		return m.restart("restarted")
	case key.Matches(msg, m.keys.Focus):
		m.focus = (m.focus + 1) % len(m.sim.lanes)
	case key.Matches(msg, m.keys.Back):
		m.focus = (m.focus + len(m.sim.lanes) - 1) % len(m.sim.lanes)
	case key.Matches(msg, m.keys.Edit):
		lane := m.sim.sc.Lanes[m.focus]
		if lane.Build != nil {
			m.status = "this lane's limiters are built in code; they cannot be edited here"
			return nil
		}
		m.playing = false // a frame must not change the run under the editor
		m.mode = modeEdit
		m.editErr = ""
		m.input.SetValue(engine.StackString(lane.Stack))
		m.input.CursorEnd()
		return m.input.Focus()
	case key.Matches(msg, m.keys.Switch):
		m.playing = false
		m.mode = modePicker
		m.picker.selectName(m.sim.sc.Name)
	}
	return nil
}

// play starts a new chain of ticks; ticks of an earlier chain are ignored.
func (m *Model) play() tea.Cmd {
	m.playing = true
	m.tickGen++
	return tickCmd(m.tickGen)
}

func tickCmd(gen int) tea.Cmd {
	return tea.Tick(frame, func(time.Time) tea.Msg { return tickMsg{gen: gen} })
}

// tick advances the simulation by one frame of the current speed and schedules the next
// frame, unless paused, finished or stale.
func (m *Model) tick(msg tickMsg) tea.Cmd {
	if !m.playing || msg.gen != m.tickGen || m.mode != modeMain {
		return nil
	}
	s := m.sim
	if v := speeds[m.speed]; v > 0 {
		m.fail(s.advanceTo(s.now + v*frame/time.Second))
	} else {
		start := time.Now() // wall clock paces the frame only; each chunk is deterministic
		for !s.done() && m.err == nil && time.Since(start) < maxFrameWork {
			m.fail(s.advanceTo(s.now + s.slice))
		}
	}
	if s.done() || m.err != nil {
		m.playing = false
		if m.err == nil {
			m.status = "end of the run: r restarts, s switches scenario"
		}
		return nil
	}
	return tickCmd(m.tickGen)
}

func (m *Model) fail(err error) {
	if err != nil {
		m.err = err
		m.playing = false
	}
}

// restart rebuilds every lane at time 0; a playing workbench goes on playing.
func (m *Model) restart(status string) tea.Cmd {
	s, err := newSim(m.sim.sc)
	if err != nil {
		m.fail(err)
		return nil
	}
	m.sim.close()
	m.sim, m.err, m.status = s, nil, status
	m.focus = min(m.focus, len(s.lanes)-1)
	if m.playing {
		return m.play()
	}
	return nil
}

func (m *Model) updateEdit(msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		m.mode = modeMain
		m.input.Blur()
		return nil
	case "enter":
		return m.applyEdit(m.input.Value())
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}

// applyEdit replaces the focused lane's stack with text when every stage parses and builds;
// otherwise it shows the error and changes nothing.
func (m *Model) applyEdit(text string) tea.Cmd {
	stack, err := engine.ParseStack(text)
	if err == nil {
		for _, spec := range stack {
			if err = spec.Validate(); err != nil {
				break
			}
		}
	}
	if err != nil {
		m.editErr = err.Error()
		return nil
	}
	sc := m.sim.sc
	old := sc.Lanes[m.focus].Stack
	sc.Lanes[m.focus].Stack = stack
	if err := sc.Validate(); err != nil {
		sc.Lanes[m.focus].Stack = old
		m.editErr = err.Error()
		return nil
	}
	m.mode = modeMain
	m.input.Blur()
	return m.restart("lane " + fmt.Sprint(m.focus+1) + " is now " + engine.StackString(stack) + "; restarted")
}

func (m *Model) updatePicker(msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "esc", "s":
		m.mode = modeMain
	case "q":
		return tea.Quit
	case "up", "k":
		m.picker.move(-1)
	case "down", "j":
		m.picker.move(1)
	case "enter":
		sc, err := m.picker.load()
		if err == nil {
			err = sc.Validate()
		}
		var s *sim
		if err == nil {
			s, err = newSim(sc)
		}
		if err != nil {
			m.picker.err = err.Error()
			return nil
		}
		m.sim.close()
		m.sim, m.err, m.focus, m.playing = s, nil, 0, false
		m.speed = defaultSpeed(sc.Horizon)
		m.mode = modeMain
		m.status = "opened " + sc.Name + ": space plays, . steps"
	}
	return nil
}

// View draws the screen: never more lines than the terminal has, none wider.
func (m *Model) View() string {
	w, h := m.width, m.height
	if w < 60 || h < 14 {
		return ansi.Truncate(fmt.Sprintf("ratelab needs at least 60×14; this terminal is %d×%d", w, h), w, "")
	}
	var lines []string
	if m.mode == modePicker {
		lines = m.picker.view(w, h, m.styles)
	} else {
		lines = m.mainView(w, h)
	}
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, w, "")
	}
	return strings.Join(lines, "\n")
}

// laneLayout is each lane's height and how many lanes fit, for the current size and footer.
func (m *Model) laneLayout(footer int) (laneH, visible int) {
	n := len(m.sim.lanes)
	avail := m.height - 1 - footer - 3 // header, footer, the log's rule and two entries
	laneH = min(max(avail/n, minLaneHeight), maxLaneHeight)
	return laneH, min(n, max(avail/laneH, 1))
}

// scroll keeps the focused lane among the visible ones, moving the first visible lane as
// little as possible.
func (m *Model) scroll() {
	if m.mode == modePicker || m.width < 60 || m.height < 14 {
		return
	}
	_, visible := m.laneLayout(len(m.footer(m.width)))
	m.top = min(m.top, m.focus)
	m.top = max(m.top, m.focus-visible+1)
	m.top = min(max(m.top, 0), len(m.sim.lanes)-visible)
}

func (m *Model) mainView(w, h int) []string {
	footer := m.footer(w)
	laneH, visible := m.laneLayout(len(footer))
	first := min(max(m.top, 0), len(m.sim.lanes)-visible)
	if m.focus < first || m.focus >= first+visible { // a size the last Update did not see
		first = min(m.focus, len(m.sim.lanes)-visible)
	}

	lines := []string{m.header(w, first, visible)}
	cols := chartCols(w)
	cw := m.chartWindow(cols)
	for i := first; i < first+visible; i++ {
		lines = append(lines, m.laneView(i, laneH, w, cw)...)
	}
	rest := h - len(lines) - len(footer)
	if rest >= 4 {
		lines = append(lines, m.axis(cw, w))
		rest--
	}
	lines = append(lines, m.logView(w, rest)...)
	return append(lines, footer...)
}

func (m *Model) header(w, first, visible int) string {
	s, sty := m.sim, m.styles
	state := "❚❚ paused"
	if m.playing {
		state = "▶ playing"
	}
	speed := "max"
	if v := speeds[m.speed]; v > 0 {
		speed = short(v) + "/s"
	}
	parts := []string{
		sty.Header.Render("ratelab · " + s.sc.Name),
		fmt.Sprintf("t=%s of %s", short(s.now), short(s.sc.Horizon)),
		state, "speed " + speed,
	}
	if visible < len(s.lanes) {
		parts = append(parts, fmt.Sprintf("lanes %d–%d of %d", first+1, first+visible, len(s.lanes)))
	}
	return strings.Join(parts, "  ")
}

// axis labels the charts' time range under the lanes.
func (m *Model) axis(cw chartWindow, w int) string {
	s, sty := m.sim, m.styles
	from := time.Duration(cw.first) * s.slice
	to := time.Duration(cw.first+cw.cols) * s.slice
	left := "   " + short(from)
	right := short(to)
	scale := fmt.Sprintf(" │ 1 column = %s · full bar = %d", short(s.slice), cw.scale)
	gap := cw.cols + 3 - ansi.StringWidth(left) - ansi.StringWidth(right)
	if gap < 1 {
		return sty.Dim.Render(left + scale)
	}
	return sty.Dim.Render(left + strings.Repeat("─", gap) + right + scale)
}

// logView is the focused lane's newest events as sentences, the newest at the bottom.
func (m *Model) logView(w, rows int) []string {
	if rows <= 0 {
		return nil
	}
	s, sty := m.sim, m.styles
	lane := s.lanes[m.focus]
	title := fmt.Sprintf("── log · %s ", lane.Spec.Label())
	lines := []string{sty.Rule.Render(title + strings.Repeat("─", max(0, w-ansi.StringWidth(title))))}
	rows--
	if m.err != nil {
		return append(lines, sty.Error.Render("error: "+m.err.Error()))
	}
	var body []string
	for _, r := range s.logs[m.focus].last(rows) {
		text := sentence(lane.Stages, r)
		style := sty.Dim
		switch r.Outcome {
		case engine.OutcomeAdmitted:
			style = sty.Admitted
		case engine.OutcomeRejected, engine.OutcomeNever, engine.OutcomeFailed, engine.OutcomeRefused, engine.OutcomeGaveUp, engine.OutcomeTimedOut:
			style = sty.Rejected
		}
		for j, l := range strings.Split(ansi.Wrap(text, w-2, ""), "\n") {
			if j > 0 {
				l = "  " + l
			}
			body = append(body, style.Render(l))
		}
	}
	if len(body) == 0 {
		body = []string{sty.Dim.Render("no decisions yet: space plays, . steps to the next event")}
	}
	if len(body) > rows {
		body = body[len(body)-rows:]
	}
	for len(body) < rows {
		body = append(body, "")
	}
	return append(lines, body...)
}

func (m *Model) footer(w int) []string {
	sty := m.styles
	switch {
	case m.mode == modeEdit:
		lines := []string{
			sty.Header.Render(fmt.Sprintf("edit lane %d", m.focus+1)) + sty.Dim.Render(" · enter applies and restarts · esc cancels · stack with +"),
			m.input.View(),
		}
		if m.editErr != "" {
			for _, l := range strings.Split(ansi.Wrap(m.editErr, w, ""), "\n") {
				lines = append(lines, sty.Error.Render(l))
			}
		} else {
			lines = append(lines, sty.Dim.Render(kindExamples()))
		}
		return lines
	case m.showHelp:
		return strings.Split(m.help.FullHelpView(m.keys.FullHelp()), "\n")
	case m.status != "":
		return []string{sty.Status.Render(m.status)}
	}
	return []string{m.help.ShortHelpView(m.keys.ShortHelp())}
}

func kindExamples() string {
	var ex []string
	for _, k := range limiters.Kinds() {
		ex = append(ex, k.Example)
	}
	return strings.Join(ex, "  ")
}
