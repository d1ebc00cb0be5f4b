package fit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/trace"
	"github.com/ratelab/ratelab/virtualclock"
)

// A fit reads its source once into a table, columns of the rows' times and permits (and key
// ids), and makes every later pass over those columns: parsing a CSV row costs about 90 ns
// (the replay floor), a token-bucket step over columns about 1 ns, so the curve's 24 rates,
// the knee's refinement, the relaxed search and the confirming replay cost less together than
// reading the trace a second time.
//
// Memory: 12 bytes a row (int64 time, uint32 permits), in chunks of chunkRows so the columns
// grow without copying: 10M rows take 120 MB (measured: 41.8 MB of RSS against 18.7 for the
// streaming fit on 2M rows). With a key column 16 (a uint32 key id; each distinct key's text
// once), and 12 more while the per-client curves run over the rows grouped by client: 28 at
// the most (74.7 MB against 20.4 on 2M rows). A trace whose columns would pass the bound
// (Options.MaxMemory, default DefaultMaxMemory: 89M rows, 38M with keys) is not held: it is
// read again for each pass as before the table existed, in flat memory and about 6× the time.

// DefaultMaxMemory is the most bytes a fit holds a trace's columns in: 1 GiB.
const DefaultMaxMemory = 1 << 30

// chunkRows is the rows of one chunk of a table: 65,536 (768 KiB, 1 MiB with keys).
const chunkRows = 1 << 16

// bytesPerRow is the most a row takes in a table (keyed: with its copy in byClient).
func bytesPerRow(keyed bool) int64 {
	if keyed {
		return 16 + 12
	}
	return 12
}

// errTooLarge is load's answer to a trace whose columns would pass the memory bound.
var errTooLarge = errors.New("fit: the trace's columns would pass the memory bound")

type chunk struct {
	at      []int64
	permits []uint32
	key     []uint32 // nil unless keyed
}

// table is a trace read once, in chunks of columns.
type table struct {
	name       string
	keyed      bool
	chunks     []chunk
	rows       int64
	permits    int64 // their sum
	maxPermits int64 // the largest request
	// chunkPermits is the permits before each chunk (table.permitsBefore).
	chunkPermits []int64
	keys         []string
	// refusalSegments are the segments of the rate refusals was last asked about.
	refusalSegments *segments
}

// atOf is the time of row i.
func (t *table) atOf(i int64) int64 { return t.chunks[i/chunkRows].at[i%chunkRows] }

// newChunk is a new last chunk, empty.
func (t *table) newChunk() *chunk {
	t.chunks = append(t.chunks, chunk{at: make([]int64, 0, chunkRows), permits: make([]uint32, 0, chunkRows)})
	t.chunkPermits = append(t.chunkPermits, t.permits)
	return &t.chunks[len(t.chunks)-1]
}

// permitsBefore is the permits of the rows before row i (at most a chunk's worth added).
func (t *table) permitsBefore(i int64) int64 {
	if i >= t.rows {
		return t.permits
	}
	sum := t.chunkPermits[i/chunkRows]
	for _, n := range t.chunks[i/chunkRows].permits[:i%chunkRows] {
		sum += int64(n)
	}
	return sum
}

// load reads src into a table, calling visit with each row and its key id (0 unkeyed) after
// it is stored; keys, when not nil, interns the keys. It stops with errTooLarge once the
// columns would pass maxBytes.
func load(ctx context.Context, src Source, keys *interner, maxBytes int64,
	visit func(t *table, row *trace.Row, id uint32) error) (*table, error) {
	keyed := keys != nil
	t := &table{name: src.Name(), keyed: keyed}
	maxRows := maxBytes / bytesPerRow(keyed)
	var cur *chunk
	err := each(ctx, src, func(row *trace.Row) error {
		if t.rows >= maxRows {
			return errTooLarge
		}
		if cur == nil || len(cur.at) == chunkRows {
			cur = t.newChunk()
			if keyed {
				cur.key = make([]uint32, 0, chunkRows)
			}
		}
		id := uint32(0)
		if keyed {
			var err error
			if id, err = keys.id(row); err != nil {
				return err
			}
			cur.key = append(cur.key, id)
		}
		n := int64(row.Permits)
		cur.at = append(cur.at, int64(row.At))
		cur.permits = append(cur.permits, uint32(n))
		t.rows++
		t.permits += n
		t.maxPermits = max(t.maxPermits, n)
		return visit(t, row, id)
	})
	if err != nil {
		return nil, err
	}
	if keyed {
		t.keys = keys.keys
	}
	return t, nil
}

// interner numbers keys from 0 in order of first appearance, at most max of them.
type interner struct {
	name  string // the source's, for errors
	max   int
	index map[string]uint32
	keys  []string
	// cache remembers keys by the address of their text: trace.Reader hands out one
	// string for each of a trace's first 4096 distinct keys, so a row's key is most often
	// the very string keys holds, found here without hashing it again. Only texts keys holds
	// are remembered (alive as long as the interner), so an address is never reused for
	// another key.
	cache [internCache]internEntry
}

type internEntry struct {
	text *byte
	n    int
	id   uint32
}

// internCache is the entries of interner.cache: 4096 (96 KiB).
const internCache = 4096

func newInterner(name string, max int) *interner {
	return &interner{name: name, max: max, index: map[string]uint32{}}
}

