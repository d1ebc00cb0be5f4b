// Package tui is ratelab's interactive workbench: every lane of a scenario stacked on one
// virtual time axis, each with a scrolling chart of what it admitted and rejected, its
// counters and its limiter's state drawn the way the algorithms document draws it, and a
// log that reads each decision as a sentence with the limiter's real numbers.
//
// The simulation is the engine's, run in lockstep (every lane RunUntil the same time);
// wall-clock time only paces the animation. While paused the model schedules nothing: the
// frame already on its way when play stops is the last, and no key but play starts a tick
// (save a re-simulation too long for one key's budget — a move back, an edit, a burst — which
// goes on in frames until it arrives). Nor does the screen: the workbench paints its own
// frames (paint.go), each right after the Update that made it, instead of bubbletea's
// renderer, whose ticker woke the program 60 times a second to compare an unchanged frame.
package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// frame is the animation's pace while playing: one tick, one advance, one redraw.
const frame = 50 * time.Millisecond

// perFrame is the virtual time one frame plays at speed v (virtual time per real second):
// v/20 for frames of 50ms. Not v·frame/1s: 5min/s times 50ms is 1.5·10¹⁹ ns², past int64,
// and the play stood still at that speed.
func perFrame(v time.Duration) time.Duration { return v / (time.Second / frame) }

// maxFrameWork is how long one frame may simulate at the "max" speed.
const maxFrameWork = 30 * time.Millisecond

// speeds are virtual time per real second; the last, 0, means as fast as the machine goes.
var speeds = append(append([]time.Duration{}, niceDurations...), 2*time.Minute, 5*time.Minute, 0)

type mode int

const (
	modeMain mode = iota
	modePicker
	modeEdit
	modeSeek
	modeGuess // predict mode's question
)

// keyBudget is how long a key may re-simulate before the screen answers: a time-travel move
// that needs more goes on frame by frame (maxFrameWork each), showing its progress.
const keyBudget = 80 * time.Millisecond

// travelTo is what a time-travel move stops at.
type travelTo int

const (
	toStep travelTo = iota // the position after step n
	toTime                 // time t: every event before t
	toMark                 // the focused lane's next mark
)

// travel is a move along the run in progress: going back re-simulates from 0 (the engine is
// deterministic, so the same steps reach the same state), going forward runs steps.
type travel struct {
	to    travelTo
	step  uint64
	at    time.Duration
	lane  int // toMark: the lane, and how many marks it had when the move began
	marks int
	done  string // the status once arrived
}

// Model is the workbench's root model.
type Model struct {
	keys   KeyMap
	styles Styles
	help   help.Model

	width, height int
	mode          mode
	showHelp      bool
	helpTop       int  // the first line of the help page on screen
	exact         bool // the log shows durations exact instead of rounded
	topKeys       bool // keyed lanes show their top keys instead of their chart (k)

	sim *sim

	// The modes that take the keys from the workbench, each with its own keys, state, update
	// and view; mode says which has the keys. The root opens a mode, hands it the keys, and
	// acts on what its update returns.
	picker    picker     // s: the scenario picker
	editor    editor     // e, a, d: the lane editor
	seek      seekPrompt // g, B: a time to go to, the burst's size
	predictor            // p: predict mode (embedded: m.predictOn, m.predict read as its state)

	burstSize int     // requests b sends at once
	injected  int     // the scenario's source of what b sent, -1 before the first burst
	ExportDir string  // where w writes the session's scenario ("" is the working directory)
	moving    *travel // a time-travel move that did not finish within keyBudget
	status    string
	err       error // a simulation error: shown, the run stops

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
	m.burstSize, m.injected = 10, -1
	m.picker, m.editor, m.seek, m.predictor = newPicker(sc), newEditor(), newSeekPrompt(), newPredictor()
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
// ends; signals are the caller's to turn into a cancelled ctx. A nil in reads the keys from
// the controlling terminal (/dev/tty), for when standard input is not one.
func Run(ctx context.Context, sc *engine.Scenario, in io.Reader, out io.Writer) error {
	m, err := New(sc)
	if err != nil {
		return err
	}
	return runPainted(ctx, m, in, out)
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
		m.editor.setWidth(msg.Width)
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
		case modeSeek:
			return m.updateSeek(msg)
		case modeGuess:
			return m.updateGuess(msg)
		}
		if m.predictor.answered() && !m.showHelp && !key.Matches(msg, m.keys.Help, m.keys.Quit) {
			m.predictor.closeAnswer() // any key closes the answer
			m.status = "predict mode: space plays to the next moment · p leaves it"
			return nil
		}
		if m.moving != nil {
			return m.updateMoving(msg)
		}
		return m.updateMain(msg)
	}
	return nil
}

