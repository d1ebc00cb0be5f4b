package limiters

// The sliding window under contention: racing callers of many slots, some of them late
// (reading the clock behind the others), never admit more than the limit into any window of
// slots, whichever path each decision takes; and a late caller is refused.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/virtualclock"
)

// For every slot-index g, the permits admitted in slots g−slots+1 … g add up to at most the
// limit, when racing goroutines sweep forward through the slots, some of their readings
// behind, with requests of several sizes. A decision's slot is its time's.
func TestSlidingWindowRaceKeepsEveryWindow(t *testing.T) {
	rounds := 300
	if raceDetector || testing.Short() {
		rounds = 40
	}
	for _, cfg := range []struct {
		limit, slots int
		window       time.Duration
	}{{3, 4, 4 * time.Millisecond}, {10, 10, 10 * time.Millisecond}, {7, 1, time.Millisecond}, {50, 5, 5 * time.Millisecond}} {
		slotLength := cfg.window / time.Duration(cfg.slots)
		for round := range rounds {
			s := must(NewSlidingWindow(cfg.limit, cfg.window, cfg.slots, virtualclock.New()))
			const goroutines, calls = 4, 300
			admitted := make([][]int64, goroutines) // per goroutine, slot-index → permits
			var wg sync.WaitGroup
			gate := newStartGate(goroutines)
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(round), uint64(g)))
					mine := make([]int64, calls/2+4*cfg.slots)
					gate.wait()
					for i := range calls {
						// Time sweeps forward half a slot per call, the readings jittered by up to
						// two slots either way, so that racers hit several buckets and some are late.
						at := time.Duration(i)*slotLength/2 + time.Duration(r.Int64N(int64(4*slotLength))) - 2*slotLength
						at = max(at, 0)
						n := 1 + r.IntN(min(cfg.limit, 3))
						if s.AcquireAt(at, n) == Admitted {
							mine[at/slotLength] += int64(n)
						}
					}
					admitted[g] = mine
				}()
			}
			gate.open()
			wg.Wait()
			total := make([]int64, len(admitted[0]))
			for _, mine := range admitted {
				for i, n := range mine {
					total[i] += n
				}
			}
			for g := range total {
				var inWindow int64
				for k := max(0, g-cfg.slots+1); k <= g; k++ {
					inWindow += total[k]
				}
				if inWindow > int64(cfg.limit) {
					t.Fatalf("limit %d, %d slots, round %d: %d permits admitted in slots %d..%d", cfg.limit, cfg.slots, round,
						inWindow, g-cfg.slots+1, g)
				}
			}
		}
	}
}

// The late caller of the type's comment: limit 20 per 10ms in 1ms slots; 20 at 9.99ms, then
// 1 at 19ms (which reuses 9.99ms's bucket); a caller whose clock read 18.95ms no longer sees
// the 20 and would take 19 more — 39 within 9ms — so it is refused, though its sum has room.
// A refund at an older time unpublishes the cached total, and the next decision sums again.
func TestSlidingWindowRefusesALateCaller(t *testing.T) {
	s := must(NewSlidingWindow(20, 10*time.Millisecond, 10, virtualclock.New()))
	ms := time.Millisecond
	require.Equal(t, Admitted, s.AcquireAt(9990*time.Microsecond, 20))
	require.Equal(t, Admitted, s.AcquireAt(19*ms, 1))
	require.Equal(t, Rejected, s.AcquireAt(18950*time.Microsecond, 1), "late: the 20 it cannot see were live for it")
	require.Equal(t, Admitted, s.AcquireAt(19*ms, 1), "the caller at 19ms still decides on its own window")
	require.Equal(t, 18, s.AvailableAt(19*ms))

	// Refunds: in head's slot the published total stands; in an older slot it is unpublished.
	require.Equal(t, Admitted, s.AcquireAt(20*ms, 5))
	s.RefundAt(20*ms, 2)
	require.Equal(t, 15, s.AvailableAt(20*ms))
	for range 15 {
		require.Equal(t, Admitted, s.AcquireAt(20*ms, 1))
	}
	require.Equal(t, Rejected, s.AcquireAt(20*ms, 1))
	s.RefundAt(19*ms, 2) // the slot before head's: its bucket still holds 19ms's generation
	require.Equal(t, 2, s.AvailableAt(20*ms))
	require.Equal(t, Admitted, s.AcquireAt(20*ms, 2), "the refund is seen")
	require.Equal(t, Rejected, s.AcquireAt(20*ms, 1))
}

