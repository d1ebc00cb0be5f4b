package tui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/engine"
)

// topKeysView is a keyed lane's rows in the top-keys view (k), in place of its chart and
// state: how many keys it has and how fairly it admits them, then its keys most offered
// beside its keys most refused, each with what it was offered, admitted (ok) and not (no)
// so far. Noisy-neighbour's global limiter at t=1s, 80 cells wide and 3 rows:
//
//	100 keys · fairness 0.03 (Jain's index: 1 when every key is admitted alike)
//	most offered         offered  ok  no │ most refused         offered  ok  no
//	noisy-neighbour          556 130 426 │ noisy-neighbour          556 130 426
//
// The numbers are never cut: key names are elided to leave them room.
func (m *Model) topKeysView(lane *engine.Lane, kr *engine.KeyResults, width, rows int) []string {
	if rows <= 0 {
		return nil
	}
	const indent = "   " // under the chart's "ok " label
	width -= len(indent)
	var tables []string
	for _, t := range kr.Tables {
		tables = append(tables, fmt.Sprintf("table %d/%d held, %d evicted, %d full", t.Held, t.MaxKeys, t.Evicted, t.Full))
	}
	keys, fairness := fmt.Sprintf("%d keys", kr.Distinct), fmt.Sprintf("fairness %.2f", kr.Fairness)
	line := strings.Join(append([]string{keys, fairness + " (Jain's index: 1 when every key is admitted alike)"}, tables...), " · ")
	if ansi.StringWidth(line) > width {
		line = joinFit(append([]string{keys, fairness}, tables...), width)
	}
	lines := []string{indent + line}
	if rows == 1 {
		return lines
	}
	if rows == 2 {
		lines = lines[:0] // the table's head and first keys before the summary
	}
	n := rows - len(lines) - 1 // keys under the head
	offered := lane.TopOffered(n)
	refused := kr.TopRefused[:min(len(kr.TopRefused), n)]

	// One width per number column, over both lists, so that the columns line up.
	cols := [3]int{len("offered"), len("ok"), len("no")}
	for _, k := range append(offered[:len(offered):len(offered)], refused...) {
		for c, v := range []int64{k.Offered, k.Admitted, k.NotAdmitted()} {
			cols[c] = max(cols[c], len(strconv.FormatInt(v, 10)))
		}
	}
	const sep = " │ "
	half := (width - len(sep)) / 2
	row := func(name string, nums [3]string) string {
		text := fmt.Sprintf(" %*s %*s %*s", cols[0], nums[0], cols[1], nums[1], cols[2], nums[2])
		room := half - ansi.StringWidth(text)
		name = elide(name, max(room, 1))
		return name + strings.Repeat(" ", max(room-ansi.StringWidth(name), 0)) + text
	}
	counts := func(k engine.KeyCount) string {
		return row(k.Key, [3]string{strconv.FormatInt(k.Offered, 10), strconv.FormatInt(k.Admitted, 10), strconv.FormatInt(k.NotAdmitted(), 10)})
	}
	head := [3]string{"offered", "ok", "no"}
	lines = append(lines, indent+m.styles.Dim.Render(row("most offered", head)+sep+row("most refused", head)))
	for j := 0; j < n; j++ {
		left := strings.Repeat(" ", half)
		switch {
		case j < len(offered):
			left = counts(offered[j])
		case j == 0:
			left = fitWords("no request yet", half) + strings.Repeat(" ", max(half-len("no request yet"), 0))
		}
		right := ""
		switch {
		case j < len(refused):
			right = counts(refused[j])
		case j == 0:
			right = "none refused yet"
		}
		lines = append(lines, indent+strings.TrimRight(left+sep+right, " "))
	}
	return lines
}

// toggleTopKeys switches the keyed lanes between their top keys and their charts (k), and
// says which lanes show what; with no lane that has seen two keys it changes nothing.
func (m *Model) toggleTopKeys() {
	keyed := 0
	for _, lane := range m.sim.lanes {
		if lane.Result().Keys != nil {
			keyed++
		}
	}
	switch {
	case m.topKeys:
		m.topKeys = false
		m.status = "charts and limiters' state again (k: top keys)"
	case keyed == 0:
		m.status = "top keys: no lane has seen two keys yet (a source's keys:, a keys(…) stage)"
	default:
		m.topKeys = true
		m.status = fmt.Sprintf("top keys of %d of %d lanes: busiest and most refused (k: charts)", keyed, len(m.sim.lanes))
	}
}
