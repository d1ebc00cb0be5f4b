package limiters_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zoneHolds is the keys of names the table holds, in the order given.
func zoneHolds(k *limiters.KeyedLimiter, names ...string) []string {
	var held []string
	for _, name := range names {
		if _, ok := k.Peek(name); ok {
			held = append(held, name)
		}
	}
	return held
}

// (i) A zone of 2 at 1r/s, a and b seen at 0s, c at 30s: expire(1) looks at a, idle 30s <
// 60s, and stops; the zone is full, so expire(0) removes a unconditionally, then looks at b
// (30s) and stops. The forced removal changes decisions: in a zone of 2, a's second request
// 600ms after its first (c having pushed it out at 500ms) is a new node's first and passes;
// in a zone of 3 it is accounted at 0 − 600 + 1000 = 400 > burst 0 and refused.
func TestNginxZoneFullForgetsTheLRUNodeBefore60s(t *testing.T) {
	k := keyed(t, "nginx:rate=1r/s", "max=2,evict=nginx", zeroClock{})
	get := func(at time.Duration, key string) limiters.KeyOutcome { _, o := k.Get(at, key); return o }
	assert.Equal(t, limiters.KeyCreated, get(0, "a"))
	assert.Equal(t, limiters.KeyCreated, get(0, "b"))
	assert.Equal(t, limiters.KeyEvicted, get(30*time.Second, "c"), "the zone is full: expire(0)")
	assert.Equal(t, []string{"b", "c"}, zoneHolds(k, "a", "b", "c"), "a went though seen 30s ago; b, as recent, stayed")
	assert.Equal(t, limiters.KeyedStats{Keys: 2, Created: 3, Evicted: 1}, k.Stats(), "never Full: expire(0) always frees a node")

	for _, c := range []struct {
		max  string
		want limiters.Decision
	}{{"max=2,evict=nginx", limiters.Admitted}, {"max=3,evict=nginx", limiters.Rejected}} {
		k := keyed(t, "nginx:rate=1r/s", c.max, zeroClock{})
		require.Equal(t, limiters.Admitted, k.AcquireKeyAt(0, "a", 1))
		require.Equal(t, limiters.Admitted, k.AcquireKeyAt(0, "b", 1))
		require.Equal(t, limiters.Admitted, k.AcquireKeyAt(500*time.Millisecond, "c", 1))
		assert.Equal(t, c.want, k.AcquireKeyAt(600*time.Millisecond, "a", 1), c.max)
	}
}

// (ii) Idle nodes with their excess drained are removed only when a key without a node
// arrives, at most 2 of them, whether or not the zone is full. A zone of 5 at 1r/s: a at 0s,
// b 1s, c 2s, x 3s; at 100s x again (a lookup that finds its node removes nothing: a, idle
// 100s, stays), then d, new: expire(1) removes a (100s idle, excess 0 − 100000 ≤ 0) and b, and
// stops at 2 although c qualifies too. Then f: c goes, and x (just seen) stops it.
func TestNginxZoneExpiresIdleNodesOnANewKey(t *testing.T) {
	k := keyed(t, "nginx:rate=1r/s", "max=5,evict=nginx", zeroClock{})
	names := []string{"a", "b", "c", "x", "d", "f"}
	for i, key := range []string{"a", "b", "c", "x"} {
		require.Equal(t, limiters.Admitted, k.AcquireKeyAt(time.Duration(i)*time.Second, key, 1))
	}
	assert.Equal(t, limiters.Admitted, k.AcquireKeyAt(100*time.Second, "x", 1))
	assert.Equal(t, []string{"a", "b", "c", "x"}, zoneHolds(k, names...), "a hit expires nothing")
	_, outcome := k.Get(100*time.Second, "d")
	assert.Equal(t, limiters.KeyEvicted, outcome, "the zone had room (4 of 5): expire(1) runs anyway")
	assert.Equal(t, []string{"c", "x", "d"}, zoneHolds(k, names...), "two at most per lookup: c stays")
	_, outcome = k.Get(100*time.Second, "f")
	assert.Equal(t, limiters.KeyEvicted, outcome)
	assert.Equal(t, []string{"x", "d", "f"}, zoneHolds(k, names...), "c removed; x, the next tail, was seen at 100s")
	assert.Equal(t, limiters.KeyedStats{Keys: 3, Created: 6, Evicted: 3}, k.Stats())
	_, outcome = k.Get(159999*time.Millisecond, "g")
	assert.Equal(t, limiters.KeyCreated, outcome, "x is idle 59.999s: nothing goes")
}

