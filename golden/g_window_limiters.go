package golden

import (
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/scenarios"
)

// slidingBound is the most a sliding window of limit per window in slots admits in a
// half-open interval of length L: the interval touches k = ⌈(L−1ns)/slotLength⌉ + 1
// slot-indices, and every run of slots consecutive slot-indices holds at most limit, so at
// most limit·⌈k/slots⌉. For L ≤ window − slotLength + 1ns that is limit.
func slidingBound(limit, slots int, window, L time.Duration) int64 {
	slot := int64(window) / int64(slots)
	k := ceilDiv(int64(L)-1, slot) + 1
	return int64(limit) * ceilDiv(k, int64(slots))
}

// boundaryAttack runs the built-in boundary-attack scenario: 100 requests over the last 10ms
// of the first one-second window and 100 over the first 10ms of the next.
func (r *run) boundaryAttack() (*engine.Results, error) {
	sc, err := scenarios.Get("boundary-attack")
	if err != nil {
		return nil, err
	}
	return r.simulate(sc)
}

// writeMillis prints the admissions of adm in [from, to) per millisecond, with a running total.
func (r *run) writeMillis(adm []Admission, from, to time.Duration) {
	var total int64
	for t := from; t < to; t += msec {
		n := Count(adm, t, t+msec)
		total += n
		r.linef("  %-18s %3d admitted  total %3d", "["+ms(t)+", "+ms(t+msec)+")", n, total)
	}
}

var slidingWindowBoundary = &Guarantee{
	ID:         "sliding-window-boundary",
	Chart:      "docs/img/boundary-attack-guarantee.png",
	Algorithms: []limiters.Kind{limiters.KindSlidingWindow},
	Claim: "a sliding window admits at most limit in any interval of length window − window/slots, " +
		"so the boundary attack that doubles a fixed window's rate fails against it",
	Scenario: "built-in scenario boundary-attack: sliding-window:limit=100,window=1s,slots=10; 100 requests spread over " +
		"[990ms, 1s) and 100 over [1s, 1.01s)",
	Bound:   "at most limit = 100 in any half-open interval of length 900ms (and of 20ms); the second 100 are all refused",
	Checker: "the exact worst half-open interval of 900ms, 900ms + 1ns and 20ms against limit·⌈k/slots⌉; the admitted count in [1s, 1.01s) is exactly 0",
	run: func(r *run) error {
		res, err := r.boundaryAttack()
		if err != nil {
			return err
		}
		lane, err := laneOf(res, limiters.KindSlidingWindow)
		if err != nil {
			return err
		}
		spec := specOf[limiters.SlidingWindowSpec](lane.Name)
		adm := Admissions(lane.Trace)
		slot := spec.Window / time.Duration(spec.Slots)
		r.linef("%s: offered %d, admitted %d", lane.Name, lane.Totals.Offered, lane.Totals.Admitted)
		for _, L := range []time.Duration{20 * msec, spec.Window - slot, spec.Window - slot + ns} {
			bound := slidingBound(spec.Limit, spec.Slots, spec.Window, L)
			w, err := CheckInterval(adm, L, bound, "limit·⌈k/slots⌉")
			r.check(err)
			r.linef("L=%-12s bound %d  worst: %s", ms(L), bound, w)
		}
		_, err = CheckExact(adm, sec, sec+10*msec, 0, "what the sliding window admits of the attack's second half")
		r.check(err)
		r.linef("admissions per ms around the boundary:")
		r.writeMillis(adm, 990*msec, 1010*msec)
		r.linef("the first refusal after the boundary:")
		for _, rec := range lane.Trace {
			if rec.At >= sec && rec.Outcome == engine.OutcomeRejected {
				r.linef("  %s req %d refused: %s", ms(rec.At), rec.Request, rec.Reason)
				break
			}
		}
		return nil
	},
}

