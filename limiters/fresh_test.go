package limiters

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/ratelab/ratelab/virtualclock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// freshSpecs are the kinds that can be fresh, in configurations that reach it quickly and
// exercise what makes each one different (nginx's burst and delay, the sliding window's slots).
var freshSpecs = []string{
	"token-bucket:capacity=3,rate=100/1s",
	"leaky-bucket:rate=50/1s",
	"fixed-window:limit=3,window=50ms",
	"sliding-window:limit=4,window=100ms,slots=5",
	"flash5-fixed:limit=3,window=40ms,offset=7ms",
	"nginx:rate=20r/s,burst=3",
	"nginx:rate=20r/s,burst=4,delay=nodelay",
	"x-time-rate:rate=30/1s,burst=3",
	"uber:rate=40/1s,slack=0",
}

// requestsFor draws a random future of requests: times rising by gaps from 0 to ~200ms
// (so that both fresh and stale states occur), 1 or 2 permits.
func randomGaps(rng *rand.Rand, count int) []time.Duration {
	gaps := make([]time.Duration, count)
	for i := range gaps {
		switch rng.IntN(4) {
		case 0:
			gaps[i] = 0
		case 1:
			gaps[i] = time.Duration(rng.IntN(5_000_000)) // < 5ms
		case 2:
			gaps[i] = time.Duration(rng.IntN(60_000_000))
		default:
			gaps[i] = time.Duration(rng.IntN(200_000_000))
		}
	}
	return gaps
}

// decide is what a request gets: the decision, and for a Reserver the reservation's wait for
// a caller who waits up to 50ms (uber's and nginx's waits are part of their decision).
func decide(l Limiter, now time.Duration, n int) string {
	if r, ok := l.(Reserver); ok {
		res := r.ReserveAt(now, n, 50*time.Millisecond)
		return fmt.Sprintf("%s+%s", res.Decision, res.Wait)
	}
	return l.AcquireAt(now, n).String()
}

// FreshAt is sound: whenever a limiter says it is fresh at now, it and a limiter newly built
// at now decide a random future identically. And it is not vacuous: every kind here is fresh
// in a good share of the states the random histories reach.
func TestFreshIsIndistinguishableFromNew(t *testing.T) {
	for _, text := range freshSpecs {
		t.Run(text, func(t *testing.T) {
			spec, err := ParseSpec(text)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(1, 2))
			fresh, stale := 0, 0
			for range 400 {
				clock := virtualclock.New()
				old := must(spec.New(clock))
				now := time.Duration(0)
				for _, gap := range randomGaps(rng, rng.IntN(8)) {
					now += gap
					decide(old, now, 1+rng.IntN(2))
				}
				now += randomGaps(rng, 1)[0]
				if !old.(Fresh).FreshAt(now) {
					stale++
					continue
				}
				fresh++
				require.NoError(t, clock.AdvanceTo(now))
				young := must(spec.New(clock))
				at := now
				for i, gap := range randomGaps(rng, 12) {
					at += gap
					n := 1 + rng.IntN(2)
					require.Equal(t, decide(young, at, n), decide(old, at, n), "request %d at %v (fresh at %v)", i, at, now)
				}
			}
			assert.Greater(t, fresh, 40, "fresh states are reached")
			assert.Greater(t, stale, 40, "and stale ones")
		})
	}
}

// trace is one request of a keyed property run.
type keyedRequest struct {
	at  time.Duration
	key string
	n   int
}

func randomKeyedTraffic(rng *rand.Rand, keys, count int) []keyedRequest {
	out := make([]keyedRequest, count)
	now := time.Duration(0)
	for i, gap := range randomGaps(rng, count) {
		now += gap / 2
		// A skewed population: key 0 is hot, the others come and go.
		k := 0
		if rng.IntN(3) != 0 {
			k = rng.IntN(keys)
		}
		out[i] = keyedRequest{at: now, key: "k" + strconv.Itoa(k), n: 1 + rng.IntN(2)}
	}
	return out
}

