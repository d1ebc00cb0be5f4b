package golden

import (
	"fmt"
	"slices"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// takes reserves one permit k times at t on l (an uber kind: Take) and returns the waits.
func takes(l limiters.Limiter, t time.Duration, k int) ([]time.Duration, error) {
	rs, ok := l.(limiters.Reserver)
	if !ok {
		return nil, fmt.Errorf("%s cannot reserve", l)
	}
	var out []time.Duration
	for range k {
		res := rs.ReserveAt(t, 1, limiters.MaxWaitForever)
		if res.Decision != limiters.Admitted {
			return out, fmt.Errorf("%s: Take %d at %s was %s: Take always admits", l, len(out)+1, ms(t), res.Decision)
		}
		out = append(out, res.Wait)
	}
	return out, nil
}

// evenly is k waits from 0, T apart.
func evenly(k int, T time.Duration) []time.Duration {
	out := make([]time.Duration, k)
	for i := range out {
		out[i] = time.Duration(i) * T
	}
	return out
}

var uberSlack = &Guarantee{
	ID:         "uber-slack",
	Algorithms: []limiters.Kind{peers.KindUber},
	Claim: "go.uber.org/ratelimit, the real library on a virtual clock, never refuses: Take sleeps until its permit is due; the very " +
		"first calls get no slack, after an idle slack + 1 Takes return at once, and WithoutSlack (slack=0) issues permits strictly one " +
		"interval apart, whatever the idle or the demand",
	Scenario: "uber:rate=100/1s (slack 10, T = 10ms): 12 Takes at 0, then 12 at 1s; uber:rate=100/1s,slack=0: 3 Takes at 0, then 3 " +
		"at 1s; then a simulated lane of each on the same Poisson demand of 200 requests/s for 2s (callers wait as long as Take says)",
	Bound: "slack 10: waits at 0 exactly 0, 10ms … 110ms (no slack at first); at 1s exactly 11 × 0 then 10ms (slack + 1 at once); " +
		"slack 0: waits exactly 0, 10ms, 20ms both times; in the lane, slack 0: nothing refused, consecutive admissions >= 10ms apart " +
		"and exactly 10ms when the later one waited; slack 10: nothing refused, at most slack + ⌈L/T⌉ = 110 admitted in any 1s",
	Checker: "waits of direct ReserveAt (Take) calls against the exact lists; the lane's trace: refusals, gaps between admissions, " +
		"the worst 1s interval",
	run: func(r *run) error {
		const T = 10 * msec
		for _, tc := range []struct {
			spec       string
			k          int
			first, idl []time.Duration
		}{
			{"uber:rate=100/1s", 12, evenly(12, T), append(make([]time.Duration, 11), T)},
			{"uber:rate=100/1s,slack=0", 3, evenly(3, T), evenly(3, T)},
		} {
			l, err := r.factory.build(mustSpec(tc.spec), fixedClock(0))
			if err != nil {
				return err
			}
			first, err := takes(l, 0, tc.k)
			r.check(err)
			idle, err := takes(l, sec, tc.k)
			r.check(err)
			if !slices.Equal(first, tc.first) {
				r.failf("%s: %d Takes at 0 wait %v: the first calls get no slack: the bound is exactly %v", tc.spec, tc.k, first, tc.first)
			}
			if !slices.Equal(idle, tc.idl) {
				r.failf("%s: %d Takes at 1s, after idle, wait %v: the bound is exactly %v", tc.spec, tc.k, idle, tc.idl)
			}
			r.linef("%-26s %2d Takes at 0 wait %v", tc.spec, tc.k, first)
			r.linef("%-26s %2d Takes at 1s wait %v", "", tc.k, idle)
		}

		sc := &engine.Scenario{Name: "uber-slack", Seed: 1, Horizon: 2 * sec, Bins: 1,
			Client:  engine.Client{Policy: engine.PolicyDrop},
			Lanes:   []engine.LaneSpec{r.lane("uber:rate=100/1s,slack=0"), r.lane("uber:rate=100/1s")},
			Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 200}}}
		res, err := r.simulate(sc)
		if err != nil {
			return err
		}
		r.linef("")
		r.linef("Poisson demand of 200/s for 2s, every caller waiting as long as Take says:")
		for i, lane := range res.Lanes {
			var adm []Admission
			waited := map[int]bool{} // index in adm: admitted after a wait
			refused, maxWait := 0, time.Duration(0)
			decidedAt := map[uint64]time.Duration{}
			for _, rec := range lane.Trace {
				switch rec.Outcome {
				case engine.OutcomeRejected, engine.OutcomeNever:
					refused++
				case engine.OutcomeDelayed:
					decidedAt[rec.Request] = rec.At
				case engine.OutcomeAdmitted:
					if at, ok := decidedAt[rec.Request]; ok {
						waited[len(adm)] = true
						maxWait = max(maxWait, rec.At-at)
					}
					adm = append(adm, Admission{rec.At, rec.Permits})
				}
			}
			if refused > 0 {
				r.failf("%s: %d requests refused: Take never refuses", lane.Name, refused)
			}
			least := time.Duration(-1)
			for j := 1; j < len(adm); j++ {
				gap := adm[j].At - adm[j-1].At
				if least < 0 || gap < least {
					least = gap
				}
				if i == 0 && (gap < T || waited[j] && gap != T) {
					r.failf("%s: admissions at %s and %s (waited: %v) are %s apart: the bound is >= %s, exactly %s after a wait",
						lane.Name, ms(adm[j-1].At), ms(adm[j].At), waited[j], ms(gap), ms(T), ms(T))
				}
			}
			worst := WorstInterval(adm, sec)
			if i == 1 && worst.Count > 110 {
				r.failf("%s: %d admitted in [%s, %s): the bound is slack + ⌈L/T⌉ = 110", lane.Name, worst.Count, ms(worst.From), ms(worst.From+sec))
			}
			r.linef("  %-26s %d admitted (%d after a wait, the longest %s), %d refused; smallest gap %s; most in any 1s: %d",
				lane.Name, len(adm), len(waited), ms(maxWait), refused, ms(least), worst.Count)
		}
		return nil
	},
}