func (m *Model) updateMain(msg tea.KeyMsg) tea.Cmd {
	m.status = ""
	if m.showHelp {
		return m.updateHelp(msg)
	}
	switch {
	case key.Matches(msg, m.keys.Quit):
		return tea.Quit
	case key.Matches(msg, m.keys.Help):
		m.showHelp, m.helpTop = true, 0
	case key.Matches(msg, m.keys.Exact):
		m.exact = !m.exact
		m.status = "the log shows durations rounded for reading (x: exact)"
		if m.exact {
			m.status = "the log shows durations exact, to the nanosecond (x: rounded)"
		}
	case key.Matches(msg, m.keys.TopKeys):
		m.toggleTopKeys()
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
		if m.predictor.asking() && m.predictor.predict.done() {
			m.predictor.reveal()
			m.sim.watch = nil
		}
	case key.Matches(msg, m.keys.StepBack):
		m.playing = false
		if m.sim.steps == 0 {
			m.status = "at the start: nothing to step back to"
			return nil
		}
		n := m.sim.steps - 1
		return m.travel(travel{to: toStep, step: n, done: fmt.Sprintf("back one event: event %d", n)})
	case key.Matches(msg, m.keys.PrevMark):
		m.playing = false
		marks := m.sim.marks[m.focus]
		for k := len(marks) - 1; k >= 0; k-- {
			if marks[k].step < m.sim.steps {
				return m.travel(travel{to: toStep, step: marks[k].step, done: "back to " + marks[k].String()})
			}
		}
		m.status = "no earlier burst or refusal in this lane"
	case key.Matches(msg, m.keys.NextMark):
		m.playing = false
		if m.sim.done() {
			m.status = "the run is over: r restarts it"
			return nil
		}
		return m.travel(travel{to: toMark, lane: m.focus, marks: len(m.sim.marks[m.focus])})
	case key.Matches(msg, m.keys.Home):
		m.playing = false
		return m.travel(travel{to: toStep, step: 0, done: "back at the start"})
	case key.Matches(msg, m.keys.End):
		m.playing = false
		return m.travel(travel{to: toTime, at: m.sim.sc.Horizon, done: "at the end of the run"})
	case key.Matches(msg, m.keys.Seek):
		m.playing, m.mode = false, modeSeek
		return m.seek.openSeek(m.sim.sc.Horizon)
	case key.Matches(msg, m.keys.BurstSize):
		m.playing, m.mode = false, modeSeek
		return m.seek.openBurstSize(m.burstSize, m.keys.Burst.Help().Key)
	case key.Matches(msg, m.keys.Predict):
		m.status, m.sim.watch = m.predictor.toggle(m.sim.steps), nil
	case key.Matches(msg, m.keys.Burst):
		return m.burst()
	case key.Matches(msg, m.keys.RateUp):
		return m.changeRate(rateStep)
	case key.Matches(msg, m.keys.RateDown):
		return m.changeRate(1 / rateStep)
	case key.Matches(msg, m.keys.Export):
		m.export()
	case key.Matches(msg, m.keys.Add):
		m.playing, m.mode = false, modeEdit
		return m.editor.openNew(len(m.sim.sc.Lanes) + 1)
	case key.Matches(msg, m.keys.Duplicate):
		lane := m.sim.sc.Lanes[m.focus]
		if lane.Build != nil {
			return m.addLane(lane, "a copy of lane "+fmt.Sprint(m.focus+1))
		}
		m.playing, m.mode = false, modeEdit
		return m.editor.open(true, len(m.sim.sc.Lanes)+1, engine.StackString(lane.Stack))
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
		m.playing, m.mode = false, modeEdit // a frame must not change the run under the editor
		return m.editor.open(false, m.focus+1, engine.StackString(lane.Stack))
	case key.Matches(msg, m.keys.Switch):
		m.playing = false
		m.mode = modePicker
		m.picker.selectName(m.sim.sc.Name)
	}
	return nil
}

