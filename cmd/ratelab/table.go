package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/lipgloss/table"
	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// The run table on a terminal fits the terminal's width. It takes the first of these layouts
// that fits, from the widest:
//
//   - the full table: one row per lane, every column, one-line headers;
//   - the same with abbreviated headers ("max/win"), explained under the table;
//   - lanes numbered in the table and named in a legend above it;
//   - one block per lane: its name on a line, then its numbers as "label value" pairs, in
//     groups that wrap at the width (the same breaks for every lane, so they line up).
//
// A width of 0 (unknown) is the full table. Piped output is not drawn here: it keeps its plain,
// stable layout for scripts (writeTable).

// termTable is the run table for a terminal width columns wide.
func termTable(sc *engine.Scenario, res *engine.Results, width int) string {
	rows := summarize(sc, res)
	title := fmt.Sprintf("%s — seed %d, %s of virtual time", res.Scenario, res.Seed, limiters.FormatDuration(res.Horizon))
	if width > 0 {
		title = ansi.Truncate(title, width, "…")
	}
	title = lipgloss.NewStyle().Bold(true).Render(title)
	cols := tableColumns(rows)
	overCol := slices.IndexFunc(cols, func(c column) bool { return c.over })
	cells := make([][]string, len(rows))
	for i, r := range rows {
		cells[i] = r.cells(cols)
	}
	over := func(row int) bool { return exceedsBound(rows[row]) }

	full := boxTable(headers(cols, false), cells, overCol, over)
	if width <= 0 || fits(full, width) {
		return title + "\n" + full + "\n"
	}
	key := wrap(abbreviationKey(cols), width, "") + "\n"
	short := boxTable(headers(cols, true), cells, overCol, over)
	if fits(short, width) {
		return title + "\n" + short + "\n" + key
	}
	numbered := make([][]string, len(rows))
	var legend strings.Builder
	for i, r := range rows {
		n := strconv.Itoa(i + 1)
		numbered[i] = append([]string{n}, cells[i][1:]...)
		fmt.Fprintf(&legend, "%3s  %s\n", n, ansi.Truncate(r.limiter, width-5, "…"))
	}
	withLegend := boxTable(append([]string{"#"}, headers(cols, true)[1:]...), numbered, overCol, over)
	if fits(withLegend, width) {
		return title + "\n" + legend.String() + withLegend + "\n" + key
	}
	return title + "\n\n" + laneBlocks(rows, cols, width)
}

// abbreviationKey explains the abbreviated headers of cols.
func abbreviationKey(cols []column) string {
	var parts []string
	if slices.ContainsFunc(cols, func(c column) bool { return c.short == "t/o" }) {
		parts = append(parts, "t/o: timed out in the queue")
	}
	parts = append(parts, "max/win: most admitted in one window", "in flight: most at once", "ds fail: downstream failures")
	if slices.ContainsFunc(cols, func(c column) bool { return c.wait }) {
		parts = append(parts, "p50 … p99.9: wait percentiles", "max: longest wait")
	}
	return strings.Join(parts, "; ")
}

func exceedsBound(r summaryRow) bool {
	m, err1 := strconv.Atoi(r.maxInWindow)
	b, err2 := strconv.Atoi(r.bound)
	return err1 == nil && err2 == nil && m > b
}

var (
	headerStyle = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("12"))
	overStyle   = lipgloss.NewStyle().Foreground(lipgloss.Color("9")).Bold(true)
)

// boxTable draws a bordered table: the first column left-aligned, the numbers right-aligned.
// Column overCol of a row turns red when over(row).
func boxTable(headers []string, rows [][]string, overCol int, over func(row int) bool) string {
	cell := lipgloss.NewStyle().Padding(0, 1)
	t := table.New().Border(lipgloss.RoundedBorder()).Headers(headers...).
		StyleFunc(func(row, col int) lipgloss.Style {
			if row == table.HeaderRow {
				return headerStyle.Padding(0, 1)
			}
			if col == overCol && row >= 0 && row < len(rows) && over(row) {
				return overStyle.Padding(0, 1)
			}
			if col == 0 {
				return cell
			}
			return cell.Align(lipgloss.Right)
		})
	for _, r := range rows {
		t.Row(r...)
	}
	return t.Render()
}

// fits is whether no line of text is wider than width columns.
func fits(text string, width int) bool {
	for _, line := range strings.Split(text, "\n") {
		if ansi.StringWidth(line) > width {
			return false
		}
	}
	return true
}

// laneBlocks is one block per lane: the lane's name, then its numbers as "label value"
// items, in groups (the counts; the window; concurrency; the waits) packed into lines no
// wider than width. Each item is as wide in every block, so the blocks line up.
func laneBlocks(rows []summaryRow, cols []column, width int) string {
	type item struct {
		label string
		value func(r summaryRow) string
		over  bool // shown in red when the lane exceeded its bound
	}
	var groups [][]item
	for _, c := range cols[1:] { // the limiter is each block's title
		for len(groups) <= c.group {
			groups = append(groups, nil)
		}
		groups[c.group] = append(groups[c.group], item{c.header, c.value, c.over})
	}
	const indent, itemGap, groupGap = 2, 2, 4
	// Each item's width: its label, a space, and its widest value.
	widths := make([][]int, len(groups))
	for g, group := range groups {
		widths[g] = make([]int, len(group))
		for i, it := range group {
			for _, r := range rows {
				widths[g][i] = max(widths[g][i], len(it.label)+1+ansi.StringWidth(it.value(r)))
			}
		}
	}
	// Lay the items out once: where each line breaks.
	type placed struct{ g, i int }
	var lines [][]placed
	var line []placed
	used := indent
	for g, group := range groups {
		groupWidth := 0
		for i := range group {
			if i > 0 {
				groupWidth += itemGap
			}
			groupWidth += widths[g][i]
		}
		if len(line) > 0 && used+groupGap+groupWidth > width {
			lines, line, used = append(lines, line), nil, indent
		}
		for i := range group {
			gap := itemGap
			if i == 0 {
				gap = groupGap
			}
			if len(line) == 0 {
				gap = 0
			} else if used+gap+widths[g][i] > width { // a group wider than the line
				lines, line, used, gap = append(lines, line), nil, indent, 0
			}
			line = append(line, placed{g, i})
			used += gap + widths[g][i]
		}
	}
	lines = append(lines, line)

	name := lipgloss.NewStyle().Bold(true)
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(name.Render(ansi.Truncate(r.limiter, width, "…")) + "\n")
		for _, l := range lines {
			b.WriteString(strings.Repeat(" ", indent))
			for k, p := range l {
				if k > 0 {
					if p.i == 0 {
						b.WriteString(strings.Repeat(" ", groupGap))
					} else {
						b.WriteString(strings.Repeat(" ", itemGap))
					}
				}
				it := groups[p.g][p.i]
				v := it.value(r)
				pad := widths[p.g][p.i] - len(it.label) - 1 - ansi.StringWidth(v)
				if it.over && exceedsBound(r) {
					v = overStyle.Render(v)
				}
				b.WriteString(it.label + " " + strings.Repeat(" ", pad) + v)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
