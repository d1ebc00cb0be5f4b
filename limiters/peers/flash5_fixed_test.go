package peers

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flash5Reference is the seed's FIXED_WINDOW in the seed's own terms, with plain integers:
// slot0 = epoch<<32 | count, epoch = (currentTimeMs / windowMs) & 0xFFFFFFFF.
type flash5Reference struct {
	slot0              uint64
	limit, windowMs, o int64
}

func (r *flash5Reference) check(now time.Duration) bool {
	currentTimeMs := int64(now/time.Millisecond) + r.o
	epoch := uint64(currentTimeMs/r.windowMs) & 0xFFFFFFFF
	if r.slot0>>32 != epoch {
		r.slot0 = epoch<<32 | 1 // the same CAS resets the counter to 1
		return true
	}
	if int64(r.slot0&0xFFFFFFFF) >= r.limit {
		return false
	}
	r.slot0++
	return true
}

// The model decides as the seed's rule on random traffic, late readings included: requests
// 1–100 in a second pass, 101+ are refused until the next second.
func TestFlash5FixedMatchesTheSeed(t *testing.T) {
	for _, tc := range []struct {
		spec   string
		limit  int64
		window int64 // ms
		offset int64 // ms
	}{
		{"flash5-fixed:limit=100,window=1s", 100, 1000, 0},
		{"flash5-fixed:limit=3,window=7ms", 3, 7, 0},
		{"flash5-fixed:limit=5,window=100ms,offset=250ms", 5, 100, 250},
	} {
		l, err := limiters.Parse(tc.spec, zeroClock{})
		require.NoError(t, err)
		ref := &flash5Reference{limit: tc.limit, windowMs: tc.window, o: tc.offset}
		rng := rand.New(rand.NewPCG(11, 12))
		now := time.Duration(0)
		admitted := 0
		for i := 0; i < 100_000; i++ {
			at := now
			switch rng.IntN(20) {
			case 0: // a late reading of the clock
				at = max(now-time.Duration(rng.Int64N(int64(3*time.Duration(tc.window)*time.Millisecond))), 0)
			default:
				now += time.Duration(rng.Int64N(int64(time.Duration(tc.window) * time.Millisecond / time.Duration(tc.limit))))
				at = now
			}
			want := ref.check(at)
			got := l.AcquireAt(at, 1) == limiters.Admitted
			require.Equal(t, want, got, "%s: request %d at %s", tc.spec, i, at)
			if got {
				admitted++
			}
		}
		assert.Greater(t, admitted, 1000, tc.spec)
	}
}

// After exactly 2³² windows of idle the 32-bit epoch is back where it was, and Flash5 reads
// the old window's count as current: a limit already spent stays spent. ratelab's own fixed
// window starts the new window fresh.
func TestFlash5FixedEpochWraps(t *testing.T) {
	const window = time.Millisecond
	f, err := NewFlash5Fixed(Flash5FixedSpec{Limit: 3, Window: window}, zeroClock{})
	require.NoError(t, err)
	ours, err := limiters.NewFixedWindow(3, window, zeroClock{})
	require.NoError(t, err)
	for range 3 {
		require.Equal(t, limiters.Admitted, f.AcquireAt(0, 1))
		require.Equal(t, limiters.Admitted, ours.AcquireAt(0, 1))
	}
	wrap := time.Duration(1<<32) * window // 49.7 days
	assert.Equal(t, limiters.Rejected, f.AcquireAt(wrap, 1), "the stale count of window 0 is read as current")
	assert.Equal(t, 0, f.AvailableAt(wrap))
	assert.Equal(t, limiters.Admitted, ours.AcquireAt(wrap, 1), "ratelab's window index does not wrap")
	assert.Equal(t, limiters.Admitted, f.AcquireAt(wrap+window, 1), "one window later the epoch differs again")
}

// A late reading of the clock (an older epoch) resets Flash5's count: 3 more pass.
func TestFlash5FixedLateReadingResets(t *testing.T) {
	f, _ := NewFlash5Fixed(Flash5FixedSpec{Limit: 3, Window: time.Second}, zeroClock{})
	for range 3 {
		f.AcquireAt(1500*time.Millisecond, 1)
	}
	require.Equal(t, limiters.Rejected, f.AcquireAt(1600*time.Millisecond, 1))
	assert.Equal(t, limiters.Admitted, f.AcquireAt(999*time.Millisecond, 1), "an older epoch resets the count to 1")
	assert.Equal(t, limiters.Admitted, f.AcquireAt(1700*time.Millisecond, 1), "and the newer one again")
}

// Time is whole milliseconds, windows are aligned to the clock's origin minus the offset,
// and Quota is Flash5's out[2]: remaining and the reset in epoch seconds.
func TestFlash5FixedMillisecondsOffsetAndQuota(t *testing.T) {
	f, _ := NewFlash5Fixed(Flash5FixedSpec{Limit: 2, Window: time.Second, Offset: 250 * time.Millisecond}, zeroClock{})
	assert.Equal(t, limiters.Admitted, f.AcquireAt(0, 1))
	assert.Equal(t, limiters.Admitted, f.AcquireAt(749*time.Millisecond+999*time.Microsecond, 1), "749.999ms is ms 999 of window 0")
	assert.Equal(t, limiters.Rejected, f.AcquireAt(749*time.Millisecond+999*time.Microsecond, 1))
	wait, ok := f.RetryAfterAt(700*time.Millisecond, 1)
	assert.True(t, ok)
	assert.Equal(t, 50*time.Millisecond, wait, "the window ends at run time 750ms (clock 1000ms)")
	remaining, reset := f.Quota(700 * time.Millisecond)
	assert.Equal(t, 0, remaining)
	assert.Equal(t, int64(1), reset)
	assert.Equal(t, limiters.Admitted, f.AcquireAt(750*time.Millisecond, 1), "clock ms 1000: a new epoch")
	st := f.Snapshot(800 * time.Millisecond)
	assert.Equal(t, 750*time.Millisecond, st.WindowStart)
	assert.Equal(t, 1750*time.Millisecond, st.WindowEnd)
	assert.Equal(t, 1, st.Count)
	assert.Equal(t, "flash5-fixed:limit=2,window=1s,offset=250ms", f.String())
	for _, bad := range []string{"flash5-fixed:limit=2,window=1500us", "flash5-fixed:limit=2,window=1s,offset=1us",
		"flash5-fixed:limit=5000000000,window=1s"} {
		_, err := limiters.Parse(bad, zeroClock{})
		assert.Error(t, err, bad)
	}
}
