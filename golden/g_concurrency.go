package golden

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/scenarios"
)

// releaser is a limiter whose permits come back by Release (the concurrency limiter).
type releaser interface{ Release(n int) }

// inFlightLedger follows a lane's trace and checks, at every decision, that the limiter's own
// view (the pre-decision State: InFlight and Available) matches the requests the simulator
// has admitted and not yet finished, and that this never exceeds max.
type inFlightLedger struct {
	max, inFlight, most int
	decisions           int
	err                 error
}

func (l *inFlightLedger) record(rec engine.Record) {
	if l.err != nil {
		return
	}
	switch rec.Outcome {
	case engine.OutcomeAdmitted, engine.OutcomeRejected:
		l.decisions++
		if st := rec.State; st != nil {
			switch {
			case st.InFlight != l.inFlight:
				l.err = fmt.Errorf("at %s (request %d) the limiter counts %d in flight but %d requests are in flight: "+
					"in flight must be exactly what was admitted and not released", ms(rec.At), rec.Request, st.InFlight, l.inFlight)
			case st.Available != l.max-l.inFlight:
				l.err = fmt.Errorf("at %s (request %d) the limiter reports %d available with %d in flight: the bound is exactly max − in flight = %d",
					ms(rec.At), rec.Request, st.Available, l.inFlight, l.max-l.inFlight)
			}
		}
		if rec.Outcome == engine.OutcomeAdmitted {
			l.inFlight += rec.Permits
			l.most = max(l.most, l.inFlight)
			if l.inFlight > l.max && l.err == nil {
				l.err = fmt.Errorf("at %s (request %d) %d requests are in flight: over the bound max = %d", ms(rec.At), rec.Request, l.inFlight, l.max)
			}
		}
	case engine.OutcomeCompleted, engine.OutcomeFailed:
		l.inFlight -= rec.Permits
	}
}

var concurrencyInFlight = &Guarantee{
	ID:         "concurrency-in-flight",
	Algorithms: []limiters.Kind{limiters.KindConcurrency},
	Claim: "a concurrency limiter never has more than max in flight, its available permits are exactly max − in flight, " +
		"releasing more than is held panics with a clear message and changes nothing, and TryDo releases even when the work panics",
	Scenario: "concurrency:max=5 offered Poisson arrivals at 150/s for 2s (seed 1) in front of a downstream answering in " +
		"uniform 20–60ms; then Release(3) and Release(0) with 2 held, and TryDo(3) of work that panics",
	Bound: "in flight <= max = 5 at every instant; at every decision the limiter's in flight equals the requests admitted " +
		"and not finished, and available = 5 − in flight; a bad Release panics and leaves in flight at 2; after the panicking TryDo, 2 in flight",
	Checker: "a ledger of admissions and completions from the trace, compared with the limiter's pre-decision state at every decision",
	run: func(r *run) error {
		const spec = "concurrency:max=5"
		s := specOf[limiters.ConcurrencySpec](spec)
		sc := &engine.Scenario{Name: "concurrency-in-flight", Seed: 1, Horizon: 2 * sec, Bins: 1,
			Client: engine.Client{Policy: engine.PolicyDrop}, Lanes: []engine.LaneSpec{r.lane(spec)},
			Downstream: &engine.Downstream{Phases: []engine.Phase{{Service: engine.Distribution{Kind: engine.DistUniform, Min: 20 * msec, Max: 60 * msec}}}},
			Sources:    []engine.Source{{Kind: engine.SourcePoisson, Rate: 150}}}
		res, err := r.simulate(sc)
		if err != nil {
			return err
		}
		lane := res.Lanes[0]
		ledger := &inFlightLedger{max: s.Max}
		for _, rec := range lane.Trace {
			ledger.record(rec)
		}
		r.check(ledger.err)
		t := lane.Totals
		r.linef("offered %d, admitted %d, refused %d; decisions checked %d; most in flight %d (bound %d)",
			t.Offered, t.Admitted, t.RefusedAttempts, ledger.decisions, ledger.most, s.Max)
		r.linef("the first 100ms:")
		for _, rec := range lane.Trace {
			if rec.At >= 100*msec {
				break
			}
			line := fmt.Sprintf("  %-12s req %-4d %-9s", ms(rec.At), rec.Request, rec.Outcome)
			if rec.Reason != "" {
				line += "  " + rec.Reason
			}
			r.linef("%s", strings.TrimRight(line, " "))
		}
		return r.checkRelease(s)
	},
}