// (iii) A node whose excess has not decayed to 0 is kept, however long idle. At 1r/s,
// burst=100, nodelay, k sends 101 at 0s: excess 100000. A new key at 60s finds it at
// 100000 − 60000 = 40000 > 0: kept; at 99.999s at 1 > 0: kept; at 100s at exactly 0: removed,
// although k's next request would still be accounted at 1000 (Fresh only from 101s).
func TestNginxZoneKeepsANodeWithExcess(t *testing.T) {
	for _, c := range []struct {
		at   time.Duration
		kept bool
	}{{60 * time.Second, true}, {99999 * time.Millisecond, true}, {100 * time.Second, false}} {
		k := keyed(t, "nginx:rate=1r/s,burst=100,delay=nodelay", "max=10,evict=nginx", zeroClock{})
		for i := range 101 {
			require.Equal(t, limiters.Admitted, k.AcquireKeyAt(0, "k", 1), "k's %d", i+1)
		}
		k.AcquireKeyAt(c.at, "new", 1)
		_, kept := k.Peek("k")
		assert.Equal(t, c.kept, kept, "at %s", c.at)
		if c.at == 100*time.Second {
			lim := must(peers.NginxSpec{Rate: limiters.PerSecond(1), Burst: 100, NoDelay: true}.New(zeroClock{}))
			for range 101 {
				lim.AcquireAt(0, 1)
			}
			assert.False(t, lim.(limiters.Fresh).FreshAt(c.at), "removed at 0, but not yet fresh")
		}
	}
}

// The 60s rule is weaker than Fresh and so decides requests: at 1r/m (R = 16), burst=0, a
// key seen at 0s asking again at 60s is accounted at 0 − 960 + 1000 = 40 > 0 and refused —
// unless another key's arrival at 60s came first and expired the node (0 − 960 ≤ 0), making
// the request a new node's first, which passes.
func TestNginxZoneExpiryDecidesAt1PerMinute(t *testing.T) {
	alone := keyed(t, "nginx:rate=1r/m", "max=10,evict=nginx", zeroClock{})
	crowd := keyed(t, "nginx:rate=1r/m", "max=10,evict=nginx", zeroClock{})
	for _, k := range []*limiters.KeyedLimiter{alone, crowd} {
		require.Equal(t, limiters.Admitted, k.AcquireKeyAt(0, "a", 1))
	}
	assert.Equal(t, limiters.Admitted, crowd.AcquireKeyAt(time.Minute, "b", 1))
	assert.Equal(t, limiters.Rejected, alone.AcquireKeyAt(time.Minute, "a", 1), "one per 62.5s: refused at 60s")
	assert.Equal(t, limiters.Admitted, crowd.AcquireKeyAt(time.Minute, "a", 1), "b's arrival expired a's node")
}

// A node made but never accounted (its first request, of 2 at burst=1 without nodelay, held
// by nginx and so refused to a caller that cannot wait) is expired by its arrival time.
func TestNginxZoneExpiresAnUnaccountedNodeByItsArrival(t *testing.T) {
	k := keyed(t, "nginx:rate=1r/s,burst=1", "max=10,evict=nginx", zeroClock{})
	assert.Equal(t, limiters.Rejected, k.AcquireKeyAt(time.Second, "a", 2), "nginx would hold the 2nd for 1s")
	a, ok := k.Peek("a")
	require.True(t, ok)
	node := a.(limiters.NginxZoned).ZoneNode()
	assert.False(t, node.Seen)
	k.AcquireKeyAt(60999*time.Millisecond, "b", 1)
	assert.Equal(t, []string{"a", "b"}, zoneHolds(k, "a", "b"), "a arrived 59.999s ago")
	k.AcquireKeyAt(61*time.Second, "c", 1)
	assert.Equal(t, []string{"b", "c"}, zoneHolds(k, "a", "b", "c"), "a arrived 60s ago")
}

