package golden

import (
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// admitAllAt asks l for one permit at t until refused and appends the admissions to adm.
func admitAllAt(l limiters.Limiter, t time.Duration, adm []Admission) []Admission {
	for l.AcquireAt(t, 1) == limiters.Admitted {
		adm = append(adm, Admission{At: t, Permits: 1})
	}
	return adm
}

var twoCounterWorstWindow = &Guarantee{
	ID:         "two-counter-worst-window",
	Algorithms: []limiters.Kind{peers.KindTwoCounter, limiters.KindSlidingWindow, limiters.KindFixedWindow},
	Claim: "the two-counter sliding estimate (prev × remaining fraction of the period + curr, periods anchored at the first " +
		"request) admits at most limit + ⌊limit·(L − 2ns)/period⌋ in any interval of length L ≤ period — for 100 per 1s, " +
		"199 = 2·limit − 1 in a trailing second and 189 in 900ms — reached by the previous period's limit at its last " +
		"nanosecond and what the estimate then lets through by the interval's end; ratelab's sliding window of 10 slots " +
		"admits 100 in 900ms (and, by its one-slot imprecision, 200 in exactly one window), a fixed window 200 in both; " +
		"half a period on, the previous count still weighs half",
	Scenario: "direct calls, a fresh limiter for each interval length L of 1s and 900ms: 1 request at 0 (the anchor, so that " +
		"period 1 is empty and period 2 has no previous count), then 150 at 2.999999999s (period 2's last ns) and 150 at " +
		"2.999999999s + L − 1ns, to two-counter:limit=100,window=1s, sliding-window:limit=100,window=1s,slots=10 and " +
		"fixed-window:limit=100,window=1s; a fresh two-counter: the anchor, 100 at 2.999999999s, then requests at 3.5s; " +
		"then Poisson arrivals at 300/s for 20s through the simulator",
	Bound: "two-counter: exactly 100 + 99 = 199 for L = 1s and 100 + 89 = 189 for L = 900ms, the worst interval of length L " +
		"holding exactly that; sliding window: 200 and 100; fixed window: 200 and 200; at 3.5s exactly 50 (100 × 0.5 still " +
		"weighs); Poisson: at most 199 in any 1s and 189 in any 900ms",
	Checker: "the admissions of direct AcquireAt calls and of the simulator's trace, and their worst half-open intervals of " +
		"length L, against the bound",
	run: func(r *run) error {
		const spec = "two-counter:limit=100,window=1s"
		s := mustSpec(spec)
		last := 3*sec - ns // period 2's last nanosecond
		r.linef("%-45s %-6s %12s %14s %12s", "limiter (1 at 0, 150 at each instant)", "L", "at 2.999…s", "at 2.999…s+L−1", "worst L")
		for _, L := range []time.Duration{sec, 900 * msec} {
			bound, _ := s.AdmissionBound(L)
			for _, tc := range []struct {
				spec        string
				atEnd, most int64
			}{
				{spec, bound - 100, bound},
				{"sliding-window:limit=100,window=1s,slots=10", map[time.Duration]int64{sec: 100, 900 * msec: 0}[L], map[time.Duration]int64{sec: 200, 900 * msec: 100}[L]},
				{"fixed-window:limit=100,window=1s", 100, 200},
			} {
				l, err := r.factory.build(mustSpec(tc.spec), fixedClock(0))
				if err != nil {
					return err
				}
				adm := admitAllAt(l, 0, nil)[1:] // the anchor is outside every interval below
				for _, at := range []time.Duration{last, last + L - ns} {
					for range 150 {
						if l.AcquireAt(at, 1) == limiters.Admitted {
							adm = append(adm, Admission{At: at, Permits: 1})
						}
					}
				}
				atLast, atEnd := Count(adm, last, last+ns), Count(adm, last+L-ns, last+L)
				worst := WorstInterval(adm, L)
				if atLast != 100 || atEnd != tc.atEnd || worst.Count != tc.most {
					r.failf("%s: L=%s: %d admitted at %s and %d at %s, %d in the worst interval (%s): the bound is exactly 100, %d and %d",
						tc.spec, ms(L), atLast, ms(last), atEnd, ms(last+L-ns), worst.Count, worst, tc.atEnd, tc.most)
				}
				r.linef("%-45s %-6s %12d %14d %12d", tc.spec, ms(L), atLast, atEnd, worst.Count)
			}
		}

		l, err := r.factory.build(s, fixedClock(0))
		if err != nil {
			return err
		}
		admitAllAt(l, 0, nil)
		admitAllAt(l, last, nil)
		if half := len(admitAllAt(l, 3500*msec, nil)); half != 50 {
			r.failf("%s: after 100 at %s, %d admitted at 3.5s: the bound is exactly 50 (100 × 0.5 of the period left still weighs)", spec, ms(last), half)
		} else {
			r.linef("%s: after 100 at %s, %d admitted at 3.5s (100 × 0.5 + curr ≤ 100)", spec, ms(last), half)
		}

		sc := &engine.Scenario{Name: "two-counter-poisson", Seed: 7, Horizon: 20 * sec, Bins: 1, Client: dropClient,
			Trace: true, Lanes: []engine.LaneSpec{r.lane(spec)},
			Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 300}}}
		res, err := r.simulate(sc)
		if err != nil {
			return err
		}
		adm := Admissions(res.Lanes[0].Trace)
		r.linef("Poisson 300/s for 20s: offered %d, admitted %d", res.Lanes[0].Totals.Offered, len(adm))
		for _, L := range []time.Duration{sec, 900 * msec} {
			bound, _ := s.AdmissionBound(L)
			w, err := CheckInterval(adm, L, bound, "limit + ⌊limit·(L − 2ns)/period⌋")
			r.check(err)
			r.linef("  worst %s (bound %d)", w, bound)
		}
		return nil
	},
}

// dropClient is a client that gives up at the first refusal.
var dropClient = engine.Client{Policy: engine.PolicyDrop}
