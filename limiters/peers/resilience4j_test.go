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

// atomicRateLimiterReference is AtomicRateLimiter's decision in its own terms — a state of
// (activeCycle long, activePermissions int), Java's int arithmetic as Go's int32 — written
// from its documented algorithm, for one caller.
type atomicRateLimiterReference struct {
	cycle       int64
	permissions int32
	limit       int32
	period      int64
}

// acquire is calculateNextState + reservePermissions: the wait, and whether it reserved.
func (r *atomicRateLimiterReference) acquire(n int32, timeout, currentNanos int64) (wait int64, reserved bool) {
	currentCycle := currentNanos / r.period
	nextCycle, nextPermissions := r.cycle, r.permissions
	if nextCycle != currentCycle {
		accumulated := (currentCycle - nextCycle) * int64(r.limit)
		nextCycle = currentCycle
		nextPermissions = int32(min(int64(nextPermissions)+accumulated, int64(r.limit)))
	}
	if nextPermissions < n {
		nanosToNextCycle := (currentCycle+1)*r.period - currentNanos
		atStartOfNext := nextPermissions + r.limit
		fullCycles := (-(atStartOfNext - n) + r.limit - 1) / r.limit
		wait = int64(fullCycles)*r.period + nanosToNextCycle
	}
	reserved = timeout >= wait
	if reserved {
		nextPermissions -= n
	}
	r.cycle, r.permissions = nextCycle, nextPermissions
	return wait, reserved
}

// The model's decisions and waits are AtomicRateLimiter's on random traffic — random sizes,
// random timeouts, bursts that reserve many cycles ahead, idles, and late readings.
func TestResilience4jMatchesAtomicRateLimiter(t *testing.T) {
	for _, tc := range []struct {
		limit  int
		period time.Duration
	}{
		{50, 500 * time.Millisecond},
		{1, time.Second},
		{7, 3 * time.Millisecond},
		{1000, time.Second},
	} {
		born := 123 * time.Millisecond
		l := must(NewResilience4j(Resilience4jSpec{Limit: tc.limit, Period: tc.period}, fixedClock(born)))
		ref := &atomicRateLimiterReference{permissions: int32(tc.limit), limit: int32(tc.limit), period: int64(tc.period)}
		rng := rand.New(rand.NewPCG(31, 32))
		now, admitted, waited := born, 0, 0
		for i := 0; i < scaled(100_000); i++ {
			at := now
			switch k := rng.IntN(100); {
			case k == 0: // an idle of a few cycles
				now += time.Duration(rng.Int64N(int64(5 * tc.period)))
				at = now
			case k < 4: // a late reading
				at = max(now-time.Duration(rng.Int64N(int64(tc.period))), born)
			default:
				now += time.Duration(rng.Int64N(int64(2*tc.period) / int64(tc.limit)))
				at = now
			}
			n := 1 + rng.IntN(tc.limit)
			if rng.IntN(2) == 0 {
				n = 1
			}
			var timeout time.Duration
			switch rng.IntN(4) {
			case 1:
				timeout = time.Duration(rng.Int64N(int64(3 * tc.period)))
			case 2:
				timeout = limiters.MaxWaitForever / 8
			}
			wantWait, wantOK := ref.acquire(int32(n), int64(timeout), int64(at-born))
			r := l.ReserveAt(at, n, timeout)
			require.Equal(t, wantOK, r.Decision == limiters.Admitted, "%s: request %d for %d at %s, timeout %s", l, i, n, at, timeout)
			require.Equal(t, time.Duration(wantWait), r.Wait, "%s: request %d for %d at %s", l, i, n, at)
			require.Equal(t, int(max(ref.permissions, 0)), l.AvailableAt(at), "%s: after request %d", l, i)
			if wantOK {
				admitted++
				if r.Wait > 0 {
					waited++
				}
			}
		}
		assert.Greater(t, admitted, scaled(10_000), "%s", l)
		assert.Greater(t, waited, scaled(1_000), "%s: reservations were exercised", l)
	}
}

