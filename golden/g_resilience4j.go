package golden

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// reserveBurst makes n one-permit reservations at t, each caller waiting at most maxWait, and
// returns how many were admitted with each wait, and how many were refused.
func reserveBurst(l limiters.Limiter, t time.Duration, n int, maxWait time.Duration) (waits map[time.Duration]int, refused int, err error) {
	rs, ok := l.(limiters.Reserver)
	if !ok {
		return nil, 0, fmt.Errorf("%s cannot make callers wait (no reserve capability)", l)
	}
	waits = map[time.Duration]int{}
	for range n {
		if r := rs.ReserveAt(t, 1, maxWait); r.Decision == limiters.Admitted {
			waits[r.Wait]++
		} else {
			refused++
		}
	}
	return waits, refused, nil
}

// waitsText prints waits as "count×wait" in the order of the waits.
func waitsText(waits map[time.Duration]int) string {
	var keys []time.Duration
	for w := range waits {
		keys = append(keys, w)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, w := range keys {
		parts[i] = fmt.Sprintf("%d×%s", waits[w], ms(w))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

var resilience4jCycles = &Guarantee{
	ID:         "resilience4j-cycles",
	Algorithms: []limiters.Kind{peers.KindResilience4j},
	Claim: "resilience4j's AtomicRateLimiter gives limitForPeriod permissions per cycle of limitRefreshPeriod, cycles counted " +
		"from the limiter's creation: 2 × limit pass across a cycle boundary; a caller whose timeout covers the wait reserves " +
		"a later cycle's permissions, driving them negative — with the default timeoutDuration of 5s, 600 callers at once get " +
		"50 at once, 50 in each of the next ten cycles, and 50 refusals; with a wait as long as it takes, every caller goes on " +
		"in the cycle its permission falls in",
	Scenario: "direct calls: resilience4j:limit=50,period=500ms,timeout=0s made at 200ms, 51 requests at 699ms and 51 at 700ms; " +
		"resilience4j:limit=50,period=500ms (timeout 5s) made at 0, 600 callers at 0, each waiting up to the timeout, then 51 at " +
		"5.5s; resilience4j:limit=50,period=500ms,mode=wait, 1000 callers at 0",
	Bound: "made at 200ms: 50 of 51 at 699ms, 50 of 51 at 700ms (the cycle begins 500ms after creation): 100 within 1ms; " +
		"timeout 5s: exactly 50 each with waits 0, 500ms, 1s, …, 5s, 50 refused, permissions −500 after, 50 of 51 at 5.5s; " +
		"mode=wait: 1000 admitted, 50 at each of the 20 cycle starts 0 … 9.5s",
	Checker: "the admitted counts, waits and refusals of direct AcquireAt and ReserveAt calls, against the bound",
	run: func(r *run) error {
		const boundary = "resilience4j:limit=50,period=500ms,timeout=0s"
		l, err := r.factory.build(mustSpec(boundary), fixedClock(200*msec))
		if err != nil {
			return err
		}
		before, after := burstAt(l, 699*msec, 51), burstAt(l, 700*msec, 51)
		if before != 50 || after != 50 {
			r.failf("%s made at 200ms: %d of 51 admitted at 699ms and %d of 51 at 700ms: the bound is exactly 50 and 50 "+
				"(cycles begin at creation: 200ms, 700ms)", boundary, before, after)
		}
		r.linef("%-48s made at 200ms: %d of 51 at 699ms, %d of 51 at 700ms: %d within 1ms (2·limit)", boundary, before, after, before+after)

		const timeout = "resilience4j:limit=50,period=500ms"
		s := mustSpec(timeout)
		l, err = r.factory.build(s, fixedClock(0))
		if err != nil {
			return err
		}
		wait := s.(limiters.Waiting).CallerWait()
		waits, refused, err := reserveBurst(l, 0, 600, wait)
		if err != nil {
			return err
		}
		want := map[time.Duration]int{}
		for k := range 11 {
			want[time.Duration(k)*500*msec] = 50
		}
		level := l.Snapshot(0).Level
		if waitsText(waits) != waitsText(want) || refused != 50 || level != -500 {
			r.failf("%s: 600 callers at 0 waiting up to %s: admitted with waits %s, %d refused, permissions %g: the bound is exactly %s, 50 refused, permissions -500",
				timeout, ms(wait), waitsText(waits), refused, level, waitsText(want))
		}
		r.linef("%-48s 600 at 0, callers waiting up to %s (the default): waits %s, %d refused, permissions %g", timeout, ms(wait), waitsText(waits), refused, level)
		if got := burstAt(l, 5500*msec, 51); got != 50 {
			r.failf("%s: %d of 51 at 5.5s: the bound is exactly 50 (cycle 11 is the first not reserved)", timeout, got)
		} else {
			r.linef("%-48s 51 at 5.5s: %d admitted (cycle 11 is the first not reserved)", timeout, got)
		}

		const forever = "resilience4j:limit=50,period=500ms,mode=wait"
		s = mustSpec(forever)
		l, err = r.factory.build(s, fixedClock(0))
		if err != nil {
			return err
		}
		waits, refused, err = reserveBurst(l, 0, 1000, s.(limiters.Waiting).CallerWait())
		if err != nil {
			return err
		}
		want = map[time.Duration]int{}
		for k := range 20 {
			want[time.Duration(k)*500*msec] = 50
		}
		if waitsText(waits) != waitsText(want) || refused != 0 {
			r.failf("%s: 1000 callers at 0: waits %s, %d refused: the bound is exactly %s, none refused", forever, waitsText(waits), refused, waitsText(want))
		}
		r.linef("%-48s 1000 at 0: waits %s, %d refused", forever, waitsText(waits), refused)
		return nil
	},
}
