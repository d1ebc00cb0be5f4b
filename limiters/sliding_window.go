package limiters

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/ratelab/ratelab/limiters/internal/bound"
	"github.com/ratelab/ratelab/limiters/internal/limits"
)

// SlidingWindow admits at most limit permits per rolling window, measured in slots.
//
// The window is divided into slots buckets of window/slots each (10 by default: a 1s window
// has 100ms slots). Slot-index g = ⌊t / slotLength⌋ lives in bucket g mod slots, and the
// bucket holds its count tagged with its generation, the window number ⌊g / slots⌋ =
// ⌊t / window⌋, packed in one uint64 (generation in the high bits, count in the low
// bits.Len(limit) bits). Seen from slot-index cur, bucket i holds a live count when its
// generation is that of the newest slot-index ≤ cur that maps to i: cur's window number for
// i ≤ cur mod slots, the one before for the others. A read sums the live buckets and ignores
// stale ones; memory is slots words, fixed and independent of traffic.
//
//	       │◀──────────── rolling window (1s) ─────────────▶│
//	slots   [ 0 ][ 1 ][ 2 ][ 3 ][ 4 ][ 5 ][ 6 ][ 7 ][ 8 ][ 9 ]
//
// Tagging by window number rather than by slot-index gives the generation field slots times
// the range, and NewSlidingWindow refuses windows shorter than 2^(bits.Len(limit)−1) ns (see
// NewFixedWindow), so that for every time below 2^62 ns (146 years) and after any idle an old
// generation is told apart from a current or newer one.
//
// Precision is one slot. A permit admitted at t in slot g is counted until slot g+slots
// begins, i.e. for between window − slotLength + 1ns and window. Hence:
//   - two permits at most window − slotLength apart are counted together, so any half-open
//     interval of length window − slotLength + 1ns (a fortiori window − slotLength) holds at
//     most limit admissions;
//   - but two bursts 1ns further apart can both pass in full: limit 100 per 1s with 10
//     slots, 100 at 99.999999ms (the last nanosecond of slot 0) and 100 more at 1s (the
//     instant slot 0 expires) — 200 admitted window − slotLength + 1ns = 900.000001ms
//     apart, twice the limit within 901ms. Pass a larger slot count for finer precision.
//
// Under contention it fails closed: a caller reserves its permits with a CAS on the current
// slot, re-reads the total (or, within a slot, what tells it the total has not changed: see
// AcquireAt) and rolls its reservation back if the window is over the limit.
// Concurrent callers never push the count past the limit; the price is that two racing
// callers can both roll back although one of them would have fit.
//
// Cost: within a slot, three loads and one CAS (see AcquireAt); the first reservation in a
// slot makes slots + 5 loads and three CASes. 100 per 100µs in 10 slots, one call a µs
// (BenchmarkAcquireAt, and BenchmarkSlidingWindowPath for the two paths apart): 93
// instructions a call within a slot and 452 for a slot's first, 128 on average (callgrind,
// benchmark loop included; 127, 646 and 178 when a slot's first call summed the slots twice).
// A refusal in a full window's slot that nobody has reserved in is decided from the total the
// slot's first refused caller published (refusedFast): four loads, no CAS; before, each such
// refusal summed the slots (the perf scenario's sliding-window lane, 10,000 requests per
// second against 100 per 1s: 476 instructions per event, 255 since).
// Memory is 3·slots words.
//
// The zero value grants nothing: every request is Never, nothing is available, and no
// method panics; NewSlidingWindow makes a working one.
type SlidingWindow struct {
	buckets []atomic.Uint64
	// head is the newest slot a caller has reserved in (or is about to), as gen<<12 | pos
	// (slots ≤ 4096: pos fits in 12 bits, and the word orders slots as their slot-indices
	// do): see AcquireAt. It is also where position starts looking.
	head atomic.Uint64
	// others[pos] is gen<<countBits | P once published for slot (gen, pos): P is the total of
	// the buckets other than pos that are live there. ^0 (no generation) until then.
	others []atomic.Uint64
	// refused is a slot (gen<<12 | pos) whose total of the other buckets a refused caller
	// published in refusedOthers[pos], as others holds them: see refusedFast.
	refused       atomic.Uint64
	refusedOthers []atomic.Uint64
	limit         uint64
	window        int64
	slotLength    int64
	countBits     uint
	mask          uint64 // 1<<countBits − 1, a word's count
	clock         Clock
	// afterLook, when set (by tests only), runs in AcquireAt's slow path between its first
	// look and its announcement of the slot: where a racing caller would act.
	afterLook func()
}

