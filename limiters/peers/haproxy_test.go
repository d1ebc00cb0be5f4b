package peers

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// haproxyReference is HAProxy 2.6's freq_ctr as src/freq_ctr.c writes it, in its own terms:
// a 32-bit ms clock (here starting at an arbitrary Unix-like ms, so that a new entry's tick
// of 0 is far in the past), curr_tick with its lock bit, update_freq_ctr_period and then
// read_freq_ctr_period (freq_ctr_total with pend = −1, flapping correction included).
type haproxyReference struct {
	period, limit   uint32
	tick, curr, prv uint32
}

func (r *haproxyReference) acquire(nowMs uint32) bool {
	// update_freq_ctr_period(ctr, period, 1)
	if nowMs-r.tick < r.period {
		r.curr++
	} else {
		r.prv, r.curr = r.curr, 1
		tick := r.tick + r.period
		if nowMs-tick >= r.period {
			r.prv, tick = 0, nowMs
		}
		r.tick = tick &^ 1
	}
	// read_freq_ctr_period: freq_ctr_total(ctr, period, -1) / period
	remain := int64(r.tick) + int64(r.period) - int64(nowMs)
	past, curr := uint64(r.prv), uint64(r.curr)
	if remain < 0 {
		remain += int64(r.period)
		if remain >= 0 {
			past = curr
		} else {
			past = 0
		}
		curr = 0
	}
	var total uint64
	if curr == 0 && past <= 1 {
		total = past * uint64(r.period)
	} else {
		total = past*uint64(remain) + curr*uint64(r.period)
	}
	return total/uint64(r.period) <= uint64(r.limit) // deny if sc_http_req_rate gt limit
}

// The model decides as HAProxy's own arithmetic on random traffic: bursts, idles longer than
// two periods, several requests per ms; the reference's clock starts at an even Unix-like ms,
// as the model's 0 is even.
func TestHAProxyMatchesFreqCtr(t *testing.T) {
	for _, tc := range []struct {
		period time.Duration
		limit  int
	}{{time.Second, 4}, {time.Second, 100}, {10 * time.Second, 3}, {2 * time.Millisecond, 1}, {250 * time.Millisecond, 7}} {
		l := must(NewHAProxy(HAProxySpec{Period: tc.period, Limit: tc.limit}, zeroClock{}))
		const epoch = 1_796_235_082_000 % (1 << 32) // even
		ref := &haproxyReference{period: uint32(tc.period / time.Millisecond), limit: uint32(tc.limit)}
		rng := rand.New(rand.NewPCG(7, uint64(tc.limit)))
		now := time.Duration(0)
		admitted := 0
		for i := range 20000 {
			switch p := rng.IntN(1000); {
			case p < 2: // an idle of up to three periods
				now += time.Duration(rng.Int64N(int64(3 * tc.period)))
			case p < 400:
				now += time.Duration(rng.Int64N(int64(time.Millisecond)))
			default:
				now += time.Duration(rng.Int64N(int64(tc.period) / int64(2*tc.limit+1)))
			}
			want := ref.acquire(uint32(epoch + int64(now/time.Millisecond)))
			avail := l.AvailableAt(now)
			got := l.AcquireAt(now, 1) == limiters.Admitted
			require.Equal(t, want, got, "%s: request %d at %v", l, i, now)
			require.Equal(t, got, avail >= 1, "%s: request %d at %v: Available said %d", l, i, now, avail)
			if got {
				admitted++
			}
		}
		assert.Positive(t, admitted, "%s", l)
		assert.Less(t, admitted, 20000, "%s", l)
	}
}

// The numbers in HAProxy's doc comment: period=1s, limit=3.
func TestHAProxyWorkedExample(t *testing.T) {
	l := must(NewHAProxy(HAProxySpec{Period: time.Second, Limit: 3}, zeroClock{}))
	ms := time.Millisecond
	for i, want := range []limiters.Decision{limiters.Admitted, limiters.Admitted, limiters.Admitted, limiters.Rejected} {
		require.Equal(t, want, l.AcquireAt(0, 1), "request %d at 0", i+1)
	}
	require.Equal(t, limiters.Rejected, l.AcquireAt(1000*ms, 1), "1 + 4 = 5")
	require.InDelta(t, 1+1.0, l.Snapshot(1600*ms).Level, 0, "curr 1 + ⌊4·0.4⌋ = 1")
	require.Equal(t, limiters.Admitted, l.AcquireAt(1600*ms, 1), "2 + 1 = 3")
	require.Equal(t, limiters.Rejected, l.AcquireAt(1600*ms, 1), "3 + 1 = 4")
	require.Equal(t, limiters.Rejected, l.AcquireAt(1800*ms, 1), "4 + ⌊0.8⌋ = 4: the denied ones count")
	st := l.Snapshot(1800 * ms)
	assert.Equal(t, []int{4, 4}, []int{st.Slots[0].Count, st.Slots[1].Count}, "prev, curr")
	info, ok := limiters.Lookup(KindHAProxy)
	require.True(t, ok)
	assert.Contains(t, info.Explain(st, 1, limiters.Rejected), "curr 4 + 1 + ⌊prev 4 × 200ms left / 1s⌋ = 5, above 3: denied")
}

