package limiters

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

// SlidingWindow admits at most limit permits per rolling window, measured in slots.
//
// The window is divided into slots buckets of window/slots each (10 by default: a 1s window
// has 100ms slots). Bucket i holds the count of the slot-index it was last written in, its
// generation, packed in one uint64 (generation in the high bits, count in the low ones). A
// slot-index g = ⌊t / slotLength⌋ lives in bucket g mod slots and is live while the current
// slot-index is below g + slots. A read sums the live buckets and ignores stale ones; memory
// is slots words, fixed and independent of traffic.
//
//	       │◀──────────── rolling window (1s) ─────────────▶│
//	slots   [ 0 ][ 1 ][ 2 ][ 3 ][ 4 ][ 5 ][ 6 ][ 7 ][ 8 ][ 9 ]
//
// Precision is one slot. A permit is counted from its slot's start until that slot leaves
// the window, so it is counted for between window − slotLength and window. Hence:
//   - in any half-open interval of length window − slotLength, at most limit are admitted;
//   - but inside one window length up to 2·limit can pass: limit 100 per 1s with 10 slots,
//     100 at 0.099s (end of slot 0) and 100 more at 1.000s (slot 0 has just expired) —
//     200 within 901ms. Pass a larger slot count for finer precision.
//
// Under contention it fails closed: a caller reserves its permits with a CAS on the current
// slot, re-reads the total and rolls its reservation back if the window is over the limit.
// Concurrent callers never push the count past the limit; the price is that two racing
// callers can both roll back although one of them would have fit.
//
// Cost: 2·slots atomic loads and one CAS (one more CAS on the rare rollback).
type SlidingWindow struct {
	buckets    []atomic.Uint64
	limit      uint64
	window     int64
	slotLength int64
	countBits  uint
	clock      Clock
}

var _ RateLimiter = (*SlidingWindow)(nil)

// DefaultSlots is the slot count used when a spec does not give one.
const DefaultSlots = 10

// NewSlidingWindow returns a sliding window limiter of limit permits per window, measured in
// slots buckets. It refuses a limit below 1 or above 2³²−1, a non-positive window, slots
// below 1 or above 4096, a window that is not a whole number of nanoseconds per slot (1s in 7
// slots), and a nil clock.
func NewSlidingWindow(limit int, window time.Duration, slots int, clock Clock) (*SlidingWindow, error) {
	if limit < 1 || uint64(limit) > math.MaxUint32 {
		return nil, configError(KindSlidingWindow, "limit", fmt.Sprint(limit), "must be between 1 and 2^32-1")
	}
	if window <= 0 || int64(window) > maxSpan {
		return nil, configError(KindSlidingWindow, "window", FormatDuration(window), "must be positive and at most 2^62ns")
	}
	if slots < 1 || slots > 4096 {
		return nil, configError(KindSlidingWindow, "slots", fmt.Sprint(slots), "must be between 1 and 4096")
	}
	if int64(window)%int64(slots) != 0 {
		return nil, configError(KindSlidingWindow, "slots", fmt.Sprint(slots),
			fmt.Sprintf("window %s is not a whole number of nanoseconds per slot", FormatDuration(window)))
	}
	if err := requireClock(KindSlidingWindow, clock); err != nil {
		return nil, err
	}
	return &SlidingWindow{
		buckets: make([]atomic.Uint64, slots), limit: uint64(limit), window: int64(window),
		slotLength: int64(window) / int64(slots), countBits: uint(bits.Len64(uint64(limit))) + 1, clock: clock,
	}, nil
}

// age is how many slots ago generation gen was current, seen from slot-index cur (both
// truncated to the generation field's width); negative when gen is newer than cur.
func (s *SlidingWindow) age(cur, gen uint64) int64 {
	return int64((cur-gen)<<s.countBits) >> s.countBits
}

// sum adds the counts of the buckets that are live at slot-index cur. A bucket newer than
// cur (a caller racing behind a newer one) counts as live: it fails closed.
func (s *SlidingWindow) sum(cur uint64) uint64 {
	var total uint64
	mask := uint64(1)<<s.countBits - 1
	slots := int64(len(s.buckets))
	for i := range s.buckets {
		w := s.buckets[i].Load()
		if s.age(cur, w>>s.countBits) < slots {
			total += w & mask
		}
	}
	return total
}

func (s *SlidingWindow) slotIndex(now time.Duration) uint64 {
	return uint64(int64(now)/s.slotLength) & (math.MaxUint64 >> s.countBits)
}

