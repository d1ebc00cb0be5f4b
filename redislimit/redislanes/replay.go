package redislanes

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/redislimit"
	"github.com/ratelab/ratelab/trace"
	"github.com/ratelab/ratelab/virtualclock"
)

// ReplayOptions say where a replay's redis/ stages keep their state and what they answer
// when Redis does not.
type ReplayOptions struct {
	Addr      string               // named in Failures' error
	KeyPrefix string               // each redis/ stage's key is KeyPrefix + lane + ":" + stage + ":" + spec
	Timeout   time.Duration        // the longest a stage waits for Redis per decision (and to empty its key)
	OnFailure limiters.FailureMode // what a stage answers when Redis gives no decision in time
}

// Replay holds what the redis/ stages of a replay share: the client and every guarded
// stage, to report their failures.
type Replay struct {
	options ReplayOptions
	client  *redislimit.Client
	guarded []*redislimit.Guarded
	lanes   []int // guarded[i] is a stage of lane lanes[i]
}

// NewReplay is a replay whose redis/ stages decide through client, which Close closes.
func NewReplay(client *redislimit.Client, options ReplayOptions) *Replay {
	return &Replay{options: options, client: client}
}

// Build makes a lane's stack: in-process stages on the replay's virtual clock, redis/ stages
// keyed PREFIX + lane + ":" + stage + ":" + spec, on the trace's times (the caller's clock),
// emptied first so that the replay starts from fresh limiters as the in-process ones do.
func (r *Replay) Build(ctx context.Context, index int, lane Lane, clock limiters.Clock) (*engine.Stack, error) {
	mode := r.options.OnFailure
	if !lane.HasRemote() {
		// A lane without a redis/ stage is built as every other replay's is (a keys(…) stage
		// becomes its table there).
		st, err := engine.NewStack(lane.Specs, clock)
		if err != nil {
			return nil, fmt.Errorf("limiter %d: %w", index+1, err)
		}
		if st.SetWaits(lane.Specs, 0) {
			if err := st.CanReserve(); err != nil {
				return nil, fmt.Errorf("limiter %d: %w", index+1, err)
			}
		}
		return st, nil
	}
	stages := make([]limiters.Limiter, len(lane.Specs))
	for k, spec := range lane.Specs {
		local, err := spec.New(clock)
		if err != nil {
			return nil, fmt.Errorf("limiter %d: %w", index+1, err)
		}
		if !lane.Remote[k] {
			stages[k] = local
			continue
		}
		key := r.options.KeyPrefix + strconv.Itoa(index+1) + ":" + strconv.Itoa(k+1) + ":" + spec.String()
		remote, err := redislimit.New(r.client, key, spec, redislimit.Options{Clock: redislimit.CallerClock})
		if err != nil {
			return nil, fmt.Errorf("limiter %d: %w", index+1, err)
		}
		resetCtx, cancel := context.WithTimeout(ctx, r.options.Timeout)
		err = remote.Reset(resetCtx)
		cancel()
		if err != nil {
			return nil, err
		}
		policy := limiters.FailurePolicy{Mode: mode, Timeout: r.options.Timeout}
		if mode == limiters.FailLocal {
			policy.Local = local
		}
		g, err := redislimit.NewGuarded(remote, policy)
		if err != nil {
			return nil, err
		}
		r.guarded, r.lanes = append(r.guarded, g), append(r.lanes, index)
		stages[k] = g
	}
	st := engine.StackOf(stages)
	if st.SetWaits(lane.Specs, 0) { // an in-process stage whose callers wait decides by reservation
		if err := st.CanReserve(); err != nil {
			return nil, fmt.Errorf("limiter %d: %w", index+1, err)
		}
	}
	return st, nil
}

// Failures is one line per redis/ stage the store failed, and an error when any did.
func (r *Replay) Failures() (lines []string, err error) {
	var total int64
	var first error
	for i, g := range r.guarded {
		n, e := g.Failures()
		if n == 0 {
			continue
		}
		total += n
		if first == nil {
			first = e
		}
		lines = append(lines, fmt.Sprintf("  limiter %d: %d decisions Redis did not make, decided %s instead", r.lanes[i]+1, n, g.Policy().Mode))
	}
	if total > 0 {
		err = fmt.Errorf("--redis %s: %d decisions failed; the first: %v", r.options.Addr, total, first)
	}
	return lines, err
}