// id is row's key's number; an error naming the line when it would be the max+1st key.
func (in *interner) id(row *trace.Row) (uint32, error) {
	text := unsafe.StringData(row.Key)
	addr := uintptr(unsafe.Pointer(text))
	e := &in.cache[(addr>>4^addr>>16)%internCache]
	if e.text == text && e.n == len(row.Key) && text != nil {
		return e.id, nil
	}
	k, ok := in.index[row.Key]
	if !ok {
		if len(in.keys) >= in.max {
			return 0, fmt.Errorf("%s: line %d: more than %d distinct keys; a per-client fit holds every client's curve in memory", in.name, row.Line, in.max)
		}
		k = uint32(len(in.keys))
		in.index[row.Key] = k
		in.keys = append(in.keys, row.Key)
	}
	if text != nil && unsafe.StringData(in.keys[k]) == text {
		*e = internEntry{text: text, n: len(row.Key), id: k}
	}
	return k, nil
}

// loadStats is load for a fit's first pass: the table, with its statistics taken on the way
// (acc; the peak after, from the columns). A CSV trace without keys is read through
// trace.Reader's Scan, At and Permits, a call a row, instead of a Row built and copied by Next
// and handed to a visitor: the same rows and errors.
func loadStats(ctx context.Context, src Source, maxBytes int64, acc *statsAccumulator) (*table, error) {
	rows, closer, err := src.Open()
	if err != nil {
		return nil, err
	}
	r, plain := rows.(*trace.Reader)
	if plain {
		key, _ := r.Columns()
		plain = !key
	}
	if !plain {
		// The rows already open are the ones loaded: a second Open would read the source
		// twice, and an access log's notes are its first read's (LogSource.Notes).
		return load(ctx, &opened{src.Name(), rows, closer}, nil, maxBytes, func(_ *table, row *trace.Row, _ uint32) error {
			acc.add(int64(row.At), row.Permits)
			return nil
		})
	}
	defer closer.Close()
	t := &table{name: src.Name()}
	maxRows := maxBytes / bytesPerRow(false)
	var cur *chunk
	for n := 1; ; n++ {
		if err := r.Scan(); err != nil {
			if errors.Is(err, io.EOF) {
				return t, nil
			}
			return nil, fmt.Errorf("%s: %w", src.Name(), err)
		}
		if t.rows >= maxRows {
			return nil, errTooLarge
		}
		if cur == nil || len(cur.at) == chunkRows {
			cur = t.newChunk()
		}
		at, p := int64(r.At()), r.Permits()
		cur.at = append(cur.at, at)
		cur.permits = append(cur.permits, uint32(p))
		t.rows++
		t.permits += int64(p)
		t.maxPermits = max(t.maxPermits, int64(p))
		acc.add(at, p)
		if n&(1<<14-1) == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
}

// opened is a source already opened, read once: Open returns its rows.
type opened struct {
	name   string
	rows   Rows
	closer io.Closer
}

func (o *opened) Name() string { return o.name }

func (o *opened) Open() (Rows, io.Closer, error) {
	if o.rows == nil {
		return nil, nil, fmt.Errorf("%s: read once, opened again", o.name)
	}
	rows, closer := o.rows, o.closer
	o.rows, o.closer = nil, nil
	return rows, closer, nil
}

// statsAccumulator is statistics' computation one row at a time, over a table being loaded;
// the peak is taken from the table once it is loaded (table.peak). One counter counts both
// windows: the sliding window's slots, and the aligned window they make up (the fixed
// window's; statistics, reading the source again, counts it apart).
type statsAccumulator struct {
	st      Stats
	window  int64
	sliding *slotCounter
	instant int64
	last    time.Duration
}

func newStatsAccumulator(window time.Duration, slots int) *statsAccumulator {
	return &statsAccumulator{st: Stats{Window: window, Slots: slots, MinGap: -1}, window: int64(window),
		sliding: newSlotCounter(window, slots), last: -1}
}

// add is the row just stored as the table's last: n permits at now.
func (a *statsAccumulator) add(now int64, n int) {
	st := &a.st
	at := time.Duration(now)
	if st.Requests == 0 {
		st.First = at
	} else if gap := at - a.last; st.MinGap < 0 || gap < st.MinGap {
		st.MinGap = gap
	}
	if at != a.last {
		a.instant = 0
	}
	a.instant += int64(n)
	if a.instant > st.MaxInstant {
		st.MaxInstant, st.MaxInstantAt = a.instant, at
	}
	a.last = at
	st.Requests++
	st.Permits += int64(n)
	st.MaxRequest = max(st.MaxRequest, n)
	a.sliding.add(now, int64(n))
}

// stats is the finished statistics of t (statistics' answer for the same rows).
func (a *statsAccumulator) stats(t *table) (Stats, error) {
	st := a.st
	st.Last = a.last
	if st.Requests == 0 {
		return st, fmt.Errorf("%s: no requests: there is nothing to fit", t.name)
	}
	peak, peakAt := t.peak(a.window)
	st.Peak, st.PeakAt = peak, time.Duration(peakAt)
	if span := st.Span(); span > 0 {
		st.MeanPerSec = float64(st.Permits) / span.Seconds()
	}
	st.PeakPerSec = float64(st.Peak) / time.Duration(a.window).Seconds()
	st.FixedLimit, st.FixedAt = a.sliding.alignedMax, time.Duration(a.sliding.alignedMaxAt)
	st.SlidingLimit, st.SlidingAt = a.sliding.max, time.Duration(a.sliding.maxAt)
	return st, nil
}

// peak is the most permits in a window (t − window, t] ending at a request's t, and the first
// such t: two cursors over the columns, a merge of the rows entering the window (front) and
// leaving it (behind). Each step either drops the row behind, when it is at or before
// front's time − window, or adds the row in front: 2 steps a row, each taken by a mask
// rather than a branch (how many rows leave as one enters is a coin toss).
func (t *table) peak(window int64) (peak, peakAt int64) {
	var in int64
	front, behind, i, bi := 0, 0, 0, 0 // chunk, and index in it
	for front < len(t.chunks) {
		f, b := &t.chunks[front], &t.chunks[behind]
		i, bi, in, peak, peakAt = peakSteps(f.at, f.permits, b.at, b.permits, i, bi, in, peak, peakAt, window)
		if i == len(f.at) {
			front, i = front+1, 0
		}
		if bi == len(b.at) {
			behind, bi = behind+1, 0
		}
	}
	return peak, peakAt
}

// peakSteps is peak's steps while front (at[i]) and behind (behindAt[bi]) stay in their chunks.
func peakSteps(at []int64, permits []uint32, behindAt []int64, behindPermits []uint32, i, bi int, in, peak, peakAt, window int64) (int, int, int64, int64, int64) {
	permits = permits[:len(at)]
	behindPermits = behindPermits[:len(behindAt)]
	for i < len(at) && bi < len(behindAt) {
		now := at[i]
		// behind ≤ front, and the row in front is never at or before its time − window:
		// behind stays within the rows before front.
		drop := 0
		if behindAt[bi] <= now-window {
			drop = 1
		}
		mask := -int64(drop) // all ones when the row behind leaves
		in += int64(permits[i])&^mask - int64(behindPermits[bi])&mask
		bi += drop
		i += 1 - drop
		if in > peak {
			peak, peakAt = in, now
		}
	}
	return i, bi, in, peak, peakAt
}

// passes are the reads a fit makes after its first: over a table, or (a trace too large to
// hold) over the source again.
type passes interface {
	// curve is σ at each of rates, as Curve.
	curve(ctx context.Context, rates []limiters.Rate) ([]Point, error)
	// refusals is what token buckets of rate and capacities refuse, as Refusals; when limit
	// is at least 0, a capacity's count may stop once its permits pass limit (then it is more
	// than limit, and no more exact).
	refusals(ctx context.Context, rate limiters.Rate, capacities []int64, limit int64) (permits, requests []int64, err error)
	// replay is each spec's admissions, as Replay.
	replay(ctx context.Context, specs []string) ([]Replayed, error)
}

// streamed reads the source again for each pass.
type streamed struct{ src Source }

func (s streamed) curve(ctx context.Context, rates []limiters.Rate) ([]Point, error) {
	return Curve(ctx, s.src, rates)
}

func (s streamed) refusals(ctx context.Context, rate limiters.Rate, capacities []int64, _ int64) ([]int64, []int64, error) {
	return Refusals(ctx, s.src, rate, capacities)
}

func (s streamed) replay(ctx context.Context, specs []string) ([]Replayed, error) {
	return Replay(ctx, s.src, specs)
}

// curve is σ at each of rates over the table: the same arithmetic as curve.add, with its
// overflow checks moved to where a need first passes the largest so far (a need beyond 2⁶²
// passes it there). The rows are taken a block of blockRows at a time (24 KiB, in the L1
// cache) and every rate runs over the block in its own loop, its state in registers: the
// columns are read from memory once for all the rates.
func (t *table) curve(ctx context.Context, rates []limiters.Rate) ([]Point, error) {
	c := newCurve(rates)
	state := make([]rateState, len(rates))
	var slow []int
	for k := range rates {
		if t.maxPermits > c.maxN[k] {
			// Some request alone passes 2⁶² ns: the rate does not live past it; curve.add's
			// per-row checks say where.
			slow = append(slow, k)
			state[k].dead = true
		}
	}
	for ci, ch := range t.chunks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for lo := 0; lo < len(ch.at); lo += blockRows {
			hi := min(lo+blockRows, len(ch.at))
			at, permits := ch.at[lo:hi], ch.permits[lo:hi]
			base := int64(ci)*chunkRows + int64(lo)
			for k := range state {
				if !state[k].dead {
					state[k].run(c.interval[k], at, permits, base)
				}
			}
		}
	}
	for k, s := range state {
		c.tat[k], c.need[k] = s.tat, s.need
		c.from[k], c.to[k], c.fromSum[k], c.toSum[k] = t.worst(s)
		if s.dead {
			c.need[k] = -1
		}
	}
	for _, k := range slow {
		one := newCurve(rates[k : k+1])
		for _, ch := range t.chunks {
			for i, now := range ch.at {
				one.add(now, int64(ch.permits[i]))
			}
		}
		c.need[k], c.tat[k], c.start[k], c.startSum[k] = one.need[0], one.tat[0], one.start[0], one.startSum[0]
		c.from[k], c.to[k], c.fromSum[k], c.toSum[k] = one.from[0], one.to[0], one.fromSum[0], one.toSum[0]
	}
	c.sum = t.permits
	return c.points(), nil
}

