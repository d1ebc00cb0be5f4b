package engine

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// SplitSpec is spec divided among n instances for the split coordination, so that n
// instances given an even share of the traffic admit exactly what one limiter of spec would.
// Every count is divided exactly, never rounded: a rounded share would change the global limit
// (limit=10 over 3 instances is 9 or 12, not 10), so a count that n does not divide is refused.
//
//	token-bucket    capacity / n, rate / n
//	leaky-bucket    rate / n
//	fixed-window    limit / n (the same window)
//	sliding-window  limit / n (the same window and slots)
//	flash5-fixed    limit / n
//	x-time-rate     burst / n, rate / n
//	nginx           burst / n, rate / n (its rate must stay r/s or r/m: the count must divide)
//	keys(…):SPEC    SPEC split, the same table
//
// A rate P/W divides as P/n per W when n divides P, else as P per n·W (the same rate, exactly):
// 10/1s over 3 instances is 10/3s each. The other kinds cannot be split: guava's, warm-up's and
// sentinel's curves and uber's slack are not linear in the rate, and a concurrency limit's
// in-flight count is no share of time.
func SplitSpec(spec limiters.Spec, n int) (limiters.Spec, error) {
	if n == 1 {
		return spec, nil
	}
	divide := func(field string, v int) (int, error) {
		if v%n != 0 {
			return 0, fmt.Errorf("split: %s: %s=%d is not a multiple of %d instances: each share would round and change the global limit", spec, field, v, n)
		}
		return v / n, nil
	}
	rate := func(r limiters.Rate) (limiters.Rate, error) {
		if r.Permits%n == 0 {
			return limiters.Rate{Permits: r.Permits / n, Window: r.Window}, nil
		}
		if r.Window > MaxTime/time.Duration(n) {
			return r, fmt.Errorf("split: %s: rate=%s over %d instances needs a window past %s", spec, r, n, maxTimeText)
		}
		return limiters.Rate{Permits: r.Permits, Window: r.Window * time.Duration(n)}, nil
	}
	var err error
	switch s := spec.(type) {
	case limiters.TokenBucketSpec:
		if s.Capacity, err = divide("capacity", s.Capacity); err != nil {
			return nil, err
		}
		s.Rate, err = rate(s.Rate)
		return s, err
	case limiters.LeakyBucketSpec:
		s.Rate, err = rate(s.Rate)
		return s, err
	case limiters.FixedWindowSpec:
		s.Limit, err = divide("limit", s.Limit)
		return s, err
	case limiters.SlidingWindowSpec:
		s.Limit, err = divide("limit", s.Limit)
		return s, err
	case limiters.Flash5FixedSpec:
		s.Limit, err = divide("limit", s.Limit)
		return s, err
	case limiters.XTimeRateSpec:
		if s.Burst, err = divide("burst", s.Burst); err != nil {
			return nil, err
		}
		s.Rate, err = rate(s.Rate)
		return s, err
	case limiters.NginxSpec:
		if s.Burst, err = divide("burst", s.Burst); err != nil {
			return nil, err
		}
		s.Rate.Permits, err = divide("rate", s.Rate.Permits)
		return s, err
	case limiters.KeyedSpec:
		inner, err := SplitSpec(s.Spec, n)
		if err != nil {
			return nil, err
		}
		s.Spec = inner
		return s, nil
	}
	return nil, fmt.Errorf("split: %s cannot be divided among instances (split takes token-bucket, leaky-bucket, fixed-window, sliding-window, flash5-fixed, x-time-rate, nginx)", spec.Kind())
}