// The counterexample to caching the other buckets' total without reading head again on the
// slow path: in window 0 a bucket emptied back to count 0 reads as never written (its word is
// 0), so a caller behind it is not late by the buckets, and a total published for it misses
// that caller's permits. Limit 3 per 4ms in four 1ms slots; the race test's failures ("limit
// 3, 4 slots, round 293: 4 permits admitted in slots -1..2") were schedules of this shape
// (every failing round, instrumented, had admitted a slow-path caller in window 0 behind
// head's emptied bucket), in which P's rollback empties slot 2's bucket as the refund here:
//
//	A @0ms n=1  admitted; bucket 0 = 1.
//	P @2ms n=2  first look 1+2 ≤ 3; announces head = 2.
//	B @1ms n=1  first look 1+1 ≤ 3; CAS bucket 1 = 1; (not yet summed)
//	P           CAS bucket 2 = 2; sums others 1+1 = 2, here 2; publishes others[2] = 2;
//	            2+2 > 3: rolls back, bucket 2 = 0, the word of a never-written bucket.
//	B           sums 1+1+0+0 = 2, no bucket after slot 1 written, not late: admitted.
//	C @1ms n=1  first look 2+1 ≤ 3; CAS bucket 1 = 2; sums 3, not late: admitted.
//	            Slots 0..2 hold 3; slot 2's published 2 does not count C's permit.
//	D @2ms n=1  fast path: head 2, others[2] = 2, bucket 2 = 0: 2+0+1 ≤ 3; CAS; head
//	            still 2: admitted. Slots 0..2 hold 4.
//
// From window 1 on, a bucket P has reserved in keeps P's generation after any rollback, so
// C's sum finds it late; in window 0 only head tells C that slot 2 was announced. So the slow
// path reads head after its sum, as the fast path does, and C is refused. The seed admits C
// (and then refuses D): the one place where a single goroutine's decision differs from the
// seed's, and what every later window decides.
func TestSlidingWindowRefusesACallerBehindAnEmptiedSlot(t *testing.T) {
	ms := time.Millisecond
	s := must(NewSlidingWindow(3, 4*ms, 4, virtualclock.New()))
	seed := newSeedSlidingWindow(3, 4*ms, 4)
	both := func(at time.Duration, n int) (got, seeds Decision) { return s.AcquireAt(at, n), seed.AcquireAt(at, n) }
	for _, step := range []struct {
		at time.Duration
		n  int
	}{{0, 1}, {1 * ms, 1}, {2 * ms, 1}} {
		got, seeds := both(step.at, step.n)
		require.Equal(t, Admitted, got)
		require.Equal(t, Admitted, seeds)
	}
	require.Equal(t, tagged(0, 2), s.others[2].Load(), "slot 2 published the total of buckets 0 and 1")
	s.RefundAt(2*ms, 1) // head's own bucket, back to 0: the published total stands
	seed.RefundAt(2*ms, 1)
	require.Equal(t, uint64(0), s.buckets[2].Load(), "slot 2's bucket reads as never written")

	got, seeds := both(1*ms, 1)
	require.Equal(t, Rejected, got, "late: slot 2 was announced after slot 1")
	require.Equal(t, Admitted, seeds, "the seed finds no bucket late in window 0")
	require.Equal(t, uint64(1), s.buckets[1].Load(), "the reservation was rolled back")
	require.Equal(t, 1, s.AvailableAt(2*ms))

	got, seeds = both(2*ms, 1)
	require.Equal(t, Admitted, got, "2 in slots 0..2, 1 more fits")
	require.Equal(t, Rejected, seeds, "the seed had admitted the late caller instead")
	got, _ = both(2*ms, 1)
	require.Equal(t, Rejected, got, "slots 0..2 hold the limit")
	require.Equal(t, 3, s.Snapshot(2*ms).Count)
}

