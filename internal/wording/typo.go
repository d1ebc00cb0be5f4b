package wording

import "strings"

// Typo is the known name a misspelt one most likely meant, by the command line's rule: the
// closest by edit distance, case-insensitive, counting a swap of two neighbouring letters as
// one mistake ("rnu" is one from "run"), when it is close enough to be a typo (at most a third
// of its letters wrong, and at most 3); or else the only known name that starts with it
// ("--hor" for --horizon). "" when there is none, or when two names start with it.
func Typo(name string, known []string) string {
	lower := strings.ToLower(name)
	best, bestDist := "", 0
	for _, k := range known {
		d := swapDistance(lower, strings.ToLower(k))
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

// DidYouMeanTypo is " (did you mean X?)" when Typo finds X other than name itself, else "".
func DidYouMeanTypo(name string, known []string) string {
	if s := Typo(name, known); s != "" && s != name {
		return " (did you mean " + s + "?)"
	}
	return ""
}

// swapDistance is the optimal string alignment distance between a and b, in bytes: the
// insertions, deletions, substitutions and swaps of two neighbours that turn a into b.
// O(len(a)·len(b)) time and memory.
func swapDistance(a, b string) int {
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
