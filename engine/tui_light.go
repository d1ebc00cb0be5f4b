package engine

import (
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// StepsHeard runs every event before to (at most the horizon), as that many calls of Step
// would, and appends each event's instant to instants, in order; a decision OnDecide hears
// is that of the event whose instant is appended next (its index is len(*instants) during
// the call). It does not finish the lane at its horizon (Step does) nor move its time past
// the last event (RunUntil does). A lane heard by OnDecide alone (OnEvent nil) whose one
// source is flat runs flatArrivals' loop, OnDecide told each decision: the TUI's light
// batches, at about twice the speed of Step after Step on the perf scenario
// (tui.BenchmarkTUIVsRun).
func (l *Lane) StepsHeard(to time.Duration, instants *[]time.Duration) error {
	end := min(int64(to), l.horizon)
	for !l.done {
		if l.flatOnly != nil && !l.observed() && l.OnDecide != nil {
			l.flatArrivalsHeard(end, instants)
		}
		e, _ := l.nextEvent()
		if e == nil || e.at >= end {
			return nil
		}
		at := e.at
		if _, err := l.Step(); err != nil {
			return err
		}
		*instants = append(*instants, time.Duration(at))
	}
	return nil
}

// flatArrivalsHeard is flatArrivals (steps.go) with OnDecide told every decision and each
// event's instant appended to instants: the same events, sequence numbers, request ids and
// counts, so that the lane ends as Step after Step leaves it (the TUI's tests compare every
// lane's result, bins included, with a run that observes every event).
func (l *Lane) flatArrivalsHeard(to int64, instants *[]time.Duration) {
	fs := l.flatOnly
	permits, key := fs.permits, fs.key
	limit := min(to, l.rec.mark)
	refused := int64(0)
	for len(l.arrivals.items) == 1 {
		top := &l.arrivals.items[0]
		if len(l.events.items) > 0 && less(&l.events.items[0], top) {
			// Another event first (a completion): run it here too, below the mark.
			if e := &l.events.items[0]; e.at >= limit || e.at < l.now {
				break
			}
			e := l.events.pop()
			l.now = e.at
			l.processed++
			l.runEvent(e)
			*instants = append(*instants, time.Duration(e.at))
			continue
		}
		at := top.at
		if at >= limit || at < l.now {
			break // Step runs it: a mark to cross, or time going back (an error)
		}
		l.now = at
		l.processed++
		next, ok := fs.nextAt()
		if ok {
			l.seq++
			top.at, top.seq = next, l.seq
		} else {
			l.arrivals.items = l.arrivals.items[:0]
		}
		l.nextID++
		var d limiters.Decision
		if l.only != nil {
			d = l.only.AcquireAt(time.Duration(at), permits)
		} else {
			var wasted int64
			d, _, wasted = l.stack.Acquire(time.Duration(at), permits, nil)
			l.rec.wasted(wasted)
		}
		l.OnDecide(time.Duration(at), l.nextID, d)
		if d == limiters.Rejected {
			refused++
		} else {
			l.decidedAtOnce(at, permits, key, d)
		}
		*instants = append(*instants, time.Duration(at))
	}
	l.rec.refusedAtOnce(refused, permits)
}