// updateHelp pages the `?` screen: ↑/↓ and page keys scroll it, ? or esc closes it.
func (m *Model) updateHelp(msg tea.KeyMsg) tea.Cmd {
	page := max(m.height-2, 1)
	switch msg.String() {
	case "?", "esc":
		m.showHelp = false
	case "q", "ctrl+c":
		return tea.Quit
	case "up", "k":
		m.helpTop--
	case "down", "j", "enter":
		m.helpTop++
	case "pgup", "b":
		m.helpTop -= page
	case "pgdown", " ", "f":
		m.helpTop += page
	case "home":
		m.helpTop = 0
	case "end":
		m.helpTop = len(m.helpLines(m.width))
	}
	m.helpTop = min(max(m.helpTop, 0), max(len(m.helpLines(m.width))-page, 0))
	return nil
}

// updateSeek hands the key to the seek prompt; a time typed moves the run there, a size
// typed is the next bursts'.
func (m *Model) updateSeek(msg tea.KeyMsg) tea.Cmd {
	cmd, out, at, size := m.seek.update(msg)
	switch out {
	case seekCancelled:
		m.mode = modeMain
	case seekBurstSize:
		m.burstSize, m.mode = size, modeMain
		m.status = fmt.Sprintf("%s now sends %d requests at once", m.keys.Burst.Help().Key, size)
	case seekTime:
		m.mode = modeMain
		return m.travel(travel{to: toTime, at: at, done: "at t=" + short(at)})
	}
	return cmd
}

// updateMoving answers keys while a long time-travel move goes on: esc stops it where it
// is, q quits; every other key waits.
func (m *Model) updateMoving(msg tea.KeyMsg) tea.Cmd {
	switch {
	case msg.String() == "esc":
		m.moving = nil
		m.status = fmt.Sprintf("stopped at t=%s (event %d)", short(m.sim.now), m.sim.steps)
	case key.Matches(msg, m.keys.Quit):
		return tea.Quit
	}
	return nil
}

// travel starts a move along the run: a target behind the position re-simulates from 0.
// It runs for keyBudget at once; what is left goes on in frames.
func (m *Model) travel(tr travel) tea.Cmd {
	s := m.sim
	behind := tr.to == toStep && tr.step < s.steps || tr.to == toTime && tr.at < s.now
	if !behind {
		return m.startMove(tr, -1)
	}
	if tr.to == toTime {
		return m.startMove(tr, int(tr.at/s.slice))
	}
	return m.startMove(tr, s.sliceOfStep(tr.step))
}

// startMove begins tr, first rewinding the run to the checkpoint of slice k when k ≥ 0; it
// goes on in frames when keyBudget does not finish it.
func (m *Model) startMove(tr travel, k int) tea.Cmd {
	if k >= 0 {
		s := m.sim
		fresh, err := s.rewind(s.rewindSlice(k))
		if err != nil {
			m.fail(err)
			return nil
		}
		s.close()
		m.sim, m.err = fresh, nil
	}
	m.moving = &tr
	if m.move(keyBudget) {
		return nil
	}
	m.tickGen++
	return tickCmd(m.tickGen)
}

