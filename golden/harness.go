package golden

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// Factory builds the limiter a spec describes on clock. nil means the real one (spec.New);
// a test passes a factory that returns a deliberately broken variant for some specs.
type Factory func(spec limiters.Spec, clock limiters.Clock) (limiters.Limiter, error)

func (f Factory) build(spec limiters.Spec, clock limiters.Clock) (limiters.Limiter, error) {
	if f == nil {
		return spec.New(clock)
	}
	return f(spec, clock)
}

// run is one execution of a guarantee: the factory to build limiters with, the failures the
// checkers found, and the golden text.
type run struct {
	ctx      context.Context
	factory  Factory
	failures []string
	body     strings.Builder
}

// failf records a failed check. The message names the bound and where it broke.
func (r *run) failf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// check records err as a failure when it is not nil.
func (r *run) check(err error) {
	if err != nil {
		r.failures = append(r.failures, err.Error())
	}
}

// linef appends one line to the golden text.
func (r *run) linef(format string, args ...any) {
	fmt.Fprintf(&r.body, format, args...)
	r.body.WriteByte('\n')
}

// spec parses one limiter spec of the catalogue (a bug in this package if it fails).
func mustSpec(text string) limiters.Spec {
	s, err := limiters.ParseSpec(text)
	if err != nil {
		panic(fmt.Sprintf("golden: spec %q: %v", text, err))
	}
	return s
}

// lane is a lane for the stack text whose limiters the run's factory builds, through
// engine.LaneSpec.Build.
func (r *run) lane(stack string) engine.LaneSpec {
	specs, err := engine.ParseStack(stack)
	if err != nil {
		panic(fmt.Sprintf("golden: stack %q: %v", stack, err))
	}
	return r.wrap(engine.LaneSpec{Stack: specs})
}

// wrap makes lane's limiters come from the run's factory.
func (r *run) wrap(lane engine.LaneSpec) engine.LaneSpec {
	factory := r.factory
	specs := lane.Stack
	lane.Build = func(clock limiters.Clock) ([]limiters.Limiter, error) {
		out := make([]limiters.Limiter, len(specs))
		for i, s := range specs {
			l, err := factory.build(s, clock)
			if err != nil {
				return nil, err
			}
			out[i] = l
		}
		return out, nil
	}
	return lane
}

// simulate runs sc with every decision traced.
func (r *run) simulate(sc *engine.Scenario) (*engine.Results, error) {
	sc.Trace = true
	for i := range sc.Lanes {
		if sc.Lanes[i].Build == nil {
			sc.Lanes[i] = r.wrap(sc.Lanes[i])
		}
	}
	res, err := engine.Run(r.ctx, sc, nil)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	for _, l := range res.Lanes {
		if l.Truncated {
			return nil, fmt.Errorf("scenario %s: lane %s: trace truncated; the scenario is too long for a golden file", sc.Name, l.Name)
		}
	}
	return res, nil
}

// Admission is one admitted request: its time and permits.
type Admission struct {
	At      time.Duration
	Permits int
}

// Admissions lists the admitted requests of a trace, in time order.
func Admissions(trace []engine.Record) []Admission {
	var out []Admission
	for _, rec := range trace {
		if rec.Outcome == engine.OutcomeAdmitted {
			out = append(out, Admission{rec.At, rec.Permits})
		}
	}
	return out
}

// ms formats a duration the way specs write it ("50ms", "1.000000001s", "1h").
func ms(d time.Duration) string { return limiters.FormatDuration(d) }

// laneOf returns the result of the lane whose stack is exactly the given kinds, in order: a
// built-in scenario's lanes are found by what they are, not by their position.
func laneOf(res *engine.Results, kinds ...limiters.Kind) (engine.LaneResult, error) {
	for _, l := range res.Lanes {
		if len(l.Stack) != len(kinds) {
			continue
		}
		match := true
		for i, text := range l.Stack {
			if s, err := limiters.ParseSpec(text); err != nil || s.Kind() != kinds[i] {
				match = false
				break
			}
		}
		if match {
			return l, nil
		}
	}
	return engine.LaneResult{}, fmt.Errorf("scenario %s has no lane %v", res.Scenario, kinds)
}

// specOf parses a spec of the catalogue that must be of kind type T.
func specOf[T limiters.Spec](text string) T {
	s, ok := mustSpec(text).(T)
	if !ok {
		panic(fmt.Sprintf("golden: spec %q is a %T", text, mustSpec(text)))
	}
	return s
}

// kindsOf is the kinds of specs, in order, each once: a guarantee's Algorithms when it runs
// one limiter of each kind.
func kindsOf(specs []string) []limiters.Kind {
	var kinds []limiters.Kind
	for _, text := range specs {
		if k := mustSpec(text).Kind(); !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}