var (
	_ RateLimiter = (*SlidingWindow)(nil)
	_ Refunder    = (*SlidingWindow)(nil)
	_ Clocked     = (*SlidingWindow)(nil)
)

// DefaultSlots is the slot count used when a spec does not give one.
const DefaultSlots = 10

// KindSlidingWindow is the sliding window's name in specs.
const KindSlidingWindow Kind = "sliding-window"

// SlidingWindowSpec configures a SlidingWindow: "sliding-window:limit=100,window=1s,slots=10".
type SlidingWindowSpec struct {
	Limit  int           // permits per rolling window
	Window time.Duration // the rolling window
	Slots  int           // buckets the window is measured in (DefaultSlots when a spec omits it)
}

var slidingWindowKind = KindInfo{
	Kind: KindSlidingWindow, Family: FamilyRatelab, Shape: ShapeSlots,
	Summary:      "limit per rolling window, measured in slots",
	Example:      "sliding-window:limit=100,window=1s,slots=10",
	Checks:       CheckSpecs{Sizes: "sliding-window:limit=5,window=1s,slots=10"},
	Fields:       FieldInfos[SlidingWindowSpec](),
	Ranges:       slidingWindowRanges,
	Capabilities: []Capability{CapRetryAfter, CapRefund},
	Parse:        SpecParser(SlidingWindowSpec{Slots: DefaultSlots}),
	Explain:      explainSlidingWindow,
}

func (s *SlidingWindowSpec) Fields() []Field {
	return []Field{
		IntField("limit", true, "permits per rolling window", &s.Limit),
		DurationField("window", true, "the rolling window", &s.Window),
		IntField("slots", false, fmt.Sprintf("buckets the window is measured in (default %d)", DefaultSlots), &s.Slots),
	}
}

// Kind is KindSlidingWindow.
func (s SlidingWindowSpec) Kind() Kind { return KindSlidingWindow }

// String is "sliding-window:limit=100,window=1s,slots=10".
func (s SlidingWindowSpec) String() string { return FormatSpec(KindSlidingWindow, s.Fields()) }

// Validate refuses a limit below 1 or above 2³²−1, a non-positive window or one beyond
// 2⁶² ns, a window shorter than 2^(bits.Len(limit)−1) ns (only needed above about one permit
// per ns), slots below 1 or above 4096, and a window that is not a whole number of
// nanoseconds per slot (1s in 7 slots).
func (s SlidingWindowSpec) Validate() error {
	if s.Limit < 1 || uint64(s.Limit) > math.MaxUint32 {
		return NewConfigError(KindSlidingWindow, "limit", fmt.Sprint(s.Limit), "must be between 1 and 2^32-1")
	}
	if s.Window <= 0 || int64(s.Window) > MaxSpan {
		return NewConfigError(KindSlidingWindow, "window", FormatDuration(s.Window), "must be positive and at most 2^62ns")
	}
	if err := checkWindow(KindSlidingWindow, uint64(s.Limit), s.Window); err != nil {
		return err
	}
	if s.Slots < 1 || s.Slots > 4096 {
		return NewConfigError(KindSlidingWindow, "slots", fmt.Sprint(s.Slots), "must be between 1 and 4096")
	}
	if int64(s.Window)%int64(s.Slots) != 0 {
		return NewConfigError(KindSlidingWindow, "slots", fmt.Sprint(s.Slots),
			fmt.Sprintf("window %s is not a whole number of nanoseconds per slot", FormatDuration(s.Window)))
	}
	return nil
}

