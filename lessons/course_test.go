package lessons

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The course loads: at least six lessons, every question answered by the engine, every
// goal's solution meets it and its start misses it (checked again here, not only on load).
func TestCourseAnswersAndGoals(t *testing.T) {
	all, err := Course()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(all), 7)
	assert.Equal(t, Names(), func() (n []string) {
		for _, l := range all {
			n = append(n, l.Name)
		}
		return
	}())
	for _, l := range all {
		questions, goals := 0, 0
		for i, s := range l.Steps {
			if s.Question != nil {
				questions++
				require.NotNil(t, s.Answer, "%s step %d", l.Name, i+1)
				right, err := s.Question.Check(s.Answer, s.Answer.Text)
				if s.Question.Kind == FirstRefusal && len(s.Answer.Lanes) > 1 {
					right, err = s.Question.Check(s.Answer, s.Answer.Lanes[0])
				}
				require.NoError(t, err)
				assert.True(t, right, "%s step %d: the engine's answer is right", l.Name, i+1)
				assert.NotEmpty(t, s.Answer.Explain, "%s step %d: the log explains it", l.Name, i+1)
			}
			if g := s.Goal; g != nil {
				goals++
				good, err := g.Try(context.Background(), s.Scenario, g.Solution)
				require.NoError(t, err)
				assert.True(t, good.Met, "%s: the solution %s meets the goal:\n%s", l.Name, g.Solution, good)
				bad, err := g.Try(context.Background(), s.Scenario, g.Start)
				require.NoError(t, err)
				assert.False(t, bad.Met, "%s: the start %s misses the goal:\n%s", l.Name, g.Start, bad)
			}
		}
		assert.GreaterOrEqual(t, questions, 1, l.Name)
		assert.Equal(t, 1, goals, l.Name)
	}
}

// The seeds' numbers, as the engine computes them.
func TestCourseAnswersFollowTheSeeds(t *testing.T) {
	answer := func(lesson string, step int) *Answer {
		l, err := Get(lesson)
		require.NoError(t, err)
		return l.Steps[step-1].Answer
	}
	// 100/s, capacity 3, idle 50ms, five at once: the token bucket admits 3, the leaky
	// bucket 1; the next permit comes at 60ms (the schedule at 80ms, 30ms tolerance).
	assert.Equal(t, 3, answer("burst-after-idle", 1).Count)
	assert.Equal(t, 1, answer("burst-after-idle", 2).Count)
	assert.Equal(t, 60*time.Millisecond, answer("burst-after-idle", 3).Next)
	// The boundary: the sliding window refuses first, at 1s; the fixed window admits the
	// next 5 there, the sliding window none.
	assert.Equal(t, []string{"sliding-window:limit=100,window=1s,slots=10"}, answer("fixed-vs-sliding", 1).Lanes)
	assert.Equal(t, time.Second, answer("fixed-vs-sliding", 1).Until)
	assert.Equal(t, 5, answer("fixed-vs-sliding", 2).Count)
	assert.Equal(t, 0, answer("fixed-vs-sliding", 3).Count)
	// Warm-up: a cold burst of capacity/3 = 3 (then one more as the schedule catches up).
	assert.Equal(t, "warm-up:capacity=10,rate=100/1s,warmup=10s", answer("cold-start", 1).Text)
	// A bulkhead full of 3s requests refuses; the token bucket does not notice.
	assert.Equal(t, 0, answer("rate-not-concurrency", 1).Count)
	assert.Equal(t, 3, answer("rate-not-concurrency", 2).Count)
	// Guava starts empty: 1 of 5; x/time/rate's burst=20 passes 20 of 30.
	assert.Equal(t, 1, answer("peers-burst", 1).Count)
	assert.Equal(t, 20, answer("peers-burst", 2).Count)

	_, err := Get("burst-afer-idle")
	assert.ErrorContains(t, err, `no built-in lesson "burst-afer-idle" (did you mean burst-after-idle?)`)
}

// A wrong guess is wrong, a guess that cannot be read says what to write.
func TestCheckGuesses(t *testing.T) {
	l, err := Get("burst-after-idle")
	require.NoError(t, err)
	q, a := l.Steps[0].Question, l.Steps[0].Answer
	right, err := q.Check(a, "5")
	require.NoError(t, err)
	assert.False(t, right)
	_, err = q.Check(a, "six")
	assert.EqualError(t, err, `"six" is not a count from 0 to 5`)
	q, a = l.Steps[2].Question, l.Steps[2].Answer
	for guess, want := range map[string]bool{"60ms": true, "t=60.5ms": true, "62ms": false} {
		right, err := q.Check(a, guess)
		require.NoError(t, err)
		assert.Equal(t, want, right, guess)
	}
}