// AcquireAt takes n permits if the live slots hold at most limit − n.
func (s *SlidingWindow) AcquireAt(now time.Duration, n int) Decision {
	if d := checkN(n, int(s.limit)); d != Admitted {
		return d
	}
	cur := s.slotIndex(now)
	bucket := &s.buckets[cur%uint64(len(s.buckets))]
	mask := uint64(1)<<s.countBits - 1
	for {
		if s.sum(cur)+uint64(n) > s.limit {
			return Rejected
		}
		w := bucket.Load()
		count := w & mask
		switch age := s.age(cur, w>>s.countBits); {
		case age < 0:
			return Rejected // a newer generation owns this bucket: this caller is a window late
		case age > 0:
			count = 0 // the bucket's old generation has expired
		}
		if count+uint64(n) > mask {
			return Rejected // racing reservations have filled the count field: fail closed
		}
		if !bucket.CompareAndSwap(w, cur<<s.countBits|(count+uint64(n))) {
			continue
		}
		if s.sum(cur) <= s.limit {
			return Admitted
		}
		s.rollback(bucket, cur, n)
		return Rejected
	}
}

// rollback returns n permits reserved in bucket at generation cur, unless the generation has
// moved on (then the reservation has already expired with it).
func (s *SlidingWindow) rollback(bucket *atomic.Uint64, cur uint64, n int) {
	for {
		w := bucket.Load()
		if s.age(cur, w>>s.countBits) != 0 || bucket.CompareAndSwap(w, w-uint64(n)) {
			return
		}
	}
}

// TryAcquireAt reports whether n permits were taken at time now.
func (s *SlidingWindow) TryAcquireAt(now time.Duration, n int) bool {
	return s.AcquireAt(now, n) == Admitted
}

// TryAcquire takes n permits now, by the limiter's clock.
func (s *SlidingWindow) TryAcquire(n int) bool { return s.TryAcquireAt(s.clock.Now(), n) }

// AvailableAt is limit minus the live count (0 if a race has the window transiently over).
func (s *SlidingWindow) AvailableAt(now time.Duration) int {
	used := s.sum(s.slotIndex(now))
	if used >= s.limit {
		return 0
	}
	return int(s.limit - used)
}

// Available is AvailableAt(clock.Now()).
func (s *SlidingWindow) Available() int { return s.AvailableAt(s.clock.Now()) }

// RetryAfterAt walks the live slots from oldest to newest and returns the time at which
// enough of them will have expired for n more permits to fit.
func (s *SlidingWindow) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	if checkN(n, int(s.limit)) != Admitted {
		return 0, false
	}
	cur := s.slotIndex(now)
	used := s.sum(cur)
	if used+uint64(n) <= s.limit {
		return 0, true
	}
	excess := used + uint64(n) - s.limit
	slots := int64(len(s.buckets))
	mask := uint64(1)<<s.countBits - 1
	curStart := int64(now) - int64(now)%s.slotLength
	for age := slots - 1; age >= 0; age-- {
		gen := cur - uint64(age)
		w := s.buckets[gen%uint64(slots)].Load()
		if s.age(cur, w>>s.countBits) != age {
			continue
		}
		freed := w & mask
		if freed >= excess {
			// The slot that started age slots before now's slot expires slots−age slots after it.
			return time.Duration(curStart + (slots-age)*s.slotLength - int64(now)), true
		}
		excess -= freed
	}
	// Only reachable while racing callers hold transient reservations: a full window clears all.
	return time.Duration(curStart + slots*s.slotLength - int64(now)), true
}

// MaxPermits is the limit.
func (s *SlidingWindow) MaxPermits() int { return int(s.limit) }

// Kind is KindSlidingWindow.
func (s *SlidingWindow) Kind() Kind { return KindSlidingWindow }

// String is the spec: "sliding-window:limit=100,window=1s,slots=10".
func (s *SlidingWindow) String() string {
	return fmt.Sprintf("%s:limit=%d,window=%s,slots=%d", KindSlidingWindow, s.limit,
		FormatDuration(time.Duration(s.window)), len(s.buckets))
}

// Snapshot returns every slot of the window ending at now's slot, oldest first, with its
// count and whether it is live; Count is the live total.
func (s *SlidingWindow) Snapshot(now time.Duration) State {
	cur := s.slotIndex(now)
	slots := int64(len(s.buckets))
	mask := uint64(1)<<s.countBits - 1
	curStart := int64(now) - int64(now)%s.slotLength
	st := State{
		Kind: KindSlidingWindow, At: now, Available: s.AvailableAt(now), MaxPermits: int(s.limit),
		Limit: int(s.limit), Window: time.Duration(s.window), SlotLength: time.Duration(s.slotLength),
		WindowStart: time.Duration(curStart - (slots-1)*s.slotLength), WindowEnd: time.Duration(curStart + s.slotLength),
		Slots: make([]Slot, 0, slots),
	}
	for age := slots - 1; age >= 0; age-- {
		start := curStart - age*s.slotLength
		w := s.buckets[(cur-uint64(age))%uint64(slots)].Load()
		slot := Slot{Start: time.Duration(start)}
		if s.age(cur, w>>s.countBits) == age {
			slot.Count = int(w & mask)
			slot.Live = true
		} else if w&mask != 0 {
			slot.StaleCount = int(w & mask)
			slot.StaleStart = time.Duration(curStart - s.age(cur, w>>s.countBits)*s.slotLength)
		}
		st.Count += slot.Count
		st.Slots = append(st.Slots, slot)
	}
	return st
}