// slidingWindowRanges are what SlidingWindowSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for sliding-window, with specs at and just past each edge that the registry
// test holds to Validate.
var slidingWindowRanges = []FieldRange{
	{Field: "limit", Accepted: limits.Limit32,
		Why:     "the count shares one 64-bit word with the window number, updated in one atomic step",
		Valid:   []string{"sliding-window:limit=1,window=1ns,slots=1", "sliding-window:limit=4294967295,window=2147483648ns,slots=1"},
		Invalid: []string{"sliding-window:limit=0,window=1s", "sliding-window:limit=4294967296,window=4294967296ns,slots=1"}},
	{Field: "window", Accepted: "positive, " + limits.Span + ", and at least 2^(bits(limit)−1) ns (1ns up to limit 1, 2ns up to 3, …, 2.15s for 2^32−1)",
		Why:     limits.Window + "; the window number, in the word's remaining bits, stays unambiguous for 146 years: only needed above about one permit per ns",
		Valid:   []string{"sliding-window:limit=1,window=4611686018427387904ns,slots=1", "sliding-window:limit=3,window=2ns,slots=1"},
		Invalid: []string{"sliding-window:limit=1,window=4611686018427387905ns,slots=1", "sliding-window:limit=3,window=1ns,slots=1", "sliding-window:limit=4294967295,window=2147483647ns,slots=1"}},
	{Field: "slots", Accepted: fmt.Sprintf("1 to 4096 (default %d), dividing the window into whole nanoseconds", DefaultSlots),
		Why:     "the slots are the window's memory, and a slot's position fits in 12 bits",
		Valid:   []string{"sliding-window:limit=1,window=4096ns,slots=4096", "sliding-window:limit=1,window=1s,slots=8", "sliding-window:limit=1,window=1s,slots=1"},
		Invalid: []string{"sliding-window:limit=1,window=4097ns,slots=4097", "sliding-window:limit=1,window=1s,slots=7", "sliding-window:limit=1,window=1s,slots=0"}},
}

// New is NewSlidingWindow(s.Limit, s.Window, s.Slots, clock).
func (s SlidingWindowSpec) New(clock Clock) (Limiter, error) {
	return NewSlidingWindow(s.Limit, s.Window, s.Slots, clock)
}

// AdmissionBound is limit·⌈k/slots⌉ where k = ⌈(L−1ns)/slotLength⌉ + 1 is the number of
// slot-indices the interval can touch: 100 per 1s in 10 slots: 100 over 900ms, 200 over 1s.
func (s SlidingWindowSpec) AdmissionBound(L time.Duration) (int64, bool) {
	slots := int64(max(s.Slots, 1))
	k := bound.Touched(L, s.Window/time.Duration(slots))
	return bound.SaturatingMul(int64(s.Limit), bound.DivCeil(k, slots)), true
}

// NaturalWindow is the window.
func (s SlidingWindowSpec) NaturalWindow() time.Duration { return s.Window }

// NominalRate is limit per window.
func (s SlidingWindowSpec) NominalRate() (Rate, bool) {
	return Rate{Permits: s.Limit, Window: s.Window}, true
}

// InitialPermits is the limit.
func (s SlidingWindowSpec) InitialPermits() int { return s.Limit }

// NewSlidingWindow returns a sliding window limiter of limit permits per window, measured in
// slots buckets. It refuses what SlidingWindowSpec.Validate refuses and a nil clock.
func NewSlidingWindow(limit int, window time.Duration, slots int, clock Clock) (*SlidingWindow, error) {
	if err := (SlidingWindowSpec{Limit: limit, Window: window, Slots: slots}).Validate(); err != nil {
		return nil, err
	}
	if err := RequireClock(KindSlidingWindow, clock); err != nil {
		return nil, err
	}
	s := &SlidingWindow{
		buckets: make([]atomic.Uint64, slots), others: make([]atomic.Uint64, slots), refusedOthers: make([]atomic.Uint64, slots),
		limit:  uint64(limit),
		window: int64(window), slotLength: int64(window) / int64(slots), countBits: uint(bits.Len64(uint64(limit))),
		mask: 1<<bits.Len64(uint64(limit)) - 1, clock: clock,
	}
	for i := range s.others {
		s.others[i].Store(notPublished)
		s.refusedOthers[i].Store(notPublished)
	}
	return s, nil
}

// slotOf packs a slot as head holds it: gen<<12 | pos.
func slotOf(gen uint64, pos int) uint64 { return gen<<12 | uint64(pos) }

// position is now's window number (its generation) and its slot's bucket. A time before the
// origin is taken as the origin.
//
// Finding them takes two divisions; head's slot (where nearly every request falls) is
// checked first with two multiplies instead, and locate also tries the slot after it.
func (s *SlidingWindow) position(now time.Duration) (gen uint64, pos int) {
	return s.locate(max(int64(now), 0), s.head.Load())
}

