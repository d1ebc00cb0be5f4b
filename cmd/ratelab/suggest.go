package main

import "strings"

// suggest is the known name a misspelt one most likely meant: the closest by edit distance,
// case-insensitive, when it is close enough to be a typo (at most a third of its letters
// wrong, and at most 3), or else the only known name that starts with it. "" when there is
// none. It is the rule limiters.ParseSpec uses for kinds and fields, with a swap of two
// neighbouring letters counted as one mistake.
func suggest(name string, known []string) string {
	lower := strings.ToLower(name)
	best, bestDist := "", 0
	for _, k := range known {
		d := editDistance(lower, strings.ToLower(k))
		if best == "" || d < bestDist {
			best, bestDist = k, d
		}
	}
	if best != "" && bestDist <= min(3, max(1, len(best)/3)) {
		return best
	}
	if len(name) < 2 {
		return ""
	}
	prefixed := ""
	for _, k := range known {
		if strings.HasPrefix(strings.ToLower(k), lower) {
			if prefixed != "" {
				return "" // ambiguous
			}
			prefixed = k
		}
	}
	return prefixed
}

// editDistance is the optimal string alignment distance between a and b, in bytes: the
// insertions, deletions, substitutions and swaps of two neighbours ("rnu" is one from "run")
// that turn a into b.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// didYouMean is " (did you mean X?)" when suggest finds X, else "". format turns the name
// into how the user would type it ("--horizon"); nil leaves it as it is.
func didYouMean(name string, known []string, format func(string) string) string {
	s := suggest(name, known)
	if s == "" || s == name {
		return ""
	}
	if format != nil {
		s = format(s)
	}
	return " (did you mean " + s + "?)"
}
