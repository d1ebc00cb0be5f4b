package peers

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"

	"github.com/ratelab/ratelab/virtualclock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flash5TokenReference is the seed's TOKEN_BUCKET in the seed's own terms, with plain
// integers and one caller: slot0 = tokens × 1000, slot1 = last-refill ms (0 = never, full).
type flash5TokenReference struct {
	slot0, slot1     int64
	requests, window int64 // the rule's limit and windowMs
}

func (r *flash5TokenReference) check(currentTimeMs int64) bool {
	refillPerMs := r.requests * 1000 / r.window
	if refillPerMs < 1 {
		refillPerMs = 1
	}
	maxTokens := r.requests * 1000
	current := r.slot0
	if r.slot1 == 0 {
		current = maxTokens // "one full window elapsed": the bucket starts full
	} else if elapsed := currentTimeMs - r.slot1; elapsed > 0 {
		current = min(maxTokens, current+elapsed*refillPerMs)
	}
	if current < 1000 {
		return false
	}
	r.slot0 = current - 1000
	r.slot1 = currentTimeMs
	return true
}

// The model decides as the seed's rule on random traffic, late readings included.
func TestFlash5TokenMatchesTheSeed(t *testing.T) {
	for _, tc := range []struct {
		spec          string
		limit, window int64 // window in ms
	}{
		{"flash5-token:limit=100,window=1s", 100, 1000},
		{"flash5-token:limit=100,window=1m", 100, 60000},
		{"flash5-token:limit=3,window=7ms", 3, 7},
		{"flash5-token:limit=1,window=1h", 1, 3600000},
		{"flash5-token:limit=7,window=3s", 7, 3000},
	} {
		l, err := limiters.Parse(tc.spec, zeroClock{})
		require.NoError(t, err)
		ref := &flash5TokenReference{requests: tc.limit, window: tc.window}
		rng := rand.New(rand.NewPCG(21, 22))
		now, admitted := time.Duration(0), 0
		mean := time.Duration(tc.window) * time.Millisecond / time.Duration(tc.limit)
		for i := 0; i < 50_000; i++ {
			at := now
			if rng.IntN(25) == 0 { // a late reading of the clock
				at = max(now-time.Duration(rng.Int64N(int64(20*time.Millisecond))), 0)
			} else {
				now += time.Duration(rng.Int64N(int64(min(mean, 2*time.Second))))
				at = now
			}
			want := ref.check(flash5EpochMs + int64(at/time.Millisecond))
			got := l.AcquireAt(at, 1) == limiters.Admitted
			require.Equal(t, want, got, "%s: request %d at %s", tc.spec, i, at)
			if got {
				admitted++
			}
		}
		assert.Greater(t, admitted, 1000, tc.spec)
	}
}

// The refill is a whole number of milli-tokens per millisecond, so the rate is
// ⌊limit·1000/windowMs⌋ per second, at least 1: 100 per minute is 60 per minute, 1 per hour is
// 3,600 per hour, 7 per 3s is 2 per second. ratelab's token bucket keeps the spec's rate.
func TestFlash5TokenRateIsWholeMilliTokensPerMs(t *testing.T) {
	for _, tc := range []struct {
		limit   int
		window  time.Duration
		refill  int64
		over    time.Duration
		flash5  int // admitted over `over`, a request every 10ms, after the first burst
		ratelab int
	}{
		{100, time.Second, 100, time.Second, 100, 100},
		{100, time.Minute, 1, time.Minute, 60, 100},
		{1, time.Hour, 1, time.Hour, 3600, 1},
		{7, 3 * time.Second, 2, 3010 * time.Millisecond, 6, 7},
	} {
		spec := Flash5TokenSpec{Limit: tc.limit, Window: tc.window}
		assert.Equal(t, tc.refill, spec.RefillPerMs(), "%s", spec)
		assert.Equal(t, limiters.Rate{Permits: int(tc.refill), Window: time.Second}, must2(spec.NominalRate()), "%s", spec)
		f := must(NewFlash5Token(spec, zeroClock{}))
		ours := must(limiters.NewTokenBucket(tc.limit, limiters.Rate{Permits: tc.limit, Window: tc.window}, zeroClock{}))
		for f.AcquireAt(0, 1) == limiters.Admitted {
		}
		for ours.AcquireAt(0, 1) == limiters.Admitted {
		}
		gotF, gotOurs := 0, 0
		for at := 10 * time.Millisecond; at <= tc.over; at += 10 * time.Millisecond {
			if f.AcquireAt(at, 1) == limiters.Admitted {
				gotF++
			}
			if ours.AcquireAt(at, 1) == limiters.Admitted {
				gotOurs++
			}
		}
		assert.Equal(t, tc.flash5, gotF, "%s over %s", spec, tc.over)
		assert.Equal(t, tc.ratelab, gotOurs, "token bucket %d/%s over %s", tc.limit, tc.window, tc.over)
	}
}

