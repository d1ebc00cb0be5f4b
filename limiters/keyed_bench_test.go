package limiters_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// BenchmarkKeyedExistingKey is the hot path: a key the table holds, decided at a rising time
// (admitted about half the time). 0 allocs/op.
func BenchmarkKeyedExistingKey(b *testing.B) {
	k := must(limiters.NewKeyed(limiters.TokenBucketSpec{Capacity: 10, Rate: limiters.PerSecond(1_000_000)}, limiters.KeyedConfig{MaxKeys: 1 << 20}, zeroClock{}))
	k.AcquireKeyAt(0, "client-42", 1)
	key := []byte("client-42")
	b.Run("string", func(b *testing.B) {
		b.ReportAllocs()
		now := time.Duration(0)
		for b.Loop() {
			now += 500 * time.Nanosecond
			k.AcquireKeyAt(now, "client-42", 1)
		}
	})
	b.Run("bytes", func(b *testing.B) {
		b.ReportAllocs()
		now := time.Duration(0)
		for b.Loop() {
			now += 500 * time.Nanosecond
			k.AcquireKeyBytesAt(now, key, 1)
		}
	})
	b.Run("parallel-distinct", func(b *testing.B) {
		keys := clientKeys(4096)
		for _, key := range keys {
			k.AcquireKeyAt(0, key, 1)
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				i++
				k.AcquireKeyAt(time.Duration(i)*time.Microsecond, keys[i&4095], 1)
			}
		})
	})
}

// BenchmarkKeyedDistinctKeys is decisions per second over 1M distinct keys, round robin
// (every key's state is cold in the CPU's caches), in a table of max=1M that holds them all
// (no eviction): the cost of the table at scale, beside the hot path above and a floor of a
// map and GCRA's arithmetic.
func BenchmarkKeyedDistinctKeys(b *testing.B) {
	const n = 1 << 20
	keys := clientKeys(n)
	for _, policy := range []limiters.Evict{limiters.EvictLRU, limiters.EvictFresh} {
		b.Run(string(policy), func(b *testing.B) {
			k := must(limiters.NewKeyed(limiters.TokenBucketSpec{Capacity: 10, Rate: limiters.PerSecond(100)}, limiters.KeyedConfig{MaxKeys: n, Evict: policy}, zeroClock{}))
			for _, key := range keys {
				k.AcquireKeyAt(0, key, 1)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				k.AcquireKeyAt(time.Duration(i)*time.Microsecond, keys[i&(n-1)], 1)
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
	// The floor: the same round robin over a map[string]int64 of TATs and GCRA's arithmetic
	// inline, nothing else (no recency, no eviction, no lock, no interface call).
	b.Run("floor-map-gcra", func(b *testing.B) {
		const interval = int64(10 * time.Millisecond) // 100/s
		const tolerance = 10 * interval               // capacity 10
		tats := make(map[string]int64, n)
		for _, key := range keys {
			tats[key] = interval // one taken at 0, as the tables above
		}
		b.ReportAllocs()
		i, admitted := 0, 0
		for b.Loop() {
			now := int64(i) * int64(time.Microsecond)
			key := keys[i&(n-1)]
			backlog := max(tats[key]-now, 0)
			if backlog+interval <= tolerance {
				tats[key] = now + backlog + interval
				admitted++
			}
			i++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
		if admitted == 0 {
			b.Fatal("the floor admitted nothing")
		}
	})
	// An attacker's keys through a table of half as many: every request makes a key and
	// evicts one (LRU), the table's worst case. The table is full (one pass over the keys)
	// before the clock starts.
	b.Run("lru-churn", func(b *testing.B) {
		k := must(limiters.NewKeyed(limiters.TokenBucketSpec{Capacity: 10, Rate: limiters.PerSecond(100)}, limiters.KeyedConfig{MaxKeys: n / 2}, zeroClock{}))
		i := 0
		for ; i < n; i++ {
			k.AcquireKeyAt(time.Duration(i)*time.Microsecond, keys[i&(n-1)], 1)
		}
		b.ReportAllocs()
		for b.Loop() {
			k.AcquireKeyAt(time.Duration(i)*time.Microsecond, keys[i&(n-1)], 1)
			i++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	})
}

// BenchmarkKeyedMemory is the heap a table of 1M keys decided by AcquireKeyAt holds, per key:
// the index, the slots, each key's state (its word in a compact table: the token bucket and
// the fixed window; else its limiter) and the table's copy of the key ("client-123456", 13
// bytes).
// Run with -benchtime=1x; the number is bytes/key.
func BenchmarkKeyedMemory(b *testing.B) {
	const n = 1 << 20
	for _, spec := range []limiters.Spec{
		limiters.TokenBucketSpec{Capacity: 10, Rate: limiters.PerSecond(100)},
		limiters.FixedWindowSpec{Limit: 100, Window: time.Second},
		peers.NginxSpec{Rate: limiters.PerSecond(10), Burst: 5},
	} {
		b.Run(string(spec.Kind()), func(b *testing.B) {
			keys := clientKeys(n)
			var perKey float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				k := must(limiters.NewKeyed(spec, limiters.KeyedConfig{MaxKeys: n}, zeroClock{}))
				for _, key := range keys {
					k.AcquireKeyAt(0, key, 1)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				perKey = float64(after.HeapAlloc-before.HeapAlloc) / n
				runtime.KeepAlive(k)
			}
			b.ReportMetric(perKey, "bytes/key")
		})
	}
}
