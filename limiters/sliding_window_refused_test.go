package limiters

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/virtualclock"
)

// A full window refuses the callers of its later slots from a total the first refused one
// published (refusedFast), without summing the slots again, and a give-back unpublishes it:
// limit 3 per 4ms in 1ms slots, 3 permits at 0ms. The caller at 1ms sums 3 and is refused; it
// publishes slot 1's total of the others, 3. The callers after it in slot 1 are refused on
// that total (the slow path, where the slots are summed, is not run: afterLook fails the
// test). A refund of 2 at 0.5ms empties part of bucket 0, and unpublishes: the next caller
// sums again, 1 + 0 + 1 ≤ 3, and is admitted, as the seed admits it.
func TestSlidingWindowRefusesAFullWindowsLaterCallersFromAPublishedTotal(t *testing.T) {
	ms := time.Millisecond
	s := must(NewSlidingWindow(3, 4*ms, 4, virtualclock.New()))
	require.Equal(t, Admitted, s.AcquireAt(0, 3))
	require.Equal(t, Rejected, s.AcquireAt(1*ms, 1), "3 + 0 + 1 > 3")
	require.Equal(t, slotOf(0, 1), s.refused.Load(), "the refused caller's slot")
	require.Equal(t, tagged(0, 3), s.refusedOthers[1].Load(), "the others' 3, published")
	require.Equal(t, uint64(0), s.head.Load(), "no slot announced: nobody reserved in slot 1")

	s.afterLook = func() { t.Fatal("a refusal in slot 1 summed the slots again") }
	for _, at := range []time.Duration{1 * ms, 1*ms + 1, 1500 * time.Microsecond, 2*ms - 1} {
		require.Equal(t, Rejected, s.AcquireAt(at, 1), "at %v: 3 published + 0 + 1 > 3", at)
	}
	s.afterLook = nil

	s.RefundAt(500*time.Microsecond, 2)
	require.Equal(t, uint64(notPublished), s.refusedOthers[1].Load(), "the refund unpublished slot 1's total")
	require.Equal(t, Admitted, s.AcquireAt(1600*time.Microsecond, 1), "1 + 0 + 1 ≤ 3")
	require.Equal(t, Rejected, s.AcquireAt(1700*time.Microsecond, 2), "1 + 1 + 2 > 3")

	// A caller behind head is not refused from a total published for an older slot: slot 2
	// refuses and publishes; then slot 3 admits (head moves to 3); a late caller in slot 2
	// goes the slow way, where the seed's late test refuses it.
	s2 := must(NewSlidingWindow(3, 4*ms, 4, virtualclock.New()))
	require.Equal(t, Admitted, s2.AcquireAt(0, 3))
	require.Equal(t, Rejected, s2.AcquireAt(2*ms, 1))
	require.Equal(t, slotOf(0, 2), s2.refused.Load())
	require.Equal(t, Admitted, s2.AcquireAt(4*ms, 1), "slot 0's 3 have expired")
	looked := false
	s2.afterLook = func() { looked = true }
	require.Equal(t, Rejected, s2.AcquireAt(2*ms, 1), "late: head has passed slot 2")
	require.True(t, looked, "head past the published slot: the slow path decides")
}
