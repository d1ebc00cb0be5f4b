package golden

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/scenarios"
)

var leakyBucket = &Guarantee{
	ID:         "leaky-bucket-pacing",
	Chart:      "docs/img/burst-after-idle-timeline.png",
	Algorithms: []limiters.Kind{limiters.KindLeakyBucket, limiters.KindTokenBucket},
	Claim: "a leaky bucket has exactly 1 permit available after any idle and admits at least T apart — exactly T apart under " +
		"dense demand; on a burst after idle it admits a different set of requests than a token bucket on the same core (not a relabelling)",
	Scenario: "built-in scenario burst-after-idle: token-bucket:capacity=3,rate=100/1s and leaky-bucket:rate=100/1s " +
		"(T=10ms); 5 requests at 50ms, 1 at 80ms, 5 at 150ms, 2 spread over 152–162ms; then the leaky bucket alone offered 5 at 300ms " +
		"and one every 1ms to 350ms; availability probed after 50ms and 1h of idle",
	Bound: "leaky: available = 1 after idle, consecutive admissions >= T = 10ms apart, 1 admitted at each burst instant, " +
		"admissions at exactly 300, 310, 320, 330, 340ms under dense demand; token bucket: 3 at each burst instant",
	Checker: "minimum gap between consecutive leaky admissions vs T; exact counts at each burst instant; exact admission instants under " +
		"dense demand; the admitted request sets differ",
	run: func(r *run) error {
		sc, err := scenarios.Get("burst-after-idle")
		if err != nil {
			return err
		}
		res, err := r.simulate(sc)
		if err != nil {
			return err
		}
		tb, err := laneOf(res, limiters.KindTokenBucket)
		if err != nil {
			return err
		}
		lb, err := laneOf(res, limiters.KindLeakyBucket)
		if err != nil {
			return err
		}
		leak := specOf[limiters.LeakyBucketSpec](lb.Name)
		T := emissionInterval(leak.Rate.Permits, leak.Rate.Window)
		tbAdm, lbAdm := Admissions(tb.Trace), Admissions(lb.Trace)
		gap, err := CheckSpacing(lbAdm, T)
		r.check(err)
		for _, t0 := range []time.Duration{50 * msec, 150 * msec} {
			_, err := CheckExact(lbAdm, t0, t0+ns, 1, "a leaky bucket's burst after idle")
			r.check(err)
			_, err = CheckExact(tbAdm, t0, t0+ns, 3, "a token bucket's (capacity 3) burst after idle")
			r.check(err)
		}
		for _, rec := range lb.Trace {
			if rec.State != nil && rec.State.Available > 1 {
				r.failf("at %s the leaky bucket reported %d available before deciding: over the bound 1", ms(rec.At), rec.State.Available)
				break
			}
		}
		decided := func(trace []engine.Record) map[uint64]engine.Outcome {
			out := map[uint64]engine.Outcome{}
			for _, rec := range trace {
				if rec.Outcome == engine.OutcomeAdmitted || rec.Outcome == engine.OutcomeRejected {
					out[rec.Request] = rec.Outcome
				}
			}
			return out
		}
		tbOut, lbOut := decided(tb.Trace), decided(lb.Trace)
		var differ []string
		r.linef("token = %s, leaky = %s", tb.Name, lb.Name)
		r.linef("%-8s %-4s %-9s %s", "t", "req", "token", "leaky")
		for _, rec := range tb.Trace {
			if rec.Outcome != engine.OutcomeAdmitted && rec.Outcome != engine.OutcomeRejected {
				continue
			}
			mark := ""
			if tbOut[rec.Request] != lbOut[rec.Request] {
				mark = "  <- differs"
				differ = append(differ, fmt.Sprint(rec.Request))
			}
			r.linef("%-8s %-4d %-9s %s%s", ms(rec.At), rec.Request, tbOut[rec.Request], lbOut[rec.Request], mark)
		}
		if len(differ) == 0 {
			r.failf("the token bucket and the leaky bucket admitted the same requests: the two would be a relabelling")
		}
		r.linef("")
		r.linef("requests decided differently: %s", strings.Join(differ, " "))
		r.linef("leaky bucket: smallest gap between admissions %s (bound: >= T = %s)", ms(gap), ms(T))
		dense := &engine.Scenario{Name: "leaky-bucket-dense", Seed: 1, Horizon: 400 * msec, Bins: 1,
			Client: engine.Client{Policy: engine.PolicyDrop}, Lanes: []engine.LaneSpec{r.lane(leak.String())},
			Sources: []engine.Source{{Kind: engine.SourceBursts, Bursts: pacedBurst(300*msec, 5, 50*msec)}}}
		res, err = r.simulate(dense)
		if err != nil {
			return err
		}
		var want []time.Duration
		for k := 0; k < 5; k++ {
			want = append(want, 300*msec+time.Duration(k)*T)
		}
		r.check(CheckSchedule(Admissions(res.Lanes[0].Trace), 300*msec, 350*msec, want,
			fmt.Sprintf("under dense demand a leaky bucket admits exactly one per T = %s, however long it was idle", ms(T))))
		r.linef("")
		r.linef("leaky bucket alone, 5 requests at 300ms then one every 1ms: exactly one per T")
		r.writeTrace(res.Lanes[0].Trace, 300*msec, 350*msec)
		r.linef("")
		for _, idle := range []time.Duration{50 * msec, hour} {
			l, err := r.factory.build(leak, fixedClock(0))
			if err != nil {
				return err
			}
			if d := l.AcquireAt(0, 1); d != limiters.Admitted {
				r.failf("a fresh leaky bucket refused its first request at 0: %s", d)
			}
			got := l.AvailableAt(idle)
			if got != 1 {
				r.failf("after %s of idle the leaky bucket reports %d available: the bound is exactly 1", ms(idle), got)
			}
			r.linef("leaky bucket available after %s of idle: %d (bound: exactly 1)", ms(idle), got)
		}
		return nil
	},
}