// move goes on with the move in progress for at most budget and reports whether it is over.
func (m *Model) move(budget time.Duration) bool {
	tr, s := m.moving, m.sim
	var stop func() bool
	switch tr.to {
	case toStep:
		stop = func() bool { return s.steps >= tr.step }
	case toTime:
		stop = func() bool { return s.nextEventAt() >= tr.at }
	case toMark:
		stop = func() bool { return len(s.marks[tr.lane]) > tr.marks }
	}
	arrived, err := s.forward(stop, budget)
	m.fail(err)
	if !arrived && m.err == nil {
		m.status = fmt.Sprintf("travelling… t=%s (esc stops)", short(s.now))
		return false
	}
	m.moving = nil
	if m.err != nil {
		return true
	}
	switch tr.to {
	case toTime:
		m.fail(s.advanceTo(tr.at))
		m.status = tr.done
	case toMark:
		if marks := s.marks[tr.lane]; len(marks) > tr.marks {
			m.status = "at " + marks[len(marks)-1].String()
		} else {
			m.status = "no burst or refusal until the end of the run"
		}
	default:
		m.status = tr.done
	}
	return true
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
	if m.moving != nil && msg.gen == m.tickGen {
		if m.move(maxFrameWork) {
			return nil
		}
		return tickCmd(m.tickGen)
	}
	if !m.playing || msg.gen != m.tickGen || m.mode != modeMain {
		return nil
	}
	// The frame simulates toward its target for at most maxFrameWork: on a scenario too
	// heavy for the speed, the play falls behind the speed instead of the screen freezing
	// (the perf scenario at max: ~20 frames/s). Each step is the same whatever the frames.
	s := m.sim
	start := time.Now() // wall clock paces the frames only
	if m.predictOn {
		if _, handled := m.predictFrame(); handled {
			return nil
		}
		if s = m.sim; s.done() || m.err != nil {
			m.playing = false
			return nil
		}
		gen := m.tickGen
		return tea.Tick(max(frame-time.Since(start), time.Millisecond), func(time.Time) tea.Msg { return tickMsg{gen: gen} })
	}
	target := s.sc.Horizon
	if v := speeds[m.speed]; v > 0 {
		target = min(s.now+perFrame(v), s.sc.Horizon)
	}
	arrived, err := s.forward(func() bool { return s.nextEventAt() >= target }, maxFrameWork)
	m.fail(err)
	if arrived && m.err == nil {
		m.fail(s.advanceTo(target))
	}
	if s.done() || m.err != nil {
		m.playing = false
		if m.err == nil {
			m.status = "end of the run: r restarts, s switches scenario"
		}
		return nil
	}
	// The next frame is due one frame after this one began, not after it ended.
	gen := m.tickGen
	return tea.Tick(max(frame-time.Since(start), time.Millisecond), func(time.Time) tea.Msg { return tickMsg{gen: gen} })
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
	m.sim, m.err, m.status, m.moving = s, nil, status, nil
	m.focus = min(m.focus, len(s.lanes)-1)
	if m.playing {
		return m.play()
	}
	return nil
}

// updateEdit hands the key to the lane editor and applies the stack it returns.
func (m *Model) updateEdit(msg tea.KeyMsg) tea.Cmd {
	cmd, out, stack := m.editor.update(msg)
	switch out {
	case editCancelled:
		m.mode = modeMain
	case editedStack:
		return m.applyEdit(stack)
	}
	return cmd
}

// applyEdit adds a lane of stack, or replaces the focused lane's stack with it when the
// scenario still validates; otherwise the editor shows the error and nothing changes.
func (m *Model) applyEdit(stack []limiters.Spec) tea.Cmd {
	sc := m.sim.sc
	if m.editor.adding {
		m.mode = modeMain
		m.editor.close()
		lane := engine.LaneSpec{Stack: stack}
		if m.focus < len(sc.Lanes) {
			orig := sc.Lanes[m.focus]
			lane.Client, lane.MaxWait, lane.Waste = orig.Client, orig.MaxWait, orig.Waste
		}
		return m.addLane(lane, engine.StackString(stack))
	}
	old := sc.Lanes[m.focus].Stack
	sc.Lanes[m.focus].Stack = stack
	if err := sc.Validate(); err != nil {
		sc.Lanes[m.focus].Stack = old
		m.editor.fail(err)
		return nil
	}
	m.mode = modeMain
	m.editor.close()
	return m.restart("lane " + fmt.Sprint(m.focus+1) + " is now " + engine.StackString(stack) + "; restarted")
}

// updatePicker hands the key to the scenario picker and opens the scenario it returns.
func (m *Model) updatePicker(msg tea.KeyMsg) tea.Cmd {
	out, sc := m.picker.update(msg)
	switch out {
	case pickBack:
		m.mode = modeMain
	case pickQuit:
		return tea.Quit
	case pickOpened:
		s, err := newSim(sc)
		if err != nil {
			m.picker.fail(err)
			return nil
		}
		m.sim.close()
		m.sim, m.err, m.focus, m.playing, m.moving = s, nil, 0, false, nil
		m.injected = -1
		m.speed = defaultSpeed(sc.Horizon)
		m.mode = modeMain
		m.status = "opened " + sc.Name + ": space plays, . steps"
	}
	return nil
}

