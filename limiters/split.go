package limiters

import (
	"fmt"
	"strings"
	"time"
)

// Splittable is a spec that can be divided among n instances so that n instances, each given
// an even share of the traffic, admit exactly what one limiter of the spec would: the fleet's
// split coordination (engine.SplitSpec) asks each spec for its share. Every count is divided
// exactly, never rounded: a rounded share would change the global limit (limit=10 over 3
// instances is 9 or 12, not 10), so a count that n does not divide is refused (SplitCount).
//
//	token-bucket    capacity / n, rate / n
//	leaky-bucket    rate / n
//	fixed-window    limit / n (the same window)
//	sliding-window  limit / n (the same window and slots)
//	keys(…):SPEC    SPEC split, the same table
//
// and, in limiters/peers, flash5-fixed (limit / n), x-time-rate (burst / n, rate / n) and
// nginx (burst / n, rate / n: its rate must stay r/s or r/m, so the count must divide). The
// other kinds cannot be split: guava's, warm-up's and sentinel's curves and uber's slack are
// not linear in the rate, and a concurrency limit's in-flight count is no share of time.
type Splittable interface {
	Spec
	// Split is the spec's share for one of n ≥ 2 instances.
	Split(n int) (Spec, error)
}

// SplitCount is v/n for spec's field, or an error when n does not divide v: each share would
// round and change the global limit.
func SplitCount(spec Spec, field string, v, n int) (int, error) {
	if v%n != 0 {
		return 0, fmt.Errorf("split: %s: %s=%d is not a multiple of %d instances: each share would round and change the global limit", spec, field, v, n)
	}
	return v / n, nil
}

// SplitRate is r's share for one of n instances, exactly: P/n per W when n divides P, else P
// per n·W (the same rate): 10/1s over 3 instances is 10/3s each. A window past MaxSpan is
// refused.
func SplitRate(spec Spec, r Rate, n int) (Rate, error) {
	if r.Permits%n == 0 {
		return Rate{Permits: r.Permits / n, Window: r.Window}, nil
	}
	if r.Window > time.Duration(MaxSpan)/time.Duration(n) {
		return r, fmt.Errorf("split: %s: rate=%s over %d instances needs a window past 2^62ns (about 146 years)", spec, r, n)
	}
	return Rate{Permits: r.Permits, Window: r.Window * time.Duration(n)}, nil
}

var (
	_ Splittable = TokenBucketSpec{}
	_ Splittable = LeakyBucketSpec{}
	_ Splittable = FixedWindowSpec{}
	_ Splittable = SlidingWindowSpec{}
	_ Splittable = KeyedSpec{}
)

// Split is capacity / n and rate / n.
func (s TokenBucketSpec) Split(n int) (Spec, error) {
	var err error
	if s.Capacity, err = SplitCount(s, "capacity", s.Capacity, n); err != nil {
		return nil, err
	}
	s.Rate, err = SplitRate(s, s.Rate, n)
	return s, err
}

// Split is rate / n.
func (s LeakyBucketSpec) Split(n int) (Spec, error) {
	var err error
	s.Rate, err = SplitRate(s, s.Rate, n)
	return s, err
}

// Split is limit / n, the same window.
func (s FixedWindowSpec) Split(n int) (Spec, error) {
	var err error
	s.Limit, err = SplitCount(s, "limit", s.Limit, n)
	return s, err
}

// Split is limit / n, the same window and slots.
func (s SlidingWindowSpec) Split(n int) (Spec, error) {
	var err error
	s.Limit, err = SplitCount(s, "limit", s.Limit, n)
	return s, err
}

// Split is the table of the inner spec's share: the same keys, each key's limit divided.
func (s KeyedSpec) Split(n int) (Spec, error) {
	part, err := SplitSpec(s.Spec, n)
	if err != nil {
		return nil, err
	}
	s.Spec = part
	return s, nil
}

// SplitSpec is spec's share for one of n instances: spec itself for n = 1, its Split for a
// Splittable spec, else an error naming the kinds that split.
func SplitSpec(spec Spec, n int) (Spec, error) {
	if n == 1 {
		return spec, nil
	}
	if s, ok := spec.(Splittable); ok {
		return s.Split(n)
	}
	return nil, fmt.Errorf("split: %s cannot be divided among instances (split takes %s)", spec.Kind(), strings.Join(splittableKinds(), ", "))
}

// splittableKinds names the registered kinds whose specs are Splittable, in registry order.
func splittableKinds() []string {
	var names []string
	for _, info := range kinds {
		if spec, err := ParseSpec(info.Example); err == nil {
			if _, ok := spec.(Splittable); ok {
				names = append(names, string(info.Kind))
			}
		}
	}
	return names
}
