package limiters

// The seed's sliding window, kept as it was (every decision sums all the slots, twice), as
// the reference TestSlidingWindowAsTheSeed holds the cached totals to, call by call.

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"
)

func newSeedSlidingWindow(limit int, window time.Duration, slots int) *seedSlidingWindow {
	return &seedSlidingWindow{
		buckets: make([]atomic.Uint64, slots), limit: uint64(limit), window: int64(window),
		slotLength: int64(window) / int64(slots), countBits: uint(bits.Len64(uint64(limit))),
	}
}

type seedSlidingWindow struct {
	buckets    []atomic.Uint64
	hint       atomic.Uint64 // gen<<12 | pos of the slot last located; checked before use
	limit      uint64
	window     int64
	slotLength int64
	countBits  uint
}

func (s *seedSlidingWindow) position(now time.Duration) (gen uint64, pos int) {
	t := max(int64(now), 0)
	h := s.hint.Load()
	gen, pos = h>>12, int(h&(1<<12-1))
	if uint64(t-int64(gen)*s.window-int64(pos)*s.slotLength) < uint64(s.slotLength) {
		return gen, pos
	}
	g := t / s.window
	gen, pos = uint64(g), int((t-g*s.window)/s.slotLength)
	s.hint.Store(gen<<12 | uint64(pos)) // slots ≤ 4096: pos fits in 12 bits
	return gen, pos
}

func (s *seedSlidingWindow) newer(w, gen uint64) int64 {
	return int64(w-gen<<s.countBits) >> s.countBits
}

func (s *seedSlidingWindow) sum(gen uint64, pos int) (total uint64, late bool) {
	mask := uint64(1)<<s.countBits - 1
	cur := gen << s.countBits
	// newest is the largest generation difference seen, in units of 1<<countBits (the count
	// bits only add less than one unit): a bucket is late when it reaches one full unit.
	newest := int64(math.MinInt64)
	for i := range s.buckets[:pos+1] {
		w := s.buckets[i].Load()
		d := int64(w - cur)
		if d >= 0 {
			total += w & mask
		}
		newest = max(newest, d)
	}
	rest := s.buckets[pos+1:]
	if cur != 0 {
		prev := cur - 1<<s.countBits
		for i := range rest {
			w := rest[i].Load()
			d := int64(w - prev)
			if d >= 0 {
				total += w & mask
			}
			newest = max(newest, d)
		}
		return total, newest >= int64(1)<<s.countBits
	}
	// Window 0: the buckets after pos expect window −1, which no word holds; any word there
	// is counted, and any written one (non-zero) was written by a newer caller.
	var written uint64
	for i := range rest {
		w := rest[i].Load()
		total += w & mask
		written |= w
	}
	return total, newest >= int64(1)<<s.countBits || written != 0
}

func (s *seedSlidingWindow) used(gen uint64, pos int) uint64 {
	var total uint64
	mask := uint64(1)<<s.countBits - 1
	cur := gen << s.countBits
	prev := cur - 1<<s.countBits
	for i := range s.buckets[:pos+1] {
		if w := s.buckets[i].Load(); int64(w-cur) >= 0 {
			total += w & mask
		}
	}
	for i := pos + 1; i < len(s.buckets); i++ {
		if w := s.buckets[i].Load(); int64(w-prev) >= 0 {
			total += w & mask
		}
	}
	return total
}

func (s *seedSlidingWindow) AcquireAt(now time.Duration, n int) Decision {
	if d := CheckN(n, int(s.limit)); d != Admitted {
		return d
	}
	gen, pos := s.position(now)
	bucket := &s.buckets[pos]
	mask := uint64(1)<<s.countBits - 1
	tag := gen << s.countBits
	for {
		if s.used(gen, pos)+uint64(n) > s.limit {
			return Rejected
		}
		w := bucket.Load()
		count := w & mask
		switch d := s.newer(w, gen); {
		case d > 0:
			return Rejected // a newer generation owns this bucket: this caller is a window late
		case d < 0:
			count = 0 // the bucket's old generation has expired
		}
		if count+uint64(n) > mask {
			return Rejected // racing reservations have filled the count field: fail closed
		}
		if !bucket.CompareAndSwap(w, tag|(count+uint64(n))) {
			continue
		}
		if used, late := s.sum(gen, pos); !late && used <= s.limit {
			return Admitted
		}
		s.rollback(bucket, gen, n)
		return Rejected
	}
}

