package golden

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// sizeSpecs are one limiter of each kind with a small MaxPermits, in registry order: each
// kind's SizesSpec (its KindInfo.Checks.Sizes, else its Example).
var sizeSpecs = func() []string {
	var specs []string
	for _, info := range limiters.Kinds() {
		specs = append(specs, info.SizesSpec())
	}
	return specs
}()

var requestSizes = &Guarantee{
	ID:         "request-sizes",
	Algorithms: kindsOf(sizeSpecs),
	Claim: "a request for more permits than a limiter can ever grant at once (MaxPermits: capacity, 1, limit, max, burst, slack + 1 " +
		"or nginx burst + 1, sentinel's ⌊threshold⌋; Guava's 2^31−1, Java's largest int, as Guava takes any size) is " +
		"answered never — retrying cannot help, so a client does not retry — and takes nothing; a request for 0 or fewer is invalid " +
		"and takes nothing; MaxPermits itself is grantable (a warm-up bucket's once warm)",
	Scenario: "one limiter of each kind (token-bucket capacity 3, leaky-bucket, sliding-window limit 5, fixed-window limit 5, " +
		"warm-up capacity 6 over 1s, concurrency max 5, flash5-fixed limit 5, flash5-token limit 5, x-time-rate burst 5, uber slack 4: MaxPermits slack + 1, " +
		"its callers waiting as Take says, nginx burst 4 nodelay, guava-bursty and guava-warmup at 100/s, sentinel threshold 5, resilience4j limit 5 per 1s, two-counter limit 5 per 1s, aimd, vegas, gradient, gradient2 and failsafe-adaptive with initial = max = 5, envoy-gradient with min = max = 5); at 0 a request for " +
		"MaxPermits+1 (not for Guava's: it is more than the simulator offers, so only AcquireAt asks it), then one for " +
		"MaxPermits, with a client " +
		"that retries at the Retry-After hint (3 attempts); then AcquireAt(0) and AcquireAt(−1) on a fresh limiter",
	Bound: "MaxPermits+1: never, 1 attempt, 0 taken; MaxPermits: admitted at 0 (the cold warm-up bucket at its hint, 1s, when warm; " +
		"uber after exactly slack·T = 40ms, as its first calls get no slack); " +
		"n <= 0: invalid, available unchanged; RetryAfterAt(MaxPermits+1) not ok",
	Checker: "each request's outcomes and attempts from the trace; available permits before and after the refused requests",
	run: func(r *run) error {
		var lanes []engine.LaneSpec
		for _, text := range sizeSpecs {
			lanes = append(lanes, r.lane(text))
		}
		for i, text := range sizeSpecs {
			s := mustSpec(text)
			l, err := r.factory.build(s, fixedClock(0))
			if err != nil {
				return err
			}
			max := l.MaxPermits()
			// A kind that takes any size up to the simulator's largest request (Guava's, a Java
			// int) cannot be offered MaxPermits+1 through the simulator: the direct calls below
			// check that it is never.
			script := []engine.Arrival{{At: 0, Permits: max + 1}, {At: 0, Permits: max}}
			simulated, big := uint64(1), uint64(2) // the requests' ids in the trace
			if max >= engine.MaxPermits {
				script, simulated, big = script[1:], 0, 1
			}
			sc := &engine.Scenario{Name: "request-sizes", Seed: 1, Horizon: 2 * sec, Bins: 1,
				Client:  engine.Client{Policy: engine.PolicyRetryAfter, Delay: msec, MaxAttempts: 3},
				Lanes:   lanes[i : i+1],
				Sources: []engine.Source{{Kind: engine.SourceScript, Script: script}}}
			res, err := r.simulate(sc)
			if err != nil {
				return err
			}
			lane := res.Lanes[0]
			var events []string
			attempts := map[uint64]int{}
			admittedAt := map[uint64]time.Duration{}
			outcome := map[uint64]engine.Outcome{}
			for _, rec := range lane.Trace {
				switch rec.Outcome {
				case engine.OutcomeAdmitted, engine.OutcomeRejected, engine.OutcomeNever:
					attempts[rec.Request] = rec.Attempt
					outcome[rec.Request] = rec.Outcome
					if rec.Outcome == engine.OutcomeAdmitted {
						admittedAt[rec.Request] = rec.At
					}
					events = append(events, fmt.Sprintf("%s n=%d %s", ms(rec.At), rec.Permits, rec.Outcome))
				}
			}
			if simulated > 0 && (outcome[1] != engine.OutcomeNever || attempts[1] != 1) {
				r.failf("%s: a request for MaxPermits+1 = %d got %s after %d attempts: the bound is never, in exactly 1 attempt", s, max+1, outcome[1], attempts[1])
			}
			from, to := time.Duration(0), time.Duration(0)
			if w, ok := s.(limiters.WarmUpSpec); ok {
				// Cold, a full burst of capacity fits only once the interval is down to T: at
				// the warm-up period, or up to 1µs before it, as the ramp's interval is
				// floored to a whole nanosecond.
				from, to = w.WarmUp-time.Microsecond, w.WarmUp
			}
			if u, ok := s.(peers.UberSpec); ok {
				// Take never refuses, and a fresh uber's first calls get no slack: the
				// slack + 1 Takes of MaxPermits are issued T apart from 0, the last at slack·T.
				from = time.Duration(u.Slack) * u.Rate.Window / time.Duration(u.Rate.Permits)
				to = from
			}
			if at, ok := admittedAt[big]; !ok || at < from || at > to {
				r.failf("%s: a request for MaxPermits = %d was admitted at %s (admitted: %v): the bound is admitted in [%s, %s] (MaxPermits is grantable; the one before took nothing)",
					s, max, ms(at), ok, ms(from), ms(to))
			}
			// Sizes that can never pass take nothing.
			before := l.AvailableAt(0)
			var decisions []string
			for _, n := range []int{0, -1, max + 1} {
				d := l.AcquireAt(0, n)
				decisions = append(decisions, fmt.Sprintf("%d:%s", n, d))
				want := limiters.Invalid
				if n > 0 {
					want = limiters.Never
				}
				if d != want {
					r.failf("%s: AcquireAt(0, %d) = %s: the bound is %s", s, n, d, want)
				}
			}
			if after := l.AvailableAt(0); after != before {
				r.failf("%s: available went from %d to %d across refused sizes 0, −1 and %d: they must take nothing", s, before, after, max+1)
			}
			hint := "-"
			if rl, ok := l.(limiters.RateLimiter); ok {
				if _, ok := rl.RetryAfterAt(0, max+1); ok {
					r.failf("%s: RetryAfterAt(0, %d) is ok: a request that can never pass has no retry time", s, max+1)
				}
				hint = "none"
			}
			r.linef("%-45s max %d: %-52s | %s | available %d before and after; retry hint for %d: %s",
				s, max, strings.Join(events, "; "), strings.Join(decisions, " "), before, max+1, hint)
		}
		return nil
	},
}
