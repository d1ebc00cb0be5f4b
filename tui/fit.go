package tui

import (
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/limiters"
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

// durationText matches the durations a sentence carries, as limiters.FormatDuration writes
// them ("194.712ms", "1m30s", "-900ms"), not inside words.
var durationText = regexp.MustCompile(`-?(?:\d+(?:\.\d+)?(?:ns|µs|us|ms|h|m|s))+`)

// readable rewrites every duration in a sentence for reading: rounded to four significant
// digits (194.712345ms → 194.7ms), or exact when exact is set; a negative time (a window
// that began before the run) reads as 0s either way, since nothing happened before 0.
func readable(sentence string, exact bool) string {
	locs := durationText.FindAllStringIndex(sentence, -1)
	if locs == nil {
		return sentence
	}
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		from, to := loc[0], loc[1]
		before, after := rune(0), rune(0)
		if from > 0 {
			before = []rune(sentence[:from])[len([]rune(sentence[:from]))-1]
		}
		if to < len(sentence) {
			after = []rune(sentence[to:])[0]
		}
		if unicode.IsLetter(before) || unicode.IsDigit(before) || unicode.IsLetter(after) || before == '.' {
			continue // part of a word or a number: not a duration
		}
		d, err := time.ParseDuration(sentence[from:to])
		if err != nil {
			continue
		}
		b.WriteString(sentence[last:from])
		switch {
		case d < 0:
			b.WriteString("0s")
		case exact:
			b.WriteString(limiters.FormatDuration(d))
		default:
			b.WriteString(short(d))
		}
		last = to
	}
	b.WriteString(sentence[last:])
	return b.String()
}
