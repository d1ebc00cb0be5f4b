package golden

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// sentinelAt sends count requests of one at t, each caller waiting as long as the rule lets it
// (ReserveAt with the spec's CallerWait, as sentinel's Entry sleeps), and returns the waits of
// those admitted and how many were blocked.
func sentinelAt(l limiters.Limiter, s limiters.Spec, t time.Duration, count int) (waits []time.Duration, blocked int, err error) {
	rs, ok := l.(limiters.Reserver)
	if !ok {
		return nil, 0, fmt.Errorf("%s cannot make a caller wait (no reserve capability)", s)
	}
	wait := time.Duration(0)
	if w, ok := s.(limiters.Waiting); ok {
		wait = w.CallerWait()
	}
	for range count {
		if r := rs.ReserveAt(t, 1, wait); r.Decision == limiters.Admitted {
			waits = append(waits, r.Wait)
		} else {
			blocked++
		}
	}
	return waits, blocked, nil
}

var sentinelFlow = &Guarantee{
	ID:         "sentinel-flow",
	Algorithms: []limiters.Kind{peers.KindSentinel},
	Claim: "Sentinel's flow rule counts passes in two 500ms buckets of the epoch's clock, not in a second: at threshold=100, " +
		"100 passes at 0.7s block every request until 1.5s, yet 100 at 0.499s and 100 more at 1s all pass — 200 within " +
		"501ms; a warm-up rule starts cold and warms only as traffic uses its tokens, a step each whole second; throttling " +
		"paces callers ⌈1s/QPS⌉ ns apart and blocks those whose turn is more than max_queue away",
	Scenario: "direct calls, each caller waiting as long as the rule lets it (ReserveAt with the spec's CallerWait): " +
		"sentinel:threshold=100, 120 requests at 0.7s, one at 1.2s and 1.499s, 120 at 1.5s; a fresh one, 100 at 0.499s and " +
		"101 at 1s; sentinel:threshold=100,strategy=warmup,warmup=10s, one request every 2ms for 13s; " +
		"sentinel:threshold=10,behavior=throttling,max_queue=500ms, 10 at 0; sentinel:threshold=3,behavior=throttling,max_queue=1s, 4 at 0",
	Bound: "reject: 100, blocked, blocked, 100; then 100 and 100; warm-up: exactly 33 34 36 38 41 44 47 52 58 68 83 100 100 " +
		"admitted in seconds 0 to 12 (33 = ⌊100/3⌋ cold, 100 once warm); throttling at 10/s: waits exactly [0s 100ms 200ms " +
		"300ms 400ms 500ms], 4 blocked; at 3/s: waits [0s 333.333334ms 666.666668ms], the fourth (1.000000002s away) blocked",
	Checker: "each burst's admissions and blocks, each second's admissions, and every wait, against the bound",
	run: func(r *run) error {
		build := func(text string) (limiters.Spec, limiters.Limiter, error) {
			s := mustSpec(text)
			l, err := r.factory.build(s, fixedClock(0))
			return s, l, err
		}
		const direct = "sentinel:threshold=100"
		for _, script := range [][]struct {
			at            time.Duration
			count, admits int
		}{
			{{700 * msec, 120, 100}, {1200 * msec, 1, 0}, {1499 * msec, 1, 0}, {1500 * msec, 120, 100}},
			{{499 * msec, 100, 100}, {1000 * msec, 101, 100}},
		} {
			s, l, err := build(direct)
			if err != nil {
				return err
			}
			var got []string
			for _, b := range script {
				waits, _, err := sentinelAt(l, s, b.at, b.count)
				if err != nil {
					return err
				}
				if len(waits) != b.admits {
					r.failf("%s: %d admitted of %d at %s: the bound is exactly %d (two 500ms buckets)", s, len(waits), b.count, ms(b.at), b.admits)
				}
				got = append(got, fmt.Sprintf("%d of %d at %s", len(waits), b.count, ms(b.at)))
			}
			r.linef("%-62s %s", s, strings.Join(got, ", "))
		}

		const warm = "sentinel:threshold=100,strategy=warmup,warmup=10s"
		s, l, err := build(warm)
		if err != nil {
			return err
		}
		want := []int{33, 34, 36, 38, 41, 44, 47, 52, 58, 68, 83, 100, 100}
		perSecond := make([]int, len(want))
		for i := range len(want) * 500 {
			if l.AcquireAt(time.Duration(2*i)*msec, 1) == limiters.Admitted {
				perSecond[i/500]++
			}
		}
		if !slices.Equal(perSecond, want) {
			r.failf("%s: admitted %v in seconds 0 to %d of saturating demand: the bound is exactly %v (cold at ⌊100/3⌋, warm at 100)",
				s, perSecond, len(want)-1, want)
		}
		r.linef("%-62s per second %v", s, perSecond)

		for _, tc := range []struct {
			spec    string
			count   int
			waits   []time.Duration
			blocked int
		}{
			{"sentinel:threshold=10,behavior=throttling,max_queue=500ms", 10, []time.Duration{0, 100 * msec, 200 * msec, 300 * msec, 400 * msec, 500 * msec}, 4},
			{"sentinel:threshold=3,behavior=throttling,max_queue=1s", 4, []time.Duration{0, 333_333_334, 666_666_668}, 1},
		} {
			s, l, err := build(tc.spec)
			if err != nil {
				return err
			}
			waits, blocked, err := sentinelAt(l, s, 0, tc.count)
			if err != nil {
				return err
			}
			if !slices.Equal(waits, tc.waits) || blocked != tc.blocked {
				r.failf("%s: %d at 0 waited %v and %d were blocked: the bound is exactly waits %v and %d blocked",
					s, tc.count, waits, blocked, tc.waits, tc.blocked)
			}
			r.linef("%-62s %d at 0: waits %v, %d blocked", s, tc.count, waits, blocked)
		}
		return nil
	},
}