func (s *seedSlidingWindow) rollback(bucket *atomic.Uint64, gen uint64, n int) {
	for {
		w := bucket.Load()
		if s.newer(w, gen) != 0 || bucket.CompareAndSwap(w, w-uint64(n)) {
			return
		}
	}
}

func (s *seedSlidingWindow) slot(gen uint64, pos int, age int) (w uint64, d int64) {
	i, g := pos-age, gen
	if i < 0 {
		i += len(s.buckets)
		g--
	}
	w = s.buckets[i].Load()
	return w, s.newer(w, g)
}

func (s *seedSlidingWindow) AvailableAt(now time.Duration) int {
	if s.limit == 0 { // the zero value
		return 0
	}
	used, late := s.sum(s.position(now))
	if late || used >= s.limit {
		return 0
	}
	return int(s.limit - used)
}

func (s *seedSlidingWindow) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	if CheckN(n, int(s.limit)) != Admitted {
		return 0, false
	}
	gen, pos := s.position(now)
	used, _ := s.sum(gen, pos)
	if used+uint64(n) <= s.limit {
		return 0, true
	}
	excess := used + uint64(n) - s.limit
	slots := len(s.buckets)
	mask := uint64(1)<<s.countBits - 1
	t := max(int64(now), 0)
	curStart := t - t%s.slotLength
	for age := slots - 1; age >= 0; age-- {
		w, d := s.slot(gen, pos, age)
		if d != 0 {
			continue
		}
		freed := w & mask
		if freed >= excess {
			// The slot that started age slots before now's slot expires slots−age slots after it.
			return time.Duration(curStart + int64(slots-age)*s.slotLength - int64(now)), true
		}
		excess -= freed
	}
	// Only reachable while racing callers hold transient reservations: a full window clears all.
	return time.Duration(curStart + int64(slots)*s.slotLength - int64(now)), true
}

func (s *seedSlidingWindow) RefundAt(now time.Duration, n int) {
	if CheckN(n, int(s.limit)) != Admitted {
		return
	}
	gen, pos := s.position(now)
	bucket := &s.buckets[pos]
	mask := uint64(1)<<s.countBits - 1
	for {
		w := bucket.Load()
		if s.newer(w, gen) != 0 || w&mask < uint64(n) {
			return
		}
		if bucket.CompareAndSwap(w, w-uint64(n)) {
			return
		}
	}
}

func (s *seedSlidingWindow) Snapshot(now time.Duration) State {
	if s.limit == 0 { // the zero value
		return State{Kind: KindSlidingWindow, At: now}
	}
	gen, pos := s.position(now)
	slots := len(s.buckets)
	mask := uint64(1)<<s.countBits - 1
	t := max(int64(now), 0)
	curStart := t - t%s.slotLength
	st := State{
		Kind: KindSlidingWindow, At: now, Available: s.AvailableAt(now), MaxPermits: int(s.limit),
		Limit: int(s.limit), Window: time.Duration(s.window), SlotLength: time.Duration(s.slotLength),
		WindowStart: time.Duration(curStart - int64(slots-1)*s.slotLength), WindowEnd: time.Duration(curStart + s.slotLength),
		Slots: make([]Slot, 0, slots),
	}
	for age := slots - 1; age >= 0; age-- {
		start := curStart - int64(age)*s.slotLength
		w, d := s.slot(gen, pos, age)
		slot := Slot{Start: time.Duration(start)}
		if d == 0 {
			slot.Count = int(w & mask)
			slot.Live = true
		} else if w&mask != 0 {
			slot.StaleCount = int(w & mask)
			slot.StaleStart = time.Duration(start + d*s.window)
		}
		st.Count += slot.Count
		st.Slots = append(st.Slots, slot)
	}
	return st
}
