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

// step is one request on a virtual timeline, in the style of x/time/rate's rate_test.go.
type step struct {
	at   time.Duration
	n    int
	want Decision
}

func runSteps(t *testing.T, l Limiter, steps []step) {
	t.Helper()
	for i, s := range steps {
		assert.Equal(t, s.want, l.AcquireAt(s.at, s.n), "%s: step %d at %v n=%d", l, i, s.at, s.n)
	}
}

// The emission interval, rounded up to a whole nanosecond.
func TestSeedIntervals(t *testing.T) {
	for _, c := range []struct {
		rate Rate
		want time.Duration
	}{
		{PerSecond(100), 10 * time.Millisecond},
		{PerSecond(3), 333_333_334}, // 333,333,333.3… rounded up, never down
		{Rate{7, 7 * time.Millisecond}, time.Millisecond},
		{Rate{7, 100 * time.Millisecond}, 14_285_715}, // 14,285,714.28… rounded up
		{Rate{1, time.Hour}, time.Hour},
		{Rate{1_000_000_000, time.Second}, 1}, // the finest accepted
	} {
		assert.Equal(t, c.want, c.rate.Interval(), c.rate.String())
	}
}

// The seed's numbers: 100/s capacity 3 after 50ms of idle has 3; after a drained burst,
// 20ms of idle refills 2; the leaky bucket never holds more than 1.
func TestSeedAvailableAfterIdle(t *testing.T) {
	const ms = time.Millisecond
	b := must(NewTokenBucket(3, PerSecond(100), virtualclock.New()))
	l := must(NewLeakyBucket(PerSecond(100), virtualclock.New()))
	for _, c := range []struct {
		at            time.Duration
		bucket, leaky int
	}{
		{0, 3, 1},
		{50 * ms, 3, 1},
		{time.Hour, 3, 1}, // never more than capacity
	} {
		assert.Equal(t, c.bucket, b.AvailableAt(c.at), "token bucket at %v", c.at)
		assert.Equal(t, c.leaky, l.AvailableAt(c.at), "leaky bucket at %v", c.at)
	}
	require.Equal(t, Admitted, b.AcquireAt(time.Hour, 3))
	assert.Equal(t, 0, b.AvailableAt(time.Hour))
	assert.Equal(t, 0, b.AvailableAt(time.Hour+9*ms))
	assert.Equal(t, 1, b.AvailableAt(time.Hour+10*ms))
	assert.Equal(t, 2, b.AvailableAt(time.Hour+20*ms))
	assert.Equal(t, 3, b.AvailableAt(time.Hour+30*ms))
}

// 100/s leaky bucket: the first of two simultaneous requests passes, the second waits 10ms.
func TestSeedLeakyBucketTimeline(t *testing.T) {
	const ms = time.Millisecond
	runSteps(t, must(NewLeakyBucket(PerSecond(100), virtualclock.New())), []step{
		{0, 1, Admitted},
		{0, 1, Rejected}, // the second at the same instant waits one interval
		{10*ms - 1, 1, Rejected},
		{10 * ms, 1, Admitted},
		{60 * ms, 1, Admitted},
		{60 * ms, 1, Rejected}, // 50ms idle accumulated nothing
		{60 * ms, 2, Never},
		{70 * ms, 0, Invalid},
	})
}

// Warm-up, capacity 10 at 100/s over 10s: cold burst 3 at I = 30ms, warm burst 10.
func TestSeedWarmUpTimeline(t *testing.T) {
	const ms = time.Millisecond
	runSteps(t, must(NewWarmUpTokenBucket(10, PerSecond(100), 10*time.Second, virtualclock.New())), []step{
		{0, 3, Admitted},
		{0, 1, Rejected}, // the cold burst is ⌊10/3⌋ = 3, leaving 10ms of τ = 100ms unused
		{19_960_078, 1, Rejected},
		// At t = 19.960079ms, I(t) = 10ms + ⌊20ms·(10s − t)/10s⌋ = 29.960079ms and the
		// backlog 90ms − t: their sum is exactly τ.
		{19_960_079, 1, Admitted},
		{49_860_357, 1, Rejected},
		{49_860_358, 1, Admitted}, // I ≈ 29.9ms later: one per I(a) while warming
		{10 * time.Second, 10, Admitted},
		{10 * time.Second, 1, Rejected}, // the warm burst is the capacity
		{10*time.Second + 10*ms, 1, Admitted},
		{10*time.Second + 10*ms, 11, Never},
	})
}

// Fixed window of 100 per 1s: the boundary burst.
func TestSeedFixedWindowTimeline(t *testing.T) {
	const ms = time.Millisecond
	runSteps(t, must(NewFixedWindow(100, time.Second, virtualclock.New())), []step{
		{999 * ms, 100, Admitted},
		{999 * ms, 1, Rejected}, // the window [0, 1s) is spent
		{time.Second, 100, Admitted},
		{1500 * ms, 1, Rejected}, // and so is [1s, 2s): 200 passed within 1ms
		{2 * time.Second, 1, Admitted},
	})
}

// Sliding window of 100 per 1s in 10 slots, the doc comment's numbers.
func TestSeedSlidingWindowTimeline(t *testing.T) {
	const ms = time.Millisecond
	runSteps(t, must(NewSlidingWindow(100, time.Second, 10, virtualclock.New())), []step{
		{100*ms - 1, 100, Admitted},
		{999 * ms, 1, Rejected}, // slot 0 is still counted until 1s
		{time.Second, 100, Admitted},
		{1050 * ms, 1, Rejected}, // the fixed window would also refuse here…
		{1100 * ms, 1, Rejected}, // …but not here: the 100 from 1s are counted until 2s
		{2 * time.Second, 1, Admitted},
	})
}

