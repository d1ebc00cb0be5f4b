package limiters

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ratelab/ratelab/virtualclock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func keyed(t testing.TB, spec string, config string, clock Clock) *KeyedLimiter {
	t.Helper()
	s, err := ParseSpec(spec)
	require.NoError(t, err)
	c, err := ParseKeyedConfig(config)
	require.NoError(t, err)
	k, err := NewKeyed(s, c, clock)
	require.NoError(t, err)
	return k
}

// Each key has its own bucket, made on its first request: capacity 3 for a, and 3 more for b
// at the same instant.
func TestKeyedKeysAreIndependent(t *testing.T) {
	k := keyed(t, "token-bucket:capacity=3,rate=100/1s", "max=10", zeroClock{})
	for i := range 3 {
		assert.Equal(t, Admitted, k.AcquireKeyAt(0, "a", 1), "a's %d", i+1)
	}
	assert.Equal(t, Rejected, k.AcquireKeyAt(0, "a", 1), "a's fourth: a's bucket is empty")
	for i := range 3 {
		assert.Equal(t, Admitted, k.AcquireKeyBytesAt(0, []byte("b"), 1), "b's %d", i+1)
	}
	assert.Equal(t, Rejected, k.AcquireKeyAt(0, "b", 1))
	assert.Equal(t, Admitted, k.AcquireKeyAt(10*time.Millisecond, "a", 1), "one T later a has one again")
	assert.Equal(t, KeyedStats{Keys: 2, Created: 2}, k.Stats())
	a, ok := k.KeyState("a")
	require.True(t, ok)
	assert.Equal(t, 0, a.AvailableAt(10*time.Millisecond))
	_, ok = k.KeyState("c")
	assert.False(t, ok, "Peek makes nothing")
	assert.Equal(t, Never, k.AcquireKeyAt(0, "d", 4), "more than the capacity: Never, and no key made")
	assert.Equal(t, Invalid, k.AcquireKeyAt(0, "d", 0))
	assert.Equal(t, 2, k.Len())
	assert.Equal(t, "keys(max=10,evict=lru):token-bucket:capacity=3,rate=100/1s", k.String())
}

// LRU evicts the least recently used key; a touch (any request) makes a key the most recent.
// Table of 2: a, b, a (a is the most recent), c evicts b; b comes back fresh and evicts a.
func TestKeyedLRUOrder(t *testing.T) {
	k := keyed(t, "fixed-window:limit=1,window=1h", "max=2,evict=lru", zeroClock{})
	get := func(key string) KeyOutcome { _, o := k.Get(0, key); return o }
	assert.Equal(t, KeyCreated, get("a"))
	assert.Equal(t, KeyCreated, get("b"))
	assert.Equal(t, KeyFound, get("a"))
	assert.Equal(t, KeyEvicted, get("c"))
	_, ok := k.Peek("b")
	assert.False(t, ok, "b was the least recently used")
	_, ok = k.Peek("a")
	assert.True(t, ok)
	assert.Equal(t, KeyEvicted, get("b"))
	_, ok = k.Peek("a")
	assert.False(t, ok, "a, then c, were older than b")
	assert.Equal(t, KeyedStats{Keys: 2, Created: 4, Evicted: 2}, k.Stats())
}

// An attacker cycling k+1 keys through an LRU table of k: each key is evicted k requests
// before it comes back, so every request is a fresh key's first and is admitted — against a
// limit of 1 per hour per key, 1000 requests in one instant all pass. With k+1 slots the same
// cycle gets exactly one per key.
func TestKeyedLRUAttackerAdmitsEverything(t *testing.T) {
	const k = 4
	for _, spec := range []string{"fixed-window:limit=1,window=1h", "token-bucket:capacity=1,rate=1/1h", "nginx:rate=1r/m", "flash5-fixed:limit=1,window=1s"} {
		small := keyed(t, spec, fmt.Sprintf("max=%d,evict=lru", k), zeroClock{})
		big := keyed(t, spec, fmt.Sprintf("max=%d,evict=lru", k+1), zeroClock{})
		admittedSmall, admittedBig := 0, 0
		for i := range 1000 {
			key := "attacker-" + strconv.Itoa(i%(k+1))
			if small.AcquireKeyAt(0, key, 1) == Admitted {
				admittedSmall++
			}
			if big.AcquireKeyAt(0, key, 1) == Admitted {
				admittedBig++
			}
		}
		assert.Equal(t, 1000, admittedSmall, "%s: every request is a new key's first", spec)
		assert.Equal(t, k+1, admittedBig, "%s: a table that holds every key admits one each", spec)
		assert.Equal(t, uint64(1000-k), small.Stats().Evicted)
	}
}

