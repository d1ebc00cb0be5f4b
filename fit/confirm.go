package fit

import (
	"context"
	"fmt"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/trace"
)

// Replayed is what one spec's limiter admitted of a trace.
type Replayed struct {
	Spec            string
	Admitted        int64 // requests
	AdmittedPermits int64
}

// Replay streams src through a limiter stack built from each spec text (engine.ParseStack:
// the text must parse), open loop, as engine.Replay does: a refusal gives back what earlier
// stages took, an admitted request completes at once, and a keyed stage decides each row
// with its key's limiter.
func Replay(ctx context.Context, src Source, specs []string) ([]Replayed, error) {
	clock, stacks, out, err := newStacks(specs)
	if err != nil {
		return nil, err
	}
	err = each(ctx, src, func(row *trace.Row) error {
		if err := clock.AdvanceTo(row.At); err != nil {
			return fmt.Errorf("%s: line %d: %w", src.Name(), row.Line, err)
		}
		for i, st := range stacks {
			if d, _, _ := st.Decide(row.At, row.Key, row.Permits); d == limiters.Admitted {
				st.Release(row.Permits, st.Len())
				out[i].Admitted++
				out[i].AdmittedPermits += int64(row.Permits)
			}
		}
		return nil
	})
	return out, err
}

// confirm replays the trace through every answer's spec, the token bucket one below σ and
// the relaxed bucket, in one pass, and fails if any disagrees with what was computed: every
// answer admits everything, σ − 1 refuses something, the relaxed bucket refuses what the
// search counted.
func confirm(ctx context.Context, read passes, rep *Report) error {
	var specs []string
	var answerAt []int
	for i, a := range rep.Specs {
		if a.Applies {
			specs = append(specs, a.Spec)
			answerAt = append(answerAt, i)
		}
	}
	p := rep.Recommended()
	below := -1
	if p.Capacity > 1 {
		below = len(specs)
		specs = append(specs, limiters.TokenBucketSpec{Capacity: int(p.Capacity - 1), Rate: p.Rate}.String())
	}
	relaxed := -1
	if rep.Relaxed != nil {
		relaxed = len(specs)
		specs = append(specs, rep.Relaxed.Spec)
	}
	got, err := read.replay(ctx, specs)
	if err != nil {
		return err
	}
	st := rep.Stats
	for j, i := range answerAt {
		a := &rep.Specs[i]
		a.Admitted, a.AdmittedPermits = got[j].Admitted, got[j].AdmittedPermits
		if a.Admitted != st.Requests {
			return fmt.Errorf("fit: replayed, %s admits %d of %d requests, not all: a bug in fit", a.Spec, a.Admitted, st.Requests)
		}
	}
	if below >= 0 {
		tb := &rep.Specs[0]
		tb.Below, tb.BelowRefused = got[below].Spec, st.Requests-got[below].Admitted
		if tb.BelowRefused == 0 {
			return fmt.Errorf("fit: replayed, %s admits everything too: σ = %d is not the least, a bug in fit", tb.Below, p.Capacity)
		}
	}
	if relaxed >= 0 {
		r := rep.Relaxed
		refused := st.Permits - got[relaxed].AdmittedPermits
		if refused != r.RefusedPermits || !within(refused, st.Permits, r.PPM) {
			return fmt.Errorf("fit: replayed, %s refuses %d permits where the search counted %d: a bug in fit", r.Spec, refused, r.RefusedPermits)
		}
	}
	return nil
}
