package golden

import (
	"math/big"
	"sync"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// resilience4jNoReservations is resilience4j refusing every caller that would have to wait,
// whatever its timeout: a fixed window aligned to creation.
type resilience4jNoReservations struct{ *peers.Resilience4j }

func (l resilience4jNoReservations) ReserveAt(now time.Duration, n int, _ time.Duration) limiters.Reservation {
	return l.Resilience4j.ReserveAt(now, n, 0)
}

// twoCounterBroken is the two-counter sliding estimate gone wrong in one of two ways: it
// admits while the estimate before the request is below the limit (checkBefore), or it
// forgets the previous period (a fixed window anchored at the first request).
type twoCounterBroken struct {
	base
	cfg         peers.TwoCounterSpec
	checkBefore bool
	forget      bool

	mu           sync.Mutex
	anchored     bool
	first, index int64
	prev, curr   int64
}

func newTwoCounterBroken(s peers.TwoCounterSpec, c limiters.Clock, checkBefore, forget bool) *twoCounterBroken {
	b := &twoCounterBroken{base: base{clock: c, spec: s}, cfg: s, checkBefore: checkBefore, forget: forget}
	b.self = b
	return b
}

// estimate is prev·(period − elapsed)/period + curr at now, after moving to now's period.
func (b *twoCounterBroken) estimate(now time.Duration) *big.Rat {
	P := int64(b.cfg.Window)
	rel := max(int64(now)-b.first, 0)
	index, elapsed := rel/P, rel%P
	switch {
	case index == b.index+1:
		b.prev, b.curr, b.index = b.curr, 0, index
	case index > b.index+1:
		b.prev, b.curr, b.index = 0, 0, index
	case index < b.index:
		elapsed = 0
	}
	prev := b.prev
	if b.forget {
		prev = 0
	}
	e := new(big.Rat).SetFrac64(prev*(P-elapsed), P)
	return e.Add(e, big.NewRat(b.curr, 1))
}

func (b *twoCounterBroken) AcquireAt(now time.Duration, n int) limiters.Decision {
	if n <= 0 {
		return limiters.Invalid
	}
	if n > b.cfg.Limit {
		return limiters.Never
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.anchored {
		b.anchored, b.first = true, int64(now)
	}
	e := b.estimate(now)
	limit := big.NewRat(int64(b.cfg.Limit), 1)
	if b.checkBefore {
		if e.Cmp(limit) >= 0 {
			return limiters.Rejected
		}
	} else if e.Add(e, big.NewRat(int64(n), 1)).Cmp(limit) > 0 {
		return limiters.Rejected
	}
	b.curr += int64(n)
	return limiters.Admitted
}

func (b *twoCounterBroken) AvailableAt(time.Duration) int { return 0 }
func (b *twoCounterBroken) MaxPermits() int               { return b.cfg.Limit }
func (b *twoCounterBroken) Snapshot(now time.Duration) limiters.State {
	return limiters.State{Kind: b.spec.Kind(), At: now, MaxPermits: b.cfg.Limit}
}

// The broken variants of the flash5-token, resilience4j and two-counter guarantees, added to
// brokenCases from a file of their own.
func init() {
	brokenCases = append(brokenCases, []brokenCase{
		{"Flash5's token bucket with an exact refill (ratelab's token bucket in its place)", only(func(s peers.Flash5TokenSpec, c limiters.Clock) (limiters.Limiter, error) {
			return limiters.NewTokenBucket(s.Limit, limiters.Rate{Permits: s.Limit, Window: s.Window}, c)
		}), map[string][]string{
			"flash5-token-low-rate": {
				"flash5-token:limit=100,window=1m: 100 at 0, then 100 admitted in (0s, 1m]",
				"the bound is exactly 100 at 0, then 60, 1s apart (⌊100·1000/60000⌋ → 1 milli-token(s) per ms: 1 per second)",
				"flash5-token:limit=1,window=1h: 1 at 0, then 1 admitted in (0s, 1h]",
				"flash5-token:limit=100,window=1s: reports no Quota",
			},
		}},
		{"resilience4j with its cycles aligned to the clock's origin, not its creation", only(func(s peers.Resilience4jSpec, c limiters.Clock) (limiters.Limiter, error) {
			return peers.NewResilience4j(s, fixedClock(0))
		}), map[string][]string{
			"resilience4j-cycles": {"resilience4j:limit=50,period=500ms,timeout=0s made at 200ms: 50 of 51 admitted at 699ms and 0 of 51 at 700ms: the bound is exactly 50 and 50"},
		}},
		{"resilience4j that never reserves (refuses every caller that would wait)", only(func(s peers.Resilience4jSpec, c limiters.Clock) (limiters.Limiter, error) {
			l, err := peers.NewResilience4j(s, c)
			return resilience4jNoReservations{l}, err
		}), map[string][]string{
			"resilience4j-cycles": {
				"resilience4j:limit=50,period=500ms: 600 callers at 0 waiting up to 5s: admitted with waits [50×0s], 550 refused, permissions 0",
				"resilience4j:limit=50,period=500ms,mode=wait: 1000 callers at 0: waits [50×0s], 950 refused",
			},
		}},
		{"a two-counter that checks the estimate before counting the request (estimate < limit)", only(func(s peers.TwoCounterSpec, c limiters.Clock) (limiters.Limiter, error) {
			return newTwoCounterBroken(s, c, true, false), nil
		}), map[string][]string{
			"two-counter-worst-window": {
				"two-counter:limit=100,window=1s: L=1s: 100 admitted at 2.999999999s and 100 at 3.999999998s, 200 in the worst interval",
				"the bound is exactly 100, 99 and 199",
			},
		}},
		{"a two-counter that forgets the previous period (a fixed window anchored at the first request)", only(func(s peers.TwoCounterSpec, c limiters.Clock) (limiters.Limiter, error) {
			return newTwoCounterBroken(s, c, false, true), nil
		}), map[string][]string{
			"two-counter-worst-window": {
				"two-counter:limit=100,window=1s: L=900ms: 100 admitted at 2.999999999s and 100 at 3.899999998s, 200 in the worst interval",
				"two-counter:limit=100,window=1s: after 100 at 2.999999999s, 100 admitted at 3.5s: the bound is exactly 50",
			},
		}},
	}...)
}