// tagged is a sliding window word of generation gen and count n (countBits 2, limit 3).
func tagged(gen, n uint64) uint64 { return gen<<2 | n }

// A single goroutine's sliding window is the seed's, call by call: the same decisions, the
// same bucket words, the same availability, Retry-After and snapshot, on random calls whose
// times mostly move forward but sometimes read behind (late callers), with refunds at now or
// at an older time, idles of any length, and sizes from invalid to too large.
func TestSlidingWindowAsTheSeed(t *testing.T) {
	ops := 40_000
	if raceDetector || testing.Short() {
		ops = 8_000
	}
	for i, cfg := range []struct {
		limit, slots int
		window       time.Duration
	}{
		{100, 10, time.Second}, {7, 4, 100 * time.Millisecond}, {20, 1, time.Second}, {3, 3, 3 * time.Millisecond},
		{100_000_000, 1000, time.Second}, {2, 4, time.Hour}, {math.MaxUint32, 4096, 1 << 31 * 4096},
	} {
		s := must(NewSlidingWindow(cfg.limit, cfg.window, cfg.slots, virtualclock.New()))
		seed := newSeedSlidingWindow(cfg.limit, cfg.window, cfg.slots)
		r := rand.New(rand.NewPCG(uint64(i), 77))
		slot := cfg.window / time.Duration(cfg.slots)
		now := time.Duration(0)
		if i%2 == 1 {
			now = year
		}
		for op := range ops {
			switch p := r.IntN(100); {
			case p < 50:
				now += time.Duration(r.Int64N(int64(slot)/2 + 1))
			case p < 60:
				now += slot
			case p < 63:
				now += time.Duration(r.Int64N(int64(cfg.window)*3 + 1))
			case p == 63:
				now += time.Duration(r.Int64N(int64(year)))
			}
			at := now
			if r.IntN(10) == 0 { // a late reading
				at = max(0, now-time.Duration(r.Int64N(int64(2*cfg.window)+1)))
			}
			n := size(r, min(cfg.limit, 1000))
			if r.IntN(8) == 0 {
				n = 1 + r.IntN(cfg.limit)
			}
			switch r.IntN(12) {
			case 0:
				s.RefundAt(at, n)
				seed.RefundAt(at, n)
			case 1:
				require.Equal(t, seed.AvailableAt(at), s.AvailableAt(at), "config %d op %d: AvailableAt", i, op)
			case 2:
				ws, wok := seed.RetryAfterAt(at, n)
				gs, gok := s.RetryAfterAt(at, n)
				require.Equal(t, fmt.Sprint(ws, wok), fmt.Sprint(gs, gok), "config %d op %d: RetryAfterAt", i, op)
			case 3:
				if cfg.slots <= 100 {
					require.Equal(t, seed.Snapshot(at), s.Snapshot(at), "config %d op %d: Snapshot", i, op)
				}
			default:
				acquireAsTheSeed(t, s, seed, at, n, "config %d op %d: AcquireAt(%v, %d), now %v", i, op, at, n, now)
			}
			requireBucketsAsTheSeed(t, s, seed, "config %d op %d", i, op)
		}
	}
}

