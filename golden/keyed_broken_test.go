package golden

import (
	"sync"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// sharedAcrossKeys is a keyed table that forgot to key: every key's limiter is one and the
// same, built once per spec.
func sharedAcrossKeys() Factory {
	var mu sync.Mutex
	built := map[limiters.Spec]limiters.Limiter{}
	return func(s limiters.Spec, c limiters.Clock) (limiters.Limiter, error) {
		mu.Lock()
		defer mu.Unlock()
		if l, ok := built[s]; ok {
			return l, nil
		}
		l, err := s.New(c)
		built[s] = l
		return l, err
	}
}

// The keyed guarantees' checkers fail for a table whose keys share one limiter, and for
// nginx's per-key behaviour built as a textbook leaky bucket (the first request of a new key
// not free; not Fresh, so never evicted as fresh).
func init() {
	brokenCases = append(brokenCases,
		struct {
			name       string
			factory    Factory
			guarantees map[string][]string
		}{"one limiter shared by every key", sharedAcrossKeys(), map[string][]string{
			"keyed-per-key-bound": {"token-bucket:capacity=3,rate=10/1s: client-0, saturating, admitted at most"},
			"keyed-lru-attacker":  {"token-bucket:capacity=3,rate=1/1h, lru, 101 keys through 100: admitted 3, evicted 10000, full 0: the formula is exactly 10100, 10000, 0"},
			"keyed-peers":         {"keys(max=2,evict=lru):nginx:rate=10r/s,burst=5,delay=nodelay: b sent 7 at 0s and got 0 admitted: the bound is exactly 6"},
		}},
		struct {
			name       string
			factory    Factory
			guarantees map[string][]string
		}{"nginx per key as a textbook leaky bucket", only(func(s peers.NginxSpec, c limiters.Clock) (limiters.Limiter, error) {
			return newTextbookNginx(s, c, true)
		}), map[string][]string{
			"keyed-peers": {
				"keys(max=2,evict=lru):nginx:rate=10r/s,burst=5,delay=nodelay: a sent 7 at 0s and got 5 admitted: the bound is exactly 6",
				"keys(max=2,evict=fresh):nginx:rate=10r/s,burst=5,delay=nodelay: c sent 7 at 600ms and got 0 admitted: the bound is exactly 6",
			},
			"keyed-per-key-bound": {"nginx:rate=10r/s,burst=5,delay=nodelay: client-0, saturating, admitted at most 14 in 1s: the bound 16 is reached exactly"},
		}},
	)
}
