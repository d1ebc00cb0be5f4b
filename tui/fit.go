package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/engine"
)

// The smallest terminal the workbench draws in: below it, a screen says so.
const (
	minWidth  = 80
	minHeight = 24
)

// fitWords returns s if it fits in w cells, else its longest prefix that ends at a word
// boundary (a space) and fits with "…" after it: nothing is cut mid-word. A first word
// longer than w is the only thing cut, with "…". Styles (ANSI codes) are kept.
func fitWords(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	if w <= 1 {
		return ansi.Truncate(s, w, "")
	}
	plain := []rune(ansi.Strip(s))
	cut, cells := 0, 0
	for i, r := range plain {
		rw := ansi.StringWidth(string(r))
		if cells+rw > w-1 {
			break
		}
		cells += rw
		if r == ' ' && i > 0 && plain[i-1] != ' ' {
			cut = ansi.StringWidth(string(plain[:i]))
		}
	}
	if cut == 0 {
		return ansi.Truncate(s, w, "…")
	}
	// Drop a dangling separator (" ·", " │") before the ellipsis.
	cut = ansi.StringWidth(strings.TrimRight(ansi.Truncate(string(plain), cut, ""), " ·│,;:"))
	return ansi.Truncate(s, cut, "") + "…"
}

// elide shortens a name to w cells, keeping its start and marking the cut with "…"; names
// are elided so that the numbers beside them are not.
func elide(name string, w int) string {
	if ansi.StringWidth(name) <= w {
		return name
	}
	if w <= 0 {
		return ""
	}
	return ansi.Truncate(name, w, "…")
}

// readable rewrites every duration in a sentence for reading: engine.Readable, rounded to
// four significant digits (194.712345ms → 194.7ms), or exact when exact is set.
func readable(sentence string, exact bool) string { return engine.Readable(sentence, exact) }
