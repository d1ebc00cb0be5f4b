package limiters

import (
	"strings"
	"time"
)

// Stored is a spec whose whole state a shared store can keep under one key, updated by one
// atomic script per decision, because its state is one of the two forms a store script knows
// (StoreForm): a GCRA's theoretical arrival time, or a fixed window's number and count.
// redislimit builds a Redis-held limiter for any Stored spec and refuses every other; the
// CLI's redis/ stages and run --redis ask the same question, so the answer is stated here,
// once per kind:
//
//	token-bucket  GCRA, T = the rate's interval, τ = capacity × T
//	leaky-bucket  GCRA, T = the rate's interval, τ = T
//	fixed-window  a window of limit per window
//
// The other kinds are not: a sliding window's slots, a warm-up's ramp, a bulkhead's in-flight
// count (which needs a release) and the adaptive limits' rules are state a one-key script
// does not hold.
type Stored interface {
	Spec
	// StoreForm is the state's form and its parameters.
	StoreForm() StoreForm
}

// StoreForm is how a store holds a Stored spec's state: GCRA (Interval and Tolerance) or,
// when GCRA is false, a fixed window (Limit per Window). Decided from it, a store's limiter
// makes the in-process limiter's decisions, decision for decision.
type StoreForm struct {
	GCRA bool
	// Interval is the GCRA's emission interval T, Tolerance its τ: a request of n permits
	// passes while the theoretical arrival time, advanced by n·T, is at most τ after now.
	Interval, Tolerance time.Duration
	// Limit is the fixed window's permits per Window.
	Limit  int
	Window time.Duration
}

var (
	_ Stored = TokenBucketSpec{}
	_ Stored = LeakyBucketSpec{}
	_ Stored = FixedWindowSpec{}
)

// StoreForm is a GCRA of the rate's interval and capacity intervals of tolerance.
func (s TokenBucketSpec) StoreForm() StoreForm {
	t := s.Rate.Interval()
	return StoreForm{GCRA: true, Interval: t, Tolerance: time.Duration(s.Capacity) * t}
}

// StoreForm is a GCRA of the rate's interval and one interval of tolerance.
func (s LeakyBucketSpec) StoreForm() StoreForm {
	t := s.Rate.Interval()
	return StoreForm{GCRA: true, Interval: t, Tolerance: t}
}

// StoreForm is a window of limit per window.
func (s FixedWindowSpec) StoreForm() StoreForm {
	return StoreForm{Limit: s.Limit, Window: s.Window}
}

// StoredKinds names the registered kinds whose specs are Stored, in registry order, as a
// sentence's list: "token-bucket, leaky-bucket and fixed-window".
func StoredKinds() string {
	var names []string
	for _, info := range kinds {
		if spec, err := ParseSpec(info.Example); err == nil {
			if _, ok := spec.(Stored); ok {
				names = append(names, string(info.Kind))
			}
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
