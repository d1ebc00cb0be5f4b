package main

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// How wide ratelab's text is.
//
// On a terminal every command lays its text out for the terminal's width, env.width: the
// columns the terminal reports, else $COLUMNS, else 80. A table that fits is printed whole (a
// wider terminal gets the wider layout); one that does not is cut into slices of columns, one
// under the other, each repeating the first column, or becomes one block per row. Prose wraps
// at spaces with a hanging indent, never inside a word: a token longer than the line (a spec,
// a line of a library's configuration) is kept whole and overflows. translate --details'
// paragraphs are wrapped at proseWidth columns at most, as piped, however wide the terminal:
// longer lines are hard to read.
//
// Piped (env.width 0), the output is the layout it always had, the same whatever terminal
// ratelab was started from: one record per line, which scripts, tests and the README read.
// help, show's YAML and translate's summary are laid out for 80 columns either way.

// proseWidth is the most columns prose is wrapped at, however wide the terminal.
const proseWidth = 100

// defaultColumns is the width of a terminal that does not say (and of help).
const defaultColumns = 80

// columnsOf is the width to lay out for on the terminal w writes to: its size, else a
// positive $COLUMNS, else 80.
func columnsOf(w io.Writer) int {
	if width := terminalWidth(w); width > 0 {
		return width
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return defaultColumns
}

// prose is the width prose is wrapped at on a terminal width columns wide.
func prose(width int) int { return min(width, proseWidth) }

// wrapHanging breaks line, if it is wider than width, at spaces: each further line starts at
// the hanging column, which is where the last column of a table-like line begins (after its
// last run of two or more spaces that leaves at least a third of the width, or 24 columns),
// or else four columns in from the line's own indent. A comment line ("# …") stays a comment.
// A token wider than the room it has is kept whole on a line of its own.
func wrapHanging(line string, width int) string {
	if width <= 0 || ansi.StringWidth(line) <= width {
		return line
	}
	lead := len(line) - len(strings.TrimLeft(line, " "))
	hang := strings.Repeat(" ", lead+4)
	if strings.HasPrefix(line[lead:], "# ") {
		hang = line[:lead] + "#   "
	}
	room := max(width/3, 24)
	// The last gap of two or more spaces that starts within the width and leaves room.
	for i := lead; i < len(line)-2; i++ {
		if line[i] == ' ' && line[i+1] == ' ' {
			j := i
			for j < len(line) && line[j] == ' ' {
				j++
			}
			col := ansi.StringWidth(line[:j])
			if col >= width-room || col > width {
				break
			}
			if col > lead {
				hang = strings.Repeat(" ", col)
			}
			i = j - 1
		}
	}
	if ansi.StringWidth(hang) > width/2+width/4 {
		hang = strings.Repeat(" ", min(lead+4, width/2))
	}
	return breakLine(line, width, hang)
}

// breakLine breaks line at spaces into lines no wider than width (but for a token wider than
// the room it has), the lines after the first starting with hang. The first line keeps the
// line's own spacing up to the hanging column: it is not broken before it.
func breakLine(line string, width int, hang string) string {
	if width <= 0 || ansi.StringWidth(line) <= width {
		return line
	}
	var b strings.Builder
	used, start := 0, 0
	for start < len(line) {
		gapEnd := start
		for gapEnd < len(line) && line[gapEnd] == ' ' {
			gapEnd++
		}
		end := gapEnd
		for end < len(line) && line[end] != ' ' {
			end++
		}
		gap, token := line[start:gapEnd], line[gapEnd:end]
		tw := ansi.StringWidth(token)
		if used > ansi.StringWidth(hang) && start > 0 && used+len(gap)+tw > width {
			b.WriteString("\n" + hang + token)
			used = ansi.StringWidth(hang) + tw
		} else {
			b.WriteString(gap + token)
			used += len(gap) + tw
		}
		start = end
	}
	return b.String()
}

// hangingWriter passes whole lines to w, each wrapped with wrapHanging at width; width 0
// passes everything as it is. Flush writes a last line that has no newline.
type hangingWriter struct {
	w       io.Writer
	width   int
	pending []byte
}

func (h *hangingWriter) Write(p []byte) (int, error) {
	if h.width <= 0 {
		return h.w.Write(p)
	}
	h.pending = append(h.pending, p...)
	for {
		i := bytes.IndexByte(h.pending, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(h.pending[:i])
		h.pending = h.pending[i+1:]
		if _, err := io.WriteString(h.w, wrapHanging(line, h.width)+"\n"); err != nil {
			return len(p), err
		}
	}
}

func (h *hangingWriter) Flush() error {
	if len(h.pending) == 0 {
		return nil
	}
	line := string(h.pending)
	h.pending = nil
	_, err := io.WriteString(h.w, wrapHanging(line, h.width))
	return err
}

// wrapping is e's standard output with each line too wide for the terminal wrapped at
// spaces (wrapHanging); piped, standard output itself. Flush it when done.
func wrapping(e *env) *hangingWriter { return &hangingWriter{w: e.stdout, width: e.width} }

// columns lays out a two-column list for width: each row's left text, then its right text
// wrapped at spaces beside it. When the left column would take more than a third of the
// width, the right text goes under its left text instead, four columns further in. extra
// lines of a row (its more) go under its right text, one per line, unwrapped (a spec).
func columns(rows []columnRow, indent, width int) string {
	left := 0
	for _, r := range rows {
		left = max(left, ansi.StringWidth(r.left))
	}
	var b strings.Builder
	pad := strings.Repeat(" ", indent)
	stacked := indent+left+2 > width/3
	hang := pad + strings.Repeat(" ", left+2)
	if stacked {
		hang = pad + "    "
	}
	room := max(width-len(hang), 20)
	for _, r := range rows {
		text := wrap(r.right, room, hang)
		if stacked {
			b.WriteString(pad + r.left + "\n" + hang + text + "\n")
		} else {
			b.WriteString(pad + r.left + strings.Repeat(" ", left-ansi.StringWidth(r.left)+2) + text + "\n")
		}
		for _, m := range r.more {
			b.WriteString(hang + m + "\n")
		}
	}
	return b.String()
}

type columnRow struct {
	left, right string
	more        []string
}

// fitTable lays out a table for width columns. rows[0] is the header; column 0 names the
// row and is left-aligned when leftFirst, the others are right-aligned, two spaces apart,
// each line indent spaces in. The whole table when it fits; else its columns in slices, each
// a table repeating column 0, one under the other with a blank line between; when column 0
// and any one other are already too wide, or it would take more than maxSlices slices (0: no
// limit), one block per row: its name, then "header value" items packed into lines.
func fitTable(rows [][]string, indent, width int, leftFirst bool, maxSlices int) string {
	if len(rows) == 0 {
		return ""
	}
	n := len(rows[0])
	widths := make([]int, n)
	for _, r := range rows {
		for c, cell := range r {
			widths[c] = max(widths[c], ansi.StringWidth(cell))
		}
	}
	render := func(cols []int) string {
		var b strings.Builder
		for _, r := range rows {
			line := strings.Repeat(" ", indent)
			for k, c := range cols {
				cell := ""
				if c < len(r) {
					cell = r[c]
				}
				pad := strings.Repeat(" ", widths[c]-ansi.StringWidth(cell))
				if k > 0 {
					line += "  "
				}
				if c == 0 && leftFirst {
					line += cell + pad
				} else {
					line += pad + cell
				}
			}
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
		return b.String()
	}
	all := make([]int, n)
	for c := range all {
		all[c] = c
	}
	whole := render(all)
	if width <= 0 || fits(whole, width) {
		return whole
	}
	var slices [][]int
	for c := 1; c < n; {
		used := indent + widths[0]
		slice := []int{0}
		for c < n && used+2+widths[c] <= width {
			slice = append(slice, c)
			used += 2 + widths[c]
			c++
		}
		if len(slice) == 1 { // column 0 and column c do not fit together
			return rowBlocks(rows, indent, width)
		}
		slices = append(slices, slice)
	}
	if maxSlices > 0 && len(slices) > maxSlices {
		return rowBlocks(rows, indent, width)
	}
	parts := make([]string, len(slices))
	for i, s := range slices {
		parts[i] = render(s)
	}
	return strings.Join(parts, "\n")
}

// rowBlocks is one block per row of a table (rows[0] its header): the row's name, then its
// cells as "header value" items packed into lines no wider than width, each item as wide in
// every block and the lines broken at the same items, so the blocks line up.
func rowBlocks(rows [][]string, indent, width int) string {
	n := len(rows[0])
	itemWidth := make([]int, n)
	for c := 1; c < n; c++ {
		for _, r := range rows[1:] {
			if c < len(r) {
				itemWidth[c] = max(itemWidth[c], ansi.StringWidth(rows[0][c])+1+ansi.StringWidth(r[c]))
			}
		}
	}
	pad := strings.Repeat(" ", indent)
	inner := indent + 2
	var breaks []int // the columns that start a line
	used := inner
	for c := 1; c < n; c++ {
		if c == 1 || used+2+itemWidth[c] > width {
			breaks = append(breaks, c)
			used = inner + itemWidth[c]
			continue
		}
		used += 2 + itemWidth[c]
	}
	breaks = append(breaks, n)
	var b strings.Builder
	for _, r := range rows[1:] {
		b.WriteString(pad + r[0] + "\n")
		for k := 0; k+1 < len(breaks); k++ {
			line := pad + "  "
			for c := breaks[k]; c < breaks[k+1]; c++ {
				value := ""
				if c < len(r) {
					value = r[c]
				}
				if c > breaks[k] {
					line += "  "
				}
				line += rows[0][c] + " " + strings.Repeat(" ", itemWidth[c]-ansi.StringWidth(rows[0][c])-1-ansi.StringWidth(value)) + value
			}
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
	}
	return b.String()
}

// refuseTerminal refuses to write a binary image to standard output when it is a terminal
// (path - of the flag named flag, whose other value is operand): the bytes would be noise on
// the screen, and some could change the terminal's settings.
func refuseTerminal(e *env, flag, operand, path string) error {
	if path != "-" || !e.stdoutTTY {
		return nil
	}
	return usageErrorf("%s -: refusing to write image bytes to a terminal: redirect standard output to a file (> chart.png) or give %s %s", flag, flag, operand)
}

// wrapped runs write with e's standard output wrapped at a terminal's width (wrapping), and
// flushes it.
func wrapped(e *env, write func(w io.Writer) error) error {
	w := wrapping(e)
	if err := write(w); err != nil {
		return err
	}
	return w.Flush()
}
