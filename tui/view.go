package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/engine"
)

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
	title := fmt.Sprintf("── log · %s ", elide(lane.Spec().Label(), w-12))
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
		text := readable(sentence(lane.Stages(), r), m.exact)
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
		wrapped := strings.Split(ansi.Wrap(readable(sentence(lane.Stages(), records[len(records)-1]), m.exact), w-2, ""), "\n")
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