// locate is position for t ≥ 0, starting from slot h (any slot: a guess, checked before use):
// h's slot itself or the next one cost two multiplies; any other slot two divisions.
func (s *SlidingWindow) locate(t int64, h uint64) (gen uint64, pos int) {
	gen, pos = h>>12, int(h&(1<<12-1))
	if d := s.into(t, gen, uint64(pos)); d < uint64(s.slotLength) {
		return gen, pos
	} else if d-uint64(s.slotLength) < uint64(s.slotLength) { // the slot after h's: a new slot
		if pos++; pos == len(s.buckets) {
			gen, pos = gen+1, 0
		}
		return gen, pos
	}
	g := t / s.window
	return uint64(g), int((t - g*s.window) / s.slotLength)
}

// into is how far t lies into slot (gen, pos), as an unsigned number: below slotLength
// exactly when t is in that slot (a time before the slot wraps to a large number), with two
// multiplies where finding t's slot takes two divisions.
func (s *SlidingWindow) into(t int64, gen, pos uint64) uint64 {
	return uint64(t - int64(gen)*s.window - int64(pos)*s.slotLength)
}

// newer is the generation difference between bucket word w and generation gen, sign-extended
// over the generation field: 0 same, < 0 w is older, > 0 w is newer.
func (s *SlidingWindow) newer(w, gen uint64) int64 {
	cb := s.countBits & 63 // (at most 32: the mask lets the shifts compile to one instruction)
	return int64(w-gen<<cb) >> cb
}

// sum adds the counts of the buckets that are live at (gen, pos). A bucket newer than that
// (a caller racing behind a newer one) counts as live: it fails closed.
//
// late reports that some bucket belongs to a slot-index after (gen, pos): a newer caller has
// already moved a bucket on, and what it overwrote may have been live for this caller, so
// this caller's view of its window is incomplete. Limit 20 per 10ms in 1ms slots: 20 at
// 9.99ms, then 1 at 19ms (which reuses 9.99ms's bucket), then a caller whose clock read
// 18.95ms would no longer see the 20 and could take 19 more — 39 within 9ms. AvailableAt
// reports nothing available to a late reader; AcquireAt refuses a late caller (by head, see
// there: a bucket is only moved on after head has passed the caller's slot).
func (s *SlidingWindow) sum(gen uint64, pos int) (total uint64, late bool) {
	cb, mask := s.countBits&63, s.mask
	cur := gen << cb
	// newest is the largest generation difference seen, in units of 1<<countBits (the count
	// bits only add less than one unit): a bucket is late when it reaches one full unit. A
	// bucket is live when its difference is not negative; d>>63 masks out the others.
	newest := int64(math.MinInt64)
	live, rest := s.buckets[:pos+1], s.buckets[pos+1:]
	for i := range live {
		w := live[i].Load()
		d := int64(w - cur)
		total += w & mask &^ uint64(d>>63)
		newest = max(newest, d)
	}
	if cur != 0 {
		prev := cur - 1<<cb
		for i := range rest {
			w := rest[i].Load()
			d := int64(w - prev)
			total += w & mask &^ uint64(d>>63)
			newest = max(newest, d)
		}
		return total, newest >= int64(1)<<cb
	}
	// Window 0: the buckets after pos expect window −1, which no word holds; any word there
	// is counted, and any written one (non-zero) was written by a newer caller.
	var written uint64
	for i := range rest {
		w := rest[i].Load()
		total += w & mask
		written |= w
	}
	return total, newest >= int64(1)<<cb || written != 0
}

// liveSum adds the counts of the words in ws that are live for a slot of generation field
// tag (gen<<countBits): those of that generation or newer. In window 0 the buckets after pos
// are summed with tag −1<<countBits, which counts every word, as sum does.
func liveSum(ws []atomic.Uint64, tag, mask uint64) (total uint64) {
	for i := range ws {
		if w := ws[i].Load(); int64(w-tag) >= 0 { // (a branch: in steady traffic all are live)
			total += w & mask
		}
	}
	return total
}

// liveCount is liveSum of one word.
func liveCount(w, tag, mask uint64) uint64 { return w & mask &^ uint64(int64(w-tag)>>63) }