// Close closes the client.
func (r *Replay) Close() error { return r.client.Close() }

// replayDepth is how many EVALSHAs replay --redis keeps on the wire at once: rows are read,
// up to 64 decisions written in one write, then the 64 replies read in order, and the rows
// written out in trace order. Redis runs a pipeline in the order sent, so every decision is
// the one a row at a time would get (TestReplayRedisPipelinedSameBytes). A replay of 6,400
// rows runs at 0.98× the rate of redis-benchmark -P 64 sending the same EVALSHA (17.5 µs a
// decision, 16.7–18.5, against 17.1, 16.3–17.4: medians of six on an idle 2-core EPYC,
// docs/FLEET.md); a row at a time it ran at 0.24× (BenchmarkReplayRedis).
const replayDepth = 64

// pipelineLanes reports whether the replay's lanes can be decided a batch of rows at a time:
// each lane is one redis/ stage, or in-process stages that neither wait nor key by row (their
// decisions do not depend on Redis's, so they are made as the rows are read). Any other lane
// (a redis/ stage in a stack, whose later stages depend on its answer; a wait) is replayed a
// row at a time by engine.ReplayStacks. guarded[i] is lane i's redis/ stage, or nil.
func (r *Replay) pipelineLanes(lanes []Lane, built []*engine.Stack) (guarded []*redislimit.Guarded, ok bool) {
	guarded = make([]*redislimit.Guarded, len(lanes))
	for i, lane := range lanes {
		if built[i].SetWaits(lane.Specs, 0) || built[i].Keyed() {
			return nil, false
		}
		if !lane.HasRemote() {
			continue
		}
		if len(lane.Specs) != 1 {
			return nil, false
		}
		for k, g := range r.guarded {
			if r.lanes[k] == i {
				guarded[i] = g
			}
		}
	}
	return guarded, true
}

// Replay replays the trace in through the lanes built (by Build, in order) and writes the
// decisions to out, as engine.ReplayStacks does (the same bytes, by the same writes):
// pipelined when pipelineLanes allows (and the trace has no
// latency_ns column, which an in-process lane would hear), else engine.ReplayStacks. Either
// writes the same bytes.
func (r *Replay) Replay(ctx context.Context, in io.Reader, out io.Writer, names []string, lanes []Lane, built []*engine.Stack, clock *virtualclock.Clock) (engine.ReplaySummary, error) {
	guarded, ok := r.pipelineLanes(lanes, built)
	if !ok {
		return engine.ReplayStacks(in, out, names, built, clock)
	}
	var seen bytes.Buffer // what the reader took before the header told whether to pipeline
	reader, err := trace.NewReader(io.TeeReader(in, &seen))
	if err == nil && reader.HasLatency() {
		for i := range lanes {
			if guarded[i] == nil {
				return engine.ReplayStacks(io.MultiReader(&seen, in), out, names, built, clock)
			}
		}
	}
	return replayPipelined(ctx, reader, err, out, names, guarded, built, clock)
}

