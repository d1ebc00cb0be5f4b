package tui

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// started is a painter on a width × height terminal that has taken the screen, with what it
// wrote so far discarded.
func started(width, height int) (*painter, *bytes.Buffer) {
	var out bytes.Buffer
	p := &painter{out: &out}
	p.resize(width, height)
	p.start()
	out.Reset()
	return p, &out
}

// A frame is written as the rows that differ from the one on screen, each moved to, written
// and erased to its end; rows the new frame no longer reaches are erased; an unchanged frame
// writes nothing at all.
func TestPainterWritesOnlyTheRowsThatChanged(t *testing.T) {
	p, out := started(20, 5)
	for _, step := range []struct {
		frame, want string
	}{
		{"head\nbody\n\nfoot", "\x1b[1;1Hhead\x1b[K\x1b[2;1Hbody\x1b[K\x1b[4;1Hfoot\x1b[K"}, // a blank screen: the empty row is not written
		{"head\nBODY\n\nfoot", "\x1b[2;1HBODY\x1b[K"},
		{"head\nBODY\n\nfoot", ""}, // nothing changed, nothing written
		{"head\nBODY\nnew\nfoot", "\x1b[3;1Hnew\x1b[K"},
		{"head", "\x1b[2;1H\x1b[K\x1b[3;1H\x1b[K\x1b[4;1H\x1b[K"}, // the frame got shorter
		{"head\n\nx", "\x1b[3;1Hx\x1b[K"},                         // row 2 is already blank
	} {
		out.Reset()
		p.paint(step.frame)
		assert.Equal(t, strconv.Quote(step.want), strconv.Quote(out.String()), "frame %q", step.frame)
	}
	require.NoError(t, p.err)
}

// A row as wide as the terminal is written without the erase (on xterm the erase would blank
// its last cell); a wider one is cut to the width; rows below the terminal are not drawn.
func TestPainterFitsTheFrameToTheTerminal(t *testing.T) {
	p, out := started(5, 3)
	p.paint("abc\nabcde\nabcdefgh\nrow4\nrow5")
	assert.Equal(t, strconv.Quote("\x1b[1;1Habc\x1b[K\x1b[2;1Habcde\x1b[3;1Habcde"), strconv.Quote(out.String()))

	// The cut row is remembered as drawn: the same frame again writes nothing.
	out.Reset()
	p.paint("abc\nabcde\nabcdefgh\nrow4\nrow5")
	assert.Empty(t, out.String())

	// Wide characters count as the two cells they take: "表" is 2, so "ab表c" fills 5.
	out.Reset()
	p.paint("ab表c\nabcde\nabcdefgh")
	assert.Equal(t, strconv.Quote("\x1b[1;1Hab表c"), strconv.Quote(out.String()))
}

// After a resize the screen is cleared and every non-blank row written again, even the rows
// that did not change: the terminal may have cut or moved what was on it.
func TestPainterRepaintsEverythingAfterAResize(t *testing.T) {
	p, out := started(20, 5)
	p.paint("head\nbody\n\nfoot")
	out.Reset()
	p.resize(30, 6)
	p.paint("head\nbody\n\nfoot")
	assert.Equal(t, strconv.Quote(clearScreen+"\x1b[1;1Hhead\x1b[K\x1b[2;1Hbody\x1b[K\x1b[4;1Hfoot\x1b[K"), strconv.Quote(out.String()))

	// Then frames are diffs again.
	out.Reset()
	p.paint("head\nbody\n\nFOOT")
	assert.Equal(t, strconv.Quote("\x1b[4;1HFOOT\x1b[K"), strconv.Quote(out.String()))
}

// Taking the screen enters the alternate screen, clears it, hides the cursor and turns on
// bracketed paste; giving it back undoes each of them, once, and turns raw mode off (release).
func TestPainterRestoresTheTerminal(t *testing.T) {
	var out bytes.Buffer
	released := 0
	p := &painter{out: &out, release: func() error { released++; return nil }}
	p.start()
	assert.Equal(t, strconv.Quote(enterAltScreen+clearScreen+hideCursor+pasteOn), strconv.Quote(out.String()))
	p.paint("frame")
	out.Reset()
	p.stop()
	got := out.String()
	for _, seq := range []string{pasteOff, leaveAltScreen, showCursor} {
		assert.Contains(t, got, seq)
	}
	assert.Less(t, strings.Index(got, leaveAltScreen), strings.LastIndex(got, showCursor), "the cursor is shown on the main screen too")
	assert.Equal(t, 1, released)

	out.Reset()
	p.stop()
	p.paint("another frame")
	assert.Empty(t, out.String(), "nothing after the terminal is given back")
	assert.Equal(t, 1, released)
}

// A terminal that cannot be written to is an error the run returns, naming what failed.
func TestPainterKeepsTheFirstWriteError(t *testing.T) {
	p := &painter{out: failingWriter{}}
	p.start()
	p.paint("frame")
	require.Error(t, p.err)
	assert.Equal(t, "tui: drawing the screen: terminal gone", p.err.Error())
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("terminal gone") }

