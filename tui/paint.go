package tui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"golang.org/x/term"
)

// The workbench paints its own frames. Bubbletea v1's standard renderer wakes on a ticker 60
// times a second for the whole program, to compare the frame with the last one it drew: a
// paused workbench, which schedules nothing, still woke ~290 times a second (voluntary
// context switches, measured in tmux). Its renderer interface is unexported, so the program
// runs without one (tea.WithoutRenderer) and the painter draws each frame on the Update that
// made it: a key is on screen as soon as its Update returns, a frame of play when its tick
// does, and a paused workbench writes nothing and wakes for nothing.
//
// Without its renderer bubbletea leaves the terminal alone, so the painter also does what
// the renderer's program did around it: raw mode for the keys, the alternate screen, the
// cursor hidden, bracketed paste (a pasted stack arrives as one message), the window's size
// at start and on every resize (SIGWINCH), and all of it undone on quit, Ctrl-C, a cancelled
// context or a panic.

// The terminal sequences the painter writes (xterm's, which every terminal bubbletea
// supports understands).
const (
	enterAltScreen = "\x1b[?1049h" // the alternate screen, saving the cursor
	leaveAltScreen = "\x1b[?1049l"
	clearScreen    = "\x1b[2J"
	hideCursor     = "\x1b[?25l"
	showCursor     = "\x1b[?25h"
	pasteOn        = "\x1b[?2004h" // bracketed paste
	pasteOff       = "\x1b[?2004l"
	eraseLineRight = "\x1b[K"
)

// painter draws frames on a terminal of width × height cells (0 × 0: unknown), writing only
// the rows that changed since the last frame: each as the cursor moved to the row's start,
// the row's text, and an erase to the end of the line (the old row may have been longer). A
// row as wide as the terminal is written without the erase: the cursor waits on its last
// cell, and an erase there would blank that cell on xterm. After a resize the screen is
// cleared and every row written again.
//
// On burst-after-idle at 80×24 a step (.) rewrites 10 to 12 of the 24 rows (the header's
// time, the lanes' counters, charts and state, the log), x (exact durations) one, ? all.
type painter struct {
	out           io.Writer
	width, height int

	rows    []string // the rows on screen, top first; rows past the end are blank
	view    string   // the frame rows came from
	repaint bool     // the screen is to be cleared and every row written
	buf     bytes.Buffer

	started, stopped bool
	release          func() error // gives the keyboard back (raw mode off); may be nil
	err              error        // the first write that failed
}

// start takes the screen: the alternate screen, cleared, the cursor hidden, bracketed paste.
func (p *painter) start() {
	p.started = true
	p.write(enterAltScreen + clearScreen + hideCursor + pasteOn)
	p.rows, p.view, p.repaint = nil, "", false // the screen is blank
}

// resize sets the terminal's size; the next frame clears the screen and is written whole
// (a terminal may have moved or cut what was on it).
func (p *painter) resize(width, height int) {
	p.width, p.height = width, height
	p.repaint = true
}

// paint draws view, lines separated by "\n", over the frame on screen. Lines past the
// terminal's height are not drawn, nor the cells past its width.
func (p *painter) paint(view string) {
	if p.stopped || !p.repaint && view == p.view && p.rows != nil {
		return
	}
	lines := strings.Split(view, "\n")
	if p.height > 0 && len(lines) > p.height {
		lines = lines[:p.height]
	}
	p.buf.Reset()
	old := p.rows
	if p.repaint {
		p.buf.WriteString(clearScreen)
		old, p.repaint = nil, false
	}
	for i, line := range lines {
		was := ""
		if i < len(old) {
			was = old[i]
		}
		if line == was {
			continue
		}
		p.moveTo(i)
		wide := ansi.StringWidth(line)
		if p.width > 0 && wide > p.width { // rows keeps the line whole: the same line is the same row
			line, wide = ansi.Truncate(line, p.width, ""), p.width
		}
		p.buf.WriteString(line)
		if p.width == 0 || wide < p.width {
			p.buf.WriteString(eraseLineRight)
		}
	}
	for i := len(lines); i < len(old); i++ { // rows the new frame does not reach
		if old[i] != "" {
			p.moveTo(i)
			p.buf.WriteString(eraseLineRight)
		}
	}
	p.rows, p.view = lines, view
	if p.buf.Len() > 0 {
		if _, err := p.out.Write(p.buf.Bytes()); err != nil && p.err == nil {
			p.err = fmt.Errorf("tui: drawing the screen: %w", err)
		}
	}
}

