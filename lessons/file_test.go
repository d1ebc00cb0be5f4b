package lessons

import (
	"context"
	"testing"

	"github.com/ratelab/ratelab/engine"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func load(text string) (*Lesson, error) {
	return Load(context.Background(), "my.yaml", []byte(text))
}

// Mistakes are refused at their line and column, with the field and did-you-mean.
func TestLessonFileErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"title: x\nstep:\n  - text: a\n", "my.yaml:2:1: step: unknown field (did you mean steps?) (fields: name, title, summary, steps)"},
		{"title: x\nsteps:\n  - scenario: burst-after-idle\n    txt: hi\n", "my.yaml:4:5: steps[0].txt: unknown field (did you mean text?)"},
		{"title: x\nsteps:\n  - scenario: burst-after-idl\n    text: hi\n", `my.yaml:3:15: steps[0].scenario: no built-in scenario "burst-after-idl" (did you mean burst-after-idle?)`},
		{"title: x\nsteps:\n  - text: hi\n", "my.yaml:3:5: steps[0].scenario: missing: the first step names its scenario"},
		{"title: x\nsteps:\n  - text: hi\n    change: {rate: 5}\n", "my.yaml:4:13: steps[0].change: the first step has no previous scenario to change"},
		{"title: x\nsteps:\n  - scenario: burst-after-idle\n    text: hi\n    question: {kind: pas, lane: x}\n",
			`my.yaml:5:22: steps[0].question.kind: "pas" is not a kind of question (did you mean pass?) (kinds: pass, first-refusal, next-permit)`},
		{"title: x\nsteps:\n  - scenario: burst-after-idle\n    text: hi\n    question: {kind: pass, lane: leaky-bucket:rate=10/1s}\n",
			"my.yaml:5:34: steps[0].question.lane: no lane leaky-bucket:rate=10/1s (did you mean leaky-bucket:rate=100/1s?)"},
		{"title: x\nsteps:\n  - scenario: burst-after-idle\n    text: hi\n    question: {kind: pass, at: 1s, lane: leaky-bucket:rate=100/1s}\n",
			"my.yaml:5:32: steps[0].question.at: 1s is not before the scenario's horizon 250ms"},
		{"title: x\nsteps:\n  - scenario: burst-after-idle\n    text: hi\n  - text: more\n    change:\n      add: [a=fixed-window:limit=10, window=1s]\n",
			`my.yaml:7:38: steps[1].change.add: window=1s looks like the rest of a spec cut at its comma: in a [flow, list] a comma separates items, so quote each spec ("a=fixed-window:limit=10,window=1s")`},
		{"title: x\nsteps:\n  - scenario: burst-after-idle\n    text: hi\n  - text: more\n    change:\n      remove: [token-bucket]\n",
			"my.yaml:7:16: steps[1].change.remove: no lane token-bucket (did you mean token-bucket:capacity=3,rate=100/1s?) (lanes: token-bucket:capacity=3,rate=100/1s, leaky-bucket:rate=100/1s)"},
		{`title: x
steps:
  - scenario: burst-after-idle
    text: hi
    goal:
      text: refuse nothing
      lane: leaky-bucket:rate=100/1s
      start: leaky-bucket:rate=100/1s
      solution: token-bucket:capacity=9,rate=100/1s
      checks: [all.refused == 0]
`, "my.yaml:7:13: steps[0].goal.lane: the goal's lane must be named (NAME=SPEC)"},
		{`title: x
steps:
  - scenario: burst-after-idle
    text: hi
  - change:
      add: ["yours=token-bucket:capacity=9,rate=100/1s"]
    text: refuse nothing
    goal:
      text: refuse nothing
      lane: yours
      start: token-bucket:capacity=9,rate=100/1s
      solution: token-bucket:capacity=9,rate=100/1s
      checks: [yours.refusd == 0]
`, "my.yaml:13:16: steps[1].goal.checks: yours.refusd == 0: unknown metric refusd (did you mean refused?)"},
		{`title: x
steps:
  - scenario: burst-after-idle
    text: hi
  - change:
      add: ["yours=token-bucket:capacity=9,rate=100/1s"]
    text: refuse nothing
    goal:
      text: refuse nothing
      lane: yours
      start: token-bucket:capacity=9,rate=100/1s
      solution: token-bucket:capacity=9,rate=100/1s
      checks: [yours.refused == 0]
`, "my.yaml:11:14: steps[1].goal.start: token-bucket:capacity=9,rate=100/1s already meets the goal, so there is nothing to reach: ✓ yours.refused == 0: yours has refused 0"},
	} {
		_, err := load(tc.text)
		require.Error(t, err, tc.text)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// A scenario written inline is read as a scenario file, and its mistakes are placed in the
// lesson file.
func TestInlineScenario(t *testing.T) {
	l, err := load(`title: inline
steps:
  - title: two buckets
    scenario:
      horizon: 1s
      sources:
        - kind: bursts
          bursts:
            - {at: 100ms, count: 4}
      limiters:
        - token-bucket:capacity=2,rate=10/1s
    text: |
      Two permits stored, four asked.
    question:
      kind: pass
      at: 50ms
      lane: token-bucket:capacity=2,rate=10/1s
      next: 4
`)
	require.NoError(t, err)
	assert.Equal(t, "my", l.Name, "named after its file")
	assert.Equal(t, 2, l.Steps[0].Answer.Count)

	_, err = load(`title: inline
steps:
  - scenario:
      horizon: 1s
      sources:
        - kind: bursts
          bursts:
            - {at: 100ms, count: 4}
      limiters:
        - token-bucket:capacity=2,rat=10/1s
    text: hi
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "my.yaml:10:11: ")
	assert.Contains(t, err.Error(), "limiters[0]: limiter spec \"token-bucket:capacity=2,rat=10/1s\": rat=10/1s: not a field of token-bucket (did you mean rate?)")
}

// A lesson runs as it loads: a step over the budget is refused at its scenario (or change)
// with the estimate and the flag, before anything runs; a change that makes the previous
// step's scenario too long is refused at the change.
func TestLoadRefusesAStepOverTheBudget(t *testing.T) {
	long := "title: x\nsteps:\n  - scenario:\n      horizon: 100000h\n      sources: [{kind: constant, rate: 1000000}]\n      limiters: ['token-bucket:capacity=3,rate=100/1s']\n    text: hi\n"
	_, err := load(long)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "my.yaml:3:5: steps[0].scenario: ")
	assert.Contains(t, err.Error(), "over the budget of 10G events")
	assert.Contains(t, err.Error(), "--max-events 720T")

	small := engine.Budget{MaxEvents: 1e6}
	_, err = LoadWithin(context.Background(), "my.yaml", []byte("title: x\nsteps:\n  - scenario: poisson\n    text: hi\n  - text: more\n    change: {horizon: 100000h}\n"), small)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "my.yaml:6:13: steps[1].change: ")
	assert.Contains(t, err.Error(), "over the budget of 1M events")

	// Within the budget, the same lesson loads.
	_, err = LoadWithin(context.Background(), "my.yaml", []byte("title: x\nsteps:\n  - scenario: burst-after-idle\n    text: hi\n"), small)
	assert.NoError(t, err)
}
