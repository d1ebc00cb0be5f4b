package main

import "github.com/ratelab/ratelab/internal/wording"

// suggest is the known name a misspelt one most likely meant: the closest by edit distance,
// case-insensitive, when it is close enough to be a typo (at most a third of its letters
// wrong, and at most 3), or else the only known name that starts with it. "" when there is
// none. It is wording.Typo, which package gate's --assert errors use too.
func suggest(name string, known []string) string { return wording.Typo(name, known) }

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