// The fresh policy refuses to forget a key that is not fresh: the attacker's cycle meets a
// full table, and the new key is refused (counted as Full) instead of an old one forgotten.
func TestKeyedFreshPolicyRefusesWhenNothingIsFresh(t *testing.T) {
	k := keyed(t, "token-bucket:capacity=1,rate=1/1s", "max=2,evict=fresh", zeroClock{})
	assert.Equal(t, Admitted, k.AcquireKeyAt(0, "a", 1))
	assert.Equal(t, Admitted, k.AcquireKeyAt(0, "b", 1))
	assert.Equal(t, Rejected, k.AcquireKeyAt(0, "c", 1), "a and b are not fresh before 1s")
	assert.Equal(t, KeyedStats{Keys: 2, Created: 2, Full: 1}, k.Stats())
	assert.Equal(t, Admitted, k.AcquireKeyAt(time.Second, "c", 1), "at 1s a's TAT has come: a is fresh and goes")
	_, ok := k.Peek("a")
	assert.False(t, ok)
	assert.Equal(t, uint64(1), k.Stats().Evicted)
}

// LRU never evicts a bulkhead key that holds permits (its callers owe them back); one that
// holds none goes.
func TestKeyedLRUKeepsHeldBulkheads(t *testing.T) {
	k := keyed(t, "concurrency:max=1", "max=1,evict=lru", zeroClock{})
	assert.Equal(t, Admitted, k.AcquireKeyAt(0, "a", 1))
	assert.Equal(t, Rejected, k.AcquireKeyAt(0, "b", 1), "a holds a permit")
	a, _ := k.Peek("a")
	a.(Releaser).Release(1)
	assert.Equal(t, Admitted, k.AcquireKeyAt(0, "b", 1), "a holds none now")
	assert.Equal(t, KeyedStats{Keys: 1, Created: 2, Evicted: 1, Full: 1}, k.Stats())
}

// Shards: a table above 4096 keys is split (the power of two nearest max/4096 from below, at
// most 64), and the whole holds MaxKeys keys however they fall into shards.
func TestKeyedShardsBoundTheWhole(t *testing.T) {
	for _, c := range []struct {
		config string
		shards int
	}{{"max=4095", 1}, {"max=4096", 1}, {"max=8192", 2}, {"max=1000000", 64}, {"max=100,shards=8", 8}} {
		k := keyed(t, "fixed-window:limit=1,window=1s", c.config, zeroClock{})
		assert.Len(t, k.shards, c.shards, c.config)
	}
	k := keyed(t, "fixed-window:limit=1,window=1s", "max=100,shards=8", zeroClock{})
	for i := range 1000 {
		k.AcquireKeyAt(0, "k"+strconv.Itoa(i), 1)
	}
	assert.Equal(t, 100, k.Len(), "full, never more")
	assert.Equal(t, KeyedStats{Keys: 100, Created: 1000, Evicted: 900}, k.Stats())
}

