package limiters

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/virtualclock"
)

// Racing callers on a sliding window leave its count equal to what it admitted: a caller
// whose re-read finds the window over the limit gives back exactly the permits it reserved.
// Deleting that rollback, or rolling back one permit too few, leaves reservations counted
// that nobody was granted — the window then refuses permits it still has.
//
// The race is made likely: the clock is frozen at the start of a window, so every caller
// reserves in bucket 0, the first of 4096 that its first look reads — between that read and
// its reservation it reads the 4095 others, and a racer's reservation in between makes it
// reserve on top and roll back. The limit leaves the count field room for such overshoots
// (limit 12 in 4 bits), and requests of 1 to 3 permits put the overshoots at the limit.
func TestSlidingWindowRollbackKeepsCountEqualToAdmitted(t *testing.T) {
	const limit, goroutines = 12, 8
	rounds := 300 // each mutant is caught within the first dozen or so
	if raceDetector {
		rounds = 100
	}
	window := 4096 * time.Millisecond
	for round := range rounds {
		clock, err := virtualclock.NewAt(7 * window) // slot 0 of window 7
		require.NoError(t, err)
		clock.Freeze()
		s, err := NewSlidingWindow(limit, window, 4096, clock)
		require.NoError(t, err)
		var (
			gate     = newStartGate(goroutines)
			wg       sync.WaitGroup
			admitted atomic.Int64
		)
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				gate.wait()
				for i := range 2 {
					if n := 1 + (g+i+round)%3; s.TryAcquire(n) {
						admitted.Add(int64(n))
					}
				}
			}()
		}
		gate.open()
		wg.Wait()
		got := s.Snapshot(clock.Now())
		if got.Count != int(admitted.Load()) {
			t.Fatalf("round %d: the window counts %d permits but admitted %d: a refused caller's reservation was not given back",
				round, got.Count, admitted.Load())
		}
		if got.Count > limit {
			t.Fatalf("round %d: %d admitted, limit %d", round, got.Count, limit)
		}
		require.Equal(t, limit-got.Count, s.Available(), "round %d", round)
	}
}
