package golden

import (
	"time"

	"github.com/ratelab/ratelab/engine"
)

// writeTrace prints the decisions of trace in [from, to), one line per admission with the
// limiter's available permits just before it and the sentence that explains it; a run of
// refusals between two admissions is one line: how many, from when to when, and why the first
// was refused.
func (r *run) writeTrace(trace []engine.Record, from, to time.Duration) {
	var pending []engine.Record
	flush := func() {
		if len(pending) == 0 {
			return
		}
		first, last := pending[0], pending[len(pending)-1]
		span := ms(first.At)
		if last.At != first.At {
			span += "–" + ms(last.At)
		}
		r.linef("  %-24s %3d refused           %s", span, len(pending), first.Reason)
		pending = pending[:0]
	}
	for _, rec := range trace {
		if rec.At < from || rec.At >= to {
			continue
		}
		switch rec.Outcome {
		case engine.OutcomeAdmitted:
			flush()
			avail := -1
			if rec.State != nil {
				avail = rec.State.Available
			}
			r.linef("  %-24s req %-5d admitted avail=%d  %s", ms(rec.At), rec.Request, avail, rec.Reason)
		case engine.OutcomeRejected, engine.OutcomeNever:
			pending = append(pending, rec)
		}
	}
	flush()
}

// within is "<=" when got is within bound, "OVER" otherwise: golden text shows both.
func within(got, bound int64) string {
	if got <= bound {
		return "<="
	}
	return "OVER"
}