// max=N holds N keys whatever shard each falls in: N = 20,000 distinct keys in round robin
// (4 shards of 5,000 on average, filled unevenly by the hash) are all made in the first pass
// and found in the next three, none evicted. Before the count was global each shard held
// max/4: the table held 19,908 and its second pass evicted on 0.505 of requests. N+1 keys
// evict. The same calls give the same decisions and counts on every run.
func TestKeyedMaxHoldsExactlyMaxKeys(t *testing.T) {
	const n = 20_000
	keys := clientKeys(n + 1)
	run := func(distinct int) ([]Decision, KeyedStats, *KeyedLimiter) {
		k := keyed(t, "token-bucket:capacity=2,rate=1/1h", fmt.Sprintf("max=%d", n), zeroClock{})
		require.Len(t, k.shards, 4, "sharded")
		var decisions []Decision
		for i := range 4 * distinct {
			decisions = append(decisions, k.AcquireKeyAt(0, keys[i%distinct], 1))
		}
		return decisions, k.Stats(), k
	}
	decisions, stats, k := run(n)
	assert.Equal(t, KeyedStats{Keys: n, Created: n}, stats, "made once each, none evicted")
	assert.Equal(t, n, k.Len())
	for i, d := range decisions {
		want := Admitted // capacity 2: the first two requests of each key
		if i >= 2*n {
			want = Rejected
		}
		if d != want {
			t.Fatalf("request %d (%s): %s, want %s", i, keys[i%n], d, want)
		}
	}
	shardSizes := make([]int, len(k.shards))
	for i := range k.shards {
		shardSizes[i] = int(k.shards[i].n)
	}
	assert.NotEqual(t, []int{n / 4, n / 4, n / 4, n / 4}, shardSizes, "the hash fills shards unevenly: %v", shardSizes)

	// One more key: it falls into shard x, whose m keys and it now cycle through m places,
	// each a miss; every other shard's keys stay. 4(m+1) requests of shard x, the first m
	// of them made in free places.
	decisions, stats, k = run(n + 1)
	x := fnv1a(keys[n]) >> k.shift
	m := 0
	for _, key := range keys[:n] {
		if fnv1a(key)>>k.shift == x {
			m++
		}
	}
	evicted := uint64(4*(m+1) - m)
	assert.Equal(t, KeyedStats{Keys: n, Created: n + evicted, Evicted: evicted}, stats, "shard %d of %d keys", x, m)
	assert.Equal(t, n, k.Len())
	for i, d := range decisions {
		want := Admitted
		if fnv1a(keys[i%(n+1)])>>k.shift != x && i >= 2*(n+1) {
			want = Rejected // capacity 2, and never evicted
		}
		if d != want {
			t.Fatalf("request %d (%s): %s, want %s", i, keys[i%(n+1)], d, want)
		}
	}
	again, againStats, _ := run(n + 1)
	assert.Equal(t, decisions, again)
	assert.Equal(t, stats, againStats)
}

// A shard with no key takes its new key's place from another: the least recently used of the
// next shard in order (wrapping) that holds one. A shard that holds keys evicts its own, so
// shards keep the sizes the first fill gave them (a crafted set of keys that all fall into
// one shard churns that shard only). 60 keys of shard 3 and 4 of shard 5 fill a table of 64
// in 8 shards; a key of shard 6 takes shard 3's oldest (7, 0, 1, 2 are empty), then another
// of shard 6 evicts the first; a key of shard 4 takes shard 5's oldest.
func TestKeyedEmptyShardEvictsFromAnother(t *testing.T) {
	k := keyed(t, "fixed-window:limit=1,window=1h", "max=64,shards=8", zeroClock{})
	inShard := func(shard uint64, count int) []string {
		var keys []string
		for i := 0; len(keys) < count; i++ {
			key := "k" + strconv.Itoa(i)
			if fnv1a(key)>>k.shift == shard {
				keys = append(keys, key)
			}
		}
		return keys
	}
	three, four, five, six := inShard(3, 60), inShard(4, 1), inShard(5, 4), inShard(6, 2)
	for _, key := range append(three, five...) {
		require.Equal(t, Admitted, k.AcquireKeyAt(0, key, 1))
	}
	held := func(key string) bool { _, ok := k.Peek(key); return ok }
	sizes := func() []int32 {
		var n []int32
		for i := range k.shards {
			n = append(n, k.shards[i].n)
		}
		return n
	}
	assert.Equal(t, []int32{0, 0, 0, 60, 0, 4, 0, 0}, sizes())
	_, outcome := k.Get(0, six[0])
	assert.Equal(t, KeyEvicted, outcome)
	assert.False(t, held(three[0]), "shard 3's least recently used")
	assert.True(t, held(three[1]) && held(five[0]))
	assert.Equal(t, []int32{0, 0, 0, 59, 0, 4, 1, 0}, sizes())
	_, outcome = k.Get(0, six[1])
	assert.Equal(t, KeyEvicted, outcome)
	assert.False(t, held(six[0]), "shard 6 holds a key now: it evicts its own")
	assert.True(t, held(three[1]))
	_, outcome = k.Get(0, four[0])
	assert.Equal(t, KeyEvicted, outcome)
	assert.False(t, held(five[0]), "shard 5 is next after 4")
	assert.Equal(t, []int32{0, 0, 0, 59, 1, 3, 1, 0}, sizes())
	assert.Equal(t, KeyedStats{Keys: 64, Created: 67, Evicted: 3}, k.Stats())
}

