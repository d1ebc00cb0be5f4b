package peers

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real library is checked in the crosscheck module (sentinel-golang keeps process-global
// state, so it cannot be a dependency of a lane); these are the doc comment's numbers and the
// properties the rest of ratelab relies on.

func sentinel(t *testing.T, text string) *Sentinel {
	t.Helper()
	l, err := limiters.Parse(text, zeroClock{})
	require.NoError(t, err, text)
	return l.(*Sentinel)
}

// admitted counts the requests of one permit admitted of count at at.
func admittedAt(l limiters.Limiter, at time.Duration, count int) int {
	n := 0
	for range count {
		if l.AcquireAt(at, 1) == limiters.Admitted {
			n++
		}
	}
	return n
}

func TestSentinelDocumentedExamples(t *testing.T) {
	const ms = time.Millisecond
	t.Run("two 500ms buckets", func(t *testing.T) {
		l := sentinel(t, "sentinel:threshold=100")
		assert.Equal(t, 100, admittedAt(l, 700*ms, 120), "100 pass at 0.7s")
		assert.Equal(t, 0, admittedAt(l, 1200*ms, 1), "[0.5s, 1s) and [1s, 1.5s) hold them at 1.2s")
		assert.Equal(t, 0, admittedAt(l, 1499*ms, 1), "and at 1.499s")
		assert.Equal(t, 100, admittedAt(l, 1500*ms, 120), "the 0.7s bucket leaves the window at 1.5s")

		l = sentinel(t, "sentinel:threshold=100")
		assert.Equal(t, 100, admittedAt(l, 499*ms, 100))
		assert.Equal(t, 100, admittedAt(l, 1000*ms, 101), "200 within 501ms")
	})
	t.Run("a fractional threshold", func(t *testing.T) {
		l := sentinel(t, "sentinel:threshold=2.5")
		assert.Equal(t, 2, l.MaxPermits())
		assert.Equal(t, 2, admittedAt(l, 0, 5))
		assert.Equal(t, limiters.Never, l.AcquireAt(time.Hour, 3), "3 > 2.5 at any time")
	})
	t.Run("offset", func(t *testing.T) {
		l := sentinel(t, "sentinel:threshold=10,offset=250ms")
		assert.Equal(t, 10, admittedAt(l, 0, 12), "at 250ms of the bucket [0, 500ms)")
		assert.Equal(t, 0, admittedAt(l, 749*ms, 1), "the bucket after is [500ms, 1s): 749ms of the run")
		assert.Equal(t, 10, admittedAt(l, 750*ms, 12), "and from 1s on sentinel's clock the first has left")
	})
	t.Run("warm-up cold start", func(t *testing.T) {
		l := sentinel(t, "sentinel:threshold=100,strategy=warmup,warmup=10s")
		p := l.params
		assert.Equal(t, int64(500), p.warning)
		assert.Equal(t, int64(1000), p.maxToken)
		assert.InDelta(t, 0.00004, p.slope, 1e-18)
		assert.Equal(t, 33.0, p.coldQps, "⌊100⌋/3 in integers")
		assert.Equal(t, 33, l.AvailableAt(0), "cold: QPS 33.3")
		var perSecond []int
		for sec := range 13 {
			c := 0
			for i := range 500 { // saturating: one request every 2ms
				if l.AcquireAt(time.Duration(sec)*time.Second+time.Duration(2*i)*ms, 1) == limiters.Admitted {
					c++
				}
			}
			perSecond = append(perSecond, c)
		}
		assert.Equal(t, []int{33, 34, 36, 38, 41, 44, 47, 52, 58, 68, 83, 100, 100}, perSecond)
	})
	t.Run("warm-up sync from the buckets before the current one", func(t *testing.T) {
		// 33 pass in [0, 1s); the first request of second 1 comes at 1.7s, when "the
		// previous QPS" is the buckets [0.5s, 1s) and [1s, 1.5s): only the passes after 0.5s.
		l := sentinel(t, "sentinel:threshold=100,strategy=warmup,warmup=10s")
		require.Equal(t, 20, admittedAt(l, 100*ms, 20))
		require.Equal(t, 13, admittedAt(l, 600*ms, 40))
		l.AcquireAt(1700*ms, 1)
		assert.Equal(t, int64(1000-13), l.warm.stored, "maxToken less the 13 of [0.5s, 1s)")
	})
	t.Run("throttling", func(t *testing.T) {
		l := sentinel(t, "sentinel:threshold=10,behavior=throttling,max_queue=500ms")
		var waits []time.Duration
		blocked := 0
		for range 10 {
			if r := l.ReserveAt(0, 1, l.spec.CallerWait()); r.Decision == limiters.Admitted {
				waits = append(waits, r.Wait)
			} else {
				blocked++
			}
		}
		assert.Equal(t, []time.Duration{0, 100 * ms, 200 * ms, 300 * ms, 400 * ms, 500 * ms}, waits)
		assert.Equal(t, 4, blocked)

		l = sentinel(t, "sentinel:threshold=3,behavior=throttling,max_queue=1s")
		for i, want := range []time.Duration{0, 333_333_334, 666_666_668} {
			r := l.ReserveAt(0, 1, time.Second)
			assert.Equal(t, limiters.Admitted, r.Decision, "request %d", i)
			assert.Equal(t, want, r.Wait, "request %d", i)
		}
		r := l.ReserveAt(0, 1, time.Second)
		assert.Equal(t, limiters.Rejected, r.Decision, "the fourth's turn is 1.000000002s away")
		assert.Equal(t, time.Second+2, r.Wait)
		assert.Equal(t, limiters.Rejected, l.AcquireAt(0, 1), "a caller that cannot wait")
		assert.Equal(t, limiters.Admitted, l.AcquireAt(time.Second+2, 1), "the next turn, at once")
	})
}

// With a whole threshold and a clock that never runs back, direct + reject decides as
// ratelab's sliding window of two slots over 1s does, request for request.
func TestSentinelDirectIsASlidingWindowOfTwoSlots(t *testing.T) {
	for seed := range uint64(20) {
		s := sentinel(t, "sentinel:threshold=17")
		w, err := limiters.NewSlidingWindow(17, time.Second, 2, zeroClock{})
		require.NoError(t, err)
		r := rand.New(rand.NewPCG(seed, 3))
		now := time.Duration(0)
		for i := range 3000 {
			now += time.Duration(r.Int64N(int64(30 * time.Millisecond)))
			n := 1 + r.IntN(4)
			got, want := s.AcquireAt(now, n), w.AcquireAt(now, n)
			require.Equal(t, want, got, "seed %d request %d: %d at %v", seed, i, n, now)
			require.Equal(t, w.AvailableAt(now), s.AvailableAt(now))
		}
	}
}

// No interval of length L holds more admissions than AdmissionBound(L), on random traffic
// and on saturating demand, which reaches it for reject.
func TestSentinelAdmissionBound(t *testing.T) {
	specs := []string{
		"sentinel:threshold=20", "sentinel:threshold=7.5,offset=300ms",
		"sentinel:threshold=30,strategy=warmup,warmup=2s",
		"sentinel:threshold=10,behavior=throttling", "sentinel:threshold=10,behavior=throttling,max_queue=500ms",
		"sentinel:threshold=3,behavior=throttling,max_queue=1s",
		"sentinel:threshold=40,strategy=warmup,warmup=3s,behavior=throttling,max_queue=700ms",
	}
	lengths := []time.Duration{time.Nanosecond, 100 * time.Millisecond, 500 * time.Millisecond, 501 * time.Millisecond,
		time.Second, 2500 * time.Millisecond}
	for _, text := range specs {
		spec := must(limiters.ParseSpec(text))
		for seed := range uint64(6) {
			l := sentinel(t, text)
			r := rand.New(rand.NewPCG(seed, 11))
			var times []time.Duration
			now := time.Duration(0)
			for range 4000 {
				if r.IntN(3) > 0 {
					now += time.Duration(r.Int64N(int64(20 * time.Millisecond)))
				}
				n := 1 + r.IntN(l.MaxPermits())
				if r.IntN(3) > 0 {
					n = 1
				}
				if l.ReserveAt(now, n, spec.(SentinelSpec).CallerWait()).Decision == limiters.Admitted {
					for range n {
						times = append(times, now)
					}
				}
			}
			for _, L := range lengths {
				bound, ok := limiters.AdmissionBound(spec, L)
				require.True(t, ok)
				assert.LessOrEqual(t, int64(maxInWindow(times, L)), bound, "%s seed %d over %v", text, seed, L)
			}
		}
	}
	b, _ := limiters.AdmissionBound(must(limiters.ParseSpec("sentinel:threshold=100")), time.Second)
	assert.Equal(t, int64(200), b)
	b, _ = limiters.AdmissionBound(must(limiters.ParseSpec("sentinel:threshold=100")), 501*time.Millisecond)
	assert.Equal(t, int64(200), b, "100 at 0.499s, 100 at 1s")
	b, _ = limiters.AdmissionBound(must(limiters.ParseSpec("sentinel:threshold=100")), 500*time.Millisecond)
	assert.Equal(t, int64(100), b)
	b, _ = limiters.AdmissionBound(must(limiters.ParseSpec("sentinel:threshold=10,behavior=throttling,max_queue=500ms")), time.Second)
	assert.Equal(t, int64(24), b)
	// Reached: a request of ⌊QPS⌋ (its own interval is not waited for), then saturating single
	// requests, each waiting as long as max_queue lets it.
	l := sentinel(t, "sentinel:threshold=10,behavior=throttling,max_queue=500ms")
	require.Equal(t, limiters.Admitted, l.AcquireAt(0, 10))
	got := 10
	for at := time.Duration(0); at < time.Second; at += time.Millisecond {
		for l.ReserveAt(at, 1, 500*time.Millisecond).Decision == limiters.Admitted {
			got++
		}
	}
	assert.Equal(t, 24, got, "decided in [0, 1s): 10 + 5 at 0, then one per 100ms")
}

func TestSentinelValidate(t *testing.T) {
	for _, c := range []struct{ spec, field string }{
		{"sentinel:threshold=0.5", "threshold"},
		{"sentinel:threshold=1000001", "threshold"},
		{"sentinel:threshold=1.0005", "threshold"},
		{"sentinel:threshold=NaN", "threshold"},
		{"sentinel:threshold=10,strategy=warmup", "warmup"},
		{"sentinel:threshold=10,strategy=warmup,warmup=1500ms", "warmup"},
		{"sentinel:threshold=10,strategy=warmup,warmup=1000001s", "warmup"},
		{"sentinel:threshold=1,strategy=warmup,warmup=1s", "warmup"}, // warning = max = 0: slope 1/0
		{"sentinel:threshold=10,strategy=warmup,warmup=1s,cold_factor=1", "cold_factor"},
		{"sentinel:threshold=10,strategy=warmup,warmup=1s,cold_factor=1001", "cold_factor"},
		{"sentinel:threshold=10,warmup=1s", "warmup"},
		{"sentinel:threshold=10,cold_factor=4", "cold_factor"},
		{"sentinel:threshold=10,max_queue=1s", "max_queue"},
		{"sentinel:threshold=10,behavior=throttling,max_queue=1500us", "max_queue"},
		{"sentinel:threshold=10,behavior=throttling,max_queue=4294967296ms", "max_queue"},
		{"sentinel:threshold=10,strategy=warmup,warmup=2s,behavior=throttling,max_queue=9s", "max_queue"},
		{"sentinel:threshold=10,offset=10s", "offset"},
	} {
		spec, err := limiters.ParseSpec(c.spec)
		require.NoError(t, err, c.spec)
		err = spec.Validate()
		var ce *limiters.ConfigError
		if assert.True(t, errors.As(err, &ce), "%s: %v", c.spec, err) {
			assert.Equal(t, c.field, ce.Field, "%s: %v", c.spec, err)
		}
	}
	for _, text := range []string{"sentinel:threshold=1", "sentinel:threshold=1000000", "sentinel:threshold=0.001e3",
		"sentinel:threshold=10,strategy=warmup,warmup=1s,cold_factor=2", "sentinel:threshold=10,behavior=throttling,max_queue=4294967295ms",
		"sentinel:threshold=10,strategy=warmup,warmup=2s,behavior=throttling,max_queue=8s", "sentinel:threshold=10,offset=9999ms",
		"sentinel:threshold=10,cold_factor=3"} {
		spec, err := limiters.ParseSpec(text)
		require.NoError(t, err, text)
		assert.NoError(t, spec.Validate(), text)
	}
	for _, text := range []string{"sentinel:threshold=ten", "sentinel:threshold=1,strategy=cold", "sentinel:threshold=1,behavior=queue",
		"sentinel:threshold=1,max_queue=-1ms"} {
		_, err := limiters.ParseSpec(text)
		assert.Error(t, err, text)
	}
}

// A pass is undone exactly at its instant, and only then; the warm-up's sync stays.
func TestSentinelRefundAndCancel(t *testing.T) {
	for _, text := range []string{"sentinel:threshold=5", "sentinel:threshold=5,behavior=throttling,max_queue=1s",
		"sentinel:threshold=50,strategy=warmup,warmup=2s,behavior=throttling,max_queue=1s"} {
		l := sentinel(t, text)
		require.Equal(t, limiters.Admitted, l.AcquireAt(time.Second, 2))
		before := l.Snapshot(time.Second)
		r := l.ReserveAt(time.Second, 2, time.Second)
		require.Equal(t, limiters.Admitted, r.Decision, text)
		l.CancelAt(time.Second, r)
		assert.Equal(t, before, l.Snapshot(time.Second), "%s: cancelled at its instant, as if never made", text)
		l.CancelAt(time.Second, r)
		assert.Equal(t, before, l.Snapshot(time.Second), "%s: a second cancel gives nothing more", text)

		require.Equal(t, limiters.Admitted, l.ReserveAt(2*time.Second, 1, time.Second).Decision)
		after := l.Snapshot(3 * time.Second)
		l.RefundAt(3*time.Second, 1)
		assert.Equal(t, after, l.Snapshot(3*time.Second), "%s: later, nothing comes back", text)
	}
}

func TestSentinelSnapshotAndExplain(t *testing.T) {
	l := sentinel(t, "sentinel:threshold=4")
	admittedAt(l, 100*time.Millisecond, 4)
	st := l.Snapshot(600 * time.Millisecond)
	assert.Equal(t, 4.0, st.Level)
	assert.Equal(t, 4.0, st.LevelMax)
	assert.Equal(t, time.Second, st.NextFree, "the 100ms bucket leaves the window at 1s")
	assert.Equal(t, "sentinel counts 4 passes in its last two 500ms buckets against a threshold of 4: 1 more would exceed it, "+
		"so it is blocked (one passes in 400ms, when the older bucket leaves the window)", st.Explain(1, limiters.Rejected))

	l = sentinel(t, "sentinel:threshold=10,behavior=throttling,max_queue=300ms")
	for range 3 {
		l.ReserveAt(0, 1, 300*time.Millisecond)
	}
	st = l.Snapshot(0)
	assert.Equal(t, "queued", st.LevelName)
	assert.InDelta(t, 2.0, st.Level, 1e-9, "the last turn is 200ms ahead: two intervals")
	assert.InDelta(t, 3.0, st.LevelMax, 1e-9)
	assert.Equal(t, 300*time.Millisecond, st.NextFree)
	assert.True(t, strings.HasSuffix(st.Explain(1, limiters.Admitted), "it takes the next turn, one interval after the last, and waits for it"))
	assert.True(t, strings.Contains(st.Explain(2, limiters.Rejected), "after max_queue"), st.Explain(2, limiters.Rejected))
}

// Example: the three behaviours at their doc comment's numbers.
func ExampleSentinel() {
	reject, _ := limiters.Parse("sentinel:threshold=100", zeroClock{})
	n := 0
	for range 120 {
		if reject.AcquireAt(700*time.Millisecond, 1) == limiters.Admitted {
			n++
		}
	}
	fmt.Println("reject: at 0.7s", n, "of 120; at 1.2s", reject.AcquireAt(1200*time.Millisecond, 1), "; at 1.5s", reject.AcquireAt(1500*time.Millisecond, 1))

	warm, _ := limiters.Parse("sentinel:threshold=100,strategy=warmup,warmup=10s", zeroClock{})
	fmt.Println("warm-up: cold, at 0", warm.AvailableAt(0), "pass")

	throttle, _ := limiters.Parse("sentinel:threshold=10,behavior=throttling,max_queue=500ms", zeroClock{})
	rs := throttle.(limiters.Reserver)
	for range 7 {
		r := rs.ReserveAt(0, 1, 500*time.Millisecond)
		fmt.Print(r.Decision, " ", r.Wait, "; ")
	}
	fmt.Println()
	// Output:
	// reject: at 0.7s 100 of 120; at 1.2s rejected ; at 1.5s admitted
	// warm-up: cold, at 0 33 pass
	// admitted 0s; admitted 100ms; admitted 200ms; admitted 300ms; admitted 400ms; admitted 500ms; rejected 600ms;
}
