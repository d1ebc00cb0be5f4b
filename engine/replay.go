package engine

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/trace"
	"github.com/ratelab/ratelab/virtualclock"
)

// ReplaySummary counts what each stack admitted of a replayed trace.
type ReplaySummary struct {
	Rows     int64
	Permits  int64
	Duration time.Duration // the last row's time
	Stacks   []string
	Admitted []int64 // requests admitted, per stack

	// Waits reports, per stack, whether its callers wait (a stage with mode=wait, a timeout or
	// NGINX's delay): only such a stack has a wait column, Delayed and MaxWait.
	Waits   []bool
	Delayed []int64         // admitted requests that waited (wait > 0), per stack
	MaxWait []time.Duration // the longest wait of an admitted request, per stack
}

// Replay streams a CSV trace (see trace.Reader) through each stack in virtual time, open loop:
// every row is an independent caller that is admitted or not, with no retries, and an
// admitted request completes as soon as it passes (a concurrency stage's permit is released
// then). It writes the input's t_ns and permits and one column per stack, headed by its spec,
// holding 1 (admitted) or 0.
//
// A stack whose callers wait (a stage's mode=wait or timeout, NGINX's delay: see
// limiters.Waiting) decides by reservation, as the simulator's shaped lanes do, and gets a
// second column, "SPEC wait_ns", with an admitted request's wait in ns (empty when refused).
// A wait delays that caller only: the next row is decided at its own time, and a concurrency
// stage holds the caller's permits through its wait. NGINX at 10r/s, burst=5, delay=2, ten
// rows at t=0: 1 with wait 0 three times, 1 with waits 100ms, 200ms and 300ms, then 0 four
// times.
//
// A trace with a latency_ns column (t_ns,permits,latency_ns) drives the stages open loop with
// its recorded latencies: an admitted request holds its permits until latency_ns after it
// passes (after its wait, if it waited), when it completes, successfully, and every stage
// that takes feedback hears that latency (Stack.Complete) before the next row at or after
// that time is decided. An adaptive kind's limit then moves as the recorded service slows
// or recovers, and a bulkhead holds each request for its latency. The output's columns are
// the same. Completions due after the last row are not heard.
//
// An access log opened by accesslog.Open (an *accesslog.Input holding a log) is read as its
// rows (accesslog.Reader.NextRow: see RowReader and ReplayRows) rather than as the CSV text it
// also reads as: the same output byte for byte, without writing each request as text and
// parsing it again.
//
// Memory does not depend on the trace's length (only on how many callers a concurrency stage
// holds at once, through a wait or a latency: at most its limit).
func Replay(in io.Reader, out io.Writer, stacks [][]limiters.Spec) (ReplaySummary, error) {
	clock := virtualclock.New()
	names, built, sum, err := buildStacks(stacks, clock)
	if err != nil {
		return sum, err
	}
	return replayBuilt(in, out, names, built, clock)
}

// buildStacks builds each stack on clock, and names it; a stack that cannot be built fails
// with the summary of a replay that stopped there.
func buildStacks(stacks [][]limiters.Spec, clock *virtualclock.Clock) ([]string, []*Stack, ReplaySummary, error) {
	names := make([]string, len(stacks))
	built := make([]*Stack, len(stacks))
	for i, specs := range stacks {
		names[i] = StackString(specs)
		st, err := NewStack(specs, clock)
		if err != nil {
			var stage *StageError
			errors.As(err, &stage)
			return nil, nil, ReplaySummary{Stacks: names[:i+1], Admitted: make([]int64, len(stacks))},
				fmt.Errorf("limiter %d: %w", i+1, stage.Err) // the limiter's error names its kind
		}
		if st.SetWaits(specs, 0) {
			if err := st.CanReserve(); err != nil {
				var stage *StageError
				errors.As(err, &stage)
				return nil, nil, ReplaySummary{Stacks: names[:i+1], Admitted: make([]int64, len(stacks))}, fmt.Errorf("limiter %d: %w", i+1, stage.Err)
			}
		}
		built[i] = st
	}
	return names, built, ReplaySummary{}, nil
}