// Bad configurations name their field.
func TestKeyedConfigErrors(t *testing.T) {
	for text, want := range map[string]string{
		"":                     "max=: missing",
		"max=0":                "max=0: must be between 1 and 2^30",
		"max=x":                `max=x: "x" is not a whole number`,
		"max=10,evict=random":  "evict=random: must be lru, fresh or nginx",
		"max=10,shards=3":      "shards=3: must be a power of two",
		"max=10,evikt=lru":     "evikt=lru: not a field of keys (did you mean evict?)",
		"max=10,max=11":        "max=11: given twice",
		"max=10,shards=16":     "shards=16: must be a power of two at most max=10",
		"max=2000000000":       "must be between 1 and 2^30",
		"max=10,evict":         "evict=: expected key=value",
		"max=10,evict=":        "evict=: empty: must be lru, fresh or nginx (or leave evict out for lru)",
		"max=10,evict= ":       "evict=: empty: must be lru, fresh or nginx",
		"max=10,shards=":       `shards=: "" is not a whole number`,
		"max=10,evict=lru,x=1": "x=1: not a field of keys",
		"max=10,evict=lru,":    "an empty field at the end (a trailing comma)",
		"max=10,,evict=lru":    "an empty field after max=10 (two commas in a row)",
	} {
		_, err := ParseKeyedConfig(text)
		if assert.Error(t, err, text) {
			assert.Contains(t, err.Error(), want, text)
		}
	}
	c, err := ParseKeyedConfig(" max = 10 , evict = fresh ")
	require.NoError(t, err)
	assert.Equal(t, KeyedConfig{MaxKeys: 10, Evict: EvictFresh}, c)
	assert.Equal(t, "max=10,evict=fresh", c.String())
	again, err := ParseKeyedConfig(c.String())
	require.NoError(t, err)
	assert.Equal(t, c, again)
	_, err = NewKeyed(TokenBucketSpec{Capacity: 0, Rate: PerSecond(1)}, c, zeroClock{})
	assert.ErrorContains(t, err, "capacity=0")
	_, err = NewKeyed(TokenBucketSpec{Capacity: 1, Rate: PerSecond(1)}, c, nil)
	assert.ErrorContains(t, err, "clock")
}

// An existing key's decision allocates nothing, by string or by bytes, admitted or refused.
func TestKeyedHotPathAllocatesNothing(t *testing.T) {
	for _, config := range []string{"max=10", "max=100000,evict=fresh"} {
		k := keyed(t, "token-bucket:capacity=3,rate=100/1s", config, zeroClock{})
		k.AcquireKeyAt(0, "client-42", 1)
		key := []byte("client-42")
		now := time.Duration(0)
		for name, f := range map[string]func(){
			"AcquireKeyAt":      func() { now += time.Millisecond; k.AcquireKeyAt(now, "client-42", 1) },
			"AcquireKeyBytesAt": func() { now += time.Millisecond; k.AcquireKeyBytesAt(now, key, 1) },
			"refused":           func() { k.AcquireKeyAt(now, "client-42", 3) },
			"Get":               func() { k.Get(now, "client-42") },
		} {
			assert.Zero(t, testing.AllocsPerRun(200, f), "%s %s", config, name)
		}
	}
}

// 16 goroutines racing on one key at a frozen instant get exactly the capacity between them,
// and racing on 200 keys each key gets exactly its capacity: deciding under the shard's lock,
// with a key made once, whoever comes first.
func TestKeyedRacesGetExactlyTheLimit(t *testing.T) {
	clock := virtualclock.New()
	clock.Freeze()
	const goroutines, capacity = 16, 100
	for _, config := range []string{"max=1000", "max=1000,shards=16", "max=1000,evict=fresh,shards=4"} {
		one := keyed(t, fmt.Sprintf("token-bucket:capacity=%d,rate=1/1h", capacity), config, clock)
		keys := keyed(t, "fixed-window:limit=7,window=1h", config, clock)
		const nkeys = 200
		var admittedOne atomic.Int64
		var perKey [nkeys]atomic.Int64
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				buf := make([]byte, 0, 16)
				for range 3 * capacity / 2 {
					if one.TryAcquireKey("hot", 1) {
						admittedOne.Add(1)
					}
				}
				for i := range 2 * nkeys {
					j := (i + 13*g) % nkeys // every goroutine visits every key twice, from its own start
					buf = strconv.AppendInt(append(buf[:0], 'k'), int64(j), 10)
					if keys.AcquireKeyBytesAt(clock.Now(), buf, 1) == Admitted {
						perKey[j].Add(1)
					}
				}
			})
		}
		wg.Wait()
		assert.Equal(t, int64(capacity), admittedOne.Load(), config)
		for j := range perKey {
			assert.Equal(t, int64(7), perKey[j].Load(), "%s: key k%d", config, j)
		}
		assert.Equal(t, uint64(nkeys), keys.Stats().Created, "%s: each key made once", config)
	}
}

