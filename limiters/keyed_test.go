package limiters

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// Shards: a table above 4096 keys is split, each shard bounded by its part, the whole by
// MaxKeys exactly.
func TestKeyedShardsBoundTheWhole(t *testing.T) {
	for _, c := range []struct {
		config string
		shards int
	}{{"max=4095", 1}, {"max=4096", 1}, {"max=8192", 2}, {"max=1000000", 64}, {"max=100,shards=8", 8}} {
		k := keyed(t, "fixed-window:limit=1,window=1s", c.config, zeroClock{})
		assert.Len(t, k.shards, c.shards, c.config)
		total := 0
		for i := range k.shards {
			total += int(k.shards[i].capacity)
		}
		assert.Equal(t, k.config.MaxKeys, total, c.config)
	}
	k := keyed(t, "fixed-window:limit=1,window=1s", "max=100,shards=8", zeroClock{})
	for i := range 1000 {
		k.AcquireKeyAt(0, "k"+strconv.Itoa(i), 1)
	}
	assert.Equal(t, 100, k.Len(), "full, never more")
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

// A keyed spec reads, prints back, validates and refuses to build one limiter.
func TestKeyedSpec(t *testing.T) {
	s, err := ParseKeyedSpec(" keys( max=1000, evict=fresh ) : nginx:rate=10r/s,burst=5")
	require.NoError(t, err)
	assert.Equal(t, "keys(max=1000,evict=fresh):nginx:rate=10r/s,burst=5", s.String())
	again, err := ParseKeyedSpec(s.String())
	require.NoError(t, err)
	assert.Equal(t, s, again)
	assert.Equal(t, KindNginx, s.Kind())
	assert.NoError(t, s.Validate())
	_, bounded := s.AdmissionBound(time.Second)
	assert.False(t, bounded, "no bound over all keys")
	assert.Equal(t, s.Spec.InitialPermits(), s.InitialPermits())
	_, err = s.New(zeroClock{})
	assert.ErrorContains(t, err, "NewKeyed")
	assert.True(t, IsKeyedSpec(s.String()))
	assert.False(t, IsKeyedSpec("token-bucket:capacity=1,rate=1/1s"))
	for text, want := range map[string]string{
		"keys(max=10:token-bucket:capacity=1,rate=1/1s": "no closing )",
		"keys(max=10)token-bucket:capacity=1,rate=1/1s": "expected : and the limiter",
		"keys(max=0):token-bucket:capacity=1,rate=1/1s": "max=0",
		"keys(max=10):token-bucket:capacity=1":          "rate=: missing",
		"token-bucket:capacity=1,rate=1/1s":             "starts with keys(",
	} {
		_, err := ParseKeyedSpec(text)
		if assert.Error(t, err, text) {
			assert.Contains(t, err.Error(), want, text)
		}
	}
}
