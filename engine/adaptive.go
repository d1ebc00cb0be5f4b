package engine

import (
	"math"
	"time"
)

// AdaptiveResult judges a lane with an adaptive limit (limiters.Adaptive) against its server
// downstream, phase by phase, from the limit at each bin's end (Bin.Limit): how long the
// limit took to come within 10% of the phase's reference concurrency c·(S + network)/S
// (Downstream.ReferenceConcurrency), how much it swung once there, and what the lane got done.
// Times are at the bins' resolution: a scenario that asks these questions sets its bins
// (100ms bins over 60s: 600).
type AdaptiveResult struct {
	Phases []AdaptivePhase `json:"phases"`
	// GoodputPerSec is requests answered (completed, not failed) per second of the horizon.
	GoodputPerSec float64 `json:"goodput_per_s"`
	// Probes is the no-load RTT probes of the run (Vegas, Gradient), and RefusedInProbeBins
	// the attempts refused in the bins where one happened: the probe's cost, at the bins'
	// resolution (it counts every refusal of such a bin, the probe's and the others').
	Probes             int   `json:"probes"`
	RefusedInProbeBins int64 `json:"refused_in_probe_bins"`
	// RTT is, per bin, the mean latency of the completions the adaptive stage heard in it
	// (answers and callers' timeouts, from admission), 0 in a bin without one: what the limit
	// reacts to, for the limit chart (package plots). Not written to JSON: the bins there keep
	// their shape.
	RTT []time.Duration `json:"-"`
}

// rttBin is one bin's completions heard by an adaptive stage: their latencies' sum and count.
type rttBin struct {
	sum int64
	n   int64
}

// heard counts a completion of latency ns at the lane's time in its bin.
func (l *Lane) heard(latency int64) {
	if k := l.now / l.rec.binWidth; k < int64(len(l.rtt)) {
		l.rtt[k].sum += latency
		l.rtt[k].n++
	}
}

// meanRTT is each bin's mean latency, 0 for a bin without completions.
func meanRTT(bins []rttBin) []time.Duration {
	if bins == nil {
		return nil
	}
	out := make([]time.Duration, len(bins))
	for i, b := range bins {
		if b.n > 0 {
			out[i] = time.Duration(b.sum / b.n)
		}
	}
	return out
}

// AdaptivePhase is the limit over one phase of the downstream.
type AdaptivePhase struct {
	From      time.Duration `json:"from_ns"`
	To        time.Duration `json:"to_ns"`
	Reference float64       `json:"reference"` // c·(S + network)/S; 0 in a black hole or without a server
	// ConvergedAfter is the time from the phase's start to the end of the first bin whose
	// limit is within 10% of Reference; -1 when none is (or there is no reference).
	ConvergedAfter time.Duration `json:"converged_after_ns"`
	// Oscillation is the limit's standard deviation over the bins from convergence to the
	// phase's end, over Reference: 0.05 is a limit swinging ±5% of the reference. 0 when it
	// never converged.
	Oscillation float64 `json:"oscillation"`
	MeanLimit   float64 `json:"mean_limit"` // over the phase's bins
	MinLimit    int     `json:"min_limit"`
	MaxLimit    int     `json:"max_limit"`
}

// ConvergeBand is how near the reference a limit must come to count as converged: 10%.
const ConvergeBand = 0.10

// adaptiveReport computes AdaptiveResult from a lane's bins, binWidth apart.
func adaptiveReport(res *LaneResult, ds *Downstream, binWidth int64, horizon time.Duration) *AdaptiveResult {
	out := &AdaptiveResult{}
	if horizon > 0 {
		out.GoodputPerSec = float64(res.Totals.Completed) / horizon.Seconds()
	}
	for _, b := range res.Bins {
		out.Probes += b.Probes
		if b.Probes > 0 {
			out.RefusedInProbeBins += b.RefusedAttempts
		}
	}
	type span struct{ from, to time.Duration }
	spans := []span{{0, horizon}}
	if ds != nil && len(ds.Phases) > 0 {
		spans = spans[:0]
		for i, p := range ds.Phases {
			if p.From >= horizon {
				break
			}
			to := horizon
			if i+1 < len(ds.Phases) {
				to = min(ds.Phases[i+1].From, horizon)
			}
			spans = append(spans, span{p.From, to})
		}
	}
	for _, sp := range spans {
		ph := AdaptivePhase{From: sp.from, To: sp.to, Reference: ds.ReferenceConcurrency(sp.from), ConvergedAfter: -1, MinLimit: math.MaxInt}
		var n int
		var sum float64
		conv := -1
		var limits []int
		for _, b := range res.Bins {
			end := min(b.Start+time.Duration(binWidth), horizon)
			if end <= sp.from || end > sp.to {
				continue
			}
			n++
			sum += float64(b.Limit)
			ph.MinLimit, ph.MaxLimit = min(ph.MinLimit, b.Limit), max(ph.MaxLimit, b.Limit)
			if conv < 0 && ph.Reference > 0 && math.Abs(float64(b.Limit)-ph.Reference) <= ConvergeBand*ph.Reference {
				conv = len(limits)
				ph.ConvergedAfter = end - sp.from
			}
			limits = append(limits, b.Limit)
		}
		if n == 0 {
			ph.MinLimit = 0
		} else {
			ph.MeanLimit = sum / float64(n)
		}
		if conv >= 0 {
			after := limits[conv:]
			var mean, sq float64
			for _, v := range after {
				mean += float64(v)
			}
			mean /= float64(len(after))
			for _, v := range after {
				sq += (float64(v) - mean) * (float64(v) - mean)
			}
			ph.Oscillation = math.Sqrt(sq/float64(len(after))) / ph.Reference
		}
		out.Phases = append(out.Phases, ph)
	}
	return out
}