// checkKeyedTable holds a table's structure to its counts: in each shard the recency list
// from head to tail and back holds n slots, each found through the index under its own key,
// the index holds n words, and the free slots and the held ones are all the slots; over the
// shards the held keys are the table's count, at most MaxKeys.
func checkKeyedTable(t *testing.T, k *KeyedLimiter) {
	t.Helper()
	total := 0
	for si := range k.shards {
		s := &k.shards[si]
		s.mu.Lock()
		seen := 0
		prev := int32(-1)
		for i := s.head; i >= 0; i = s.slots[i].next {
			require.Equal(t, prev, s.slots[i].prev, "shard %d slot %d: its prev", si, i)
			require.Equal(t, i, s.find(fnv1a(string(s.slots[i].key)), string(s.slots[i].key)), "shard %d: %q is found in its slot", si, s.slots[i].key)
			prev = i
			seen++
			require.LessOrEqual(t, seen, int(s.n), "shard %d: the list is longer than its count", si)
		}
		require.Equal(t, prev, s.tail, "shard %d: the tail", si)
		require.Equal(t, int(s.n), seen, "shard %d: the list's length", si)
		words := 0
		for _, w := range s.index {
			if w != 0 {
				words++
			}
		}
		require.Equal(t, int(s.n), words, "shard %d: the index's words", si)
		require.Equal(t, len(s.slots), int(s.n)+len(s.free), "shard %d: slots held and free", si)
		total += int(s.n)
		s.mu.Unlock()
	}
	require.Equal(t, int64(total), k.keys.Load(), "the table's count")
	require.LessOrEqual(t, total, k.config.MaxKeys)
}

// Once a table is full, a new key takes an evicted key's slot, its limiter reset and its key
// buffer refilled: a decision allocates nothing, new key or not, by string or by bytes (until
// a new key is longer than the buffer's size class, 16 bytes here), sharded or not, for each
// kind the table resets (a sliding window is built anew: it allocates).
func TestKeyedFullTableAllocatesNothing(t *testing.T) {
	keys := clientKeys(40_000)
	for _, c := range []struct{ spec, config string }{
		{"token-bucket:capacity=3,rate=100/1s", "max=20000"},
		{"token-bucket:capacity=3,rate=100/1s", "max=1000"},
		{"leaky-bucket:rate=100/1s", "max=20000,evict=lru"},
		{"fixed-window:limit=3,window=1s", "max=20000"},
		{"nginx:rate=10r/s,burst=5", "max=20000"},
		{"nginx:rate=10r/s,burst=5", "max=1000,evict=nginx"},
	} {
		k := keyed(t, c.spec, c.config, zeroClock{})
		for _, key := range keys[:k.config.MaxKeys] {
			k.AcquireKeyAt(0, key, 1)
		}
		i := k.config.MaxKeys
		newKey := func() {
			k.AcquireKeyAt(time.Duration(i)*time.Millisecond, keys[i], 1)
			i++
		}
		buf := make([]byte, 0, 16)
		newKeyBytes := func() {
			buf = append(append(buf[:0], "client-"...), strconv.Itoa(i)...) // Itoa of < 100: no allocation
			k.AcquireKeyBytesAt(time.Duration(i)*time.Millisecond, buf, 1)
			i = (i + 1) % 100
		}
		assert.Zero(t, testing.AllocsPerRun(5000, newKey), "%s %s: new keys", c.spec, c.config)
		assert.Zero(t, testing.AllocsPerRun(50, newKeyBytes), "%s %s: new keys as bytes", c.spec, c.config)
		st := k.Stats()
		assert.Equal(t, k.config.MaxKeys, st.Keys)
		assert.Equal(t, st.Created-uint64(st.Keys), st.Evicted, "%s %s", c.spec, c.config)
		checkKeyedTable(t, k)
	}
	k := keyed(t, "sliding-window:limit=3,window=1s", "max=100", zeroClock{})
	for _, key := range keys[:200] {
		k.AcquireKeyAt(0, key, 1)
	}
	assert.NotZero(t, testing.AllocsPerRun(10, func() { k.AcquireKeyAt(0, keys[len(keys)-1-rand100()], 1) }))
}