// In window 0, where the one difference from the seed lies, a single goroutine's sliding
// window is still the seed's but for that difference, which these runs do reach: many fresh
// limiters driven through their first window and a little beyond, with late readings and
// refunds (which empty a bucket, as a rollback can), small limits and few slots.
func TestSlidingWindowAsTheSeedInWindowZero(t *testing.T) {
	runs := 3000
	if raceDetector || testing.Short() {
		runs = 500
	}
	differences := 0
	for run := range runs {
		cfg := []struct {
			limit, slots int
			window       time.Duration
		}{{3, 4, 4 * time.Millisecond}, {5, 10, 10 * time.Millisecond}, {2, 3, 3 * time.Millisecond}}[run%3]
		s := must(NewSlidingWindow(cfg.limit, cfg.window, cfg.slots, virtualclock.New()))
		seed := newSeedSlidingWindow(cfg.limit, cfg.window, cfg.slots)
		r := rand.New(rand.NewPCG(uint64(run), 78))
		slot := cfg.window / time.Duration(cfg.slots)
		now := time.Duration(0)
		for op := range 40 {
			now += time.Duration(r.Int64N(int64(slot)/2 + 1))
			at := now
			if r.IntN(4) == 0 {
				at = max(0, now-time.Duration(r.Int64N(int64(cfg.window)+1)))
			}
			n := 1 + r.IntN(cfg.limit)
			switch r.IntN(4) {
			case 0:
				s.RefundAt(at, n)
				seed.RefundAt(at, n)
			case 1:
				require.Equal(t, seed.AvailableAt(at), s.AvailableAt(at), "run %d op %d: AvailableAt(%v)", run, op, at)
			default:
				if acquireAsTheSeed(t, s, seed, at, n, "run %d op %d: AcquireAt(%v, %d), now %v", run, op, at, n, now) {
					differences++
				}
			}
			requireBucketsAsTheSeed(t, s, seed, "run %d op %d", run, op)
		}
	}
	require.Positive(t, differences, "no run reached a caller behind an emptied slot")
	t.Logf("%d callers behind an emptied slot refused (the seed admitted them)", differences)
}

// acquireAsTheSeed requires s and the seed to decide AcquireAt(at, n) alike, but for the one
// difference: s refuses a caller in window 0 behind head's slot whose bucket is emptied, which
// the seed admits (TestSlidingWindowRefusesACallerBehindAnEmptiedSlot). Then the seed's
// permits are refunded, which leaves its buckets as s's again, and the difference reported.
func acquireAsTheSeed(t *testing.T, s *SlidingWindow, seed *seedSlidingWindow, at time.Duration, n int, msg string, args ...any) (differs bool) {
	t.Helper()
	got, want := s.AcquireAt(at, n), seed.AcquireAt(at, n)
	if got == want {
		return false
	}
	if got == Rejected && want == Admitted && behindAnEmptiedSlot(s, at) {
		seed.RefundAt(at, n)
		return true
	}
	require.Equal(t, want, got, append([]any{msg}, args...)...)
	return false
}

// behindAnEmptiedSlot reports that at lies in window 0 before head's slot, and head's bucket
// reads 0, as if never written.
func behindAnEmptiedSlot(s *SlidingWindow, at time.Duration) bool {
	if int64(at) >= s.window {
		return false
	}
	h := s.head.Load()
	return h > uint64(max(int64(at), 0)/s.slotLength) && s.buckets[h%uint64(len(s.buckets))].Load() == 0
}

// requireBucketsAsTheSeed requires s's bucket words to be the seed's.
func requireBucketsAsTheSeed(t *testing.T, s *SlidingWindow, seed *seedSlidingWindow, msg string, args ...any) {
	t.Helper()
	for k := range s.buckets {
		if s.buckets[k].Load() != seed.buckets[k].Load() {
			require.Failf(t, "buckets differ", "%s: bucket %d: %#x, the seed's %#x", fmt.Sprintf(msg, args...), k,
				s.buckets[k].Load(), seed.buckets[k].Load())
		}
	}
}
