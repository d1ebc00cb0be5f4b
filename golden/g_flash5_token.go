package golden

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// quotaReporter is a limiter that reports what Flash5's API returns: remaining, and the reset
// in epoch seconds.
type quotaReporter interface {
	Quota(now time.Duration) (remaining int, resetSeconds int64)
}

// saturate asks l for one permit at 0 until refused, then once every step in (0, over]; it
// returns the burst at 0 and the times of the later admissions.
func saturate(l limiters.Limiter, step, over time.Duration) (burst int, later []time.Duration) {
	for l.AcquireAt(0, 1) == limiters.Admitted {
		burst++
	}
	for at := step; at <= over; at += step {
		if l.AcquireAt(at, 1) == limiters.Admitted {
			later = append(later, at)
		}
	}
	return burst, later
}

// evenlySpaced reports whether the times are exactly gap apart, the first at gap.
func evenlySpaced(times []time.Duration, gap time.Duration) bool {
	for i, at := range times {
		if at != time.Duration(i+1)*gap {
			return false
		}
	}
	return true
}

var flash5TokenLowRate = &Guarantee{
	ID:         "flash5-token-low-rate",
	Algorithms: []limiters.Kind{peers.KindFlash5Token, limiters.KindTokenBucket},
	Claim: "Flash5's token bucket refills a whole number of milli-tokens per millisecond, ⌊limit·1000/windowMs⌋ and at " +
		"least 1, so it admits that many per second whatever the spec says: 100 per 1s is exact, 100 per 60s refills " +
		"1 milli-token per ms — 60 per minute, not 100 — and 1 per hour is raised to 1 milli-token per ms — 3,600 per " +
		"hour, not 1; it starts full, and its API reports the remaining tokens and the reset (the bucket full again) in " +
		"epoch seconds, where ratelab's token bucket of the same capacity and rate keeps the spec's rate",
	Scenario: "direct calls on a frozen clock, Flash5's clock at 2000-01-01T00:00:00Z (946,684,800 epoch seconds) at " +
		"time 0: flash5-token:limit=100,window=1s, limit=100,window=1m and limit=1,window=1h, each beside " +
		"token-bucket:capacity=limit,rate=limit/window; at 0 requests until one is refused, then one every 10ms until " +
		"the window's end; Quota right after the burst",
	Bound: "the burst at 0: exactly the limit for both; then in (0, window]: 100/1s exactly 100, 10ms apart (ratelab 100); " +
		"100/60s exactly 60, 1s apart (ratelab 100); 1/1h exactly 3600, 1s apart (ratelab 1); Quota after the burst: " +
		"remaining 0, reset 946684801 (100/1s), 946684900 (100/60s: 100 tokens at 1 per second) and 946684801 (1/1h)",
	Checker: "the admitted counts and their spacing from direct AcquireAt calls, and Quota's two numbers, against the bound",
	run: func(r *run) error {
		const epoch = int64(946684800)
		r.linef("%-38s %15s %6s %9s %20s  %s", "limiter", "refill milli/ms", "burst", "in window", "spacing", "Quota after the burst (remaining, reset)")
		for _, tc := range []struct {
			limit   int
			window  time.Duration
			refill  int64
			flash5  int
			gap     time.Duration
			reset   int64
			ratelab int
		}{
			{100, sec, 100, 100, 10 * msec, epoch + 1, 100},
			{100, time.Minute, 1, 60, sec, epoch + 100, 100},
			{1, time.Hour, 1, 3600, sec, epoch + 1, 1},
		} {
			spec := peers.Flash5TokenSpec{Limit: tc.limit, Window: tc.window}
			if got := spec.RefillPerMs(); got != tc.refill {
				r.failf("%s: refillPerMs %d: the bound is ⌊%d·1000/%d⌋, at least 1 = %d", spec, got, tc.limit, tc.window/msec, tc.refill)
			}
			l, err := r.factory.build(spec, fixedClock(0))
			if err != nil {
				return err
			}
			burst, later := saturate(l, 10*msec, tc.window)
			remaining, reset := -1, int64(-1)
			if q, ok := l.(quotaReporter); ok {
				remaining, reset = q.Quota(0)
			} else {
				r.failf("%s: reports no Quota: Flash5's API returns remaining and reset", spec)
			}
			spaced := evenlySpaced(later, tc.gap)
			if burst != tc.limit || len(later) != tc.flash5 || !spaced {
				r.failf("%s: %d at 0, then %d admitted in (0s, %s] (evenly %s apart: %v): the bound is exactly %d at 0, then %d, %s apart "+
					"(⌊%d·1000/%d⌋ → %d milli-token(s) per ms: %d per second)", spec, burst, len(later), ms(tc.window), ms(tc.gap), spaced,
					tc.limit, tc.flash5, ms(tc.gap), tc.limit, tc.window/msec, tc.refill, tc.refill)
			}
			if remaining != 0 || reset != tc.reset {
				r.failf("%s: Quota after the burst is (%d, %d): the bound is (0, %d)", spec, remaining, reset, tc.reset)
			}
			r.linef("%-38s %15d %6d %9d %20s  %d, %d (%s after 946684800)", spec, tc.refill, burst, len(later),
				fmt.Sprintf("%s apart: %v", ms(tc.gap), spaced), remaining, reset, ms(time.Duration(reset-epoch)*sec))

			bucket := mustSpec(fmt.Sprintf("token-bucket:capacity=%d,rate=%d/%s", tc.limit, tc.limit, ms(tc.window)))
			tb, err := r.factory.build(bucket, fixedClock(0))
			if err != nil {
				return err
			}
			tbBurst, tbLater := saturate(tb, 10*msec, tc.window)
			if tbBurst != tc.limit || len(tbLater) != tc.ratelab {
				r.failf("%s: %d at 0, then %d in (0s, %s]: the bound is exactly %d, then %d", bucket, tbBurst, len(tbLater), ms(tc.window), tc.limit, tc.ratelab)
			}
			r.linef("%-38s %15s %6d %9d", bucket, "-", tbBurst, len(tbLater))
		}
		return nil
	},
}
