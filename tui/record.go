package tui

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/ratelab/ratelab/engine"
)

// Record plays sc in the workbench from start to end, headless, at the speed the workbench
// would choose for it (a run of about 25s), and writes an asciicast v2 recording of the screen
// (width × height) to out: asciinema plays it, and a README can embed it.
//
// Its timestamps are virtual time over the speed, one frame per 50ms of recording, each step
// of the simulation the same as when playing live, so the same scenario and size give the same
// bytes on every run and machine: colours are written in 256-colour ANSI whatever the
// terminal, and no wall-clock time is read (the header has no timestamp). Only frames that
// changed are written (each changed line at its row); the last frame holds for a second.
// When ctx ends it stops at the next frame and returns ctx's error (the caller removes what
// it wrote).
func Record(ctx context.Context, sc *engine.Scenario, width, height int, out io.Writer) error {
	if width < minWidth || height < minHeight {
		return fmt.Errorf("record: a %d×%d screen is smaller than the workbench's %d×%d", width, height, minWidth, minHeight)
	}
	restore := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.ANSI256)
	defer lipgloss.SetColorProfile(restore)
	m, err := New(sc)
	if err != nil {
		return err
	}
	m.Update(tea.WindowSizeMsg{Width: width, Height: height})
	m.playing = true
	m.sim.stop = ctx

	w := bufio.NewWriter(out)
	header, _ := json.Marshal(struct {
		Version int               `json:"version"`
		Width   int               `json:"width"`
		Height  int               `json:"height"`
		Title   string            `json:"title"`
		Env     map[string]string `json:"env"`
	}{2, width, height, "ratelab tui " + sc.Name, map[string]string{"TERM": "xterm-256color"}})
	w.Write(header)
	w.WriteByte('\n')

	speed := speeds[m.speed]
	if speed <= 0 {
		speed = sc.Horizon
	}
	var last []string
	emit := func(at float64, data string) {
		event, _ := json.Marshal([]any{json.Number(fmt.Sprintf("%.3f", at)), "o", data})
		w.Write(event)
		w.WriteByte('\n')
	}
	for k := 0; ; k++ {
		if err := ctx.Err(); err != nil { // Ctrl-C, SIGTERM, SIGHUP: stop at a frame, the caller removes the file
			return err
		}
		target := sc.Horizon // k frames of perFrame(speed), saturating at the horizon
		if step := perFrame(speed); step > 0 && time.Duration(k) <= sc.Horizon/step {
			target = time.Duration(k) * step
		}
		if err := m.sim.advanceTo(target); err != nil {
			return err
		}
		done := m.sim.done()
		if done {
			m.playing = false
			m.status = "end of the run"
		}
		// Only the lines that changed are written, each at its row.
		lines := strings.Split(m.View(), "\n")
		var b strings.Builder
		if k == 0 {
			b.WriteString("\x1b[?25l\x1b[2J") // hide the cursor, clear the screen
		}
		for i, line := range lines {
			if i < len(last) && last[i] == line {
				continue
			}
			fmt.Fprintf(&b, "\x1b[%d;1H%s\x1b[K", i+1, line)
		}
		for i := len(lines); i < len(last); i++ {
			fmt.Fprintf(&b, "\x1b[%d;1H\x1b[K", i+1)
		}
		if b.Len() > 0 {
			emit(float64(k)*frame.Seconds(), b.String())
		}
		last = lines
		if done {
			emit(float64(k)*frame.Seconds()+1, fmt.Sprintf("\x1b[%d;1H\x1b[?25h", height))
			break
		}
	}
	return w.Flush()
}