func must2[T any](v T, _ bool) T { return v }

// The first request reads a full bucket (slot1 = 0); time is floored to whole ms; n permits
// take n tokens; Quota is Flash5's out[2]: remaining, and the reset in epoch seconds.
func TestFlash5TokenStartsFullMillisecondsAndQuota(t *testing.T) {
	f := must(NewFlash5Token(Flash5TokenSpec{Limit: 100, Window: time.Second}, zeroClock{}))
	assert.Equal(t, 100, f.AvailableAt(0), "never refilled: full")
	remaining, reset := f.Quota(0)
	assert.Equal(t, 100, remaining)
	assert.Equal(t, flash5EpochMs/1000, reset, "full now: the reset is now's second")
	assert.Equal(t, int64(946684800), reset, "2000-01-01T00:00:00Z")
	assert.Equal(t, limiters.Admitted, f.AcquireAt(0, 60))
	remaining, reset = f.Quota(0)
	assert.Equal(t, 40, remaining)
	assert.Equal(t, int64(946684801), reset, "60 tokens refill in 600ms: full in the next second")
	assert.Equal(t, limiters.Rejected, f.AcquireAt(0, 41))
	assert.Equal(t, limiters.Admitted, f.AcquireAt(0, 40))
	assert.Equal(t, limiters.Rejected, f.AcquireAt(9*time.Millisecond+999*time.Microsecond, 1), "9.999ms is ms 9: 0.9 tokens")
	wait, ok := f.RetryAfterAt(9*time.Millisecond+999*time.Microsecond, 1)
	assert.True(t, ok)
	assert.Equal(t, time.Microsecond, wait, "the token is there at ms 10")
	assert.Equal(t, limiters.Admitted, f.AcquireAt(10*time.Millisecond, 1))
	st := f.Snapshot(15 * time.Millisecond)
	assert.Equal(t, limiters.ShapeLevel, st.Shape())
	assert.InDelta(t, 0.5, st.Level, 1e-12)
	assert.Equal(t, 20*time.Millisecond, st.NextFree)
	assert.Contains(t, st.Explain(1, limiters.Rejected), "holds 0.5 of 100 tokens")
	assert.Contains(t, st.Explain(1, limiters.Rejected), "in 5ms")
	wait, ok = f.RetryAfterAt(15*time.Millisecond, 101)
	assert.False(t, ok)
	assert.Zero(t, wait)
}

// A late reading refills nothing, and Flash5's best-effort store of slot1 sets the time back:
// the next request refills that span again.
func TestFlash5TokenLateReadingRefillsTwice(t *testing.T) {
	f := must(NewFlash5Token(Flash5TokenSpec{Limit: 2, Window: 20 * time.Millisecond}, zeroClock{})) // 100 milli-tokens/ms
	require.Equal(t, limiters.Admitted, f.AcquireAt(0, 2))
	require.Equal(t, limiters.Admitted, f.AcquireAt(10*time.Millisecond, 1), "1 token refilled by 10ms")
	require.Equal(t, limiters.Rejected, f.AcquireAt(5*time.Millisecond, 1), "a late reading refills nothing")
	require.Equal(t, limiters.Admitted, f.AcquireAt(40*time.Millisecond, 1), "full again (2), 1 left")
	assert.Equal(t, limiters.Admitted, f.AcquireAt(30*time.Millisecond, 1), "a late caller takes the last token, and sets slot1 to 30ms")
	assert.Equal(t, limiters.Admitted, f.AcquireAt(40*time.Millisecond, 1), "30ms to 40ms is refilled a second time")
	assert.Equal(t, limiters.Rejected, f.AcquireAt(40*time.Millisecond, 1))
}