// ReplayStacks is Replay of stacks already built on clock, a fresh virtual clock that the
// replay advances to each row's time, each column headed by its name: a stage may be any
// limiters.Limiter, a store-backed one for instance (cmd/ratelab's redis/ stages). names and
// stacks must be as long. A stack whose callers wait must have had its SetWaits called (and
// CanReserve checked): it then decides by reservation and has a wait column, as in Replay.
func ReplayStacks(in io.Reader, out io.Writer, names []string, stacks []*Stack, clock *virtualclock.Clock) (ReplaySummary, error) {
	if len(names) != len(stacks) {
		return ReplaySummary{}, fmt.Errorf("replay: %d names for %d stacks", len(names), len(stacks))
	}
	return replayBuilt(in, out, names, stacks, clock)
}

// replayBuilt is the replay of built stacks, whose limiters read clock (advanced to each
// row's time). An access log opened by accesslog.Open is read as rows (see ReplayRows), not
// as the CSV text it also reads as.
func replayBuilt(in io.Reader, out io.Writer, names []string, built []*Stack, clock *virtualclock.Clock) (ReplaySummary, error) {
	if log, ok := in.(*accesslog.Input); ok && log.Log() != nil {
		return replayRows(log.Log(), out, names, built, clock)
	}
	p := newReplayer(out, names, built)
	reader, err := trace.NewReader(in)
	if err != nil {
		return p.sum, err
	}
	hasKey, hasLatency := reader.Columns()
	if err := p.start(hasLatency, hasKey, "line 1: the header has no key column, and %s decides by each row's key (write the header t_ns,permits,key)"); err != nil {
		return p.sum, err
	}
	w := p.w
	for {
		if err := reader.Scan(); err != nil {
			if err == io.EOF {
				break
			}
			return p.sum, err
		}
		at, permits := reader.At(), reader.Permits()
		if err := clock.AdvanceTo(at); err != nil {
			return p.sum, fmt.Errorf("line %d: %w", reader.Line(), err)
		}
		p.sum.Rows++
		p.sum.Permits += int64(permits)
		p.sum.Duration = at
		// A plain row's t_ns and permits are copied from the input.
		switch text, onePermit := reader.Text(); {
		case text == nil:
			w = strconv.AppendInt(w, int64(at), 10)
			w = append(w, ',')
			w = strconv.AppendInt(w, int64(permits), 10)
		case onePermit:
			w = append(w, text...)
			w = append(w, ",1"...)
		default:
			w = append(w, text...)
		}
		key := ""
		for i, stack := range p.built {
			if !p.atOnce[i] {
				if key == "" && stack.Keyed() && hasKey {
					key = reader.Key() // read only for a keyed stack
				}
				w = p.decide(w, i, stack, at, permits, reader.Latency(), key)
				continue
			}
			// A refusal gives back what the stages before it took; an admitted caller
			// completes at once, so it gives back what every stage took.
			if d, _, _ := stack.Acquire(at, permits, nil); d == limiters.Admitted {
				stack.Release(permits, stack.Len())
				p.sum.Admitted[i]++
				w = append(w, ",1"...)
			} else {
				w = append(w, ",0"...)
			}
		}
		w = append(w, '\n')
		if len(w) > outChunk {
			if w, err = flushChunks(p.out, w); err != nil {
				return p.sum, err
			}
		}
	}
	p.w = w
	return p.finish()
}

// replayer decides rows, one at a time, with each stack, and writes them out: what Replay
// does once a row is read, whether from CSV text or from a RowReader.
type replayer struct {
	sum     ReplaySummary
	built   []*Stack
	pending []releaseQueue // per stack: permits held through a wait or a latency
	timed   bool           // admitted requests complete latency later
	keyed   bool           // some stack decides by each row's key (start checks there are keys)
	atOnce  []bool         // per stack: it admits or refuses at once (no wait, no key, no latency)
	out     io.Writer
	w       []byte // the output not yet written
}

