package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/ratelab/ratelab/engine"
)

// serverSection is what the run table says about a server downstream, under it: for each
// lane, the requests answered per second and their mean time at the server, and for an
// adaptive lane the limit phase by phase against the server's reference concurrency (time
// to come within 10%, the swing after, the limit's mean and range), its probes and the
// refusals in the bins where one happened. "" when the scenario's downstream is no server.
//
//	server (reference: the in-flight count c·(S+network)/S that keeps the cores busy with no queue)
//	  concurrency:max=32  answered 108.3/s, mean 280ms
//	  vegas:…             answered 52.2/s, mean 230ms  [0s,20s) ref 32: in 10% at 6.8s, sd 17%, limit 14.9 (7–33)  …  probes 15 (267 refused in their bins)
//
// "in 10% at" is the time from the phase's start to the first bin whose limit is within 10%
// of the reference; "sd" the limit's standard deviation from there to the phase's end, as a
// share of the reference.
func serverSection(sc *engine.Scenario, res *engine.Results, width int) string {
	if sc.Downstream == nil || sc.Downstream.Server == nil {
		return ""
	}
	heading := "server (reference: the in-flight count c·(S+network)/S that keeps the cores busy with no queue)"
	return laneSection(res, width, heading, func(r *engine.LaneResult) (string, bool) {
		if r.Service == nil {
			return "", false
		}
		var b strings.Builder
		answered := float64(r.Totals.Completed) / res.Horizon.Seconds()
		fmt.Fprintf(&b, "answered %.1f/s, mean %s", answered, roundedDuration(r.Service.MeanCompleted))
		if t := r.Totals; t.ServerTimeouts > 0 || t.ServerErrors > 0 {
			fmt.Fprintf(&b, ", %d timed out, %d errors", t.ServerTimeouts, t.ServerErrors)
		}
		a := r.Adaptive
		if a == nil {
			return b.String(), true
		}
		for _, p := range a.Phases {
			fmt.Fprintf(&b, "  [%s,%s) ", roundedDuration(p.From), roundedDuration(p.To))
			if p.Reference > 0 {
				fmt.Fprintf(&b, "ref %.0f: ", p.Reference)
				if p.ConvergedAfter >= 0 {
					fmt.Fprintf(&b, "in 10%% at %s, sd %.0f%%, ", roundedDuration(p.ConvergedAfter), 100*p.Oscillation)
				} else {
					b.WriteString("never in 10%, ")
				}
			} else {
				b.WriteString("no reference: ")
			}
			fmt.Fprintf(&b, "limit %.1f (%d–%d)", p.MeanLimit, p.MinLimit, p.MaxLimit)
		}
		if a.Probes > 0 {
			fmt.Fprintf(&b, "  probes %d (%d refused in their bins)", a.Probes, a.RefusedInProbeBins)
		}
		return b.String(), true
	})
}

// adaptiveMetrics are the --assert metrics of an adaptive lane against a server (a lane
// without an adaptive stage has none): the worst over the phases that have a reference.
var adaptiveMetrics = []assertMetric{
	{"converge", "the longest time, over the server's phases, for an adaptive limit to come within 10% of the reference (never: infinite)", metricWait,
		func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) {
			if r.Adaptive == nil {
				return 0, false
			}
			worst, any := 0.0, false
			for _, p := range r.Adaptive.Phases {
				if p.Reference <= 0 {
					continue
				}
				any = true
				if p.ConvergedAfter < 0 {
					return math.Inf(1), true
				}
				worst = max(worst, float64(p.ConvergedAfter))
			}
			return worst, any
		}},
	{"oscillation", "the largest swing of an adaptive limit after converging: its standard deviation over the reference", metricRatio,
		func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) {
			if r.Adaptive == nil {
				return 0, false
			}
			worst := 0.0
			for _, p := range r.Adaptive.Phases {
				worst = max(worst, p.Oscillation)
			}
			return worst, true
		}},
	{"answered", "requests the downstream answered per second", metricRatio,
		func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) {
			s := r.Service
			if s == nil || s.Started == 0 {
				return 0, false
			}
			return s.ArrivalRate * float64(r.Totals.Completed) / float64(s.Started), true // started/E · completed/started
		}},
	{"probe_refused", "attempts refused in the bins where an adaptive limit probed its no-load RTT", metricCount,
		func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) {
			if r.Adaptive == nil {
				return 0, false
			}
			return float64(r.Adaptive.RefusedInProbeBins), true
		}},
}

func init() { registerMetrics(adaptiveMetrics...) }
