package wording

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Typo counts a swap as one mistake and falls back to the one name a prefix starts.
func TestTypo(t *testing.T) {
	commands := []string{"run", "list", "replay", "learn"}
	assert.Equal(t, "run", Typo("rnu", commands), "a swap of neighbours is one mistake")
	assert.Equal(t, "replay", Typo("Replay", commands), "case does not matter")
	assert.Equal(t, "learn", Typo("lea", commands), "the only name that starts with it")
	assert.Equal(t, "", Typo("l", commands), "one letter is too short for a prefix")
	assert.Equal(t, "", Typo("xyzzy", commands))
	assert.Equal(t, " (did you mean list?)", DidYouMeanTypo("lsit", commands))
	assert.Equal(t, "", DidYouMeanTypo("list", commands), "the name itself is no suggestion")
}
