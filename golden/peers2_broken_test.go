package golden

import (
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// resilience4jNoReservations is resilience4j refusing every caller that would have to wait,
// whatever its timeout: a fixed window aligned to creation.
type resilience4jNoReservations struct{ *limiters.Resilience4j }

func (l resilience4jNoReservations) ReserveAt(now time.Duration, n int, _ time.Duration) limiters.Reservation {
	return l.Resilience4j.ReserveAt(now, n, 0)
}

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
		{"resilience4j with its cycles aligned to the clock's origin, not its creation", only(func(s limiters.Resilience4jSpec, c limiters.Clock) (limiters.Limiter, error) {
			return limiters.NewResilience4j(s, fixedClock(0))
		}), map[string][]string{
			"resilience4j-cycles": {"resilience4j:limit=50,period=500ms,timeout=0s made at 200ms: 50 of 51 admitted at 699ms and 0 of 51 at 700ms: the bound is exactly 50 and 50"},
		}},
		{"resilience4j that never reserves (refuses every caller that would wait)", only(func(s limiters.Resilience4jSpec, c limiters.Clock) (limiters.Limiter, error) {
			l, err := limiters.NewResilience4j(s, c)
			return resilience4jNoReservations{l}, err
		}), map[string][]string{
			"resilience4j-cycles": {
				"resilience4j:limit=50,period=500ms: 600 callers at 0 waiting up to 5s: admitted with waits [50×0s], 550 refused, permissions 0",
				"resilience4j:limit=50,period=500ms,mode=wait: 1000 callers at 0: waits [50×0s], 950 refused",
			},
		}},
	}...)
}