// look is AcquireAt's first look at slot (gen, pos), the seed's sum without its late test:
// bucket pos's live count (here) and the others' total. When k ≥ 0 (a bucket other than pos,
// live there) bucket k is read once apart from the others and its contribution to the total
// returned as atK, so that AcquireAt can replace it by a later reading. (Bucket k is read
// first: TestSlidingWindowSecondLookSeesHeadsSlot relies on the scan after it taking time.)
func (s *SlidingWindow) look(gen uint64, pos, k int) (others, here, atK uint64) {
	cb, mask := s.countBits&63, s.mask
	cur := gen << cb
	prev := cur - 1<<cb // (window 0: the buckets after pos all count, as in sum)
	b := s.buckets
	here = liveCount(b[pos].Load(), cur, mask)
	switch {
	case k < 0:
		others = liveSum(b[:pos], cur, mask) + liveSum(b[pos+1:], prev, mask)
	case k < pos: // the buckets between k and pos are of pos's generation
		atK = liveCount(b[k].Load(), cur, mask)
		others = liveSum(b[:k], cur, mask) + liveSum(b[k+1:pos], cur, mask) + liveSum(b[pos+1:], prev, mask) + atK
	default:
		atK = liveCount(b[k].Load(), prev, mask)
		others = liveSum(b[:pos], cur, mask) + liveSum(b[pos+1:k], prev, mask) + liveSum(b[k+1:], prev, mask) + atK
	}
	return others, here, atK
}

// notPublished is an others word that holds no total (no generation is all ones).
const notPublished = ^uint64(0)

// AcquireAt takes n permits if the live slots hold at most limit − n.
//
// The decision is the seed's (see the type's comment): a first look at the live total, a
// reservation by CAS on now's bucket, a second look that rolls the reservation back if the
// window is over the limit or a newer caller has moved a bucket on. What is cached is the
// total of the buckets other than now's: within a slot only now's bucket changes, so the
// first caller to reserve in a slot publishes that total in others[pos], and later callers
// in the slot add it to their bucket's count instead of summing the slots. The first caller
// sums the slots once, before its reservation, and its second look re-reads one bucket only.
//
// Why that is still exact, and fails closed under contention:
//   - head announces the newest slot reserved in, before its bucket is: the first caller of
//     a slot moves head forward (CAS, never back) between its first look and its reservation.
//     Every bucket word of a slot is therefore written after head has reached that slot.
//   - Every caller, on either path, reads head again after its reservation and rolls back if
//     head has moved past its slot: a reservation that stays saw head at its own slot after
//     its CAS. So of two racing reservations, the newer slot's caller sees the older one's,
//     or the older one sees the newer head and backs off (all atomics are sequentially
//     consistent).
//   - The newer caller's sum: it read head as h0 before its first look. If h0 is its own slot
//     N, a reservation of an older slot that stays saw head at its slot before h0 was read,
//     so its CAS precedes the first look, which counts it. If h0 < N, the caller announces N
//     by CAS from h0 (if head has moved, the CAS fails and the first look starts again:
//     TestSlidingWindowSecondLookStartsAgainBehindANewHead): head held h0 throughout the
//     first look, so a reservation that stays and escaped the first look saw head = h0 after
//     it — it is in slot h0, and bucket h0 is read again after the announcement, where it
//     shows (one that comes later reads head past h0 and backs off). Any other bucket can
//     only have lost permits since (a rollback, a refund): failing closed. Limit 3 per 4µs in 1µs slots: the caller at 1µs reads head 0
//     and bucket 0 = 1; a caller at 0µs takes 2 more (head still 0); the first caller
//     announces 1, reserves, and bucket 0 read again holds 3: 3+1 > 3, rolled back
//     (TestSlidingWindowSecondLookSeesHeadsSlot, whose check fails if that re-read is left out).
//     The re-read precedes the final read of head, so a newer caller cannot have moved bucket
//     h0 on unseen; and with no bucket moved on, the seed's late test can never fire (a newer
//     bucket means head passed N first), which is why look omits it.
//   - A total published for slot N is such a second look, published only after head was read
//     at N, so it counts every reservation of an older slot that stays: the fast path's
//     callers add it to their bucket's count as the publisher would.
//   - The seed's own test, a bucket found late, is not enough for that: in window 0 a bucket
//     rolled back or refunded to count 0 reads as never written (its word is 0). Limit 3 per
//     4ms in 1ms slots, 1 at 0ms and 1 at 1ms: slot 2's first caller takes 1 and publishes 2
//     for the others; a refund (or, racing, a rollback) empties slot 2's bucket to 0; a caller
//     at 1ms sums 2, finds no bucket late and takes the third permit; slot 2's next caller,
//     2 + 0 + 1 ≤ 3, would take a fourth. Reading head refuses the caller at 1ms.
//   - A published total may count a reservation rolled back or refunded later (failing
//     closed); a rollback or a refund in a bucket other than head's unpublishes head's total,
//     and the next caller sums.
//   - With no race the re-read bucket and the published total are what the first look saw, so
//     both paths decide as the seed's two looks would (its second is its first plus n); every
//     other case (a late caller, a total not yet published or unpublished, a new slot) takes
//     the slow path, only announcing and publishing besides. A single goroutine's decisions,
//     and its buckets, are the seed's, call by call, but for that caller at 1ms behind an
//     emptied slot, whom the seed admits in window 0 (from window 1 on the emptied bucket
//     keeps its generation, and the seed finds it late too).
//
// Cost: on the fast path (now in head's slot, its total published) three loads and one CAS;
// the first reservation in a slot sums the slots once, reads head twice and makes three CASes
// (head, the bucket, the published total).
func (s *SlidingWindow) AcquireAt(now time.Duration, n int) Decision {
	if uint64(n-1) >= s.limit { // n < 1 or n > limit (and the zero value's limit 0)
		return CheckN(n, int(s.limit))
	}
	t := max(int64(now), 0)
	h := s.head.Load()
	gen, pos := h>>12, h&(1<<12-1)
	if s.into(t, gen, pos) < uint64(s.slotLength) && pos < uint64(len(s.others)) {
		// now is in head's slot.
		mask := s.mask
		tag := gen << (s.countBits & 63)
		// A word of this slot's generation is tag + its count: word − tag ≤ mask.
		if others := s.others[pos].Load() - tag; others <= mask && pos < uint64(len(s.buckets)) {
			need := others + uint64(n) // (a published total is at most limit)
			bucket := &s.buckets[pos]
			// The bucket holds this slot's generation (its total's publisher reserved in it, and
			// generations only move on); the slow path sees to anything else.
			for w := bucket.Load(); w-tag <= mask; w = bucket.Load() {
				if w-tag+need > s.limit {
					return Rejected
				}
				// count + n ≤ limit ≤ mask: w + n is the same generation with count + n.
				if !bucket.CompareAndSwap(w, w+uint64(n)) {
					continue
				}
				if s.head.Load() == h {
					return Admitted
				}
				s.rollback(bucket, gen, h, n) // a newer slot's caller has announced itself
				return Rejected
			}
		}
	}
	if s.refusedFast(t, h, n) {
		return Rejected
	}
	return s.acquireSlow(t, h, n)
}

