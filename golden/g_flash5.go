package golden

import (
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// burstAt asks l for one permit n times at t and returns how many were admitted.
func burstAt(l limiters.Limiter, t time.Duration, n int) int {
	admitted := 0
	for range n {
		if l.AcquireAt(t, 1) == limiters.Admitted {
			admitted++
		}
	}
	return admitted
}

var flash5EpochWrap = &Guarantee{
	ID:         "flash5-epoch-wrap",
	Algorithms: []limiters.Kind{peers.KindFlash5Fixed, limiters.KindFixedWindow},
	Claim: "Flash5's fixed window keeps a 32-bit epoch: after exactly 2^32 windows of idle the old window's count is read as " +
		"current and a spent limit stays spent, where ratelab's fixed window starts fresh; otherwise it is a fixed window, " +
		"with the boundary burst of 2·limit",
	Scenario: "flash5-fixed:limit=3,window=1ms beside fixed-window:limit=3,window=1ms: 4 requests at 0, then, idle until then, " +
		"4 at (2^32 − 1)·1ms, 2^32·1ms (49.7 days) or 2^32·1ms + 1ms (a fresh pair of limiters for each); " +
		"flash5-fixed:limit=100,window=1s: 100 requests at 999ms, 100 at 1s",
	Bound: "at 0: 3 of 4 each; after 2^32 − 1 windows: 3 each; after exactly 2^32 windows: flash5 exactly 0 (the stale count), " +
		"ratelab 3; one window later: 3 each; the boundary: exactly 200 = 2·limit within 1ms",
	Checker: "admitted counts of direct AcquireAt calls at each instant, against the bound",
	run: func(r *run) error {
		const window = time.Millisecond
		wrap := time.Duration(1<<32) * window
		r.linef("%-34s %6s %14s %14s %16s", "limiter (4 requests at each)", "at 0", "2^32 − 1 w", "2^32 w", "2^32 w + 1ms")
		for _, tc := range []struct {
			spec     string
			wrapWant int
		}{
			{"flash5-fixed:limit=3,window=1ms", 0},
			{"fixed-window:limit=3,window=1ms", 3},
		} {
			var got []int
			for i, at := range []time.Duration{0, wrap - window, wrap, wrap + window} {
				l, err := r.factory.build(mustSpec(tc.spec), fixedClock(0))
				if err != nil {
					return err
				}
				n := burstAt(l, 0, 4)
				if at > 0 {
					n = burstAt(l, at, 4)
				}
				want := 3
				if at == wrap {
					want = tc.wrapWant
				}
				if n != want {
					what := []string{"at 0", "after 2^32 − 1 windows", "after exactly 2^32 windows", "after 2^32 + 1 windows"}[i]
					r.failf("%s %s admitted %d of 4: the bound is exactly %d", tc.spec, what, n, want)
				}
				got = append(got, n)
			}
			r.linef("%-34s %6d %14d %14d %16d", tc.spec, got[0], got[1], got[2], got[3])
		}
		const boundary = "flash5-fixed:limit=100,window=1s"
		l, err := r.factory.build(mustSpec(boundary), fixedClock(0))
		if err != nil {
			return err
		}
		before, after := burstAt(l, 999*msec, 100), burstAt(l, sec, 100)
		if before+after != 200 {
			r.failf("%s: %d admitted at 999ms and %d at 1s: the boundary burst is exactly 2·limit = 200 within 1ms", boundary, before, after)
		}
		r.linef("%s: %d admitted at 999ms, %d at 1s: %d within 1ms (2·limit = 200)", boundary, before, after, before+after)
		return nil
	},
}
