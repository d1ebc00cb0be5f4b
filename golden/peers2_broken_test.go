package golden

import (
	"github.com/ratelab/ratelab/limiters"
)

// The broken variants of the flash5-token, resilience4j and two-counter guarantees, added to
// brokenCases from a file of their own.
func init() {
	brokenCases = append(brokenCases, []struct {
		name       string
		factory    Factory
		guarantees map[string][]string
	}{
		{"Flash5's token bucket with an exact refill (ratelab's token bucket in its place)", only(func(s limiters.Flash5TokenSpec, c limiters.Clock) (limiters.Limiter, error) {
			return limiters.NewTokenBucket(s.Limit, limiters.Rate{Permits: s.Limit, Window: s.Window}, c)
		}), map[string][]string{
			"flash5-token-low-rate": {
				"flash5-token:limit=100,window=1m: 100 at 0, then 100 admitted in (0s, 1m]",
				"the bound is exactly 100 at 0, then 60, 1s apart (⌊100·1000/60000⌋ → 1 milli-token(s) per ms: 1 per second)",
				"flash5-token:limit=1,window=1h: 1 at 0, then 1 admitted in (0s, 1h]",
				"flash5-token:limit=100,window=1s: reports no Quota",
			},
		}},
	}...)
}