// replayPipelined is engine.ReplayStacks' output for lanes that are one redis/ stage or
// in-process and plain (see pipelineLanes), with the redis/ stages' decisions pipelined
// replayDepth deep over one connection. Redis failures are the stages' policies', counted
// by each Guarded as one at a time.
func replayPipelined(ctx context.Context, reader *trace.Reader, readErr error, out io.Writer, names []string, guarded []*redislimit.Guarded, built []*engine.Stack, clock *virtualclock.Clock) (engine.ReplaySummary, error) {
	sum := engine.ReplaySummary{Stacks: names, Admitted: make([]int64, len(built)), Waits: make([]bool, len(built)),
		Delayed: make([]int64, len(built)), MaxWait: make([]time.Duration, len(built))}
	if readErr != nil {
		return sum, readErr
	}
	remote := 0
	for _, g := range guarded {
		if g != nil {
			remote++
		}
	}
	rowsPerBatch := max(1, replayDepth/max(1, remote))
	type pendingRow struct {
		at      int64
		permits int
	}
	rows := make([]pendingRow, 0, rowsPerBatch)
	local := make([]bool, 0, rowsPerBatch*len(built)) // in-process lanes' decisions, row by row
	var batch redislimit.Batch

	w := make([]byte, 0, outChunk+32+22*len(built))
	w = append(w, "t_ns,permits"...)
	for _, name := range names {
		w = append(w, ',')
		w = append(w, csvQuote(name)...)
	}
	w = append(w, '\n')
	var err error
	if w, err = flushOutChunks(out, w); err != nil {
		return sum, err
	}
	// As a row at a time (Guarded.AcquireAt), an interrupt does not cut a decision short: the
	// policies' timeout bounds it, and the interrupted read ends the replay after it.
	decideCtx := context.WithoutCancel(ctx)
	// flush decides the batch and appends its rows in trace order.
	flush := func() error {
		_ = batch.Decide(decideCtx) // failures are the policies' decisions, counted by each Guarded
		next := 0
		for r, row := range rows {
			w = strconv.AppendInt(w, row.at, 10)
			w = append(w, ',')
			w = strconv.AppendInt(w, int64(row.permits), 10)
			for i := range built {
				admitted := local[r*len(built)+i]
				if guarded[i] != nil {
					admitted = batch.Decision(next) == limiters.Admitted
					next++
				}
				if admitted {
					sum.Admitted[i]++
					w = append(w, ",1"...)
				} else {
					w = append(w, ",0"...)
				}
			}
			w = append(w, '\n')
		}
		rows, local = rows[:0], local[:0]
		batch.Reset()
		if len(w) > outChunk {
			var err error
			w, err = flushOutChunks(out, w)
			return err
		}
		return nil
	}
	for {
		row, err := reader.Next()
		if err != nil {
			if ferr := flush(); ferr != nil {
				return sum, ferr
			}
			if err == io.EOF {
				break
			}
			return sum, err
		}
		if err := clock.AdvanceTo(row.At); err != nil {
			if ferr := flush(); ferr != nil {
				return sum, ferr
			}
			return sum, lineError(row.Line, err)
		}
		sum.Rows++
		sum.Permits += int64(row.Permits)
		sum.Duration = row.At
		rows = append(rows, pendingRow{int64(row.At), row.Permits})
		for i, stack := range built {
			if guarded[i] != nil {
				if err := batch.Add(guarded[i], row.At, row.Permits); err != nil {
					return sum, lineError(row.Line, err)
				}
				local = append(local, false)
				continue
			}
			// As engine.ReplayStacks: an admitted caller completes at once and gives back
			// what every stage took.
			d, _, _ := stack.Acquire(row.At, row.Permits, nil)
			if d == limiters.Admitted {
				stack.Release(row.Permits, stack.Len())
			}
			local = append(local, d == limiters.Admitted)
		}
		if len(rows) == rowsPerBatch {
			if err := flush(); err != nil {
				return sum, err
			}
		}
	}
	if len(w) == 0 {
		return sum, nil
	}
	return sum, writeAll(out, w)
}

func lineError(line int, err error) error { return fmt.Errorf("line %d: %w", line, err) }

// outChunk is the size of the replay's writes, engine.ReplayStacks' (a bufio.Writer's): the
// same bytes reach the output by the same writes, an interrupted replay included.
const outChunk = 64 << 10

// flushOutChunks writes w's first outChunk bytes while it holds more, and returns the rest.
func flushOutChunks(out io.Writer, w []byte) ([]byte, error) {
	for len(w) > outChunk {
		if err := writeAll(out, w[:outChunk]); err != nil {
			return w, err
		}
		w = w[:copy(w, w[outChunk:])]
	}
	return w, nil
}

func writeAll(out io.Writer, p []byte) error {
	n, err := out.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return err
}

// csvQuote quotes a column name that holds a comma, a quote or a newline (RFC 4180), as the
// engine's header does.
func csvQuote(s string) string {
	if !strings.ContainsAny(s, ",\"\n") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