// The bulkhead story: 10/s is a happy rate limiter while 30 calls of 3s each would be in
// flight; a bulkhead of 20 refuses the 21st.
func TestSeedBulkhead(t *testing.T) {
	rate := must(NewTokenBucket(10, PerSecond(10), virtualclock.New()))
	bulkhead := must(NewConcurrency(20))
	admittedByRate, inFlight := 0, 0
	for i := range 30 { // one call every 100ms, each lasting 3s: none returns within 3s
		at := time.Duration(i) * 100 * time.Millisecond
		if rate.AcquireAt(at, 1) == Admitted {
			admittedByRate++
			if bulkhead.TryAcquire(1) {
				inFlight++
			}
		}
	}
	assert.Equal(t, 30, admittedByRate, "the rate limiter is perfectly happy")
	assert.Equal(t, 20, inFlight, "the bulkhead stops at 20")
	assert.Equal(t, 20, bulkhead.InFlight())
}

// Callers whose time runs behind (a goroutine that read the clock, then was descheduled)
// never undo what newer callers built: GCRA judges them at their own time against the
// newer schedule (only stricter), the fixed window counts them against the newest window,
// the sliding window refuses them once a newer caller has moved a slot past theirs.
func TestLateCallers(t *testing.T) {
	const ms = time.Millisecond
	t.Run("token-bucket", func(t *testing.T) {
		runSteps(t, must(NewTokenBucket(2, PerSecond(100), virtualclock.New())), []step{
			{100 * ms, 1, Admitted}, // TAT 110ms
			{50 * ms, 1, Rejected},  // late: backlog 60ms from its own time
			{100 * ms, 1, Admitted}, // the same request at the newest time passes
			{95 * ms, 1, Rejected},
		})
	})
	t.Run("fixed-window", func(t *testing.T) {
		f := must(NewFixedWindow(3, time.Second, virtualclock.New()))
		runSteps(t, f, []step{
			{1500 * ms, 2, Admitted},
			{900 * ms, 1, Admitted}, // late into window 0: counted against window 1, not a reset
			{900 * ms, 1, Rejected}, // window 1 is full, although window 0 is empty
			{1999 * ms, 1, Rejected},
			{2 * time.Second, 3, Admitted},
		})
		assert.Equal(t, 0, f.AvailableAt(2*time.Second))
		assert.Equal(t, 0, f.AvailableAt(1900*ms), "a late reader sees the newest window")
	})
	t.Run("sliding-window", func(t *testing.T) {
		runSteps(t, must(NewSlidingWindow(5, time.Second, 10, virtualclock.New())), []step{
			{150 * ms, 1, Admitted},
			{250 * ms, 1, Admitted},
			{249 * ms, 1, Admitted}, // late within the newest slot: nothing it counts was moved on
			{150 * ms, 1, Rejected}, // late by a slot: a newer caller has moved slot 2 on
			{1250 * ms, 1, Admitted},
			{250 * ms, 1, Rejected},  // a window late: generation 1 owns slot 2's bucket
			{1250 * ms, 3, Admitted}, // 150ms and 250ms expired at 1.1s and 1.2s
			{1250 * ms, 1, Admitted},
			{1250 * ms, 1, Rejected}, // 5 in the live slots [300ms, 1.3s)
		})
	})
}

// Snapshots show what explains the next decision: the sliding window's slots, oldest first,
// with live counts and the stale counts a read ignores.
func TestSnapshots(t *testing.T) {
	const ms = time.Millisecond
	s := must(NewSlidingWindow(10, time.Second, 4, virtualclock.New())) // slots of 250ms
	require.Equal(t, Admitted, s.AcquireAt(100*ms, 2))                  // slot 0
	require.Equal(t, Admitted, s.AcquireAt(600*ms, 3))                  // slot 2
	st := s.Snapshot(1100 * ms)                                         // slot 4: slot 0's bucket is stale
	assert.Equal(t, 3, st.Count)
	assert.Equal(t, 7, st.Available)
	assert.Equal(t, 250*ms, st.WindowStart)
	assert.Equal(t, 1250*ms, st.WindowEnd)
	assert.Equal(t, []Slot{
		{Start: 250 * ms, Live: true}, // never written: its zero word is generation 0, empty
		{Start: 500 * ms, Count: 3, Live: true},
		{Start: 750 * ms, Live: true},
		{Start: 1000 * ms, StaleCount: 2, StaleStart: 0}, // slot 0's permits, ignored
	}, st.Slots)
	assert.Contains(t, st.Explain(8, Rejected), "oldest live slot (3 permits, from 500ms) expires at 1.5s")

	b := must(NewTokenBucket(3, PerSecond(100), virtualclock.New()))
	b.AcquireAt(0, 2)
	bs := b.Snapshot(5 * ms)
	assert.Equal(t, State{Kind: KindTokenBucket, At: 5 * ms, Available: 1, MaxPermits: 3,
		Arrival: 20 * ms, Interval: 10 * ms, Tolerance: 30 * ms}, bs)
	assert.Equal(t, 15*ms, bs.Backlog())

	f := must(NewFixedWindow(5, time.Second, virtualclock.New()))
	f.AcquireAt(1200*ms, 4)
	assert.Equal(t, State{Kind: KindFixedWindow, At: 1500 * ms, Available: 1, MaxPermits: 5, Limit: 5, Count: 4,
		Window: time.Second, WindowStart: time.Second, WindowEnd: 2 * time.Second}, f.Snapshot(1500*ms))

	c := must(NewConcurrency(4))
	c.AcquireAt(0, 3)
	assert.Equal(t, State{Kind: KindConcurrency, At: 7, Available: 1, MaxPermits: 4, InFlight: 3, Max: 4}, c.Snapshot(7))
}