var fixedWindowBoundary = &Guarantee{
	ID:         "fixed-window-boundary",
	Chart:      "docs/img/boundary-attack-guarantee.png",
	Algorithms: []limiters.Kind{limiters.KindFixedWindow},
	Claim: "a fixed window admits at most limit per aligned window, and the boundary attack gets exactly " +
		"2·limit inside a short rolling interval",
	Scenario: "built-in scenario boundary-attack: fixed-window:limit=100,window=1s; 100 requests spread over [990ms, 1s) " +
		"and 100 over [1s, 1.01s)",
	Bound:   "<= limit = 100 in each aligned window [k·1s, (k+1)·1s); exactly 2·limit = 200 in [990ms, 1.01s), a 20ms interval",
	Checker: "per-aligned-window counts against limit; the exact count in [990ms, 1.01s) and the worst 20ms interval equal 200",
	run: func(r *run) error {
		res, err := r.boundaryAttack()
		if err != nil {
			return err
		}
		lane, err := laneOf(res, limiters.KindFixedWindow)
		if err != nil {
			return err
		}
		spec := specOf[limiters.FixedWindowSpec](lane.Name)
		adm := Admissions(lane.Trace)
		limit := int64(spec.Limit)
		counts, err := CheckAligned(adm, spec.Window, limit)
		r.check(err)
		r.linef("%s: offered %d, admitted %d", lane.Name, lane.Totals.Offered, lane.Totals.Admitted)
		r.linef("per aligned window (bound %d each):", limit)
		for _, c := range counts {
			r.linef("  [%s, %s)  %d", ms(c.Start), ms(c.Start+spec.Window), c.Count)
		}
		_, err = CheckExact(adm, 990*msec, 1010*msec, 2*limit, "the boundary attack's take, 2·limit,")
		r.check(err)
		w := WorstInterval(adm, 20*msec)
		if w.Count != 2*limit {
			r.failf("the worst 20ms interval holds %s: the boundary attack gets exactly 2·limit = %d", w, 2*limit)
		}
		r.linef("worst 20ms interval: %s (exactly 2·limit = %d)", w, 2*limit)
		r.linef("admissions per ms around the boundary:")
		r.writeMillis(adm, 990*msec, 1010*msec)
		return nil
	},
}

var slidingWindowSlotEdge = &Guarantee{
	ID:         "sliding-window-slot-edge",
	Chart:      "docs/img/slot-edge-guarantee.png",
	Algorithms: []limiters.Kind{limiters.KindSlidingWindow},
	Claim: "a sliding window's precision is one slot: the exact worst case is 2·limit in an interval of " +
		"window − slotLength + 2ns, while any interval of window − slotLength + 1ns holds at most limit",
	Scenario: "sliding-window:limit=100,window=1s,slots=10 (slots of 100ms) and the same in 1000 slots; 100 requests at " +
		"99.999999ms (the last ns of slot 0) and 100 at 1s (the instant slot 0 leaves the window)",
	Bound: "10 slots: <= 100 in any interval of 900.000001ms, exactly 200 in one of 900.000002ms; 1000 slots: " +
		"<= 100 in any interval of 999.000001ms, the second burst refused",
	Checker: "the exact worst half-open interval at both lengths against limit·⌈k/slots⌉, and the exact 2·limit reached",
	run: func(r *run) error {
		const coarse, fine = "sliding-window:limit=100,window=1s,slots=10", "sliding-window:limit=100,window=1s,slots=1000"
		first := 100*msec - ns
		sc := &engine.Scenario{Name: "sliding-window-slot-edge", Seed: 1, Horizon: 2 * sec, Bins: 1,
			Client: engine.Client{Policy: engine.PolicyDrop}, Lanes: []engine.LaneSpec{r.lane(coarse), r.lane(fine)},
			Sources: []engine.Source{{Kind: engine.SourceBursts, Bursts: []engine.Burst{{At: first, Count: 100}, {At: sec, Count: 100}}}}}
		res, err := r.simulate(sc)
		if err != nil {
			return err
		}
		for i, lane := range res.Lanes {
			spec := specOf[limiters.SlidingWindowSpec](lane.Name)
			adm := Admissions(lane.Trace)
			slot := spec.Window / time.Duration(spec.Slots)
			r.linef("%s (slot %s): %d admitted at %s, %d at %s", lane.Name, ms(slot), Count(adm, first, first+ns), ms(first), Count(adm, sec, sec+ns), ms(sec))
			for _, L := range []time.Duration{spec.Window - slot + ns, spec.Window - slot + 2*ns} {
				bound := slidingBound(spec.Limit, spec.Slots, spec.Window, L)
				w, err := CheckInterval(adm, L, bound, "limit·⌈k/slots⌉")
				r.check(err)
				r.linef("  L=%-14s bound %3d  worst: %s", ms(L), bound, w)
			}
			if i == 0 {
				L := spec.Window - slot + 2*ns
				if w := WorstInterval(adm, L); w.Count != 2*int64(spec.Limit) {
					r.failf("the worst interval of %s holds %s: the documented worst case is exactly 2·limit = %d", ms(L), w, 2*spec.Limit)
				}
			} else if _, err := CheckExact(adm, sec, sec+ns, 0, "what 1000 slots admit of the second burst"); err != nil {
				r.check(err)
			}
		}
		return nil
	},
}