// refusedFast reports a refusal decided from a total a refused caller published
// (publishRefused), for t in that caller's slot, with head (read as h) not past it: the
// published total of the other buckets plus this bucket's live count leaves no room for n.
//
// A full window refuses every caller of a slot before any reserves in it, so head and its
// published total stay behind at the last slot that admitted, and each refusal summed every
// bucket again. Limit 100 per 1s in 10 slots at 10,000 requests per second (the perf
// scenario): the 100 admitted in the first 10ms of a window, then 9 slots of refusals; 9 in 10
// requests summed the 10 slots.
//
// A refusal needs less than an admission: a total that counts too little (a reservation
// racing with the sum, or made later in another slot) only refuses less, and the slow path
// decides the rest. A total that counts too much could refuse what the seed admits. Counts
// can fall by a rollback or a refund, which unpublish it (gaveBack), or when a newer slot's
// caller moves a bucket on, which only happens once head has passed this slot (see
// AcquireAt): with head behind, this caller is not late and the seed's first look sums at
// least the published total, and refuses without writing a bucket, as here. So a single
// goroutine's refusals here are the seed's, and leave its buckets; racing callers can at most
// refuse one that would have fit (a publication that lands after a give-back's
// unpublication), as the type's comment allows.
func (s *SlidingWindow) refusedFast(t int64, h uint64, n int) bool {
	r := s.refused.Load()
	if h > r {
		return false
	}
	gen, pos := r>>12, r&(1<<12-1)
	if s.into(t, gen, pos) >= uint64(s.slotLength) ||
		pos >= uint64(len(s.refusedOthers)) || pos >= uint64(len(s.buckets)) {
		return false
	}
	tag := gen << (s.countBits & 63)
	others := s.refusedOthers[pos].Load() - tag
	return others <= s.mask && others+liveCount(s.buckets[pos].Load(), tag, s.mask)+uint64(n) > s.limit
}