// updateGuess hands the key to predict mode's guess prompt; guesses made, the run plays
// until every lane has decided the requests they are about.
func (m *Model) updateGuess(msg tea.KeyMsg) tea.Cmd {
	cmd, out, watch := m.predictor.updateGuess(msg, len(m.sim.lanes))
	switch out {
	case guessSkipped:
		m.mode = modeMain
		m.status = "no guess: space plays on (p leaves predict mode)"
	case guessMade:
		m.sim.watch = watch
		m.mode = modeMain
		m.status = "playing until every lane has decided them…"
		return m.play()
	}
	return cmd
}

// View draws the screen: never more lines than the terminal has, none wider.
func (m *Model) View() string {
	lines := m.screen()
	if len(lines) > m.height {
		lines = lines[:m.height]
	}
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "") // a safety net: screen fits its lines itself
	}
	return strings.Join(lines, "\n")
}

// screen is the view's lines, each fitted to the width by its own drawing (words are not
// cut; names are elided before numbers).
func (m *Model) screen() []string {
	w, h := m.width, m.height
	switch {
	case w < minWidth || h < minHeight:
		return m.tooSmall(w, h)
	case m.mode == modePicker:
		return m.picker.view(w, h, m.styles)
	case m.showHelp:
		return m.helpView(w, h)
	}
	return m.mainView(w, h)
}

// tooSmall is the screen of a terminal smaller than minWidth×minHeight.
func (m *Model) tooSmall(w, h int) []string {
	text := fmt.Sprintf("terminal too small: ratelab needs at least %d×%d, this one is %d×%d. Enlarge the window (or make the font smaller); q quits.",
		minWidth, minHeight, w, h)
	return strings.Split(ansi.Wrap(text, max(w, 1), ""), "\n")
}

// helpView is the `?` page, scrolled to helpTop, with the header and a footer that says how
// to move and leave.
func (m *Model) helpView(w, h int) []string {
	body := m.helpLines(w)
	rows := h - 2
	top := min(m.helpTop, max(len(body)-rows, 0))
	end := min(top+rows, len(body))
	lines := []string{fitWords(m.styles.Header.Render("ratelab · help")+m.styles.Dim.Render(" · every key, then every symbol on screen"), w)}
	lines = append(lines, body[top:end]...)
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	where := "? or esc closes · q quit"
	if len(body) > rows {
		where = fmt.Sprintf("↑/↓ scroll (lines %d–%d of %d) · ? or esc closes · q quit", top+1, end, len(body))
	}
	return append(lines, m.styles.Dim.Render(fitWords(where, w)))
}

// laneLayout is each lane's height and how many lanes fit, for the current size and footer.
func (m *Model) laneLayout(footer int) (laneH, visible int) {
	n := len(m.sim.lanes)
	// Header and footer, then the axis, the log's rule and two entries; four entries when
	// every lane still fits at its least height.
	avail := m.height - 1 - footer - 3
	if n*minLaneHeight <= avail-2 {
		avail -= 2
	}
	laneH = min(max(avail/n, minLaneHeight), maxLaneHeight)
	return laneH, min(n, max(avail/laneH, 1))
}

// scroll keeps the focused lane among the visible ones, moving the first visible lane as
// little as possible.
func (m *Model) scroll() {
	if m.mode == modePicker || m.width < minWidth || m.height < minHeight {
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

// header is the run's line: the scenario, the time, play state and speed, which lanes are
// on screen. The scenario's name is elided first, so the numbers stay.
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
		fmt.Sprintf("t=%s of %s", short(s.now), short(s.sc.Horizon)),
		state, "speed " + speed,
	}
	if visible < len(s.lanes) {
		parts = append(parts, fmt.Sprintf("lanes %d–%d of %d", first+1, first+visible, len(s.lanes)))
	}
	rest := "  " + strings.Join(parts, "  ")
	name := "ratelab · " + s.sc.Name
	room := w - ansi.StringWidth(rest)
	if ansi.StringWidth(name) > room {
		name = s.sc.Name
	}
	return sty.Header.Render(elide(name, max(room, 0))) + fitWords(rest, w-min(ansi.StringWidth(name), max(room, 0)))
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
		return sty.Dim.Render(fitWords(left+scale, w))
	}
	return sty.Dim.Render(fitWords(left+strings.Repeat("─", gap)+right+scale, w))
}

