// Package wording is how ratelab words what it reads, the same in every package: the
// did-you-mean for a misspelt name and the split of a list (a spec's fields, a stack's stages)
// that refuses empty items with a sentence saying where. Standard library only: package
// limiters uses it.
package wording

import (
	"fmt"
	"strings"
)

// Suggest is the known name closest to name by edit distance, case-insensitive, when it is
// close enough to be a typo (at most a third of its letters wrong, and at most 3); "" when
// none is.
func Suggest(name string, known []string) string {
	best, bestDist := "", 0
	for _, k := range known {
		d := editDistance(strings.ToLower(name), strings.ToLower(k))
		if best == "" || d < bestDist {
			best, bestDist = k, d
		}
	}
	if best == "" || bestDist > min(3, max(1, len(best)/3)) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes: insertions, deletions
// and substitutions. O(len(a)·len(b)) time, O(len(b)) memory.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// DidYouMean is " (did you mean X?)" when X, one of known, is close enough to name to be
// what a misspelt name meant (Suggest), else "": the one rule for kinds, fields, commands,
// flags and scenarios, so that every typo gets the same help.
func DidYouMean(name string, known []string) string {
	if s := Suggest(name, known); s != "" && s != name {
		return " (did you mean " + s + "?)"
	}
	return ""
}

// SplitList splits text at sep into its items, trimmed of spaces, for a spec's fields ("," in
// token-bucket:capacity=10,rate=100/1s) and a stack's stages ("+"). An empty item (a trailing
// separator, a doubled one, one at the start) is refused, the same in a scenario file and on
// the command line, rather than skipped: empty says where, e.g. "an empty field at the end (a
// trailing comma)" for token-bucket:capacity=10,rate=100/1s, — what is meant is not clear (a
// field lost in an edit, or none). Text of spaces only is no items.
func SplitList(text, sep, item string) (items []string, empty string) {
	if strings.TrimSpace(text) == "" {
		return nil, ""
	}
	parts := strings.Split(text, sep)
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	one, two := sep, sep+" signs"
	if sep == "," {
		one, two = "comma", "commas"
	}
	for i, p := range parts {
		if p != "" {
			continue
		}
		switch {
		case i == len(parts)-1:
			return nil, fmt.Sprintf("an empty %s at the end (a trailing %s)", item, one)
		case i == 0:
			return nil, fmt.Sprintf("an empty %s at the start (a %s before %s)", item, one, parts[1])
		default:
			return nil, fmt.Sprintf("an empty %s after %s (two %s in a row)", item, parts[i-1], two)
		}
	}
	return parts, ""
}
