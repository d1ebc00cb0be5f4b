package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/lessons"
)

// learn lists the course within 80 columns, every lesson named.
func TestLearnListsTheCourse(t *testing.T) {
	out, _, err := ratelab(t, "learn")
	require.NoError(t, err)
	for _, name := range lessons.Names() {
		assert.Contains(t, out, "\n  "+name+" ")
	}
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		assert.LessOrEqual(t, len([]rune(line)), 80, line)
	}
}

// Off a terminal a lesson is text; --answers adds the engine's answers, the log's sentences
// and each goal's solution, checked.
func TestLearnPrintsALesson(t *testing.T) {
	out, _, err := ratelab(t, "learn", "burst-after-idle")
	require.NoError(t, err)
	assert.Contains(t, out, "step 1/4 · Five at once (scenario: burst-after-idle)")
	assert.NotContains(t, out, "answer:")
	assert.NotContains(t, out, "capacity=6", "the solution is not given away")

	out, _, err = ratelab(t, "learn", "burst-after-idle", "--answers")
	require.NoError(t, err)
	assert.Contains(t, out, "  answer: 3\n")
	assert.Contains(t, out, "  answer: 60ms\n")
	assert.Contains(t, out, "t=50ms req #4 (1 permit) rejected by token-bucket")
	assert.Contains(t, out, "a solution: token-bucket:capacity=6,rate=100/1s")
	assert.Contains(t, out, "goal met with token-bucket:capacity=6,rate=100/1s")
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		assert.LessOrEqual(t, len([]rune(line)), 80, line)
	}
}

// A teacher's own file runs; its mistakes are placed; a misspelt lesson is a usage error.
func TestLearnFileAndErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "mine.yaml")
	require.NoError(t, os.WriteFile(good, []byte(`title: Mine
steps:
  - scenario: boundary-attack
    text: The fixed window at its boundary.
    question: {kind: pass, at: 1s, lane: "fixed-window:limit=100,window=1s", next: 3}
`), 0o644))
	out, _, err := ratelab(t, "learn", good, "--answers")
	require.NoError(t, err)
	assert.Contains(t, out, "step 1/1 (scenario: boundary-attack)")
	assert.Contains(t, out, "answer: 3")

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("title: Bad\nsteps:\n  - scenario: boundary-attack\n    txet: hi\n"), 0o644))
	_, _, err = ratelab(t, "learn", bad)
	require.Error(t, err)
	assert.Equal(t, bad+":4:5: steps[0].txet: unknown field (did you mean text?) (fields: title, text, scenario, change, question, goal)", err.Error())

	_, _, err = ratelab(t, "learn", "cold-strat")
	require.Error(t, err)
	assert.True(t, isUsage(err))
	assert.Contains(t, err.Error(), `no built-in lesson "cold-strat" (did you mean cold-start?)`)
	_, _, err = ratelab(t, "learn", "a", "b")
	assert.True(t, isUsage(err))
}