// blockRows is the rows a pass over the table takes at a time: 2048 (24 KiB of columns).
const blockRows = 2048

// rateState is one rate's state in curve (curve's columns at index k), its busy periods
// and worst need by row (table.worst turns them into times and permits).
type rateState struct {
	tat, need int64
	start     int64 // the row the current busy period began at
	// fromRow and toRow are the worst need's busy period's first row and its own row.
	fromRow, toRow int64
	dead           bool // need passed 2⁶²
}

// run takes the rate over a block of rows, the table's rows base … base+len(at)−1.
// Invariant while it lives: 0 ≤ backlog ≤ need ≤ 2⁶², and n·T ≤ 2⁶² (n ≤ maxN), so TAT =
// max(TAT, now) + n·T < 2⁶⁴ fits a uint64. The loop carries TAT (a compare, a conditional
// move and an add a row) and the busy period's first row (a conditional move); the largest
// need hangs off TAT, and the permits before a row are counted only for the worst one's
// (table.worst), so that the loop's state stays in registers.
func (s *rateState) run(T int64, at []int64, permits []uint32, base int64) {
	tat, need, start := uint64(s.tat), s.need, s.start
	permits = permits[:len(at)]
	for i, now := range at {
		// Branch-free (a conditional move): whether the bucket is full is a coin toss at
		// rates near the trace's.
		if tat <= uint64(now) {
			start = base + int64(i) // the bucket is full: a new busy period
		}
		tat = max(tat, uint64(now)) + uint64(int64(permits[i])*T)
		if d := tat - uint64(now); d > uint64(need) {
			if d > uint64(maxTolerance) {
				s.dead = true
				return
			}
			need = int64(d)
			s.fromRow, s.toRow = start, base+int64(i)
		}
	}
	s.tat, s.need, s.start = int64(tat), need, start
}

