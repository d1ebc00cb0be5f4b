package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/engine"
)

// minLaneHeight is a lane's title, one row of admitted and one of rejected (the state beside
// them, two lines); maxLaneHeight is where extra rows stop helping.
const (
	minLaneHeight = 3
	maxLaneHeight = 7
)

// chartWindow is the range of slices the charts show: the newest ones, ending at now.
type chartWindow struct {
	first, cols int
	scale       int // the count of a full column
}

func (m *Model) chartWindow(cols int) chartWindow {
	s := m.sim
	cur := int(s.now / s.slice)
	if s.now >= s.sc.Horizon && s.now > 0 {
		cur = int((s.now - 1) / s.slice)
	}
	w := chartWindow{first: max(0, cur-cols+1), cols: cols, scale: 1}
	for _, chart := range s.charts {
		for k := w.first; k <= cur && k < len(chart); k++ {
			w.scale = max(w.scale, chart[k].admitted, chart[k].rejected)
		}
	}
	return w
}

// laneView draws lane i in h rows of width cells: the title with the counters, then the
// chart (admitted above rejected) beside the limiter's state.
func (m *Model) laneView(i, h, width int, cw chartWindow) []string {
	s, sty := m.sim, m.styles
	lane := s.lanes[i]
	res := lane.Result()
	t := res.Totals

	rows := h - 1
	marker, nameStyle := "  ", sty.Lane
	if i == m.focus {
		marker, nameStyle = "▸ ", sty.Focused
	}
	// The request counts use run's words and add up: offered = admitted + refused + timed
	// out + gave up + waiting; the last three show once they are not 0.
	counters := []string{
		fmt.Sprintf("admitted %d/%d", t.Admitted, t.Offered),
		fmt.Sprintf("refused %d", t.Refused),
	}
	for _, c := range []struct {
		label string
		n     int64
	}{{"timed out", t.TimedOut}, {"gave up", t.GaveUp}, {"waiting", t.Waiting}, {"retried", t.Retried}} {
		if c.n > 0 {
			counters = append(counters, fmt.Sprintf("%s %d", c.label, c.n))
		}
	}
	must := len(counters) // the request outcomes and the retries; what follows gives way to the name
	if t.Failed > 0 || (s.sc.Downstream != nil && s.sc.Downstream.Pool > 0) {
		counters = append(counters, fmt.Sprintf("failed %d", t.Failed))
	}
	if ds := s.sc.Downstream; ds != nil && rows < 3 {
		if ds.Pool > 0 {
			counters = append(counters, fmt.Sprintf("pool %d/%d", lane.InFlight(), ds.Pool))
		} else {
			counters = append(counters, fmt.Sprintf("in flight %d", lane.InFlight()))
		}
	}
	if t.Wasted > 0 {
		counters = append(counters, fmt.Sprintf("wasted %d", t.Wasted))
	}
	if res.Fleet != nil && m.storeDown(lane) {
		counters = append(counters, "store down")
	}
	lines := []string{laneTitle(marker, lane.Spec().Label(), counters, must, width, nameStyle)}

	if m.topKeys && res.Keys != nil {
		return append(lines, m.topKeysView(lane, res.Keys, width, rows)...)
	}

	okRows := (rows + 1) / 2
	noRows := rows - okRows
	stateW := stateWidth(width)
	chartCols := cw.cols

	// The state panel: each stage's drawing (a fleet lane's instances instead), then the
	// downstream when there is one, then the client loop's measures when its clients retry
	// or pace themselves (loopLines). The focused lane's loop takes the rows it needs (up
	// to maxLoopRows) before the drawing, which keeps what is left, its first lines first:
	// at 80×24 retry-storm's lanes have four rows and header-paced's three, and the five
	// measures need three or four rows of 40 cells. Another lane's loop takes the rows its
	// drawing leaves (at 80×24 retry-storm's one: goodput and amplification).
	var panel []string
	downstream := s.sc.Downstream != nil && rows >= 3
	room := rows
	if downstream {
		room--
	}
	var loop []string
	if i == m.focus {
		loop = m.loopLines(lane, &res, stateW, min(maxLoopRows, room))
		room -= len(loop)
	}
	if res.Fleet != nil {
		panel = m.fleetPanel(lane, res.Fleet, stateW, room)
	} else {
		panel = m.statePanel(lane, stateW, room)
	}
	if i != m.focus {
		loop = m.loopLines(lane, &res, stateW, min(maxLoopRows, room-len(panel)))
	}
	if downstream {
		client := s.sc.Client
		if c := lane.Spec().Client; c != nil {
			client = *c
		}
		panel = append(panel, fitWords(downstreamLine(s.sc.Downstream, lane, client.Policy == engine.PolicyQueue, stateW, m.styles), stateW))
	}
	panel = append(panel, loop...)

	for r := 0; r < rows; r++ {
		var label, bars string
		if r < okRows {
			if r == 0 {
				label = "ok "
			}
			bars = chartRow(s.charts[i], cw, okRows-1-r, okRows, true, sty)
		} else {
			if r == okRows {
				label = "no "
			}
			bars = chartRow(s.charts[i], cw, noRows-1-(r-okRows), noRows, false, sty)
		}
		label = fmt.Sprintf("%-3s", label)
		line := label + bars + strings.Repeat(" ", max(0, chartCols-ansi.StringWidth(bars)))
		if r < len(panel) {
			line += sty.Dim.Render(" │ ") + panel[r]
		} else {
			line += sty.Dim.Render(" │")
		}
		lines = append(lines, ansi.Truncate(line, width, ""))
	}
	return lines
}