// A panic in the model gives the terminal back before it goes on up to bubbletea (which
// prints it): the message lands on the main screen, with the cursor shown and raw mode off.
func TestPaintedRestoresTheTerminalOnAPanic(t *testing.T) {
	var out bytes.Buffer
	released := false
	p := &painter{out: &out, release: func() error { released = true; return nil }}
	p.start()
	s := &painted{model: panicky{}, painter: p}
	require.PanicsWithValue(t, "boom", func() { s.Update(tea.KeyMsg{Type: tea.KeyEnter}) })
	assert.True(t, strings.HasSuffix(out.String(), pasteOff+showCursor+leaveAltScreen+showCursor), "%q", out.String())
	assert.True(t, released)
}

type panicky struct{}

func (panicky) Init() tea.Cmd                       { return nil }
func (panicky) Update(tea.Msg) (tea.Model, tea.Cmd) { panic("boom") }
func (panicky) View() string                        { return "" }

// replay replays what a painter wrote, row by row, as a terminal would show it: the rows of
// a height-row screen. It knows the painter's sequences only (a row moved to, its text, an
// erase to the end, a cleared screen) and fails on any other.
func replay(t *testing.T, written string, height int, rows []string) []string {
	t.Helper()
	if rows == nil {
		rows = make([]string, height)
	}
	seq := regexp.MustCompile(`\x1b\[2J|\x1b\[(\d+);1H([^\x1b]*)(\x1b\[K)?`)
	for len(written) > 0 {
		loc := seq.FindStringSubmatchIndex(written)
		require.NotNil(t, loc, "not a painter's sequence: %q", written)
		require.Zero(t, loc[0], "text outside a row: %q", written[:loc[0]])
		if written[loc[0]:loc[1]] == clearScreen {
			rows = make([]string, height)
		} else {
			row, _ := strconv.Atoi(written[loc[2]:loc[3]])
			rows[row-1] = written[loc[4]:loc[5]]
		}
		written = written[loc[1]:]
	}
	return rows
}

// The workbench painted through a sequence of keys: after each, the screen the writes leave
// is the model's View, and a key rewrote exactly the rows whose line changed (a step 3 of
// 24, the help page nearly all; the bytes are logged). The View here has no colour (TestMain), so rows are text.
func TestPaintedWorkbenchShowsEachViewWritingOnlyTheChangedRows(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	p, out := started(80, 24)
	s := &painted{model: m, painter: p}
	s.Init()
	screen := replay(t, out.String(), 24, nil)
	require.Equal(t, viewRows(m.View(), 24), screen)

	moves := regexp.MustCompile(`\x1b\[\d+;1H`)
	for _, k := range []string{".", ".", ".", "x", "tab", "left", "?", "down", "esc", "e", "esc", "g", "1", "esc"} {
		before := viewRows(m.View(), 24)
		out.Reset()
		s.Update(keyMsg(k))
		after := viewRows(m.View(), 24)
		screen = replay(t, out.String(), 24, screen)
		require.Equal(t, after, screen, "after %q the screen is the view", k)
		changed := 0
		for i := range after {
			if after[i] != before[i] {
				changed++
			}
		}
		assert.Equal(t, changed, len(moves.FindAllString(out.String(), -1)), "after %q: rows written", k)
		t.Logf("%-5s rewrote %2d of 24 rows, %5d bytes", k, changed, out.Len())
	}

	// A resize repaints the screen whole at the new size.
	out.Reset()
	s.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	assert.True(t, strings.HasPrefix(out.String(), clearScreen))
	assert.Equal(t, viewRows(m.View(), 40), replay(t, out.String(), 40, nil))
}

// viewRows is view as height rows, the missing ones blank.
func viewRows(view string, height int) []string {
	rows := make([]string, height)
	copy(rows, strings.Split(view, "\n"))
	return rows
}

// BenchmarkPaintedFrameAtMaxSpeed is BenchmarkFrameAtMaxSpeed as the program now runs it:
// Update(tick), View, and the painter writing the rows that changed (to io.Discard). The
// difference between the two is the painter's cost, beside the ≤66ms a frame may take.
func BenchmarkPaintedFrameAtMaxSpeed(b *testing.B) {
	m := openPerf(b)
	p := &painter{out: io.Discard}
	p.resize(120, 40)
	p.start()
	s := &painted{model: m, painter: p}
	for i := 0; i < 3; i++ {
		s.Update(tickMsg{gen: m.tickGen})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Update(tickMsg{gen: m.tickGen})
	}
	b.StopTimer()
	if p.err != nil {
		b.Fatal(p.err)
	}
}

// BenchmarkPaint is the painter alone on two successive frames of the perf scenario playing
// at 120×40 in 256 colours, painted in turn (each a diff of the other), to io.Discard.
func BenchmarkPaint(b *testing.B) {
	restore := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.ANSI256)
	defer lipgloss.SetColorProfile(restore)
	m := openPerf(b)
	m.Update(tickMsg{gen: m.tickGen})
	one := m.View()
	m.Update(tickMsg{gen: m.tickGen})
	two := m.View()
	var out countingWriter
	p := &painter{out: &out}
	p.resize(120, 40)
	p.start()
	p.paint(one)
	out = 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			p.paint(two)
		} else {
			p.paint(one)
		}
	}
	b.ReportMetric(float64(out)/float64(b.N), "bytes/frame")
}

type countingWriter int

func (c *countingWriter) Write(b []byte) (int, error) {
	*c += countingWriter(len(b))
	return len(b), nil
}
