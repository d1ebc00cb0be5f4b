package limiters_test

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// BenchmarkKeyedNginxExistingKey is an nginx zone's hot path: a key the zone holds, decided
// at a rising time (admitted about half the time: 1000r/s, a request every 500µs), beside the
// same table under lru. A hit expires nothing, so both cost the same: 0 allocs/op.
func BenchmarkKeyedNginxExistingKey(b *testing.B) {
	spec := peers.NginxSpec{Rate: limiters.PerSecond(1000), Burst: 5, NoDelay: true}
	for _, evict := range []limiters.Evict{limiters.EvictNginx, limiters.EvictLRU} {
		k := must(limiters.NewKeyed(spec, limiters.KeyedConfig{MaxKeys: 80_000, Evict: evict}, zeroClock{}))
		for _, key := range clientKeys(4096) {
			k.AcquireKeyAt(0, key, 1)
		}
		key := []byte("client-42")
		b.Run(string(evict)+"/string", func(b *testing.B) {
			b.ReportAllocs()
			now := time.Duration(0)
			for b.Loop() {
				now += 500 * time.Microsecond
				k.AcquireKeyAt(now, "client-42", 1)
			}
		})
		b.Run(string(evict)+"/bytes", func(b *testing.B) {
			b.ReportAllocs()
			now := time.Duration(0)
			for b.Loop() {
				now += 500 * time.Microsecond
				k.AcquireKeyBytesAt(now, key, 1)
			}
		})
	}
}
