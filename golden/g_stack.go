package golden

import (
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

var stackRefunds = &Guarantee{
	ID:         "stack-refunds",
	Algorithms: []limiters.Kind{limiters.KindTokenBucket, limiters.KindFixedWindow},
	Claim: "a refusal by a later stage of a stack costs the earlier stages nothing: the permits they granted are refunded, " +
		"so the stack admits exactly what its tightest stage allows; with refund: false (the lane option, ratelab's stacks " +
		"before refunds) the earlier stage keeps them, wasted, and the stack admits less",
	Scenario: "token-bucket:capacity=10,rate=1/1s+fixed-window:limit=2,window=1s, 10 requests at each of 0, 1s and 2s; " +
		"the same lane with refund: false",
	Bound: "refund: exactly 2 admitted per burst (6 in all: the fixed window's limit per window), the token bucket's " +
		"available permits before the bursts 10, 9, 8 (10 − admitted + 1 per second), 0 wasted; refund: false: 2, 1, 1 " +
		"admitted (4), available 10, 1, 1, 8 wasted",
	Checker: "admissions per burst from the trace; the token bucket's state before each burst's first decision; the lane's wasted count",
	run: func(r *run) error {
		const stack = "token-bucket:capacity=10,rate=1/1s+fixed-window:limit=2,window=1s"
		bursts := []time.Duration{0, sec, 2 * sec}
		var script []engine.Arrival
		for _, at := range bursts {
			for range 10 {
				script = append(script, engine.Arrival{At: at})
			}
		}
		refunding, wasting := r.lane(stack), r.lane(stack)
		refunding.Name, wasting.Name = "refund", "refund: false"
		wasting.Waste = true
		sc := &engine.Scenario{Name: "stack-refunds", Seed: 1, Horizon: 3 * sec, Bins: 3,
			Client: engine.Client{Policy: engine.PolicyDrop}, Lanes: []engine.LaneSpec{refunding, wasting},
			Sources: []engine.Source{{Kind: engine.SourceScript, Script: script}}}
		res, err := r.simulate(sc)
		if err != nil {
			return err
		}
		for i, want := range []struct {
			admitted, available []int64
			wasted              int64
		}{
			{[]int64{2, 2, 2}, []int64{10, 9, 8}, 0},
			{[]int64{2, 1, 1}, []int64{10, 1, 1}, 8},
		} {
			lane := res.Lanes[i]
			adm := Admissions(lane.Trace)
			var admitted, available []int64
			for k, at := range bursts {
				admitted = append(admitted, Count(adm, at, at+ns))
				first := firstDecisionAt(lane.Trace, at)
				if first == nil || first.State == nil || first.Stage != 0 {
					r.failf("%s: no decision by the token bucket at %s", lane.Name, ms(at))
					available = append(available, -1)
					continue
				}
				available = append(available, int64(first.State.Available))
				if admitted[k] != want.admitted[k] {
					r.failf("%s: %d admitted at %s: the bound is exactly %d", lane.Name, admitted[k], ms(at), want.admitted[k])
				}
				if available[k] != want.available[k] {
					r.failf("%s: the token bucket had %d available before the burst at %s: the bound is exactly %d",
						lane.Name, available[k], ms(at), want.available[k])
				}
			}
			if lane.Totals.Wasted != want.wasted {
				r.failf("%s: %d permits wasted: the bound is exactly %d", lane.Name, lane.Totals.Wasted, want.wasted)
			}
			r.linef("%-14s admitted per burst %v (%d in all), token bucket available before each %v, wasted %d",
				lane.Name, admitted, lane.Totals.Admitted, available, lane.Totals.Wasted)
		}
		return nil
	},
}

// firstDecisionAt is the first admission or refusal of the trace at instant at.
func firstDecisionAt(trace []engine.Record, at time.Duration) *engine.Record {
	for i := range trace {
		rec := &trace[i]
		if rec.At == at && (rec.Outcome == engine.OutcomeAdmitted || rec.Outcome == engine.OutcomeRejected) {
			return rec
		}
	}
	return nil
}
