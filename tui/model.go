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
//
// The root model (model.go) routes. A key goes to the mode that has it — the lane editor
// (editor.go), the g/B prompt (prompt.go), the scenario picker (picker.go), predict mode's
// guess prompt (predict.go), the ? page's pager (help.go) — or else to the workbench's own
// keys (keys.go). Each mode has its own keymap, state, update and footer, and tells the root
// what happened through what its update returns; the root changes the run. Time travel is
// travel.go, traffic and lanes changed live interact.go, the lockstep simulation sim.go, the
// screen view.go and the *_view.go files, the lesson mode lesson.go.
package tui

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

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

// Model is the workbench's root model.
type Model struct {
	keys   KeyMap
	styles Styles

	width, height int
	mode          mode
	showHelp      bool
	exact         bool // the log shows durations exact instead of rounded
	topKeys       bool // keyed lanes show their top keys instead of their chart (k)

	sim *sim

	// The modes that take the keys from the workbench, each with its own keys, state, update
	// and view; mode says which has the keys. The root opens a mode, hands it the keys, and
	// acts on what its update returns.
	picker    picker     // s: the scenario picker
	editor    editor     // e, a, d: the lane editor
	seek      seekPrompt // g, B: a time to go to, the burst's size
	pager     pager      // ?: the help page
	predictor            // p: predict mode; embedded, so m.predictOn and m.predict name its state

	burstSize int          // requests b sends at once
	injected  int          // the scenario's source of what b sent, -1 before the first burst
	ExportDir string       // where w writes the session's scenario ("" is the working directory)
	moving    *travel      // a time-travel move that did not finish within keyBudget
	queued    []tea.KeyMsg // keys pressed while moving, applied in order once it arrives
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
	m := &Model{keys: DefaultKeyMap(), styles: DefaultStyles(), sim: s, width: 80, height: 24}
	m.speed = defaultSpeed(sc.Horizon)
	m.burstSize, m.injected = 10, -1
	m.picker, m.editor, m.seek, m.predictor = newPicker(sc), newEditor(), newSeekPrompt(), newPredictor()
	m.pager = pager{keys: defaultPagerKeys()}
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
		m.editor.setWidth(msg.Width)
		return nil
	case tickMsg:
		return m.tick(msg)
	case tea.KeyMsg:
		if key.Matches(msg, m.keys.Abort) {
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

// updateMain takes a key of the workbench's KeyMap (or, with the ? page open, the pager's).
func (m *Model) updateMain(msg tea.KeyMsg) tea.Cmd {
	m.status = ""
	if m.showHelp {
		return m.updateHelp(msg)
	}
	if cmd, ok := m.updateTravel(msg); ok {
		return cmd
	}
	switch {
	case key.Matches(msg, m.keys.Quit):
		return tea.Quit
	case key.Matches(msg, m.keys.Help):
		m.showHelp, m.pager.top = true, 0
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
			return m.drainKeys()
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
	if m.predictor.predictOn {
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
	lightFrom := time.Duration(-1) // a speed's frame ends at its target: observed throughout
	if speeds[m.speed] == 0 {
		lightFrom = 0 // at max the frame ends at its budget, observed for its last sixteenth
	}
	arrived, err := s.forward(func() bool { return s.nextEventAt() >= target }, maxFrameWork, lightFrom, target)
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
