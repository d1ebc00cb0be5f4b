package golden

import (
	"sync"

	"github.com/ratelab/ratelab/limiters"
)

// sharedWithinLane is a fleet whose instances (and store) forgot to keep their own state: every
// limiter of a spec built on one lane's clock is one and the same. Lanes, which have clocks of
// their own, still get their own limiters, so each run decides the same.
func sharedWithinLane() Factory {
	type key struct {
		spec  limiters.Spec
		clock limiters.Clock
	}
	var mu sync.Mutex
	built := map[key]limiters.Limiter{}
	return func(s limiters.Spec, c limiters.Clock) (limiters.Limiter, error) {
		mu.Lock()
		defer mu.Unlock()
		if l, ok := built[key{s, c}]; ok {
			return l, nil
		}
		l, err := s.New(c)
		built[key{s, c}] = l
		return l, err
	}
}

// undivided is a split that forgot to divide: every instance gets three times its share back,
// the full limit of a 3-instance fleet.
func undivided() Factory {
	return func(s limiters.Spec, c limiters.Clock) (limiters.Limiter, error) {
		switch t := s.(type) {
		case limiters.TokenBucketSpec:
			t.Capacity *= 3
			if t.Rate.Window%3 == 0 {
				t.Rate.Window /= 3
			} else {
				t.Rate.Permits *= 3
			}
			return t.New(c)
		case limiters.FixedWindowSpec:
			t.Limit *= 3
			return t.New(c)
		}
		return s.New(c)
	}
}

// The fleet guarantees' checkers fail for instances that share one limiter (a "local" fleet
// that is secretly one process, a store that forgets which window a caller named, a fallback
// that is the store itself), and for a split that forgot to divide.
func init() {
	brokenCases = append(brokenCases,
		struct {
			name       string
			factory    Factory
			guarantees map[string][]string
		}{"one limiter shared by every instance and the store", sharedWithinLane(), map[string][]string{
			"fleet-local": {"token-bucket:capacity=10,rate=10/1h: 3 local instances admitted 10 of 100 at once: the bound is exactly N × L = 30",
				"token-bucket:capacity=10,rate=10/1h: instance 0 admitted 4: each independent limiter admits exactly L = 10"},
			"fleet-split": {"token-bucket:capacity=30,rate=30/1h: spread evenly the split fleet admitted 10: exactly L = 30"},
			"fleet-async": {"hits [{15 15} {5 5}]: admitted [10 0] per phase: the model gives exactly [20 0]",
				"hits [{4 3} {5 5} {5 5}]: admitted [7 0 0] per phase: the model gives exactly [7 6 0]"},
			"fleet-clock-skew":     {"offset 100ms, a burst of 40 at 900ms: admitted 11: the bound is exactly 20"},
			"fleet-failure-policy": {"local: admitted 0 of 50 during the outage: the policy's bound is exactly 30"},
		}},
		struct {
			name       string
			factory    Factory
			guarantees map[string][]string
		}{"a split that forgot to divide", undivided(), map[string][]string{
			"fleet-split": {
				"token-bucket:capacity=30,rate=30/1h: one key on one instance: admitted 30, refused 70: the bound is exactly L/N = 10 admitted, 90 refused, with the fleet below L = 30",
				"fixed-window:limit=30,window=1h: spread evenly the split fleet admitted 90: exactly L = 30",
			},
		}},
	)
}