// Goroutines racing a fresh bucket: every request that reads slot1 = 0 before the first
// store refills the bucket to full in its CAS, so at least capacity pass, and more while the
// first winner has not stored slot1 (it may be descheduled between its CAS and its store: CI
// saw 40 of 20 with 16 goroutines taking until refused). A second race at the same millisecond
// gets nothing: every store has landed. After a one-token refill, every request that reads
// slot1 before the winner's store refills the same second again (its CAS of slot0 from 0 to 0
// succeeds): at least 1 passes (CI saw 2). Flash5 says as much ("the bounded inaccuracy from
// the non-atomic dual update"); TestFlash5TokenLateReadingRefillsTwice shows the mechanism
// call by call. The counts are logged: the upper side is the race's, not a guarantee.
func TestFlash5TokenRacesAtTheStart(t *testing.T) {
	const capacity, goroutines = 20, 16
	rounds := 200
	if raceDetector {
		rounds = 20
	}
	extra, extraRefill := 0, 0
	for range rounds {
		c := virtualclock.New() // frozen
		f := must(NewFlash5Token(Flash5TokenSpec{Limit: capacity, Window: time.Hour}, c))
		got := race(goroutines, f)
		require.GreaterOrEqual(t, got, capacity, "a fresh bucket gives at least its capacity")
		extra = max(extra, got-capacity)
		// slot1 is set now: a second race at the same instant gets exactly nothing more.
		require.Equal(t, 0, race(goroutines, f))
		c.Advance(time.Second) // one token per second
		refilled := race(goroutines, f)
		require.GreaterOrEqual(t, refilled, 1, "one token refilled")
		extraRefill = max(extraRefill, refilled-1)
		// Every store has landed: the same millisecond holds nothing more.
		require.Equal(t, 0, race(goroutines, f))
	}
	t.Logf("most extra admissions in %d rounds: %d at the start, %d at a refill", rounds, extra, extraRefill)
}

// Bad specs are refused naming the field.
func TestFlash5TokenValidation(t *testing.T) {
	for text, field := range map[string]string{
		"flash5-token:limit=2147484,window=1s":   "limit",
		"flash5-token:limit=100,window=1500us":   "window",
		"flash5-token:limit=100,window=999us":    "window",
		"flash5-token:limit=100,window=2000000h": "window",
	} {
		spec, err := limiters.ParseSpec(text)
		require.NoError(t, err, text)
		err = spec.Validate()
		var ce *limiters.ConfigError
		require.ErrorAs(t, err, &ce, text)
		assert.Equal(t, field, ce.Field, text)
	}
	_, err := limiters.ParseSpec("flash5-token:limit=0,window=1s")
	assert.ErrorContains(t, err, "limit=0")
	_, err = NewFlash5Token(Flash5TokenSpec{Limit: 1, Window: time.Second}, nil)
	assert.ErrorContains(t, err, "clock")
	assert.NoError(t, Flash5TokenSpec{Limit: 2147483, Window: time.Millisecond}.Validate())
}

// The bound is exact: a full bucket at once, then the refill of every whole ms spanned.
func TestFlash5TokenAdmissionBoundIsReached(t *testing.T) {
	for _, tc := range []struct {
		spec Flash5TokenSpec
		L    time.Duration
		want int64
	}{
		{Flash5TokenSpec{Limit: 100, Window: time.Second}, time.Second, 200},
		{Flash5TokenSpec{Limit: 100, Window: time.Minute}, time.Minute, 160},
		{Flash5TokenSpec{Limit: 1, Window: time.Hour}, time.Hour, 3601},
		{Flash5TokenSpec{Limit: 3, Window: 7 * time.Millisecond}, 10 * time.Millisecond, 3 + 10*428/1000},
	} {
		b, ok := tc.spec.AdmissionBound(tc.L)
		require.True(t, ok)
		assert.Equal(t, tc.want, b, "%s over %s", tc.spec, tc.L)
		// Reached: all at the last ns of ms 0, then all at each ms boundary the interval holds.
		f := must(NewFlash5Token(tc.spec, zeroClock{}))
		start := time.Millisecond - 1
		got := int64(0)
		for f.AcquireAt(start, 1) == limiters.Admitted {
			got++
		}
		for at := time.Millisecond; at < start+tc.L; at += time.Millisecond {
			for f.AcquireAt(at, 1) == limiters.Admitted {
				got++
			}
		}
		assert.Equal(t, tc.want, got, "%s over %s: the bound is reached", tc.spec, tc.L)
	}
}