// The documented examples: cycles from creation, 2 × limit across a boundary, the default
// timeout of 5s reserving ten cycles ahead, and mode=wait waiting as long as it takes.
func TestResilience4jCyclesAndReservations(t *testing.T) {
	l := must(NewResilience4j(Resilience4jSpec{Limit: 50, Period: 500 * time.Millisecond}, fixedClock(200*time.Millisecond)))
	assert.Equal(t, 50, l.AvailableAt(200*time.Millisecond))
	for range 50 {
		require.Equal(t, limiters.Admitted, l.AcquireAt(699*time.Millisecond, 1))
	}
	assert.Equal(t, limiters.Rejected, l.AcquireAt(699*time.Millisecond, 1), "cycle [200ms, 700ms) is spent")
	wait, ok := l.RetryAfterAt(699*time.Millisecond, 1)
	assert.True(t, ok)
	assert.Equal(t, time.Millisecond, wait, "the next cycle begins at 700ms, 500ms after creation")
	for range 50 {
		require.Equal(t, limiters.Admitted, l.AcquireAt(700*time.Millisecond, 1), "2 × limit across the boundary")
	}
	st := l.Snapshot(701 * time.Millisecond)
	assert.Equal(t, 700*time.Millisecond, st.WindowStart)
	assert.Equal(t, 1200*time.Millisecond, st.WindowEnd)
	assert.Contains(t, st.Explain(1, limiters.Rejected), "cycle [700ms, 1.2s) has 0 of 50 permissions")

	spec, err := limiters.ParseSpec("resilience4j:limit=50,period=500ms")
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, spec.(limiters.Waiting).CallerWait(), "the product's default timeoutDuration")
	r4j := must(spec.New(zeroClock{})).(*Resilience4j)
	waits := map[time.Duration]int{}
	refused := 0
	for range 600 {
		r := r4j.ReserveAt(0, 1, spec.(limiters.Waiting).CallerWait())
		if r.Decision == limiters.Admitted {
			waits[r.Wait]++
		} else {
			refused++
			assert.Equal(t, 5500*time.Millisecond, r.Wait, "the wait it would have needed")
		}
	}
	want := map[time.Duration]int{}
	for k := range 11 {
		want[time.Duration(k)*500*time.Millisecond] = 50
	}
	assert.Equal(t, want, waits, "50 at once, then 50 reserved in each of ten cycles ahead")
	assert.Equal(t, 50, refused)
	assert.Equal(t, -500.0, r4j.Snapshot(0).Level, "reservations drive the permissions to −500")
	assert.Contains(t, r4j.Snapshot(0).Explain(1, limiters.Rejected), "refused")
	assert.Equal(t, 0, r4j.AvailableAt(5499*time.Millisecond))
	assert.Equal(t, 50, r4j.AvailableAt(5500*time.Millisecond), "cycle 11 is the first not reserved")

	w := must(limiters.Parse("resilience4j:limit=50,period=500ms,mode=wait", zeroClock{})).(*Resilience4j)
	var last limiters.Reservation
	for range 1000 {
		last = w.ReserveAt(0, 1, limiters.MaxWaitForever)
		require.Equal(t, limiters.Admitted, last.Decision)
	}
	assert.Equal(t, 9500*time.Millisecond, last.Wait, "the 1000th permission is cycle 19's")
}

// A reservation of n that finds p < n permissions takes them from this cycle and goes on in
// the next, whose other permissions then pass too: up to limit − 1 more than limit in one
// cycle, the bound with waiting callers.
func TestResilience4jAdmissionBoundIsReached(t *testing.T) {
	spec := Resilience4jSpec{Limit: 10, Period: time.Second, Timeout: time.Second}
	l := must(NewResilience4j(spec, zeroClock{}))
	require.Equal(t, limiters.Admitted, l.AcquireAt(0, 1), "nine permissions left in cycle 0")
	r := l.ReserveAt(999*time.Millisecond, 10, spec.Timeout)
	require.Equal(t, limiters.Admitted, r.Decision)
	require.Equal(t, time.Millisecond, r.Wait, "9 of its 10 are cycle 0's, the 10th cycle 1's: it goes on at 1s")
	got := int64(r.Permits)
	for l.AcquireAt(time.Second, 1) == limiters.Admitted {
		got++
	}
	b, ok := spec.AdmissionBound(time.Second)
	require.True(t, ok)
	assert.Equal(t, int64(10*2+9), b)
	assert.Equal(t, int64(19), got, "19 go on in cycle 1 alone")
	b, _ = Resilience4jSpec{Limit: 10, Period: time.Second}.AdmissionBound(time.Second)
	assert.Equal(t, int64(20), b, "callers that never wait: limit per touched cycle")
}