func newReplayer(out io.Writer, names []string, built []*Stack) *replayer {
	p := &replayer{out: out, built: built, pending: make([]releaseQueue, len(built)),
		sum: ReplaySummary{Stacks: names, Admitted: make([]int64, len(built)), Waits: make([]bool, len(built)),
			Delayed: make([]int64, len(built)), MaxWait: make([]time.Duration, len(built))}}
	for i, st := range built {
		p.sum.Waits[i] = st.shapes()
		p.keyed = p.keyed || st.Keyed()
	}
	return p
}

// start sets the replay up for rows with latencies (timed) or not, with keys or not (a
// keyed stack then fails with noKey, a format naming the stack), and writes the header.
func (p *replayer) start(timed, keys bool, noKey string) error {
	p.timed = timed
	p.atOnce = make([]bool, len(p.built))
	for i, st := range p.built {
		p.pending[i].timed = timed
		p.atOnce[i] = !p.sum.Waits[i] && !timed && !st.Keyed()
	}
	if !keys && p.keyed {
		// Without keys every row would be one client's: a keyed stage would be a global
		// limit under another name.
		return fmt.Errorf(noKey, firstKeyed(p.sum.Stacks, p.built))
	}
	// The output is appended to a buffer written out in chunks of exactly 64 KiB, as a
	// bufio.Writer does (so that what has been written when a row fails is as before).
	need := 32 + 22*len(p.built) // a row: 19 digits, a comma, 10 digits, per stack 2 bytes and a wait, "\n"
	w := make([]byte, 0, outChunk+need)
	w = append(w, "t_ns,permits"...)
	for i, name := range p.sum.Stacks {
		w = append(w, ',')
		w = append(w, csvField(name)...)
		if p.sum.Waits[i] {
			w = append(w, ',')
			w = append(w, csvField(name+" wait_ns")...)
		}
	}
	w = append(w, '\n')
	var err error
	p.w, err = flushChunks(p.out, w)
	return err
}

// decide decides a row at at (the clock already there) with stack i, one whose callers wait,
// that is keyed or that holds admitted requests for their latencies, and appends its columns
// to w. A stack that only admits or refuses at once (atOnce) is decided in the loops of the
// CSV trace and of the rows themselves, which keep w in a register: through a call per row
// the CSV fast path took 103 CPU ns a row rather than 76 (BenchmarkNginxCombinedVsCSV).
func (p *replayer) decide(w []byte, i int, stack *Stack, at time.Duration, permits int, latency time.Duration, key string) []byte {
	sum, timed := &p.sum, p.timed
	if sum.Waits[i] || timed {
		// A caller that waits holds a concurrency stage's permits until it passes, and
		// with latencies until it completes.
		p.pending[i].releaseUntil(at, stack)
	}
	// A keyed stage decides with the row's key's limiter; a full table refuses.
	if stack.Keyed() {
		if _, ok := stack.Bind(at, key); !ok {
			if sum.Waits[i] {
				return append(w, ",0,"...)
			}
			return append(w, ",0"...)
		}
	}
	if sum.Waits[i] {
		d, _, wait := stack.Reserve(at, permits, nil)
		if d != limiters.Admitted {
			return append(w, ",0,"...)
		}
		sum.Admitted[i]++
		if wait > 0 {
			sum.Delayed[i]++
			sum.MaxWait[i] = max(sum.MaxWait[i], wait)
		}
		if wait > 0 || timed {
			p.pending[i].hold(at+wait+latency, permits, latency, key, stack)
		} else {
			stack.Release(permits, stack.Len())
		}
		w = append(w, ",1,"...)
		return strconv.AppendInt(w, int64(wait), 10)
	}
	if d, _, _ := stack.Acquire(at, permits, nil); d == limiters.Admitted {
		if timed {
			p.pending[i].hold(at+latency, permits, latency, key, stack)
		} else {
			stack.Release(permits, stack.Len())
		}
		sum.Admitted[i]++
		return append(w, ",1"...)
	}
	return append(w, ",0"...)
}

