package limiters_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each kind has the capabilities the package doc's table says, found in one place.
func TestCapabilitiesOfEveryKind(t *testing.T) {
	want := map[limiters.Kind][]limiters.Capability{
		limiters.KindTokenBucket:       {limiters.CapRetryAfter, limiters.CapReserve, limiters.CapRefund},
		limiters.KindLeakyBucket:       {limiters.CapRetryAfter, limiters.CapReserve, limiters.CapRefund},
		limiters.KindSlidingWindow:     {limiters.CapRetryAfter, limiters.CapRefund},
		limiters.KindFixedWindow:       {limiters.CapRetryAfter, limiters.CapRefund},
		limiters.KindWarmUpTokenBucket: {limiters.CapRetryAfter, limiters.CapRefund},
		limiters.KindConcurrency:       {limiters.CapRelease},
		peers.KindFlash5Fixed:          {limiters.CapRetryAfter},
		peers.KindFlash5Token:          {limiters.CapRetryAfter},
		peers.KindXTimeRate:            {limiters.CapRetryAfter, limiters.CapReserve},
		peers.KindUber:                 {limiters.CapReserve},
		peers.KindNginx:                {limiters.CapRetryAfter, limiters.CapReserve, limiters.CapRefund},
		peers.KindGuavaBursty:          {limiters.CapRetryAfter, limiters.CapReserve},
		peers.KindGuavaWarmUp:          {limiters.CapRetryAfter, limiters.CapReserve},
		peers.KindSentinel:             {limiters.CapRetryAfter, limiters.CapReserve, limiters.CapRefund},
		peers.KindResilience4j:         {limiters.CapRetryAfter, limiters.CapReserve},
		peers.KindTwoCounter:           {limiters.CapRetryAfter, limiters.CapRefund},
		peers.KindHAProxy:              nil, // no retry-after: a wait rounded up may land in the next period, where the count of denied requests weighs again
		limiters.KindAIMD:              {limiters.CapRelease, limiters.CapFeedback},
		limiters.KindVegas:             {limiters.CapRelease, limiters.CapFeedback},
		limiters.KindGradient:          {limiters.CapRelease, limiters.CapFeedback},
		limiters.KindGradient2:         {limiters.CapRelease, limiters.CapFeedback},
		limiters.KindEnvoyGradient:     {limiters.CapRelease, limiters.CapFeedback},
	}
	for _, info := range limiters.Kinds() {
		l, err := limiters.Parse(info.Example, zeroClock{})
		require.NoError(t, err)
		w, ok := want[info.Kind]
		require.True(t, ok, "%s: add it to this table and to capability.go's", info.Kind)
		assert.Equal(t, w, limiters.CapabilitiesOf(l).List(), "%s", info.Kind)
	}
}

// Asking a kind for a capability it lacks is refused by name.
func TestRequireNamesTheKindAndTheCapability(t *testing.T) {
	c, _ := limiters.NewConcurrency(3)
	_, err := limiters.Require(c, limiters.CapRelease, limiters.CapReserve)
	require.Error(t, err)
	assert.Equal(t, "limiters: concurrency does not support reserve (its capabilities: release)", err.Error())
	var ce *limiters.CapabilityError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, limiters.CapReserve, ce.Capability)
	b, _ := limiters.NewTokenBucket(3, limiters.PerSecond(100), zeroClock{})
	caps, err := limiters.Require(b, limiters.CapReserve, limiters.CapRefund)
	require.NoError(t, err)
	assert.NotNil(t, caps.Reserve)
}

// Reservations, with the algorithms document's numbers: a token bucket of 100/s with capacity
// 3 lets three pass at once and makes the fourth wait T = 10ms; a caller who will wait only
// 5ms is refused and takes nothing; a cancelled reservation gives its permits back.
func TestReserveWaitsInsteadOfRefusing(t *testing.T) {
	b, _ := limiters.NewTokenBucket(3, limiters.PerSecond(100), zeroClock{})
	const ms = time.Millisecond
	for i, want := range []time.Duration{0, 0, 0, 10 * ms, 20 * ms} {
		r := b.ReserveAt(0, 1, time.Second)
		require.Equal(t, limiters.Admitted, r.Decision, "reservation %d", i+1)
		assert.Equal(t, want, r.Wait, "reservation %d", i+1)
	}
	r := b.ReserveAt(0, 1, 5*ms)
	assert.Equal(t, limiters.Rejected, r.Decision, "the next would wait 30ms, more than 5ms")
	assert.Equal(t, 30*ms, r.Wait)
	last := b.ReserveAt(0, 1, time.Second)
	assert.Equal(t, 30*ms, last.Wait, "the refused one took nothing")
	b.CancelAt(0, last)
	assert.Equal(t, 30*ms, b.ReserveAt(0, 1, time.Second).Wait, "the cancelled one gave its permit back")
	assert.Equal(t, limiters.Never, b.ReserveAt(0, 4, time.Hour).Decision, "more than capacity can never be reserved")
	assert.Equal(t, limiters.Invalid, b.ReserveAt(0, 0, time.Hour).Decision)

	l, _ := limiters.NewLeakyBucket(limiters.PerSecond(100), zeroClock{})
	assert.Equal(t, time.Duration(0), l.ReserveAt(0, 1, time.Second).Wait)
	assert.Equal(t, 10*ms, l.ReserveAt(0, 1, time.Second).Wait, "the leaky bucket queues: one per T")
	assert.Equal(t, 20*ms, l.ReserveAt(0, 1, time.Second).Wait)
}