// evict=nginx is nginx's rule: refused over another kind (naming evict), with more than one
// shard (naming shards), everywhere a table is made.
func TestNginxZoneConfigErrors(t *testing.T) {
	_, err := limiters.NewKeyed(limiters.TokenBucketSpec{Capacity: 1, Rate: limiters.PerSecond(1)}, limiters.KeyedConfig{MaxKeys: 10, Evict: limiters.EvictNginx}, zeroClock{})
	var ce *limiters.ConfigError
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "evict", ce.Field)
	assert.ErrorContains(t, err, "evict=nginx: is nginx's zone expiry, which reads an nginx node's excess and last: it needs an nginx:… limiter, not token-bucket")
	_, err = limiters.ParseKeyedSpec("keys(max=10,evict=nginx):fixed-window:limit=1,window=1s")
	assert.ErrorContains(t, err, "evict=nginx: is nginx's zone expiry")
	assert.ErrorContains(t, limiters.KeyedSpec{Spec: limiters.TokenBucketSpec{Capacity: 1, Rate: limiters.PerSecond(1)}, Keys: limiters.KeyedConfig{MaxKeys: 1, Evict: limiters.EvictNginx}}.Validate(), "not token-bucket")
	_, err = limiters.ParseKeyedConfig("max=100,evict=nginx,shards=2")
	assert.ErrorContains(t, err, "shards=2: must be 1 (or 0) with evict=nginx")

	s, err := limiters.ParseKeyedSpec("keys(max=80000,evict=nginx):nginx:rate=10r/s,burst=5")
	require.NoError(t, err)
	assert.Equal(t, "keys(max=80000,evict=nginx):nginx:rate=10r/s,burst=5", s.String())
	k, err := limiters.NewKeyed(s.Spec, s.Keys, zeroClock{})
	require.NoError(t, err)
	assert.Equal(t, 1, limiters.ShardCount(k), "one queue at any size, as a zone")
	_, err = limiters.NewKeyed(nginxOpaque{s.Spec}, s.Keys, zeroClock{})
	assert.ErrorContains(t, err, "needs a limiter whose node the zone can read")
}

// nginxOpaque is an nginx spec whose limiter hides its node.
type nginxOpaque struct{ limiters.Spec }

func (s nginxOpaque) New(c limiters.Clock) (limiters.Limiter, error) {
	l, err := s.Spec.New(c)
	return struct{ limiters.Limiter }{l}, err
}

// An existing key's decision in an nginx zone allocates nothing: a hit expires nothing.
func TestNginxZoneHotPathAllocatesNothing(t *testing.T) {
	k := keyed(t, "nginx:rate=1000r/s,burst=5,delay=nodelay", "max=100000,evict=nginx", zeroClock{})
	k.AcquireKeyAt(0, "client-42", 1)
	now := time.Duration(0)
	assert.Zero(t, testing.AllocsPerRun(200, func() { now += time.Millisecond; k.AcquireKeyAt(now, "client-42", 1) }))
	assert.Zero(t, testing.AllocsPerRun(200, func() { now += 61 * time.Second; k.AcquireKeyBytesAt(now, []byte("client-42"), 1) }))
}

// zoneRef is an independent model of an nginx zone, written from ngx_http_limit_req_lookup
// and ngx_http_limit_req_expire line by line: a slice of nodes, head first, in signed
// arithmetic (the test keeps every product far from overflow), plus ratelab's rules for a
// caller that cannot wait (a request nginx would hold is refused and accounts nothing; a node
// not yet accounted decides its next request as a new one and expires by its arrival) and
// for n requests at once (all or nothing; more than burst + 1 is Never, after the lookup has
// moved an existing node to the head, and without making a new one).
type zoneRef struct {
	nodes        []refNode // head first
	max          int
	R            int64 // milli-requests per second
	burst, delay int64 // milli-requests; delay −1: nodelay
	removed      int
}

