package limiters

import "strings"

// suggest is the known name closest to name by edit distance, case-insensitive, when it is
// close enough to be a typo (at most a third of its letters wrong, and at most 3); "" when
// none is.
func suggest(name string, known []string) string {
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

// didYouMean is " (did you mean X?)" when suggest finds one, else "".
func didYouMean(name string, known []string) string {
	if s := suggest(name, known); s != "" && s != name {
		return " (did you mean " + s + "?)"
	}
	return ""
}

// DidYouMean is " (did you mean X?)" when X, one of known, is close enough to name to be
// what a misspelt name meant (the rule ParseSpec uses for kinds and fields), else "": for
// other packages that name kinds and fields, so that every typo gets the same help.
func DidYouMean(name string, known []string) string { return didYouMean(name, known) }