// checkRelease takes 2 permits and returns 3, then 0: both must panic with a message naming
// the release and what is held, and leave the state as it was.
func (r *run) checkRelease(s limiters.ConcurrencySpec) error {
	l, err := r.factory.build(s, fixedClock(0))
	if err != nil {
		return err
	}
	rel, ok := l.(releaser)
	if !ok {
		r.failf("%s has no Release: a concurrency limiter's permits come back only by Release", l)
		return nil
	}
	l.AcquireAt(0, 2)
	for _, n := range []int{3, 0} {
		msg := func() (msg any) {
			defer func() { msg = recover() }()
			rel.Release(n)
			return nil
		}()
		st := l.Snapshot(0)
		switch {
		case msg == nil:
			r.failf("Release(%d) with 2 in flight returned quietly: releasing more than is held (or nothing) must panic", n)
		case st.InFlight != 2 || st.Available != s.Max-2:
			r.failf("Release(%d) with 2 in flight panicked but left %d in flight, %d available: it must change nothing (2 in flight, %d available)",
				n, st.InFlight, st.Available, s.Max-2)
		}
		r.linef("Release(%d) with 2 in flight: panic %q; afterwards %d in flight, %d available", n, fmt.Sprint(msg), st.InFlight, st.Available)
	}
	// TryDo releases on the way out, even when the work panics, and the panic goes on.
	type tryDoer interface{ TryDo(n int, fn func()) bool }
	if td, ok := l.(tryDoer); ok {
		msg := func() (msg any) {
			defer func() { msg = recover() }()
			td.TryDo(3, func() { panic("work failed") })
			return nil
		}()
		st := l.Snapshot(0)
		if msg == nil || st.InFlight != 2 {
			r.failf("TryDo(3) whose work panicked: panic %v, then %d in flight: the panic must propagate and the 3 permits be released (bound: 2 in flight)", msg, st.InFlight)
		}
		r.linef("TryDo(3) with 2 in flight, the work panics: panic %q propagates; afterwards %d in flight", fmt.Sprint(msg), st.InFlight)
	}
	return nil
}

var slowDownstream = &Guarantee{
	ID:         "slow-downstream",
	Chart:      "docs/img/slow-downstream-downstream.png",
	Algorithms: []limiters.Kind{limiters.KindTokenBucket, limiters.KindConcurrency},
	Claim: "rate is not concurrency: with 10/s allowed, 3s responses and a pool of 20, about 30 requests would be in " +
		"flight and the pool fails with a rate limiter alone; a concurrency limit of 20, alone or stacked behind the rate limiter, " +
		"gives zero pool failures",
	Scenario: "built-in scenario slow-downstream: 15 requests per second; token-bucket:capacity=10,rate=10/1s, concurrency:max=20, " +
		"and the two stacked; the downstream answers in 50ms until 10s, then in 3s, with a pool of 20",
	Bound: "rate limiter alone: pool failures > 0 and admissions in some 3s interval after 10s (what would be in flight) >= 29 " +
		"(Little: 10/s × 3s = 30); with the concurrency limit: 0 pool failures and in flight <= 20",
	Checker: "pool failures and most in flight per lane; the worst 3s interval of admissions after the slowdown; the in-flight ledger of the concurrency lanes",
	run: func(r *run) error {
		sc, err := scenarios.Get("slow-downstream")
		if err != nil {
			return err
		}
		res, err := r.simulate(sc)
		if err != nil {
			return err
		}
		pool := sc.Downstream.Pool
		slow, service := 10*sec, 3*sec
		r.linef("%-55s %8s %6s %13s %s", "lane", "admitted", "failed", "max in flight", "admitted in worst 3s after 10s")
		alone, err := laneOf(res, limiters.KindTokenBucket)
		if err != nil {
			return err
		}
		for _, lane := range res.Lanes {
			var after []Admission
			for _, a := range Admissions(lane.Trace) {
				if a.At >= slow {
					after = append(after, a)
				}
			}
			w := WorstInterval(after, service)
			t := lane.Totals
			r.linef("%-55s %8d %6d %13d %d", lane.Name, t.Admitted, t.Failed, t.MaxInFlight, w.Count)
			if lane.Name == alone.Name {
				if t.Failed == 0 {
					r.failf("%s alone had no pool failures: with 3s responses it lets about 30 be in flight against a pool of %d", lane.Name, pool)
				}
				if w.Count < 29 {
					r.failf("%s admitted at most %s after the slowdown: about 30 (10/s × 3s) would be in flight, bound >= 29", lane.Name, w)
				}
				continue
			}
			if t.Failed != 0 {
				r.failf("%s: %d pool failures: with a concurrency limit of %d in front of a pool of %d the bound is 0", lane.Name, t.Failed, pool, pool)
			}
			if t.MaxInFlight > pool {
				r.failf("%s: %d in flight: over the bound max = %d", lane.Name, t.MaxInFlight, pool)
			}
			ledger := &inFlightLedger{max: pool}
			for _, rec := range lane.Trace {
				if rec.Outcome == engine.OutcomeAdmitted || rec.Outcome == engine.OutcomeRejected {
					if rec.State != nil && rec.State.Kind != limiters.KindConcurrency {
						rec.State = nil // the stack's first stage is the rate limiter: no in-flight view to compare
					}
				}
				ledger.record(rec)
			}
			if ledger.err != nil {
				r.failf("%s: %v", lane.Name, ledger.err)
			}
		}
		r.linef("")
		r.linef("per second after the slowdown, rate limiter alone (admitted / pool failures):")
		lane := alone
		for t0 := slow - sec; t0 < slow+6*sec; t0 += sec {
			var adm, failed int
			for _, rec := range lane.Trace {
				if rec.At >= t0 && rec.At < t0+sec {
					switch rec.Outcome {
					case engine.OutcomeAdmitted:
						adm++
					case engine.OutcomeFailed:
						failed++
					}
				}
			}
			r.linef("  %-11s %2d / %2d", "["+ms(t0)+", "+ms(t0+sec)+")", adm, failed)
		}
		return nil
	},
}