// worst is s's worst burst as curve holds it: its busy period's start and end times and the
// permits before each (the end's own included); zeros before any row.
func (t *table) worst(s rateState) (from, to, fromSum, toSum int64) {
	if s.need <= 0 {
		return 0, 0, 0, 0
	}
	return t.atOf(s.fromRow), t.atOf(s.toRow), t.permitsBefore(s.fromRow), t.permitsBefore(s.toRow + 1)
}

// refusals runs token buckets of rate and each capacity over the table, in the arithmetic of
// buckets.add, over the segments of rate's unbounded bucket (segmentsAt, cut once per rate):
// a bucket of capacity C refuses nothing in a segment whose bound is at most C·T (every
// request's need is within the tolerance, so it is the unbounded bucket there), and it is
// full where each segment begins (its TAT is at most the unbounded one's); so only the
// segments bounded above C·T are replayed, each from a full bucket.
func (t *table) refusals(ctx context.Context, rate limiters.Rate, capacities []int64, limit int64) ([]int64, []int64, error) {
	return t.refusalsUntil(ctx, rate, capacities, limit, false)
}

// refusalsUntil is refusals, and when untilWithin, the capacities after the first whose
// refusals are within limit (counted in full: at most limit) are not counted at all: relax
// takes the first capacity within the target of a batch and reads no later one.
func (t *table) refusalsUntil(ctx context.Context, rate limiters.Rate, capacities []int64, limit int64, untilWithin bool) ([]int64, []int64, error) {
	T := int64(rate.Interval())
	if t.refusalSegments == nil || t.refusalSegments.interval != T {
		t.refusalSegments = t.segmentsAt(rate, segmentRows)
	}
	seg := t.refusalSegments
	var segOrder []int
	if seg != nil {
		segOrder = seg.order
	}
	permits, requests := make([]int64, len(capacities)), make([]int64, len(capacities))
	for j, capacity := range capacities {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		tolerance := capacity * T
		if seg == nil {
			permits[j], requests[j] = t.refusalsIn(T, capacity, tolerance, 0, t.rows)
		}
		for _, g := range segOrder {
			if seg.bound[g] <= tolerance {
				break // this segment and every later one in the order refuse nothing
			}
			end := t.rows
			if g+1 < len(seg.start) {
				end = seg.start[g+1]
			}
			p, r := t.refusalsIn(T, capacity, tolerance, seg.start[g], end)
			permits[j] += p
			requests[j] += r
			if limit >= 0 && permits[j] > limit {
				break // more than limit: the caller needs no more
			}
		}
		if untilWithin && limit >= 0 && permits[j] <= limit {
			break
		}
	}
	return permits, requests, nil
}

// refusalsIn is the permits and requests a token bucket (interval T, capacity, tolerance),
// full at row from, refuses of rows [from, to).
func (t *table) refusalsIn(T, capacity, tolerance, from, to int64) (refused, refusedRequests int64) {
	var tat int64
	for from < to {
		ch := &t.chunks[from/chunkRows]
		lo := from % chunkRows
		hi := min(int64(len(ch.at)), lo+(to-from))
		at := ch.at[lo:hi]
		ps := ch.permits[lo:hi]
		ps = ps[:len(at)]
		for i, now := range at {
			n := int64(ps[i])
			if n > capacity {
				refused += n
				refusedRequests++
				continue
			}
			cost := n * T
			backlog := max(tat-now, 0)
			if backlog > tolerance-cost {
				refused += n
				refusedRequests++
				continue
			}
			tat = now + backlog + cost
		}
		from += hi - lo
	}
	return refused, refusedRequests
}