var rand100State uint32

// rand100 is a fixed sequence over [0, 100): a new key on every call of the test above.
func rand100() int { rand100State = (rand100State + 37) % 100; return int(rand100State) }

// A reset limiter is its spec's New, field for field, after a run that moved its state: the
// kinds the table reuses (reusesLimiters), each driven by admissions, refusals, a reservation
// and a refund at rising times. A spec of another kind, or another package's Spec (which may
// share one limiter between keys), is built anew.
func TestKeyedResetIsNew(t *testing.T) {
	clock := virtualclock.New()
	for _, text := range []string{
		"token-bucket:capacity=3,rate=100/1s",
		"leaky-bucket:rate=100/1s",
		"fixed-window:limit=3,window=1s",
		"nginx:rate=10r/s,burst=5,delay=2",
		"concurrency:max=3",
	} {
		spec, err := ParseSpec(text)
		require.NoError(t, err)
		require.True(t, reusesLimiters(spec), text)
		fresh, used := must(spec.New(clock)), must(spec.New(clock))
		require.Equal(t, fresh, used)
		for i := range 20 {
			now := time.Duration(i) * 7 * time.Millisecond
			used.AcquireAt(now, 1+i%2)
			if r, ok := used.(Reserver); ok {
				used.(Reserver).CancelAt(now, r.ReserveAt(now, 1, time.Second))
			}
			if r, ok := used.(Refunder); ok && used.AcquireAt(now, 1) == Admitted {
				r.RefundAt(now, 1)
				used.AcquireAt(now, 1)
			}
		}
		require.NotEqual(t, fresh, used, "%s: the run changed its state", text)
		require.True(t, resetForReuse(used), text)
		assert.Equal(t, fresh, used, text)
	}
	for _, spec := range []Spec{SlidingWindowSpec{Limit: 3, Window: time.Second, Slots: 10}, nil} {
		assert.False(t, reusesLimiters(spec), "%v", spec)
	}
	assert.False(t, resetForReuse(must(SlidingWindowSpec{Limit: 3, Window: time.Second, Slots: 10}.New(clock))))
}

// 8 goroutines, each with 300 keys of its own shard of 8, race through a table of 64: first
// those of shards 0-3, once, filling it; then all 8, three times, so that shards 4-7 start
// empty and take their first places from others (unlocking their own first) while the full
// ones evict their own (shards robbed empty take places back in turn). After, the table
// holds exactly 64 keys; its
// lists, index and count agree; no request was refused for want of room (Full 0); and each
// was a new key's first, admitted (capacity 1), or a held key's, refused.
func TestKeyedRacesHoldMaxKeys(t *testing.T) {
	const goroutines, perShard, max = 8, 300, 64
	k := keyed(t, "fixed-window:limit=1,window=1h", fmt.Sprintf("max=%d,shards=%d", max, goroutines), zeroClock{})
	keys := make([][]string, goroutines)
	for i, done := 0, 0; done < goroutines; i++ {
		key := "k" + strconv.Itoa(i)
		if s := fnv1a(key) >> k.shift; len(keys[s]) < perShard {
			keys[s] = append(keys[s], key)
			if len(keys[s]) == perShard {
				done++
			}
		}
	}
	var made, found, wrong atomic.Int64
	race := func(shards, rounds int) {
		var wg sync.WaitGroup
		for g := range shards {
			wg.Go(func() {
				for range rounds {
					for _, key := range keys[g] {
						d, outcome := k.acquire(0, key, 1)
						switch {
						case outcome == KeyFound && d == Rejected:
							found.Add(1)
						case (outcome == KeyCreated || outcome == KeyEvicted) && d == Admitted:
							made.Add(1)
						default:
							wrong.Add(1)
						}
					}
				}
			})
		}
		wg.Wait()
	}
	race(4, 1)
	race(8, 3)
	st := k.Stats()
	assert.Equal(t, KeyedStats{Keys: max, Created: uint64(made.Load()), Evicted: uint64(made.Load()) - max}, st)
	assert.Zero(t, wrong.Load())
	assert.Equal(t, int64(4*perShard+8*perShard*3), made.Load()+found.Load())
	for s := 4; s < 8; s++ { // empty at a full table: each key made there took another shard's place
		assert.Positive(t, k.shards[s].created, "shard %d made keys", s)
	}
	checkKeyedTable(t, k)
}