// CancelAt gives permissions back while they are owed, never more, and never after the wait.
func TestResilience4jCancel(t *testing.T) {
	l := must(NewResilience4j(Resilience4jSpec{Limit: 2, Period: time.Second, Timeout: time.Hour}, zeroClock{}))
	a := l.ReserveAt(0, 2, 0)
	b := l.ReserveAt(0, 1, time.Hour)
	require.Equal(t, time.Second, b.Wait)
	l.CancelAt(0, a)
	assert.Equal(t, 1, l.AvailableAt(0), "undone at the instant: the 2 are back, less the 1 reserved after")
	l.CancelAt(500*time.Millisecond, b)
	assert.Equal(t, 2, l.AvailableAt(500*time.Millisecond), "b was still owed")
	c := l.ReserveAt(600*time.Millisecond, 2, 0)
	require.Equal(t, limiters.Admitted, c.Decision)
	l.CancelAt(2*time.Second, c)
	assert.Equal(t, 2, l.AvailableAt(2*time.Second), "a cycle later nothing comes back (and none is owed)")
	assert.Equal(t, 0, l.AvailableAt(700*time.Millisecond))
}

// Goroutines racing on a frozen clock take exactly the limit, or exactly what a timeout
// covers: one CAS per decision loses nothing.
func TestResilience4jRaces(t *testing.T) {
	rounds := 100
	if raceDetector {
		rounds = 10
	}
	for range rounds {
		c := virtualclock.New()
		l := must(NewResilience4j(Resilience4jSpec{Limit: 20, Period: time.Second}, c))
		require.Equal(t, 20, race(16, l))
		c.Advance(time.Second)
		require.Equal(t, 20, race(16, l), "the next cycle, exactly")
	}
}

// Bad specs are refused naming the field, and the defaults print as written.
func TestResilience4jSpecs(t *testing.T) {
	for text, field := range map[string]string{
		"resilience4j:limit=1073741825,period=1h":              "limit",
		"resilience4j:limit=50,period=49ns":                    "period",
		"resilience4j:limit=50,period=1000000h":                "period",
		"resilience4j:limit=50,period=1s,mode=wait,timeout=1s": "timeout",
	} {
		spec, err := limiters.ParseSpec(text)
		require.NoError(t, err, text)
		var ce *limiters.ConfigError
		require.ErrorAs(t, spec.Validate(), &ce, text)
		assert.Equal(t, field, ce.Field, text)
	}
	_, err := limiters.ParseSpec("resilience4j:limit=50,period=1s,mode=block")
	assert.ErrorContains(t, err, "mode=block")
	_, err = limiters.ParseSpec("resilience4j:limit=50,period=1s,timeout=-1s")
	assert.ErrorContains(t, err, "timeout=-1s")
	for text, want := range map[string]Resilience4jSpec{
		"resilience4j:limit=50,period=500ms":               {Limit: 50, Period: 500 * time.Millisecond, Timeout: 5 * time.Second, Mode: "try"},
		"resilience4j:limit=50,period=500ms,timeout=0s":    {Limit: 50, Period: 500 * time.Millisecond, Mode: "try"},
		"resilience4j:limit=50,period=500ms,mode=wait":     {Limit: 50, Period: 500 * time.Millisecond, Mode: "wait"},
		"resilience4j:limit=50,period=500ms,timeout=250ms": {Limit: 50, Period: 500 * time.Millisecond, Timeout: 250 * time.Millisecond, Mode: "try"},
	} {
		spec, err := limiters.ParseSpec(text)
		require.NoError(t, err, text)
		assert.Equal(t, want, spec, text)
		assert.Equal(t, text, spec.String())
		assert.NoError(t, spec.Validate())
	}
	assert.Equal(t, "resilience4j:limit=1,period=1s,timeout=0s", Resilience4jSpec{Limit: 1, Period: time.Second}.String(),
		"the zero value's timeout is 0, not the product's default")
}