// A period begins on an even ms of the model's clock: a key first seen at 1001ms has periods
// [1000ms, 2000ms), so at 2000ms the next one has begun, and the 3 of the first weigh
// ⌊3·1000/1000⌋ = 3 there, 2 at 2001ms (remain 999).
func TestHAProxyPeriodsBeginOnEvenMs(t *testing.T) {
	l := must(NewHAProxy(HAProxySpec{Period: time.Second, Limit: 3}, zeroClock{}))
	for range 3 {
		require.Equal(t, limiters.Admitted, l.AcquireAt(1001*time.Millisecond, 1))
	}
	st := l.Snapshot(1999 * time.Millisecond)
	assert.Equal(t, time.Second, st.WindowStart)
	assert.Equal(t, 0, l.AvailableAt(1999*time.Millisecond), "curr 3 in [1s, 2s)")
	assert.Equal(t, 0, l.AvailableAt(2000*time.Millisecond), "prev 3 × 1000/1000")
	assert.Equal(t, 1, l.AvailableAt(2001*time.Millisecond), "prev ⌊3 × 999/1000⌋ = 2")
	assert.Equal(t, 2001*time.Millisecond, l.Snapshot(2000*time.Millisecond).NextFree)
	// Two periods quiet: a new period begins at the request (an even ms), with nothing before.
	assert.True(t, l.FreshAt(3000*time.Millisecond))
	assert.False(t, l.FreshAt(2999*time.Millisecond))
	require.Equal(t, limiters.Admitted, l.AcquireAt(3333*time.Millisecond, 1))
	assert.Equal(t, 3332*time.Millisecond, l.Snapshot(3333*time.Millisecond).WindowStart)
}

// AdmissionBound over one period is reached: 100 per 1s admits 200 within 1s — 100 at the
// last ms of a period, then ⌈100·999/1000⌉ = 100 at the next one's last ms — and no random
// traffic exceeds the bound over 1s, 900ms or 2.5s (random traffic stays far below it: its
// refused requests are counted and keep the rate up).
func TestHAProxyBoundIsReached(t *testing.T) {
	spec := HAProxySpec{Period: time.Second, Limit: 100}
	b, ok := spec.AdmissionBound(time.Second)
	require.True(t, ok)
	assert.Equal(t, int64(200), b)
	b900, _ := spec.AdmissionBound(900 * time.Millisecond)
	assert.Equal(t, int64(100+90), b900, "E = 899ms: ⌈89.9⌉ = 90")
	l := must(NewHAProxy(spec, zeroClock{}))
	var times []time.Duration
	take := func(at time.Duration, n int) {
		for range n {
			if l.AcquireAt(at, 1) == limiters.Admitted {
				times = append(times, at)
			}
		}
	}
	take(0, 1)                                // starts the periods: [0, 1s), [1s, 2s), …
	take(2*time.Second-time.Nanosecond, 100)  // the last ns of [1s, 2s): prev 1 weighs ⌊1·1/1000⌋ = 0
	take(3*time.Second-time.Millisecond, 100) // ms 2999: prev 100 weighs ⌊100·1/1000⌋ = 0
	require.Len(t, times, 201)
	assert.Equal(t, 200, maxInWindow(times, time.Second-time.Millisecond+2), "within 999ms + 2ns")
	for _, L := range []time.Duration{900 * time.Millisecond, time.Second, 2500 * time.Millisecond} {
		small := HAProxySpec{Period: time.Second, Limit: 20}
		bound, _ := small.AdmissionBound(L)
		for seed := range uint64(4) {
			got := maxInWindow(randomAdmissions(must(NewHAProxy(small, zeroClock{})), seed, 20000, 5*time.Millisecond, 0), L)
			assert.LessOrEqual(t, int64(got), bound, "L=%v seed %d", L, seed)
			assert.Positive(t, got, "L=%v seed %d", L, seed)
		}
	}
}

// Validate refuses what HAProxy would count otherwise, by field.
func TestHAProxySpecRefusesOddPeriods(t *testing.T) {
	for text, field := range map[string]string{
		"haproxy:period=3ms,limit=1":    "period",
		"haproxy:period=1500us,limit=1": "period",
		"haproxy:period=1s,limit=0":     "limit",
	} {
		_, err := limiters.Parse(text, zeroClock{})
		require.Error(t, err, text)
		assert.True(t, strings.Contains(err.Error(), field), "%s: %v", text, err)
	}
	s, err := limiters.ParseSpec("haproxy:period=10s,limit=100")
	require.NoError(t, err)
	assert.Equal(t, "haproxy:period=10s,limit=100", s.String())
}

// A late reading is judged at the latest time seen, as HAProxy's clock only moves forward.
func TestHAProxyLateReadingIsTheLatest(t *testing.T) {
	l := must(NewHAProxy(HAProxySpec{Period: time.Second, Limit: 2}, zeroClock{}))
	require.Equal(t, limiters.Admitted, l.AcquireAt(0, 1))
	require.Equal(t, limiters.Admitted, l.AcquireAt(1500*time.Millisecond, 1)) // prev 1 × 500/1000 = 0: rate 1
	require.Equal(t, limiters.Admitted, l.AcquireAt(100*time.Millisecond, 1))  // judged at 1500ms: 2 + 0
	require.Equal(t, limiters.Rejected, l.AcquireAt(100*time.Millisecond, 1))  // 3
}
