package golden

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
)

// Regression (limiters, SlidingWindow.AcquireAt/sum, found by this package): a caller whose
// clock reading is slightly late (50µs here) was admitted against a window that had lost
// permits it still contains. Its own bucket was not newer, but bucket 9 was: a caller at
// 19ms took it over for slot 19, overwriting the 20 permits of slot 9 (9.99ms) that the late
// caller's window [8.95ms, 18.95ms] still holds. sum() now reports such a caller as late and
// AcquireAt refuses it (fails closed).
//
// sliding-window:limit=20,window=10ms,slots=10:
//
//	AcquireAt(9.99ms, 20)  admitted
//	AcquireAt(19ms, 1)     admitted (slot 9 has left the window at 19ms)
//	AcquireAt(18.95ms, 19) admitted — expected refused: 39 admitted in [9.99ms, 18.99ms),
//	                       an interval of window − slotLength = 9ms, whose bound is limit = 20
//
// Under real concurrency this happens without any caller being "late" on purpose: a
// goroutine reads the clock, is descheduled across a slot boundary while others go on, and
// then acquires. 8 goroutines sharing an advancing clock, each reading it up to 200µs stale,
// broke the 9ms bound in 72 of 100 rounds (e.g. 28 admitted in [9.850109ms, 18.850109ms)),
// while the fixed window and the GCRA limiters held theirs in every round.
func TestSlidingWindowLateCallerCannotBeatTheWindow(t *testing.T) {
	s := specOf[limiters.SlidingWindowSpec]("sliding-window:limit=20,window=10ms,slots=10")
	l, err := s.New(fixedClock(0))
	require.NoError(t, err)
	var adm []Admission
	for _, step := range []struct {
		at time.Duration
		n  int
	}{{9990 * time.Microsecond, 20}, {19 * msec, 1}, {18950 * time.Microsecond, 19}} {
		if l.AcquireAt(step.at, step.n) == limiters.Admitted {
			adm = append(adm, Admission{step.at, step.n})
		}
	}
	// In time order for the checker.
	if len(adm) == 3 {
		adm[1], adm[2] = adm[2], adm[1]
	}
	slot := s.Window / time.Duration(s.Slots)
	L := s.Window - slot
	_, err = CheckInterval(adm, L, slidingBound(s.Limit, s.Slots, s.Window, L), "limit·⌈k/slots⌉")
	assert.NoError(t, err, "a caller reading the clock 50µs late must not beat the sliding window")
}
