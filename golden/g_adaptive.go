package golden

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/failsafego"
)

// adaptiveSpecs are the adaptive kinds at their defaults (Netflix's, failsafe-go's, Envoy's);
// gradient probes every 50 to 99 samples and envoy-gradient re-measures minRTT every 5 to
// 5.75s (20 requests) so that their probes happen within the run.
var adaptiveSpecs = []string{
	"aimd:initial=20,min=20,max=200",
	"vegas:initial=20,max=1000",
	"gradient:initial=50,min=1,max=1000,probe=50",
	"gradient2:initial=20,min=20,max=200",
	"failsafe-adaptive:initial=20,min=1,max=200",
	"envoy-gradient:update=100ms,interval=5s,requests=20",
}

// limitBounds is the range a spec's limit must stay in: [min, max], min 1 for Vegas.
func limitBounds(s limiters.Spec) (lo, hi int) {
	switch s := s.(type) {
	case limiters.AIMDSpec:
		return s.Min, s.Max
	case limiters.VegasSpec:
		return 1, s.Max
	case limiters.GradientSpec:
		return s.Min, s.Max
	case limiters.Gradient2Spec:
		return s.Min, s.Max
	case failsafego.AdaptiveSpec:
		return s.Min, s.Max
	case limiters.EnvoyGradientSpec:
		return s.Min, s.Max
	}
	return 0, 0
}

// adaptiveLedger follows a lane's trace: at every decision the limiter's own view (the
// pre-decision State: in flight, the limit, available) must match the requests admitted and
// not finished, an admission must fit under the limit it read, and the limit must stay in
// [lo, hi].
type adaptiveLedger struct {
	lo, hi         int
	inFlight, most int
	decisions      int
	least, top     int
	err            error
}

func (l *adaptiveLedger) record(rec engine.Record) {
	if l.err != nil {
		return
	}
	switch rec.Outcome {
	case engine.OutcomeAdmitted, engine.OutcomeRejected:
		st := rec.State
		if st == nil {
			return // an admission after a wait carries no state (none here: nothing waits)
		}
		l.decisions++
		l.least, l.top = min(l.least, st.Max), max(l.top, st.Max)
		switch {
		case st.InFlight != l.inFlight:
			l.err = fmt.Errorf("at %s (request %d) the limiter counts %d in flight but %d requests are in flight: "+
				"in flight must be exactly what was admitted and not released", ms(rec.At), rec.Request, st.InFlight, l.inFlight)
		case st.Max < l.lo || st.Max > l.hi:
			l.err = fmt.Errorf("at %s (request %d) the limit is %d: outside [%d, %d]", ms(rec.At), rec.Request, st.Max, l.lo, l.hi)
		case st.Available != max(st.Max-l.inFlight, 0):
			l.err = fmt.Errorf("at %s (request %d) the limiter reports %d available with %d in flight under a limit of %d: the bound is exactly max(limit − in flight, 0) = %d",
				ms(rec.At), rec.Request, st.Available, l.inFlight, st.Max, max(st.Max-l.inFlight, 0))
		case rec.Outcome == engine.OutcomeAdmitted && l.inFlight+rec.Permits > st.Max:
			l.err = fmt.Errorf("at %s (request %d) admitted %d with %d in flight under a limit of %d: in flight + n must not pass the limit",
				ms(rec.At), rec.Request, rec.Permits, l.inFlight, st.Max)
		}
		if rec.Outcome == engine.OutcomeAdmitted {
			l.inFlight += rec.Permits
			l.most = max(l.most, l.inFlight)
		}
	case engine.OutcomeCompleted, engine.OutcomeFailed:
		l.inFlight -= rec.Permits
	}
}

var adaptiveLimitHolds = &Guarantee{
	ID:         "adaptive-limit-holds",
	Algorithms: kindsOf(adaptiveSpecs),
	Claim: "an adaptive limit admits a request only when in flight + its permits ≤ the limit at that instant, counts " +
		"exactly the requests admitted and not finished as in flight, reports max(limit − in flight, 0) available, and " +
		"keeps its limit within [min, max] (Vegas: [1, max]) — failsafe-go's real adaptive limiter and Envoy's gradient controller (pinned to its minimum while it re-measures minRTT) as well — while the server slows, recovers, errs and goes silent",
	Scenario: "aimd, vegas, gradient (probe=50) and gradient2 at Netflix's defaults, failsafe-adaptive at failsafe-go's, envoy-gradient (update 100ms, minRTT every 5s from 20 requests), Poisson 300/s for 20s (seed 1), " +
		"against 4 cores (processor sharing) behind a 20ms network, callers giving up after 1s: exponential demand of " +
		"20ms, 80ms from 6s, 20ms from 10s with 30% errors until 12s, a black hole from 14s to 15s, then 20ms",
	Bound: "at every decision: the limiter's in flight = the requests admitted and not finished; an admission has " +
		"in flight + n ≤ limit; available = max(limit − in flight, 0); min ≤ limit ≤ max",
	Checker: "a ledger of admissions, completions and failures from each lane's trace, compared with the pre-decision state at every decision",
	run: func(r *run) error {
		exp := func(ms int) engine.Distribution {
			return engine.Distribution{Kind: engine.DistExponential, Mean: time.Duration(ms) * msec}
		}
		sc := &engine.Scenario{Name: "adaptive-limit-holds", Seed: 1, Horizon: 20 * sec, Bins: 20,
			Client:  engine.Client{Policy: engine.PolicyDrop},
			Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 300}},
			Downstream: &engine.Downstream{Server: &engine.Server{Cores: 4, Network: 20 * msec, Timeout: sec}, Phases: []engine.Phase{
				{Service: exp(20)}, {From: 6 * sec, Service: exp(80)}, {From: 10 * sec, Errors: 0.3, Service: exp(20)},
				{From: 12 * sec, Service: exp(20)}, {From: 14 * sec, BlackHole: true, Service: exp(20)}, {From: 15 * sec, Service: exp(20)}}}}
		for _, spec := range adaptiveSpecs {
			sc.Lanes = append(sc.Lanes, r.lane(spec))
		}
		res, err := r.simulate(sc)
		if err != nil {
			return err
		}
		r.linef("%-46s %9s %8s %8s %7s %10s %13s %6s", "lane", "decisions", "admitted", "refused", "failed", "most held", "limit seen", "probes")
		for i, lane := range res.Lanes {
			spec := mustSpec(adaptiveSpecs[i])
			lo, hi := limitBounds(spec)
			ledger := &adaptiveLedger{lo: lo, hi: hi, least: hi, top: lo}
			for _, rec := range lane.Trace {
				ledger.record(rec)
			}
			if ledger.err != nil {
				r.failf("%s: %v", lane.Name, ledger.err)
			}
			t := lane.Totals
			probes := 0
			if lane.Adaptive != nil {
				probes = lane.Adaptive.Probes
			}
			r.linef("%-46s %9d %8d %8d %7d %10d %13s %6d", lane.Name, ledger.decisions, t.Admitted, t.RefusedAttempts, t.Failed,
				ledger.most, fmt.Sprintf("[%d, %d]", ledger.least, ledger.top), probes)
		}
		return nil
	},
}