// The fresh policy never changes a decision: a table of a few keys evicting only fresh ones
// decides every request as a table that never evicts, up to the first request it refuses as
// Full (which it reports). LRU on the same traffic does change decisions (the test can fail),
// and so does the fresh policy fed a wrong notion of fresh (brokenFresh).
func TestKeyedFreshEvictionNeverChangesADecision(t *testing.T) {
	for _, text := range freshSpecs {
		t.Run(text, func(t *testing.T) {
			spec, err := ParseSpec(text)
			require.NoError(t, err)
			rng := rand.New(rand.NewPCG(3, 4))
			var evictions, cleanRuns, lruDiffers int
			for run := range 150 {
				traffic := randomKeyedTraffic(rng, 3+rng.IntN(10), 200)
				maxKeys := 1 + rng.IntN(5)
				clock := virtualclock.New()
				unbounded := must(NewKeyed(spec, KeyedConfig{MaxKeys: 1 << 20}, clock))
				bounded := must(NewKeyed(spec, KeyedConfig{MaxKeys: maxKeys, Evict: EvictFresh}, clock))
				lru := must(NewKeyed(spec, KeyedConfig{MaxKeys: maxKeys, Evict: EvictLRU}, clock))
				full, differs := false, false
				for i, r := range traffic {
					require.NoError(t, clock.AdvanceTo(r.at))
					want := keyedDecide(unbounded, r)
					if lruGot, _ := keyedDecideOutcome(lru, r); lruGot != want {
						differs = true
					}
					if full {
						continue // the bounded table lacks what its refused request would have taken
					}
					got, outcome := keyedDecideOutcome(bounded, r)
					if outcome == KeyFull {
						full = true
						continue
					}
					require.Equal(t, want, got, "run %d, request %d (%v %s n=%d), max %d keys", run, i, r.at, r.key, r.n, maxKeys)
				}
				evictions += int(bounded.Stats().Evicted)
				if !full {
					cleanRuns++
				}
				if differs {
					lruDiffers++
				}
			}
			t.Logf("evictions %d, runs never full %d, runs where LRU differs %d", evictions, cleanRuns, lruDiffers)
			assert.Greater(t, evictions, 100, "the fresh policy evicts")
			assert.Greater(t, cleanRuns, 10, "runs that never fill the table")
			assert.Greater(t, lruDiffers, 10, "LRU changes decisions on the same traffic")
		})
	}
}

func keyedDecide(k *KeyedLimiter, r keyedRequest) string {
	d, _ := keyedDecideOutcome(k, r)
	return d
}

// keyedDecideOutcome decides r through Get, so that a Reserver's wait is compared too.
func keyedDecideOutcome(k *KeyedLimiter, r keyedRequest) (string, KeyOutcome) {
	if r.n > k.MaxPermits() {
		return Never.String(), KeyFound
	}
	l, outcome := k.Get(r.at, r.key)
	if l == nil {
		return Rejected.String(), outcome
	}
	return decide(l, r.at, r.n), outcome
}

// brokenFresh is a kind whose FreshAt is wrong: nginx's, but fresh once the excess has
// decayed to 0 (forgetting the +1000 of the next request), and warm-up's, fresh whenever the
// bucket is full (forgetting its age).
type brokenFresh struct{ Limiter }

func (b brokenFresh) FreshAt(now time.Duration) bool {
	switch l := b.Limiter.(type) {
	case NginxZoned:
		node := l.ZoneNode()
		ms := int64(now) / int64(time.Millisecond)
		return !node.Seen || node.Rate*(ms-node.Last)/1000 >= node.Excess
	case *WarmUpTokenBucket:
		return l.Snapshot(now).Arrival <= now
	}
	return false
}

type brokenFreshSpec struct{ Spec }

func (s brokenFreshSpec) New(c Clock) (Limiter, error) {
	l, err := s.Spec.New(c)
	return brokenFresh{l}, err
}

// The property test's check catches a wrong FreshAt.
func TestKeyedFreshPropertyCatchesABrokenFreshness(t *testing.T) {
	for _, text := range []string{"nginx:rate=20r/s,burst=3", "warm-up:capacity=3,rate=100/1s,warmup=1s"} {
		spec := brokenFreshSpec{must(ParseSpec(text))}
		rng := rand.New(rand.NewPCG(5, 6))
		caught := 0
		for range 100 {
			traffic := randomKeyedTraffic(rng, 4, 200)
			clock := virtualclock.New()
			unbounded := must(NewKeyed(spec, KeyedConfig{MaxKeys: 1 << 20}, clock))
			bounded := must(NewKeyed(spec, KeyedConfig{MaxKeys: 2, Evict: EvictFresh}, clock))
			for _, r := range traffic {
				require.NoError(t, clock.AdvanceTo(r.at))
				want := keyedDecide(unbounded, r)
				got, outcome := keyedDecideOutcome(bounded, r)
				if outcome == KeyFull {
					break
				}
				if got != want {
					caught++
					break
				}
			}
		}
		assert.Greater(t, caught, 5, "%s: a wrong freshness changes decisions, and the check sees it", text)
	}
}