type refNode struct {
	key          string
	accounted    bool
	excess, last int64
}

// acquire is n requests of key at ns now.
func (z *zoneRef) acquire(nowNs time.Duration, key string, n int) limiters.Decision {
	now := max(int64(nowNs), 0) / 1e6
	i := slices.IndexFunc(z.nodes, func(nd refNode) bool { return nd.key == key })
	never := n > int(z.burst/1000)+1
	switch {
	case i < 0 && never:
		return limiters.Never // no node made for what no node could grant
	case i < 0:
		z.expire(now, 1)
		if len(z.nodes) >= z.max {
			z.expire(now, 0)
		}
		if len(z.nodes) >= z.max {
			return limiters.Rejected // "could not allocate node"
		}
		z.nodes = slices.Insert(z.nodes, 0, refNode{key: key, last: now})
	default:
		nd := z.nodes[i]
		z.nodes = slices.Insert(slices.Delete(z.nodes, i, i+1), 0, nd)
		if never {
			return limiters.Never // the lookup found the node and moved it to the head
		}
	}
	nd := &z.nodes[0]
	excess, ms := int64(0), int64(0)
	if nd.accounted {
		ms = now - nd.last
		if ms < -60000 {
			ms = 1
		} else if ms < 0 {
			ms = 0
		}
		excess = max(nd.excess-z.R*ms/1000+1000, 0)
	}
	excess += int64(n-1) * 1000
	if excess > z.burst {
		return limiters.Rejected
	}
	if z.delay >= 0 && excess > z.delay && (excess-z.delay)*1000/z.R > 0 {
		return limiters.Rejected // held by nginx
	}
	nd.excess = excess
	if !nd.accounted || ms != 0 {
		nd.last = now
	}
	nd.accounted = true
	return limiters.Admitted
}

func (z *zoneRef) expire(now int64, n int) {
	for n < 3 {
		if len(z.nodes) == 0 {
			return
		}
		tail := z.nodes[len(z.nodes)-1]
		test := n != 0
		n++
		if test {
			ms := now - tail.last
			if ms < 0 {
				ms = -ms
			}
			if ms < 60000 {
				return
			}
			if tail.excess-z.R*ms/1000 > 0 {
				return
			}
		}
		z.nodes = z.nodes[:len(z.nodes)-1]
		z.removed++
	}
}

