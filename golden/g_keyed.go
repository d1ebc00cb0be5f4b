package golden

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// factorySpec is a spec whose New goes through the run's factory, so that a keyed table's
// per-key limiters are the ones the run is checking (a broken variant's, in broken_test.go).
type factorySpec struct {
	limiters.Spec
	factory Factory
}

func (s factorySpec) New(c limiters.Clock) (limiters.Limiter, error) {
	return s.factory.build(s.Spec, c)
}

// keyedTable is a keyed table of spec's limiters, built by the run's factory.
func (r *run) keyedTable(spec string, config limiters.KeyedConfig) (*limiters.KeyedLimiter, error) {
	return limiters.NewKeyed(factorySpec{mustSpec(spec), r.factory}, config, fixedClock(0))
}

// maxInWindow is the most of the sorted times in any half-open interval of length L.
func maxInWindow(times []time.Duration, L time.Duration) int {
	best, lo := 0, 0
	for hi, t := range times {
		for times[lo] <= t-L {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

var keyedPerKeyBound = &Guarantee{
	ID:         "keyed-per-key-bound",
	Algorithms: []limiters.Kind{limiters.KindTokenBucket, limiters.KindFixedWindow, peers.KindNginx, peers.KindFlash5Fixed},
	Claim: "a keyed table gives every key its own limiter: each key's admissions stay within the kind's bound for one limiter, " +
		"whatever the other keys do, and a saturating key reaches it",
	Scenario: "20 keys in a table of 32 (lru): key i > 0 asks every 1+i%5 ms from i ms to 3s; key 0 asks 6 at once at " +
		"990.9ms, then every 1ms from 991ms; all through one table, for " +
		"token-bucket:capacity=3,rate=10/1s, fixed-window:limit=10,window=1s, nginx:rate=10r/s,burst=5,delay=nodelay, " +
		"flash5-fixed:limit=10,window=1s",
	Bound:   "for every key, the most admitted in any 1s ≤ the spec's AdmissionBound(1s) (12, 20, 16, 20); key 0 reaches it exactly",
	Checker: "each key's admission times from direct AcquireKeyAt calls, slid over every 1s interval, against AdmissionBound",
	run: func(r *run) error {
		const keys, horizon = 20, 3 * sec
		type request struct {
			at  time.Duration
			key int
		}
		var traffic []request
		// Key 0 is the adversary that reaches each bound: 6 at once at 990.9ms (burst + 1 for
		// nginx, a window's end for the window kinds), then one every 1ms from 991ms.
		for range 6 {
			traffic = append(traffic, request{990*msec + 900*time.Microsecond, 0})
		}
		for at := 991 * msec; at < horizon; at += msec {
			traffic = append(traffic, request{at, 0})
		}
		for i := 1; i < keys; i++ {
			for at := time.Duration(i) * msec; at < horizon; at += time.Duration(1+i%5) * msec {
				traffic = append(traffic, request{at, i})
			}
		}
		slices.SortStableFunc(traffic, func(a, b request) int { return int(a.at - b.at) })
		r.linef("%-42s %6s %10s %10s %10s", "spec (20 keys, one table)", "bound", "max (key)", "min (key)", "admitted")
		for _, text := range []string{"token-bucket:capacity=3,rate=10/1s", "fixed-window:limit=10,window=1s",
			"nginx:rate=10r/s,burst=5,delay=nodelay", "flash5-fixed:limit=10,window=1s"} {
			table, err := r.keyedTable(text, limiters.KeyedConfig{MaxKeys: 32})
			if err != nil {
				return err
			}
			admitted := make([][]time.Duration, keys)
			names := make([]string, keys)
			for i := range names {
				names[i] = "client-" + strconv.Itoa(i)
			}
			for _, q := range traffic {
				if table.AcquireKeyAt(q.at, names[q.key], 1) == limiters.Admitted {
					admitted[q.key] = append(admitted[q.key], q.at)
				}
			}
			bound, _ := limiters.AdmissionBound(mustSpec(text), sec)
			most, least, mostKey, leastKey, total := -1, -1, 0, 0, 0
			for i, times := range admitted {
				m := maxInWindow(times, sec)
				total += len(times)
				if int64(m) > bound {
					r.failf("%s: client-%d admitted %d in one 1s interval: the bound is %d per key", text, i, m, bound)
				}
				if m > most {
					most, mostKey = m, i
				}
				if least < 0 || m < least {
					least, leastKey = m, i
				}
			}
			if m := maxInWindow(admitted[0], sec); int64(m) != bound {
				r.failf("%s: client-0, saturating, admitted at most %d in 1s: the bound %d is reached exactly", text, m, bound)
			}
			r.linef("%-42s %6d %10s %10s %10d", text, bound, fmt.Sprintf("%d (%d)", most, mostKey), fmt.Sprintf("%d (%d)", least, leastKey), total)
		}
		return nil
	},
}

var keyedLRUAttacker = &Guarantee{
	ID:         "keyed-lru-attacker",
	Algorithms: []limiters.Kind{limiters.KindTokenBucket, limiters.KindFixedWindow, peers.KindNginx, peers.KindFlash5Fixed},
	Claim: "an attacker cycling through k+1 keys defeats an LRU table of k: each key was evicted k requests before it returns, " +
		"so every request is a new key's first and is admitted; with k keys it gets the per-key limit, and a fresh table " +
		"refuses the key it has no room for instead of forgetting one",
	Scenario: "10,100 requests at one instant, cycling through m keys, each asking 1 permit, through keys(max=100) of " +
		"token-bucket:capacity=3,rate=1/1h, fixed-window:limit=3,window=1h, nginx:rate=1r/m,burst=2,delay=nodelay, " +
		"flash5-fixed:limit=3,window=1h: m = 101 with evict=lru, m = 100 with evict=lru, m = 101 with evict=fresh",
	Bound: "lru, m = k+1 = 101: exactly 10,100 admitted (every request a new key's first, up to the first burst of 3 ≥ 1), " +
		"10,000 evictions; m = k = 100: exactly 100 × 3 = 300; fresh, m = 101: exactly 100 × 3 = 300, and the 101st key's " +
		"100 requests refused as full",
	Checker: "admitted counts and the table's eviction and full counts from direct AcquireKeyAt calls, against the formula",
	run: func(r *run) error {
		const requests, k = 10_100, 100
		r.linef("%-42s %6s %4s %10s %9s %6s", "spec", "evict", "m", "admitted", "evicted", "full")
		for _, text := range []string{"token-bucket:capacity=3,rate=1/1h", "fixed-window:limit=3,window=1h",
			"nginx:rate=1r/m,burst=2,delay=nodelay", "flash5-fixed:limit=3,window=1h"} {
			first := mustSpec(text).InitialPermits() // 3 for each
			for _, c := range []struct {
				evict           limiters.Evict
				m               int
				admitted        int
				evicted, refuse uint64
			}{
				{limiters.EvictLRU, k + 1, requests, requests - k, 0},
				{limiters.EvictLRU, k, k * first, 0, 0},
				{limiters.EvictFresh, k + 1, k * first, 0, requests / (k + 1)},
			} {
				table, err := r.keyedTable(text, limiters.KeyedConfig{MaxKeys: k, Evict: c.evict})
				if err != nil {
					return err
				}
				names := make([]string, c.m)
				for i := range names {
					names[i] = "attacker-" + strconv.Itoa(i)
				}
				admitted := 0
				for i := range requests {
					if table.AcquireKeyAt(0, names[i%c.m], 1) == limiters.Admitted {
						admitted++
					}
				}
				st := table.Stats()
				if admitted != c.admitted || st.Evicted != c.evicted || st.Full != c.refuse {
					r.failf("%s, %s, %d keys through %d: admitted %d, evicted %d, full %d: the formula is exactly %d, %d, %d",
						text, c.evict, c.m, k, admitted, st.Evicted, st.Full, c.admitted, c.evicted, c.refuse)
				}
				r.linef("%-42s %6s %4d %10d %9d %6d", text, c.evict, c.m, admitted, st.Evicted, st.Full)
			}
		}
		return nil
	},
}

var keyedPeers = &Guarantee{
	ID:         "keyed-peers",
	Algorithms: []limiters.Kind{peers.KindNginx, peers.KindFlash5Fixed},
	Claim: "NGINX's limit_req_zone and Flash5's guard.limit(\"ip\", …) are per key, and work through the same wrapper: each " +
		"key gets the product's own burst; LRU forgets a busy key as NGINX does when its zone is full; fresh eviction waits " +
		"until a key has forgotten everything (NGINX: a whole request of decay below zero; Flash5: its window is over)",
	Scenario: "keys(max=2) of nginx:rate=10r/s,burst=5,delay=nodelay and flash5-fixed:limit=3,window=1s: clients a, b, c " +
		"send 7 (nginx) or 4 (flash5) each at 0, then a again at 0; with evict=fresh, c again at 599ms and 600ms (nginx) " +
		"or 999ms and 1s (flash5)",
	Bound: "nginx: 6 each at 0 (burst + 1: a new node's first request is free); lru: c evicts a, and a comes back with 6 " +
		"again; fresh: c refused at 0 and at 599ms (a's excess 5000 − 10·599 + 1000 > 0), 6 at 600ms; flash5: 3 each; " +
		"lru: a 3 again; fresh: c refused at 999ms, 3 at 1s",
	Checker: "admitted counts from direct AcquireKeyAt calls at each instant, against the bound",
	run: func(r *run) error {
		burst := func(table *limiters.KeyedLimiter, at time.Duration, key string, n int) int {
			admitted := 0
			for range n {
				if table.AcquireKeyAt(at, key, 1) == limiters.Admitted {
					admitted++
				}
			}
			return admitted
		}
		for _, c := range []struct {
			spec        string
			n, each     int
			late, fresh time.Duration // c's refused and admitted times under fresh eviction
		}{
			{"nginx:rate=10r/s,burst=5,delay=nodelay", 7, 6, 599 * msec, 600 * msec},
			{"flash5-fixed:limit=3,window=1s", 4, 3, 999 * msec, sec},
		} {
			for _, evict := range []limiters.Evict{limiters.EvictLRU, limiters.EvictFresh} {
				table, err := r.keyedTable(c.spec, limiters.KeyedConfig{MaxKeys: 2, Evict: evict})
				if err != nil {
					return err
				}
				type step struct {
					at   time.Duration
					key  string
					want int
				}
				steps := []step{{0, "a", c.each}, {0, "b", c.each}, {0, "c", c.each}, {0, "a", c.each}}
				if evict == limiters.EvictFresh {
					steps = []step{{0, "a", c.each}, {0, "b", c.each}, {0, "c", 0}, {0, "a", 0}, {c.late, "c", 0}, {c.fresh, "c", c.each}}
				}
				label := fmt.Sprintf("keys(max=2,evict=%s):%s", evict, c.spec)
				line := label + ":"
				for _, s := range steps {
					got := burst(table, s.at, s.key, c.n)
					if got != s.want {
						r.failf("%s: %s sent %d at %s and got %d admitted: the bound is exactly %d", label, s.key, c.n, limiters.FormatDuration(s.at), got, s.want)
					}
					line += fmt.Sprintf(" %s@%s %d/%d", s.key, limiters.FormatDuration(s.at), got, c.n)
				}
				r.linef("%s", line)
			}
		}
		return nil
	},
}