// ReserveAt with no wait allowed decides exactly as AcquireAt, on random traffic.
func TestReserveWithoutWaitIsAcquire(t *testing.T) {
	for _, text := range []string{"token-bucket:capacity=5,rate=100/1s", "leaky-bucket:rate=7/1s"} {
		a, _ := limiters.Parse(text, zeroClock{})
		b, _ := limiters.Parse(text, zeroClock{})
		rng := rand.New(rand.NewPCG(3, 4))
		now := time.Duration(0)
		for i := 0; i < 20000; i++ {
			now += time.Duration(rng.Int64N(int64(20 * time.Millisecond)))
			n := 1 + rng.IntN(3)
			r := b.(limiters.Reserver).ReserveAt(now, n, 0)
			require.Equal(t, a.AcquireAt(now, n), r.Decision, "%s: step %d", text, i)
			if r.Decision == limiters.Admitted {
				require.Zero(t, r.Wait)
			}
		}
	}
}

// A refund at the instant of the grant undoes it exactly: a limiter that grants and refunds
// extra requests stays in the very state of a twin that never saw them, on random traffic.
func TestRefundAtTheGrantIsExact(t *testing.T) {
	for _, text := range []string{"token-bucket:capacity=5,rate=100/1s", "leaky-bucket:rate=100/1s",
		"sliding-window:limit=20,window=100ms,slots=10", "fixed-window:limit=20,window=100ms",
		"warm-up:capacity=10,rate=100/1s,warmup=2s"} {
		twin, _ := limiters.Parse(text, zeroClock{})
		l, _ := limiters.Parse(text, zeroClock{})
		refund := l.(limiters.Refunder)
		rng := rand.New(rand.NewPCG(5, 6))
		now := time.Duration(0)
		refunded := 0
		for i := 0; i < 20000; i++ {
			now += time.Duration(rng.Int64N(int64(8 * time.Millisecond)))
			n := 1 + rng.IntN(min(l.MaxPermits(), 3))
			if rng.IntN(3) == 0 {
				if extra := 1 + rng.IntN(l.MaxPermits()); l.AcquireAt(now, extra) == limiters.Admitted {
					refund.RefundAt(now, extra)
					refunded++
				}
			}
			require.Equal(t, twin.AcquireAt(now, n), l.AcquireAt(now, n), "%s: step %d", text, i)
			require.Equal(t, decisionView(twin.Snapshot(now)), decisionView(l.Snapshot(now)), "%s: step %d", text, i)
		}
		assert.Greater(t, refunded, 300, "%s: the test refunded something", text)
	}
}

// decisionView is the part of a state that decisions read: a sliding window's stale counts are
// ignored by every read, so a slot reset to its current generation with 0 permits is the same
// as a stale one (a grant retags the slot; its refund leaves the live 0).
func decisionView(st limiters.State) limiters.State {
	st.Slots = slices.Clone(st.Slots)
	for i, slot := range st.Slots {
		st.Slots[i] = limiters.Slot{Start: slot.Start, Count: slot.Count, Live: slot.Live && slot.Count > 0}
	}
	return st
}

// A refund later gives back at most what the grant still holds: never a permit more than a
// limiter that was never asked has.
func TestLateRefundNeverGivesMore(t *testing.T) {
	for _, text := range []string{"token-bucket:capacity=3,rate=100/1s", "sliding-window:limit=5,window=100ms,slots=10",
		"fixed-window:limit=5,window=100ms", "warm-up:capacity=6,rate=100/1s,warmup=1s"} {
		fresh, _ := limiters.Parse(text, zeroClock{})
		l, _ := limiters.Parse(text, zeroClock{})
		max := l.MaxPermits()
		require.Equal(t, limiters.Admitted, l.AcquireAt(0, l.AvailableAt(0)), text)
		for _, later := range []time.Duration{time.Millisecond, 50 * time.Millisecond, 150 * time.Millisecond, time.Hour} {
			l.(limiters.Refunder).RefundAt(later, max)
			l.(limiters.Refunder).RefundAt(later, max)
			assert.LessOrEqual(t, l.AvailableAt(later), fresh.AvailableAt(later), "%s at %s", text, later)
		}
	}
	f, _ := limiters.NewFixedWindow(5, 100*time.Millisecond, zeroClock{})
	f.AcquireAt(10*time.Millisecond, 5)
	f.RefundAt(120*time.Millisecond, 5) // the window of the grant has ended: nothing is owed
	assert.Equal(t, 5, f.AvailableAt(120*time.Millisecond))
	f.AcquireAt(130*time.Millisecond, 2)
	f.RefundAt(140*time.Millisecond, 3) // more than the window holds: refused, nothing changes
	assert.Equal(t, 3, f.AvailableAt(140*time.Millisecond))
}

// The capability paths allocate nothing.
func TestCapabilitiesAllocateNothing(t *testing.T) {
	b, _ := limiters.NewTokenBucket(3, limiters.PerSecond(100), zeroClock{})
	s, _ := limiters.NewSlidingWindow(10, time.Second, 10, zeroClock{})
	now := time.Duration(0)
	for name, f := range map[string]func(){
		"ReserveAt": func() { now += time.Millisecond; b.CancelAt(now, b.ReserveAt(now, 1, time.Second)) },
		"RefundAt":  func() { now += time.Millisecond; s.AcquireAt(now, 1); s.RefundAt(now, 1) },
		"Of":        func() { _ = limiters.CapabilitiesOf(b) },
	} {
		if allocs := testing.AllocsPerRun(200, f); allocs != 0 {
			t.Errorf("%s allocates %v", name, allocs)
		}
	}
	assert.True(t, slices.Contains(limiters.AllCapabilities(), limiters.CapFeedback))
}