// replay is Replay over the table: each spec's stack decides every row in order, as
// engine.Replay does (TestTableReplayIsEngineReplay), one spec at a time, each on its own
// virtual clock. A stack of one limiter, not keyed, that gives nothing back on Release (every
// spec fit answers with) is asked through the limiter's AcquireAt directly: what Stack.Decide
// and Release come to for it (Bind has no table to bind, Acquire one stage to ask, Release
// nothing to return), at about 11 ns a row against 37 (21 with the clock advanced each row, which the kinds fit
// answers with do not read).
func (t *table) replay(ctx context.Context, specs []string) ([]Replayed, error) {
	out := make([]Replayed, len(specs))
	for i, text := range specs {
		if j := slices.Index(specs[:i], text); j >= 0 {
			// The same spec again (the relaxed capacity can be σ, or σ − 1): the same
			// decisions, replayed once.
			out[i] = out[j]
			continue
		}
		clock, stacks, got, err := newStacks([]string{text})
		if err != nil {
			return nil, err
		}
		st := stacks[0]
		out[i] = got[0]
		r := &out[i]
		tables := st.KeyTables()
		if lim := st.Stage(0); st.Len() == 1 && (len(tables) == 0 || tables[0] == nil) && limiters.CapabilitiesOf(lim).Release == nil {
			// The four kinds fit answers with decide by AcquireAt's now alone (they read their
			// clock only in TryAcquire and Available): their clock need not follow the rows.
			clockFree := clockFreeKinds[lim.Kind()]
			for _, ch := range t.chunks {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				permits := ch.permits[:len(ch.at)]
				for j, now := range ch.at {
					if !clockFree {
						if err := clock.AdvanceTo(time.Duration(now)); err != nil {
							return nil, err
						}
					}
					if lim.AcquireAt(time.Duration(now), int(permits[j])) == limiters.Admitted {
						r.Admitted++
						r.AdmittedPermits += int64(permits[j])
					}
				}
			}
			continue
		}
		admits := admitter(st)
		err = t.scan(ctx, func(now time.Duration, key string, n int) error {
			if err := clock.AdvanceTo(now); err != nil {
				return err
			}
			if admits(now, key, n) {
				r.Admitted++
				r.AdmittedPermits += int64(n)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// admitter is st.Decide and, for an admitted request, st.Release (Replay's decision), as a
// function of the row. A stack of one keyed stage is asked through its table directly, as
// Bind and Acquire ask it (the table's limiter for the key, or a refusal when the table is
// full and cannot make room), without Bind's per-row capabilities: its limiters are all of
// one kind, whose Release is looked up once.
func admitter(st *engine.Stack) func(now time.Duration, key string, n int) bool {
	tables := st.KeyTables()
	if st.Len() != 1 || len(tables) == 0 || tables[0] == nil {
		return func(now time.Duration, key string, n int) bool {
			d, _, _ := st.Decide(now, key, n)
			if d == limiters.Admitted {
				st.Release(n, st.Len())
			}
			return d == limiters.Admitted
		}
	}
	table := tables[0]
	released, looked := false, false
	return func(now time.Duration, key string, n int) bool {
		lim, outcome := table.Get(now, key)
		if outcome == limiters.KeyFull {
			return false
		}
		if lim.AcquireAt(now, n) != limiters.Admitted {
			return false
		}
		if !looked {
			released, looked = limiters.CapabilitiesOf(lim).Release != nil, true
		}
		if released {
			limiters.CapabilitiesOf(lim).Release.Release(n)
		}
		return true
	}
}

// clockFreeKinds are the kinds whose AcquireAt does not read the limiter's clock.
var clockFreeKinds = map[limiters.Kind]bool{limiters.KindTokenBucket: true, limiters.KindSlidingWindow: true,
	limiters.KindFixedWindow: true, limiters.KindLeakyBucket: true}

// scan calls visit with every row: its time, its key ("" unkeyed) and permits; ctx is
// checked at every chunk.
func (t *table) scan(ctx context.Context, visit func(now time.Duration, key string, n int) error) error {
	for _, ch := range t.chunks {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i, now := range ch.at {
			key := ""
			if ch.key != nil {
				key = t.keys[ch.key[i]]
			}
			if err := visit(time.Duration(now), key, int(ch.permits[i])); err != nil {
				return err
			}
		}
	}
	return nil
}

// newStacks builds a stack for each spec text on one virtual clock (Replay's).
func newStacks(specs []string) (*virtualclock.Clock, []*engine.Stack, []Replayed, error) {
	clock := virtualclock.New()
	stacks := make([]*engine.Stack, len(specs))
	out := make([]Replayed, len(specs))
	for i, text := range specs {
		specs, err := engine.ParseStack(text)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("fit: the spec %q does not parse: %w", text, err)
		}
		if stacks[i], err = engine.NewStack(specs, clock); err != nil {
			return nil, nil, nil, fmt.Errorf("fit: the spec %q: %w", text, err)
		}
		out[i].Spec = text
	}
	return clock, stacks, out, nil
}

// scanKeyed calls visit with every row: its time, key, key id and permits; ctx is checked at
// every chunk.
func (t *table) scanKeyed(ctx context.Context, visit func(now time.Duration, key string, id uint32, n int) error) error {
	for _, ch := range t.chunks {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i, now := range ch.at {
			id := ch.key[i]
			if err := visit(time.Duration(now), t.keys[id], id, int(ch.permits[i])); err != nil {
				return err
			}
		}
	}
	return nil
}

// byClient is a keyed table's rows grouped by client, each client's in time order: 12 more
// bytes a row, held while the per-client curves are computed.
type byClient struct {
	start      []int64 // client k's rows are [start[k], start[k+1])
	at         []int64
	permits    []uint32
	maxPermits int64
}

// groupByClient sorts the table's rows by client (a counting sort: stable, two passes).
func (t *table) groupByClient() *byClient {
	clients := len(t.keys)
	g := &byClient{start: make([]int64, clients+1), at: make([]int64, t.rows), permits: make([]uint32, t.rows), maxPermits: t.maxPermits}
	for _, ch := range t.chunks {
		for _, k := range ch.key {
			g.start[k+1]++
		}
	}
	for k := range clients {
		g.start[k+1] += g.start[k]
	}
	next := slices.Clone(g.start[:clients])
	for _, ch := range t.chunks {
		for i, k := range ch.key {
			j := next[k]
			g.at[j], g.permits[j] = ch.at[i], ch.permits[i]
			next[k]++
		}
	}
	return g
}

// needs is clientCurves' loop over the grouped rows: for each client k and rate r (index
// k·len(intervals) + r), tat and the largest need, -1 once it passed 2⁶² ns. Each client's
// rows are taken a block of blockRows at a time, and every rate runs over the block in its
// own loop, its state in registers.
func (g *byClient) needs(ctx context.Context, intervals, tat, need []int64) error {
	nr := len(intervals)
	for k := range len(g.start) - 1 {
		if k%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		for lo := g.start[k]; lo < g.start[k+1]; lo += blockRows {
			hi := min(lo+blockRows, g.start[k+1])
			at, permits := g.at[lo:hi], g.permits[lo:hi]
			blockPermits := int64(0)
			for _, n := range permits {
				blockPermits += int64(n)
			}
			for r, T := range intervals {
				j := k*nr + r
				if need[j] < 0 {
					continue
				}
				if g.maxPermits > maxTolerance/T {
					// Some request alone may pass 2⁶² ns: clientCurves' checks, row by row.
					for i, now := range at {
						if !clientStep(&tat[j], &need[j], now, int64(permits[i]), T) {
							need[j] = -1
							break
						}
					}
					continue
				}
				// While the client lives, 0 ≤ backlog ≤ need ≤ 2⁶² and n·T ≤ 2⁶²: TAT =
				// max(TAT, now) + n·T fits a uint64 (run's loop).
				tatK, needK := uint64(tat[j]), uint64(need[j])
				permits := permits[:len(at)]
				if blockPermits <= maxTolerance/T {
					// The block's needs grow by at most its permits·T ≤ 2⁶² past a need ≤ 2⁶²:
					// no TAT passes 2⁶⁴, so the largest need is taken without a branch and
					// checked once, after the block.
					tatK, needK = blockNeed(at, permits, T, tatK, needK)
					if needK > uint64(maxTolerance) {
						needK = math.MaxUint64 // -1: the client dies
					}
				} else {
					for i, now := range at {
						u := uint64(now)
						tatK = max(tatK, u) + uint64(int64(permits[i])*T)
						if d := tatK - u; d > needK {
							if d > uint64(maxTolerance) {
								needK = math.MaxUint64
								break
							}
							needK = d
						}
					}
				}
				tat[j], need[j] = int64(tatK), int64(needK)
			}
		}
	}
	return nil
}

// blockNeed is needs' loop over one block of one client's rows at interval T, from TAT tat
// and the largest need so far, with no check (needs says why none is needed): a function of
// its own, so that the loop's index and state stay in registers. Written inside needs, the
// compiler spilled the index to the stack and reloaded it every row, a store and a load on
// the loop's critical path: 3.1 ns a row and rate, against 1.7 here (pprof of
// BenchmarkFitPerClientVsReplayFloor).
//
//go:noinline
func blockNeed(at []int64, permits []uint32, T int64, tat, need uint64) (uint64, uint64) {
	permits = permits[:len(at)]
	for i, now := range at {
		u := uint64(now)
		tat = max(tat, u) + uint64(int64(permits[i])*T)
		need = max(need, tat-u)
	}
	return tat, need
}

// segments cut the table where one rate's bucket is full (an unbounded bucket: nothing
// refused), into runs of at least segmentRows rows, each with the largest need in it at
// that rate. A full bucket at rate a is full at every rate above it (TAT = max(TAT, now) +
// n·T grows with T), so at any such rate each segment's needs are its own, computed from an
// empty backlog at its first row, and are at most the segment's need at a (A·T − Δt falls
// with T). σ at a higher rate is then the largest need of the segments taken in falling
// order of their bound, stopping at the first bound below the largest found: the refinement
// of the knee evaluates its rates, all above the grid point below the knee, over a few
// segments rather than the whole trace.
type segments struct {
	interval int64
	start    []int64 // the row a segment begins at (its bucket full there)
	bound    []int64 // its largest need at interval
	order    []int   // segment indices by falling bound, then by start
}

// segmentRows is the fewest rows a segment spans (except the last): 4096.
const segmentRows = 4096

// segmentsAt cuts the table at rate's full buckets, segments of at least minRows rows; nil
// when a need passes 2⁶² at it (or a request alone could), where bounds would not hold.
func (t *table) segmentsAt(rate limiters.Rate, minRows int64) *segments {
	T := int64(rate.Interval())
	if t.maxPermits > maxTolerance/T {
		return nil
	}
	s := &segments{interval: T}
	if !t.cut(s, T, 0, t.rows, minRows) {
		return nil
	}
	s.sort()
	return s
}

// cut appends to s the segments of rows [from, to) at interval T, from a full bucket at
// from: cut where the bucket is full again, at least minRows rows apart, each with its
// largest need. False when a need passes 2⁶².
func (t *table) cut(s *segments, T, from, to, minRows int64) bool {
	var tat, bound int64
	s.start = append(s.start, from)
	next := from + minRows // the first row that may begin the next segment
	for row := from; row < to; {
		ch := &t.chunks[row/chunkRows]
		lo := row % chunkRows
		hi := min(int64(len(ch.at)), lo+(to-row))
		at, permits := ch.at[lo:hi], ch.permits[lo:hi]
		permits = permits[:len(at)]
		for i, now := range at {
			// The row count first: whether the bucket is full is a coin toss, the count
			// is not.
			if r := row + int64(i); r >= next && tat <= now {
				s.bound = append(s.bound, bound)
				s.start, bound = append(s.start, r), 0
				next = r + minRows
			}
			d := max(tat-now, 0) + int64(permits[i])*T
			if d > maxTolerance {
				return false
			}
			bound = max(bound, d)
			tat = now + d
		}
		row += hi - lo
	}
	s.bound = append(s.bound, bound)
	return true
}

// sort orders s's segments by falling bound, then by start.
func (s *segments) sort() {
	s.order = make([]int, len(s.start))
	for i := range s.order {
		s.order[i] = i
	}
	slices.SortStableFunc(s.order, func(a, b int) int { return cmp.Compare(s.bound[b], s.bound[a]) })
}

// recut is s cut again at rate, at or above s's own (interval at most s.interval): a bucket
// full at s's rate is full at rate, so each segment is cut on its own from a full bucket at
// its start, and its pieces' bounds are rate's needs, at most the segment's bound. A segment
// whose bound is below floor keeps it, uncut: a pass over segments for rates whose need is
// at least floor (curveOver) stops before it. The knee's refinement asks, round after round,
// for rates in a narrower bracket above a point evaluated in the round before, where the
// grid's segments, cut at a rate further below, bound them loosely: with 12 steps on the
// 10M-row benchmark trace the grid point below the knee is the trace's mean, which cuts the
// trace into 12 segments, and every rate of every round ran over the whole trace (steps=12 in
// BenchmarkFitSteps: 287-296 CPU ns a row before recut, 191-204 with it).
func (t *table) recut(s *segments, rate limiters.Rate, floor, minRows int64) *segments {
	T := int64(rate.Interval())
	out := &segments{interval: T}
	for g, from := range s.start {
		to := t.rows
		if g+1 < len(s.start) {
			to = s.start[g+1]
		}
		if s.bound[g] < floor {
			out.start, out.bound = append(out.start, from), append(out.bound, s.bound[g])
			continue
		}
		if !t.cut(out, T, from, to, minRows) {
			return nil
		}
	}
	out.sort()
	return out
}

// curveOver is σ at each of rates, every one at or above s's rate (interval ≤ s.interval,
// which the caller checks), over the segments that can hold its largest need: the same
// points as curve's.
func (t *table) curveOver(ctx context.Context, s *segments, rates []limiters.Rate) ([]Point, error) {
	c := newCurve(rates)
	for k := range rates {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		T := c.interval[k]
		best := rateState{need: 0}
		bestStart := int64(-1)
		for _, g := range s.order {
			if s.bound[g] < best.need {
				break // no need in this segment or a later one in the order can pass best
			}
			end := t.rows
			if g+1 < len(s.start) {
				end = s.start[g+1]
			}
			got := rateState{start: s.start[g]}
			t.runRows(&got, T, s.start[g], end)
			// The sequential pass keeps the first need that is the largest: an earlier
			// segment wins a tie.
			if got.need > best.need || (got.need == best.need && got.need > 0 && s.start[g] < bestStart) {
				best, bestStart = got, s.start[g]
			}
		}
		c.need[k] = best.need
		c.from[k], c.to[k], c.fromSum[k], c.toSum[k] = t.worst(best)
	}
	c.sum = t.permits
	return c.points(), nil
}

// runRows runs s at interval T over rows [from, to) of the table, a chunk's part at a time;
// s.tat 0 is a full bucket at the first row.
func (t *table) runRows(s *rateState, T int64, from, to int64) {
	for from < to {
		ch := &t.chunks[from/chunkRows]
		lo := from % chunkRows
		hi := min(int64(len(ch.at)), lo+(to-from))
		s.run(T, ch.at[lo:hi], ch.permits[lo:hi], from)
		from += hi - lo
	}
}

// refiner is the knee refinement's evaluation over the table: the rates it asks for lie
// between two fitting points of grid, so each is evaluated over the segments of the highest
// fitting grid rate at or below them all (cut once, on the first call, and again only if a
// later call asks below it), or over the whole table when no grid rate is below them.
func (t *table) refiner(ctx context.Context, grid []Point) func([]limiters.Rate) ([]Point, error) {
	var seg *segments
	var segRate limiters.Rate
	known := slices.Clone(grid) // every point evaluated so far
	return func(rates []limiters.Rate) ([]Point, error) {
		slowest, fastest := int64(0), int64(math.MaxInt64)
		for _, r := range rates {
			slowest = max(slowest, int64(r.Interval()))
			fastest = min(fastest, int64(r.Interval()))
		}
		if seg == nil || seg.interval < slowest {
			basis := -1
			for i, p := range grid {
				if p.Fits() && int64(p.Interval) >= slowest {
					basis = i // ascending rate: the last such is the highest
				}
			}
			if basis < 0 {
				return t.curve(ctx, rates)
			}
			if seg == nil || grid[basis].Rate != segRate {
				segRate = grid[basis].Rate
				if seg = t.segmentsAt(segRate, segmentRows); seg == nil {
					return t.curve(ctx, rates)
				}
			}
		} else if below, above := bracketOf(known, slowest, fastest); below >= 0 && int64(known[below].Interval) < seg.interval && len(rates) > 1 {
			// A point evaluated since the segments were cut lies above their rate and below
			// every rate asked: cut them again there (recut), as far as the need at the
			// point above the rates asked (they need at least as much) lets a pass reach.
			floor := int64(0)
			if above >= 0 {
				floor = int64(known[above].Need)
			}
			if cut := t.recut(seg, known[below].Rate, floor, segmentRows); cut != nil {
				seg, segRate = cut, known[below].Rate
			}
		}
		pts, err := t.curveOver(ctx, seg, rates)
		known = append(known, pts...)
		return pts, err
	}
}

// bracketOf is the index in pts of the highest fitting rate at or below every rate with an
// interval from fastest to slowest (interval at least slowest), and of the lowest fitting
// rate at or above them (interval at most fastest); -1 for none.
func bracketOf(pts []Point, slowest, fastest int64) (below, above int) {
	below, above = -1, -1
	for i, p := range pts {
		if !p.Fits() {
			continue
		}
		if iv := int64(p.Interval); iv >= slowest && (below < 0 || iv < int64(pts[below].Interval)) {
			below = i
		}
		if iv := int64(p.Interval); iv <= fastest && (above < 0 || iv > int64(pts[above].Interval)) {
			above = i
		}
	}
	return below, above
}

// clientSegments are each client's segments (see segments) at one rate, over byClient's
// rows: client k's are segs[first[k]:first[k+1]], by falling bound.
type clientSegments struct {
	interval int64
	segs     []clientSegment
	first    []int
}

type clientSegment struct{ start, end, bound int64 }

// clientSegmentRows is the fewest rows a client's segment spans (except its last): 256.
const clientSegmentRows = 256

// segmentsAt cuts each client's rows where its bucket at interval T is full, into segments of
// at least minRows rows; nil when some client's need passes 2⁶² at T (or a request alone
// could).
func (g *byClient) segmentsAt(T, minRows int64) *clientSegments {
	if g.maxPermits > maxTolerance/T {
		return nil
	}
	clients := len(g.start) - 1
	s := &clientSegments{interval: T, first: make([]int, clients+1)}
	for k := range clients {
		from, to := g.start[k], g.start[k+1]
		var tat, bound int64
		segStart := from
		for i := from; i < to; i++ {
			now := g.at[i]
			if tat <= now && i-segStart >= minRows {
				s.segs = append(s.segs, clientSegment{segStart, i, bound})
				segStart, bound = i, 0
			}
			d := max(tat-now, 0) + int64(g.permits[i])*T
			if d > maxTolerance {
				return nil
			}
			bound = max(bound, d)
			tat = now + d
		}
		s.segs = append(s.segs, clientSegment{segStart, to, bound})
		s.first[k+1] = len(s.segs)
		slices.SortStableFunc(s.segs[s.first[k]:], func(a, b clientSegment) int { return cmp.Compare(b.bound, a.bound) })
	}
	return s
}

// needsOver is needs' largest need for each client and rate (need[k·len(intervals) + r]),
// every interval at most s's, over each client's segments in falling order of bound,
// stopping at the first bound at most the largest need found: a client's need at a faster
// rate is at most its segment's bound, and its bucket is full where each segment begins.
func (g *byClient) needsOver(ctx context.Context, s *clientSegments, intervals, need []int64) error {
	nr := len(intervals)
	for k := range len(s.first) - 1 {
		if k%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		for r, T := range intervals {
			best := int64(0)
			for _, seg := range s.segs[s.first[k]:s.first[k+1]] {
				if seg.bound <= best {
					break
				}
				best = max(best, segmentNeed(g.at[seg.start:seg.end], g.permits[seg.start:seg.end], T))
			}
			need[k*nr+r] = best
		}
	}
	return nil
}

// segmentNeed is needsOver's loop over one segment at interval T, from an empty bucket: the
// largest need in it. A function of its own for blockNeed's reason: inside needsOver, TAT
// went through the stack every row.
//
//go:noinline
func segmentNeed(at []int64, permits []uint32, T int64) int64 {
	permits = permits[:len(at)]
	var tat, best int64
	for i, now := range at {
		d := max(tat, now) - now + int64(permits[i])*T
		best = max(best, d)
		tat = now + d
	}
	return best
}

// gridCurve is curve for a grid's rates, ascending: the lower half over every row, the upper
// half over the segments of the lower half's highest rate (curveOver: the same points). Far
// above the trace's mean a bucket is full at most requests and the worst bursts stand out,
// so the upper half reads a few segments rather than the whole trace.
func (t *table) gridCurve(ctx context.Context, rates []limiters.Rate) ([]Point, error) {
	mid := len(rates) / 2
	if mid < 4 {
		return t.curve(ctx, rates)
	}
	low, err := t.curve(ctx, rates[:mid])
	if err != nil {
		return nil, err
	}
	var high []Point
	if seg := t.segmentsAt(rates[mid-1], segmentRows); seg != nil {
		high, err = t.curveOver(ctx, seg, rates[mid:])
	} else {
		high, err = t.curve(ctx, rates[mid:])
	}
	if err != nil {
		return nil, err
	}
	return append(low, high...), nil
}