// moveTo puts the cursor at the start of row i (0 the top), as ESC [ row ; 1 H.
func (p *painter) moveTo(i int) {
	p.buf.WriteString("\x1b[")
	p.buf.Write(strconv.AppendInt(p.buf.AvailableBuffer(), int64(i+1), 10))
	p.buf.WriteString(";1H")
}

// stop gives the terminal back as it was: bracketed paste off, the alternate screen left, the
// cursor shown, raw mode off. It is safe to call more than once; later frames are not drawn.
func (p *painter) stop() {
	if p.stopped {
		return
	}
	p.stopped = true
	if p.started {
		// The cursor is shown on both screens: some terminals keep one state for each.
		p.write(pasteOff + showCursor + leaveAltScreen + showCursor)
	}
	if p.release != nil {
		if err := p.release(); err != nil && p.err == nil {
			p.err = fmt.Errorf("tui: restoring the terminal: %w", err)
		}
	}
}

func (p *painter) write(s string) {
	if _, err := io.WriteString(p.out, s); err != nil && p.err == nil {
		p.err = fmt.Errorf("tui: drawing the screen: %w", err)
	}
}

// painted is a model drawn by a painter: each Update of the model is followed by painting
// its View. Its own View is empty, for the program runs without a renderer.
type painted struct {
	model   tea.Model
	painter *painter
}

// Init draws the first frame.
func (s *painted) Init() tea.Cmd {
	defer s.restoreOnPanic()
	cmd := s.model.Init()
	s.painter.paint(s.model.View())
	return cmd
}

// Update passes msg to the model and draws the frame it leaves; a resize first tells the
// painter to repaint whole.
func (s *painted) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	defer s.restoreOnPanic()
	if size, ok := msg.(tea.WindowSizeMsg); ok {
		s.painter.resize(size.Width, size.Height)
	}
	var cmd tea.Cmd
	s.model, cmd = s.model.Update(msg)
	s.painter.paint(s.model.View())
	return s, cmd
}

func (s *painted) View() string { return "" }

// restoreOnPanic gives the terminal back before a panic goes on to bubbletea, which prints
// it: on the main screen, in cooked mode, where it can be read.
func (s *painted) restoreOnPanic() {
	if r := recover(); r != nil {
		s.painter.stop()
		panic(r)
	}
}

// runPainted runs m as a bubbletea program reading keys from in, painting on out itself. A
// nil in reads the keys from the controlling terminal (/dev/tty).
func runPainted(ctx context.Context, m tea.Model, in io.Reader, out io.Writer) error {
	if in == nil {
		tty, err := os.Open("/dev/tty")
		if err != nil {
			return fmt.Errorf("tui: reading the keys from the terminal: %w", err)
		}
		defer tty.Close()
		in = tty
	}
	p := &painter{out: out}
	if f, ok := in.(interface{ Fd() uintptr }); ok && term.IsTerminal(int(f.Fd())) {
		state, err := term.MakeRaw(int(f.Fd()))
		if err != nil {
			return fmt.Errorf("tui: raw mode on the terminal: %w", err)
		}
		p.release = func() error { return term.Restore(int(f.Fd()), state) }
	}
	outFd := -1
	if f, ok := out.(interface{ Fd() uintptr }); ok && term.IsTerminal(int(f.Fd())) {
		outFd = int(f.Fd())
	}
	defer p.stop() // on every way out, a panic of the program's own included
	if outFd >= 0 {
		if w, h, err := term.GetSize(outFd); err == nil {
			p.resize(w, h) // the first frame has the terminal's size
			m.Update(tea.WindowSizeMsg{Width: w, Height: h})
		}
	}
	p.start()

	// Ctrl-C is a key in raw mode; SIGINT and SIGTERM from elsewhere are the caller's, who
	// cancels ctx (ratelab's main does). Bubbletea's own handler is left out: it sends its
	// message to an event loop that the same signal's cancelled ctx may already have ended,
	// and Run then waits for it forever with the terminal still raw (seen with kill -INT).
	prog := tea.NewProgram(&painted{model: m, painter: p}, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out),
		tea.WithoutRenderer(), tea.WithoutSignalHandler())
	if outFd >= 0 {
		stop := watchResize(outFd, prog.Send)
		defer stop()
	}
	_, err := prog.Run()
	p.stop()
	if err != nil && ctx.Err() != nil {
		err = nil // interrupted: leaving is what was asked
	}
	if err == nil {
		return p.err
	}
	return err
}