// finish writes what is left of the output.
func (p *replayer) finish() (ReplaySummary, error) {
	if len(p.w) == 0 {
		return p.sum, nil
	}
	return p.sum, write(p.out, p.w)
}

// firstKeyed is the name of the first keyed stack.
func firstKeyed(names []string, built []*Stack) string {
	for i, st := range built {
		if st.Keyed() {
			return names[i]
		}
	}
	return ""
}

// releaseQueue holds the permits of callers admitted after a wait until their wait ends, when
// they complete at once and give back what a concurrency stage lent them: a min-heap by end
// time, kept only for a stack that has a releasing stage (it is empty otherwise). With
// latencies (timed) it holds every admitted caller until its completion, which the stages
// that take feedback hear.
type releaseQueue struct {
	ends  []pendingRelease
	timed bool
}

type pendingRelease struct {
	at      time.Duration
	permits int
	latency time.Duration // timed: the latency the stages hear at the completion
	key     string        // the caller's key, for a keyed stack
}

// hold keeps permits until at, or gives them back at once when the stack releases nothing
// (and, timed, hears nothing).
func (q *releaseQueue) hold(at time.Duration, permits int, latency time.Duration, key string, stack *Stack) {
	if !stack.releases() && !(q.timed && stack.hears()) {
		return
	}
	if stack.Keyed() {
		key = strings.Clone(key) // the reader's row is reused
	} else {
		key = ""
	}
	q.ends = append(q.ends, pendingRelease{at, permits, latency, key})
	for i := len(q.ends) - 1; i > 0; {
		parent := (i - 1) / 2
		if q.ends[parent].at <= q.ends[i].at {
			break
		}
		q.ends[parent], q.ends[i] = q.ends[i], q.ends[parent]
		i = parent
	}
}

// releaseUntil gives back the permits of every wait that has ended by now.
func (q *releaseQueue) releaseUntil(now time.Duration, stack *Stack) {
	for len(q.ends) > 0 && q.ends[0].at <= now {
		if stack.Keyed() {
			stack.BindHeld(q.ends[0].key)
		}
		if e := q.ends[0]; q.timed {
			stack.Complete(e.at, e.permits, e.latency, true)
		} else {
			stack.Release(e.permits, stack.Len())
		}
		last := len(q.ends) - 1
		q.ends[0] = q.ends[last]
		q.ends = q.ends[:last]
		for i := 0; ; {
			least, l, r := i, 2*i+1, 2*i+2
			if l < last && q.ends[l].at < q.ends[least].at {
				least = l
			}
			if r < last && q.ends[r].at < q.ends[least].at {
				least = r
			}
			if least == i {
				break
			}
			q.ends[i], q.ends[least] = q.ends[least], q.ends[i]
			i = least
		}
	}
}

// outChunk is the size of Replay's writes: a bufio.Writer's, which writes its full buffer
// once a write does not fit.
const outChunk = 64 << 10

// flushChunks writes w's first outChunk bytes while it holds more, and returns what is left.
func flushChunks(out io.Writer, w []byte) ([]byte, error) {
	for len(w) > outChunk {
		if err := write(out, w[:outChunk]); err != nil {
			return w, err
		}
		w = w[:copy(w, w[outChunk:])]
	}
	return w, nil
}

// write writes all of p to out, as bufio.Writer's Flush does.
func write(out io.Writer, p []byte) error {
	n, err := out.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return err
}

// csvField quotes a field that holds a comma, a quote or a newline, as RFC 4180 does.
func csvField(s string) string {
	if !strings.ContainsAny(s, ",\"\n") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