// logView is the focused lane's newest events as sentences, the newest at the bottom.
func (m *Model) logView(w, rows int) []string {
	if rows <= 0 {
		return nil
	}
	s, sty := m.sim, m.styles
	lane := s.lanes[m.focus]
	title := fmt.Sprintf("── log · %s ", elide(lane.Spec.Label(), w-12))
	lines := []string{sty.Rule.Render(title + strings.Repeat("─", max(0, w-ansi.StringWidth(title))))}
	rows--
	if m.err != nil {
		return append(lines, sty.Error.Render("error: "+m.err.Error()))
	}
	// Whole sentences only, the newest at the bottom: one that does not fit in full is left
	// out rather than shown from its middle.
	var body []string
	records := s.logs[m.focus].last(rows)
	for k := len(records) - 1; k >= 0; k-- {
		r := records[k]
		text := readable(sentence(lane.Stages, r), m.exact)
		style := sty.Dim
		switch r.Outcome {
		case engine.OutcomeAdmitted:
			style = sty.Admitted
		case engine.OutcomeRejected, engine.OutcomeNever, engine.OutcomeFailed, engine.OutcomeRefused, engine.OutcomeGaveUp, engine.OutcomeTimedOut:
			style = sty.Rejected
		}
		wrapped := strings.Split(ansi.Wrap(text, w-2, ""), "\n")
		if len(body)+len(wrapped) > rows {
			break
		}
		for j := len(wrapped) - 1; j >= 0; j-- {
			l := wrapped[j]
			if j > 0 {
				l = "  " + l
			}
			body = append([]string{style.Render(l)}, body...)
		}
	}
	if len(body) == 0 && len(records) > 0 {
		// The newest sentence alone is longer than the log: its start, cut between words.
		wrapped := strings.Split(ansi.Wrap(readable(sentence(lane.Stages, records[len(records)-1]), m.exact), w-2, ""), "\n")
		for j := 0; j < rows && j < len(wrapped); j++ {
			l := wrapped[j]
			if j == rows-1 && j+1 < len(wrapped) {
				l = fitWords(l+" "+wrapped[j+1], w-2)
			}
			if j > 0 {
				l = "  " + l
			}
			body = append(body, l)
		}
	}
	if len(body) == 0 {
		body = []string{sty.Dim.Render("no decisions yet: space plays, . steps to the next event")}
	}
	for len(body) < rows {
		body = append(body, "")
	}
	return append(lines, body...)
}

// footer is the key line, or the status in its place; either way it ends with "? help · q
// quit", so a newcomer always sees how to learn the keys and how to leave.
func (m *Model) footer(w int) []string {
	sty := m.styles
	switch {
	case m.mode == modeGuess:
		return m.predictor.guessFooter(w, sty)
	case m.predictor.answered():
		return m.predictor.revealFooter(w, sty, m.sim.lanes)
	case m.mode == modeSeek:
		return m.seek.footer(w, sty)
	case m.mode == modeEdit:
		return m.editor.footer(w, sty)
	}
	always := "  ? help · q quit"
	room := w - ansi.StringWidth(always)
	if m.status != "" {
		lines := strings.Split(ansi.Wrap(m.status, room, ""), "\n")
		for i := range lines {
			lines[i] = sty.Status.Render(lines[i])
		}
		last := len(lines) - 1
		lines[last] += strings.Repeat(" ", max(room-ansi.StringWidth(lines[last]), 0)) + sty.Dim.Render(always)
		return lines
	}
	var hints []string
	used := 0
	for _, b := range m.keys.ShortHelp() {
		hint := b.Help().Key + " " + b.Help().Desc
		if used+ansi.StringWidth(hint)+3 > room {
			break
		}
		hints = append(hints, hint)
		used += ansi.StringWidth(hint) + 3
	}
	line := sty.Dim.Render(strings.Join(hints, " · "))
	return []string{line + strings.Repeat(" ", max(room-ansi.StringWidth(line), 0)) + sty.Dim.Render(always)}
}

func kindExamples() string {
	var ex []string
	for _, k := range limiters.Kinds() {
		ex = append(ex, k.Example)
	}
	return strings.Join(ex, "  ")
}