// publishRefused publishes others, the total of the buckets other than pos that a caller
// refused at its first look at slot (tag's generation, pos) summed, for refusedFast.
func (s *SlidingWindow) publishRefused(slot uint64, pos int, tag, others uint64) {
	if others > s.limit { // only racing reservations: it would not fit the count field
		return
	}
	if s.refused.Load() != slot || s.refusedOthers[pos].Load() != tag|others {
		s.refusedOthers[pos].Store(tag | others)
		s.refused.Store(slot)
	}
}

// acquireSlow is the seed's AcquireAt, announcing the slot before reserving in it, reading
// head again after its reservation and publishing the total of the other buckets it summed.
// h0 is head as read before anything else (see AcquireAt).
func (s *SlidingWindow) acquireSlow(t int64, h0 uint64, n int) Decision {
	gen, pos := s.locate(t, h0)
	slot := slotOf(gen, pos)
	bucket := &s.buckets[pos]
	cb, mask := s.countBits&63, s.mask
	tag := gen << cb
	for {
		// k is head's bucket when head's slot is older than this one and live in its window:
		// the one bucket a reservation that escapes the first look can be in.
		k := -1
		if g0, p0 := h0>>12, int(h0&(1<<12-1)); (g0 == gen && p0 < pos) || (g0+1 == gen && p0 > pos) {
			k = p0
		}
		others, here, atK := s.look(gen, pos, k)
		if s.afterLook != nil {
			s.afterLook()
		}
		if others+here+uint64(n) > s.limit {
			s.publishRefused(slot, pos, tag, others)
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
		if h0 < slot && !s.head.CompareAndSwap(h0, slot) {
			h0 = s.head.Load() // head moved during the first look: look again
			continue
		}
		if !bucket.CompareAndSwap(w, tag|(count+uint64(n))) {
			h0 = s.head.Load()
			continue
		}
		if k >= 0 { // head's slot was older: its bucket again, now that this slot is announced
			exp := tag
			if k > pos {
				exp = tag - 1<<cb
			}
			others = others - atK + liveCount(s.buckets[k].Load(), exp, mask)
		}
		// Read head again, as the fast path does: a caller behind a newer announced slot backs
		// off even where no bucket shows it late (see AcquireAt: window 0, an emptied bucket).
		if s.head.Load() == slot && others <= s.limit { // (more than limit: only racing reservations)
			if o := s.others[pos].Load(); o&^mask != tag {
				s.others[pos].CompareAndSwap(o, tag|others)
			}
			if others+count+uint64(n) <= s.limit {
				return Admitted
			}
		}
		s.rollback(bucket, gen, slot, n)
		return Rejected
	}
}

// rollback returns n permits reserved in bucket at generation gen (slot slot), unless the
// generation has moved on (then the reservation has already expired with it).
func (s *SlidingWindow) rollback(bucket *atomic.Uint64, gen, slot uint64, n int) {
	for {
		w := bucket.Load()
		if s.newer(w, gen) != 0 {
			return
		}
		if bucket.CompareAndSwap(w, w-uint64(n)) {
			s.gaveBack(slot)
			return
		}
	}
}

// gaveBack follows permits given back in slot slot: if that is not head's slot, the total
// published for head's slot may count them, and is unpublished.
func (s *SlidingWindow) gaveBack(slot uint64) {
	if r := s.refused.Load() & (1<<12 - 1); r < uint64(len(s.refusedOthers)) && s.refusedOthers[r].Load() != notPublished {
		s.refusedOthers[r].Store(notPublished) // it may count them too (refusedFast)
	}
	h := s.head.Load()
	if h == slot {
		return
	}
	gen, pos := h>>12, h&(1<<12-1)
	tag := gen << (s.countBits & 63)
	if o := s.others[pos].Load(); o&^s.mask == tag {
		s.others[pos].CompareAndSwap(o, notPublished)
	}
}

// slot is the bucket word of the slot age slots before (gen, pos), and whether it is live.
func (s *SlidingWindow) slot(gen uint64, pos int, age int) (w uint64, d int64) {
	i, g := pos-age, gen
	if i < 0 {
		i += len(s.buckets)
		g--
	}
	w = s.buckets[i].Load()
	return w, s.newer(w, g)
}

// TryAcquireAt reports whether n permits were taken at time now.
func (s *SlidingWindow) TryAcquireAt(now time.Duration, n int) bool {
	return s.AcquireAt(now, n) == Admitted
}

// TryAcquire takes n permits now, by the limiter's clock.
func (s *SlidingWindow) TryAcquire(n int) bool { return s.TryAcquireAt(ReadClock(s.clock), n) }

// AvailableAt is limit minus the live count (0 if a race has the window transiently over, or
// for a reader late behind a newer caller, who would be refused).
func (s *SlidingWindow) AvailableAt(now time.Duration) int {
	if s.limit == 0 { // the zero value
		return 0
	}
	used, late := s.sum(s.position(now))
	if late || used >= s.limit {
		return 0
	}
	return int(s.limit - used)
}

// Available is AvailableAt(clock.Now()).
func (s *SlidingWindow) Available() int { return s.AvailableAt(ReadClock(s.clock)) }

// RetryAfterAt walks the live slots from oldest to newest and returns the time at which
// enough of them will have expired for n more permits to fit.
func (s *SlidingWindow) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
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

// RefundAt gives back n permits granted at now: now's slot's count falls by n if its bucket
// still holds now's generation with at least n; a slot that has expired owes nothing.
func (s *SlidingWindow) RefundAt(now time.Duration, n int) {
	if CheckN(n, int(s.limit)) != Admitted {
		return
	}
	gen, pos := s.position(now)
	bucket := &s.buckets[pos]
	mask := s.mask
	for {
		w := bucket.Load()
		if s.newer(w, gen) != 0 || w&mask < uint64(n) {
			return
		}
		if bucket.CompareAndSwap(w, w-uint64(n)) {
			s.gaveBack(slotOf(gen, pos))
			return
		}
	}
}

// MaxPermits is the limit.
func (s *SlidingWindow) MaxPermits() int { return int(s.limit) }

// Kind is KindSlidingWindow.
func (s *SlidingWindow) Kind() Kind { return KindSlidingWindow }

// String is the spec: "sliding-window:limit=100,window=1s,slots=10".
func (s *SlidingWindow) String() string { return s.Spec().String() }

// Spec is the limiter's configuration.
func (s *SlidingWindow) Spec() SlidingWindowSpec {
	return SlidingWindowSpec{Limit: int(s.limit), Window: time.Duration(s.window), Slots: len(s.buckets)}
}

// Snapshot returns every slot of the window ending at now's slot, oldest first, with its
// count and whether it is live; Count is the live total.
func (s *SlidingWindow) Snapshot(now time.Duration) State {
	var st State
	s.SnapshotInto(now, &st)
	return st
}

// SnapshotInto writes Snapshot(now) into st, its slots into st.Slots' array when that has
// room for them: an observed lane snapshots the deciding stage at every decision, and a new
// array of slots each time (10 slots, 448 bytes) was 93% of the TUI's allocation on the perf
// scenario. A nil st receives nothing.
func (s *SlidingWindow) SnapshotInto(now time.Duration, st *State) {
	if st == nil {
		return
	}
	if s.limit == 0 { // the zero value
		*st = State{Kind: KindSlidingWindow, At: now}
		return
	}
	gen, pos := s.position(now)
	slots := len(s.buckets)
	mask := uint64(1)<<s.countBits - 1
	t := max(int64(now), 0)
	curStart := t - t%s.slotLength
	kept := st.Slots[:0]
	if cap(kept) < slots {
		kept = make([]Slot, 0, slots)
	}
	*st = State{
		Kind: KindSlidingWindow, At: now, Available: s.AvailableAt(now), MaxPermits: int(s.limit),
		Limit: int(s.limit), Window: time.Duration(s.window), SlotLength: time.Duration(s.slotLength),
		WindowStart: time.Duration(curStart - int64(slots-1)*s.slotLength), WindowEnd: time.Duration(curStart + s.slotLength),
		Slots: kept,
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
}

// explainSlidingWindow: the live slots' count against the limit, and which slot must expire.
func explainSlidingWindow(s State, n int, d Decision) string {
	head := fmt.Sprintf("live slots [%s, %s) hold %d of %d", FormatDuration(s.WindowStart), FormatDuration(s.WindowEnd), s.Count, s.Limit)
	if d == Admitted {
		return fmt.Sprintf("%s; %d more fit", head, n)
	}
	for _, slot := range s.Slots {
		if slot.Live && slot.Count > 0 {
			return fmt.Sprintf("%s; %d more would exceed it until the oldest live slot (%d permits, from %s) expires at %s",
				head, n, slot.Count, FormatDuration(slot.Start), FormatDuration(slot.Start+s.Window))
		}
	}
	return fmt.Sprintf("%s; %d more would exceed it", head, n)
}