// The table with evict=nginx decides every request as the reference zone does, and holds
// the same keys, over random traffic: 6 keys in zones of 1 to 5, steps of 0 to 100s around
// the 60s edge, one request in 10 read late (up to 61s behind), 1 to 3 requests at once.
func TestNginxZoneMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	specs := []string{"nginx:rate=1r/s", "nginx:rate=10r/s,burst=5,delay=nodelay", "nginx:rate=1r/m,burst=2,delay=nodelay",
		"nginx:rate=30r/m,burst=3,delay=1", "nginx:rate=2r/s,burst=4", "nginx:rate=1000r/s,burst=50,delay=10"}
	steps := []time.Duration{0, time.Millisecond, 250 * time.Millisecond, time.Second, 10 * time.Second,
		59999 * time.Millisecond, time.Minute, 61 * time.Second, 100 * time.Second}
	lates := []time.Duration{time.Millisecond, 5 * time.Second, 60 * time.Second, 61 * time.Second}
	keys := []string{"k0", "k1", "k2", "k3", "k4", "k5"}
	checked, removed := 0, 0
	for run := range 300 {
		text := specs[run%len(specs)]
		spec := must(limiters.ParseSpec(text)).(peers.NginxSpec)
		zone := 1 + rng.IntN(5)
		k := keyed(t, text, fmt.Sprintf("max=%d,evict=nginx", zone), zeroClock{})
		ref := &zoneRef{max: zone, R: spec.MilliRate(), burst: int64(spec.Burst) * 1000, delay: int64(spec.Delay) * 1000}
		if spec.NoDelay {
			ref.delay = -1
		}
		now := time.Duration(0)
		for step := range 200 {
			now += steps[rng.IntN(len(steps))] + time.Duration(rng.IntN(1000))*time.Microsecond
			at := now
			if rng.IntN(10) == 0 {
				at = max(0, at-lates[rng.IntN(len(lates))])
			}
			key, n := keys[rng.IntN(len(keys))], 1+rng.IntN(3)
			want := ref.acquire(at, key, n)
			got := k.AcquireKeyAt(at, key, n)
			if got != want {
				t.Fatalf("%s, zone %d, run %d step %d: %d of %s at %s: %s, the reference %s", text, zone, run, step, n, key, at, got, want)
			}
			var held []string
			for _, nd := range ref.nodes {
				held = append(held, nd.key)
			}
			slices.Sort(held)
			if got := zoneHolds(k, keys...); !slices.Equal(got, held) {
				t.Fatalf("%s, zone %d, run %d step %d: holds %v, the reference %v", text, zone, run, step, got, held)
			}
			checked++
		}
		st := k.Stats()
		require.Equal(t, uint64(ref.removed), st.Evicted, "%s zone %d run %d", text, zone, run)
		require.Zero(t, st.Full, "a node-count zone never fails to allocate")
		removed += ref.removed
	}
	t.Logf("%d requests compared, %d nodes removed", checked, removed)
	assert.Greater(t, removed, 1000, "the traffic exercises expiry")
}

// Goroutines racing through one zone at a frozen instant: 8 of them, each with 100 keys of
// its own, 4 requests a key at burst=2. With room for every key, nothing is removed and each
// key gets exactly burst + 1 = 3. In a zone of 16 the full zone removes nodes under the
// callers' feet (a key whose node went comes back new, with 3 more): the zone never holds
// more than 16, every removal is counted (created − removed = held), no key is refused a
// node, and no key gets fewer than 3. At 61s, after the same traffic at 0s, new keys expire
// idle nodes as well, by the same counts.
func TestNginxZoneRaces(t *testing.T) {
	const workers, keysEach, asks = 8, 100, 4
	race := func(k *limiters.KeyedLimiter, at time.Duration, prefix string) [][]int {
		admitted := make([][]int, workers)
		var wg sync.WaitGroup
		for w := range workers {
			admitted[w] = make([]int, keysEach)
			wg.Go(func() {
				for i := range keysEach {
					key := fmt.Sprintf("%s%d-%d", prefix, w, i)
					for range asks {
						if k.AcquireKeyAt(at, key, 1) == limiters.Admitted {
							admitted[w][i]++
						}
						if k.Len() > k.Config().MaxKeys {
							t.Errorf("the zone holds %d > %d", k.Len(), k.Config().MaxKeys)
						}
					}
				}
			})
		}
		wg.Wait()
		return admitted
	}
	const spec = "nginx:rate=1r/s,burst=2,delay=nodelay"
	roomy := keyed(t, spec, "max=4096,evict=nginx", zeroClock{})
	for w, keys := range race(roomy, 0, "k") {
		for i, n := range keys {
			require.Equal(t, 3, n, "worker %d key %d", w, i)
		}
	}
	assert.Equal(t, limiters.KeyedStats{Keys: workers * keysEach, Created: workers * keysEach}, roomy.Stats())

	small := keyed(t, spec, "max=16,evict=nginx", zeroClock{})
	for _, at := range []time.Duration{0, 61 * time.Second} {
		for w, keys := range race(small, at, fmt.Sprintf("k%s-", at)) {
			for i, n := range keys {
				require.GreaterOrEqual(t, n, 3, "at %s worker %d key %d", at, w, i)
			}
		}
		st := small.Stats()
		assert.LessOrEqual(t, st.Keys, 16)
		assert.Equal(t, st.Created-st.Evicted, uint64(st.Keys), "at %s: every removal counted", at)
		assert.Zero(t, st.Full)
	}
}