// statePanel is each of lane's stages drawn the way the algorithms document draws it, in
// room rows of width cells shared among the stages, a stack's numbered 1:, 2:, ….
func (m *Model) statePanel(lane *engine.Lane, width, room int) []string {
	var panel []string
	stages := len(lane.Stages())
	for k, stage := range lane.Stages() {
		per := room / stages
		if k < room%stages {
			per++
		}
		if per == 0 {
			continue
		}
		st := stage.Snapshot(m.sim.now)
		prefix := ""
		if stages > 1 {
			prefix = fmt.Sprintf("%d:", k+1)
		}
		for j, l := range stateLines(st, width-len(prefix), per, m.styles) {
			l = fitWords(l, width-len(prefix))
			if j == 0 {
				l = prefix + l
			} else {
				l = strings.Repeat(" ", len(prefix)) + l
			}
			panel = append(panel, l)
		}
	}
	return panel
}

// minNameWidth is the least of a lane's name the title keeps before it drops counters.
const minNameWidth = 12

// laneTitle is a lane's first line: the marker, the name, and the counters. The first must
// counters (the request outcomes) are what must be read: the name is elided
// ("token-bucket:capa…") to leave them room, and only when even minNameWidth cells of name
// do not fit are they dropped from the last (admitted and refused always stay). The others
// (in flight, failed, wasted) give way to the name first.
func laneTitle(marker, name string, counters []string, must, width int, nameStyle lipgloss.Style) string {
	room := func() int {
		return width - ansi.StringWidth(marker) - ansi.StringWidth("  "+strings.Join(counters, " · "))
	}
	for len(counters) > must && room() < ansi.StringWidth(name) {
		counters = counters[:len(counters)-1]
	}
	for len(counters) > 2 && room() < min(minNameWidth, ansi.StringWidth(name)) {
		counters = counters[:len(counters)-1]
	}
	text := "  " + strings.Join(counters, " · ")
	r := max(room(), 1)
	return marker + nameStyle.Render(elide(name, r)) + fitWords(text, width-ansi.StringWidth(marker)-min(r, ansi.StringWidth(name)))
}

func downstreamLine(ds *engine.Downstream, lane *engine.Lane, queueing bool, width int, sty Styles) string {
	queue := ""
	if q := lane.QueueLen(); q > 0 || queueing {
		queue = fmt.Sprintf(" · queue %d", q)
	}
	if ds.Pool <= 0 {
		return fmt.Sprintf("downstream %d in flight (no pool)%s", lane.InFlight(), queue)
	}
	label := fmt.Sprintf(" %d of %d in flight%s", lane.InFlight(), ds.Pool, queue)
	return "pool " + meter(lane.InFlight(), ds.Pool, min(width-5-len(label), 24), sty) + label
}

// stateWidth is the state panel's width in a lane of width cells.
func stateWidth(width int) int {
	return min(max(width/2, 36), 60)
}

// chartCols is the chart's width in a lane of width cells: what the label, the separator
// and the state panel leave.
func chartCols(width int) int {
	return max(width-3-3-stateWidth(width), 1)
}

var eighths = []rune(" ▁▂▃▄▅▆▇█")

// chartRow is row r (0 at the bottom) of a bar chart of rows rows: one column per slice of
// the window, the height proportional to the count against the window's scale. Any
// non-zero count shows at least ▁.
func chartRow(chart []sliceCount, cw chartWindow, r, rows int, admitted bool, sty Styles) string {
	var b strings.Builder
	for c := 0; c < cw.cols; c++ {
		k := cw.first + c
		if k >= len(chart) {
			break
		}
		n := chart[k].rejected
		if admitted {
			n = chart[k].admitted
		}
		level := 0
		if n > 0 {
			level = max(1, n*rows*8/cw.scale)
		}
		fill := min(max(level-r*8, 0), 8)
		b.WriteRune(eighths[fill])
	}
	text := strings.TrimRight(b.String(), " ")
	if admitted {
		return sty.Admitted.Render(text)
	}
	return sty.Rejected.Render(text)
}
