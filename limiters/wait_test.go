package limiters

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Wait sleeps the reservation's wait: a spent bucket of 1 per 30ms makes the second caller
// wait about 30ms (at least 25ms on any machine; no upper bound is asserted).
func TestWaitSleepsTheReservedWait(t *testing.T) {
	b := must(NewTokenBucket(1, Rate{Permits: 1, Window: 30 * time.Millisecond}, NewMonotonicClock()))
	require.NoError(t, b.Wait(context.Background(), 1), "the first permit is there")
	start := time.Now()
	require.NoError(t, b.Wait(context.Background(), 1))
	assert.GreaterOrEqual(t, time.Since(start), 25*time.Millisecond)
}

// A deadline before the permits come: refused at once, nothing taken.
func TestWaitRefusesADeadlineItCannotMeet(t *testing.T) {
	b := must(NewLeakyBucket(Rate{Permits: 1, Window: time.Hour}, NewMonotonicClock()))
	require.NoError(t, b.Wait(context.Background(), 1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	start := time.Now()
	assert.ErrorIs(t, b.Wait(ctx, 1), ErrWouldExceedDeadline)
	assert.Less(t, time.Since(start), time.Minute, "it did not sleep to the 30-minute deadline")
	assert.Equal(t, 0, b.Available())
}

// A caller cancelled while waiting gives its permits back: the next caller waits no longer
// than if the cancelled one had never come.
func TestWaitCancelledGivesThePermitsBack(t *testing.T) {
	clock := NewMonotonicClock()
	b := must(NewTokenBucket(1, Rate{Permits: 1, Window: time.Hour}, clock))
	require.NoError(t, b.Wait(context.Background(), 1))
	before, ok := b.RetryAfterAt(clock.Now(), 1)
	require.True(t, ok)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- b.Wait(ctx, 1) }()
	time.Sleep(10 * time.Millisecond)
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	after, ok := b.RetryAfterAt(clock.Now(), 1)
	require.True(t, ok)
	assert.LessOrEqual(t, after, before, "the cancelled reservation's permit is back: the wait did not grow by an hour")
}

// What can never pass is said at once.
func TestWaitNeverAndInvalid(t *testing.T) {
	b := must(NewTokenBucket(2, PerSecond(10), NewMonotonicClock()))
	assert.ErrorContains(t, b.Wait(context.Background(), 3), "a request for 3 permits is never")
	assert.ErrorContains(t, b.Wait(context.Background(), 0), "a request for 0 permits is invalid")
	assert.Equal(t, 2, b.Available(), "nothing taken")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, b.Wait(ctx, 1), context.Canceled)
}
