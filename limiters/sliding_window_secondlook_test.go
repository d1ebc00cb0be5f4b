package limiters

// The first caller of a new slot sums the slots once, before it announces the slot, and then
// reads only head's bucket again (see AcquireAt). These tests run the other callers exactly
// where a race would put them, between that sum and the announcement (afterLook), on a frozen
// time axis: the counts are exact.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/virtualclock"
)

// The race of AcquireAt's comment: limit 3 per 4µs in 1µs slots, 1 permit at 0µs (head is
// slot 0, its total published). The first caller at 1µs sums 1; before it announces slot 1,
// a caller at 0µs takes 2 more, which stay (head is still 0). Bucket 0 read again after the
// announcement holds 3, so the caller at 1µs is refused: 3 + 1 > 3. Without the re-read it
// would be admitted on its sum of 1, and 4 permits would be admitted within 2µs (this test
// fails so when the re-read is left out).
func TestSlidingWindowSecondLookSeesHeadsSlot(t *testing.T) {
	us := time.Microsecond
	s := must(NewSlidingWindow(3, 4*us, 4, virtualclock.New()))
	require.Equal(t, Admitted, s.AcquireAt(0, 1))
	require.Equal(t, tagged(0, 0), s.others[0].Load(), "slot 0 published: the other buckets hold 0")

	raced := 0
	s.afterLook = func() {
		s.afterLook = nil
		for range 2 {
			require.Equal(t, Admitted, s.AcquireAt(0, 1), "head is still slot 0: the caller at 0µs is admitted")
		}
		raced++
	}
	require.Equal(t, Rejected, s.AcquireAt(1*us, 1), "bucket 0, read again, holds 3")
	require.Equal(t, 1, raced)
	require.Equal(t, uint64(1), s.head.Load(), "slot 1 was announced")
	require.Equal(t, uint64(0), s.buckets[1].Load(), "the reservation at 1µs was rolled back")
	require.Equal(t, tagged(0, 3), s.others[1].Load(), "slot 1 published the others' 3")
	require.Equal(t, 3, s.Snapshot(1*us).Count)

	require.Equal(t, Rejected, s.AcquireAt(1*us, 1), "fast path: 3 published + 0 + 1 > 3")
	require.Equal(t, Rejected, s.AcquireAt(0, 1), "late: head has passed slot 0")
	require.Equal(t, Admitted, s.AcquireAt(4*us, 3), "slot 4: slot 0's 3 have expired")
}

// A caller of any slot but head's cannot add permits between the sum and the announcement
// that stay: limit 3 per 4µs in 1µs slots, 1 permit at 0µs and 1 at 1µs (head slot 1). The
// first caller at 2µs sums 2; in between, a caller at 0µs (late: head has passed slot 0)
// reserves, reads head, and rolls back. The caller at 2µs is admitted on its sum, and the
// window holds exactly 3.
func TestSlidingWindowSecondLookOnlyHeadsSlotMatters(t *testing.T) {
	us := time.Microsecond
	s := must(NewSlidingWindow(3, 4*us, 4, virtualclock.New()))
	require.Equal(t, Admitted, s.AcquireAt(0, 1))
	require.Equal(t, Admitted, s.AcquireAt(1*us, 1))
	s.afterLook = func() {
		s.afterLook = nil
		require.Equal(t, Rejected, s.AcquireAt(0, 1), "late: head is slot 1")
		require.Equal(t, uint64(1), s.buckets[0].Load(), "its reservation was rolled back")
	}
	require.Equal(t, Admitted, s.AcquireAt(2*us, 1), "2 + 0 + 1 ≤ 3")
	require.Nil(t, s.afterLook, "the late caller ran between the sum and the announcement")
	require.Equal(t, 3, s.Snapshot(2*us).Count)
	require.Equal(t, Rejected, s.AcquireAt(2*us, 1))
	require.Equal(t, Rejected, s.AcquireAt(1*us, 1), "late: head is slot 2")
}

// A newer head announced between the sum and the announcement makes the first look start
// again: limit 3 per 4µs in 1µs slots, 1 permit at 0µs (head slot 0). The first caller at
// 2µs sums 1; in between, a caller at 1µs announces slot 1 and takes 2, which stay. The
// announcement of slot 2 from head 0 then fails, and the caller at 2µs looks again from head
// 1: 1 + 2 + 1 > 3, refused. (Had it announced anyway and re-read bucket 0 only, it would
// have admitted a fourth permit.)
func TestSlidingWindowSecondLookStartsAgainBehindANewHead(t *testing.T) {
	us := time.Microsecond
	s := must(NewSlidingWindow(3, 4*us, 4, virtualclock.New()))
	require.Equal(t, Admitted, s.AcquireAt(0, 1))
	looks := 0
	s.afterLook = func() {
		if looks++; looks == 1 {
			require.Equal(t, Admitted, s.AcquireAt(1*us, 1), "slot 1's first caller: 1 + 1 ≤ 3")
			require.Equal(t, Admitted, s.AcquireAt(1*us, 1), "1 + 1 + 1 ≤ 3")
		}
	}
	require.Equal(t, Rejected, s.AcquireAt(2*us, 1), "looked again: 1 + 2 + 1 > 3")
	require.Equal(t, 3, looks, "the caller at 2µs twice, slot 1's first caller once (its second takes the fast path)")
	require.Equal(t, uint64(1), s.head.Load(), "refused on its second look, before announcing slot 2")
	require.Equal(t, 3, s.Snapshot(2*us).Count)
}
