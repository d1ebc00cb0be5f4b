package golden

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
)

// The no-alloc guarantee again, with testing.AllocsPerRun itself: no decision of any limiter
// allocates, whether it admits or refuses.
func TestNoAllocationPerDecision(t *testing.T) {
	for _, text := range append(append([]string{}, rateSpecs...), "concurrency:max=5") {
		s := mustSpec(text)
		l, err := s.New(fixedClock(0))
		require.NoError(t, err)
		now := time.Duration(0)
		// Ten calls per run at the same instant: the first admits, later ones are refused.
		allocs := testing.AllocsPerRun(1000, func() {
			now += 7 * msec
			for range 10 {
				l.AcquireAt(now, 1)
			}
			l.AvailableAt(now)
			if rl, ok := l.(limiters.RateLimiter); ok {
				rl.RetryAfterAt(now, 1)
			}
		})
		assert.Zero(t, allocs, "%s allocates per decision", s)
		if c, ok := l.(*limiters.Concurrency); ok {
			assert.Zero(t, testing.AllocsPerRun(1000, func() {
				if c.AcquireAt(0, 1) == limiters.Admitted {
					c.Release(1)
				}
			}), "%s: acquire and release", s)
		}
	}
}