// A compact table (a key decided only through AcquireKeyAt keeps its state word in its slot)
// decides as limiters of their own do: 4,000 requests of 150 keys at rising times through
// tables of 100, by AcquireKeyAt (compact), by Get and the key's limiter (each key its own
// from the start), and by AcquireKeyAt with a Peek every 7th request (keys that turn into
// limiters of their own midway), get the same decisions and the same counts, for each compact
// kind, under lru and fresh, with one shard and with four.
func TestKeyedCompactDecidesAsLimiters(t *testing.T) {
	for _, spec := range []string{"token-bucket:capacity=3,rate=50/1s", "leaky-bucket:rate=50/1s", "fixed-window:limit=3,window=60ms"} {
		for _, config := range []string{"max=100,evict=lru", "max=100,evict=fresh", "max=100,evict=lru,shards=4"} {
			compact := keyed(t, spec, config, zeroClock{})
			own := keyed(t, spec, config, zeroClock{})
			mixed := keyed(t, spec, config, zeroClock{})
			require.True(t, compact.compact, spec)
			rng := rand.New(rand.NewPCG(1, 2))
			now := time.Duration(0)
			for i := range 4000 {
				now += time.Duration(rng.IntN(300)) * time.Microsecond // a key comes back about every 15ms, before its state is fresh
				key := "k" + strconv.Itoa(rng.IntN(150))
				n := 1 + rng.IntN(compact.MaxPermits())
				want := compact.AcquireKeyAt(now, key, n)
				got := Rejected
				if lim, outcome := own.Get(now, key); outcome != KeyFull {
					got = lim.AcquireAt(now, n)
				}
				require.Equal(t, want, got, "%s %s: request %d (%s, %d at %s), own limiters", spec, config, i, key, n, now)
				require.Equal(t, want, mixed.AcquireKeyAt(now, key, n), "%s %s: request %d, mixed", spec, config, i)
				if i%7 == 0 {
					mixed.Peek("k" + strconv.Itoa(rng.IntN(150)))
				}
			}
			assert.Equal(t, compact.Stats(), own.Stats(), "%s %s", spec, config)
			assert.Equal(t, compact.Stats(), mixed.Stats(), "%s %s", spec, config)
			assert.NotZero(t, compact.Stats().Evicted+compact.Stats().Full, "%s %s: the table was full", spec, config)
			for i := range compact.shards {
				for _, sl := range compact.shards[i].slots {
					require.Nil(t, sl.limiter, "compact: no key has a limiter of its own")
				}
			}
			checkKeyedTable(t, compact)
			checkKeyedTable(t, mixed)
		}
	}
}

// A table of 2^18 token-bucket keys ("client-0" … "client-262143") decided by AcquireKeyAt
// holds at most 100 bytes of heap a key (90 measured): slot 56, key bytes 16, index 16 (64
// shards of about 4,096 keys, 8,192 places each), the slots' growth slack. With a limiter (80)
// and a map entry a key it held 205.6 at 1M keys (BenchmarkKeyedMemory measures 1M: 97.5).
func TestKeyedMemoryPerKey(t *testing.T) {
	const n = 1 << 18
	keys := clientKeys(n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	k := keyed(t, "token-bucket:capacity=10,rate=100/1s", fmt.Sprintf("max=%d", n), zeroClock{})
	for _, key := range keys {
		k.AcquireKeyAt(0, key, 1)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perKey := float64(after.HeapAlloc-before.HeapAlloc) / n
	runtime.KeepAlive(k)
	runtime.KeepAlive(keys) // the caller's strings are not the table's
	t.Logf("%.1f bytes a key", perKey)
	assert.Equal(t, n, k.Len())
	assert.LessOrEqual(t, perKey, 100.0)
	assert.Equal(t, uintptr(56), unsafe.Sizeof(keyedSlot{}))
}
