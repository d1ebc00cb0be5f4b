package limiters

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/virtualclock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The seed's example: 100/s with capacity 3 accumulates a burst of 3 after 50ms of idle; a
// leaky bucket at 100/s accumulates nothing.
func TestSeedBurstAfterIdle(t *testing.T) {
	clock := virtualclock.New()
	bucket, err := NewTokenBucket(3, PerSecond(100), clock)
	require.NoError(t, err)
	leak, err := NewLeakyBucket(PerSecond(100), clock)
	require.NoError(t, err)

	require.NoError(t, clock.Advance(50*time.Millisecond))
	assert.Equal(t, 3, bucket.Available(), "the burst accumulated")
	assert.Equal(t, 1, leak.Available(), "nothing accumulated")
}

// 100/s, capacity 3: three pass at once, the 4th waits until 10ms, then one per 10ms.
func TestTokenBucketTimeline(t *testing.T) {
	const ms = time.Millisecond
	b, err := NewTokenBucket(3, PerSecond(100), virtualclock.New())
	require.NoError(t, err)
	steps := []struct {
		at   time.Duration
		n    int
		want Decision
	}{
		{0, 1, Admitted},
		{0, 1, Admitted},
		{0, 1, Admitted},
		{0, 1, Rejected},       // τ = 30ms spent
		{9 * ms, 1, Rejected},  // the next permit is due at 10ms
		{10 * ms, 1, Admitted}, // one per T
		{10 * ms, 1, Rejected},
		{15 * ms, 4, Never},    // more than capacity: can never pass
		{15 * ms, 0, Invalid},  // n must be positive
		{60 * ms, 3, Admitted}, // 40ms idle refilled all 3 (TAT was 40ms)
	}
	for i, s := range steps {
		assert.Equal(t, s.want, b.AcquireAt(s.at, s.n), "step %d at %v n=%d", i, s.at, s.n)
	}
}

func TestSpecRoundTrip(t *testing.T) {
	clock := virtualclock.New()
	for _, info := range Kinds() {
		l, err := Parse(info.Example, clock)
		require.NoError(t, err, info.Example)
		assert.Equal(t, info.Example, l.String())
		assert.Equal(t, info.Kind, l.Kind())
	}
}
