package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/internal/outfile"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/redislimit/redislanes"
	"github.com/ratelab/ratelab/virtualclock"
)

func replayCommand(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	in := fs.String("in", "", "the trace `FILE`: an access log (nginx, Caddy, HAProxy, JSON; gzip too) or a CSV with a t_ns or t column, optional permits and key; - is standard input (required)")
	out := fs.String("out", "-", "the `FILE` to write the decisions CSV to; - is standard output")
	var specs stringList
	fs.Var(&specs, "limiter", "a limiter `SPEC`, repeatable, one column each (and a \"SPEC wait_ns\" column when its callers wait); stack with + (at least one is required); a stage written redis/SPEC runs in the Redis of --redis")
	var rs redisSettings
	fs.StringVar(&rs.addr, "redis", "", "the Redis `ADDR` (host:port) where the redis/ stages keep their state, decided at the trace's times")
	fs.StringVar(&rs.onFailure, "redis-on-failure", "fail-closed", "what a redis/ stage answers, as `MODE`, when Redis gives no decision within --redis-timeout: fail-open, fail-closed or local (an in-process limiter of its spec)")
	fs.DurationVar(&rs.timeout, "redis-timeout", time.Second, "the longest a redis/ stage waits for Redis per decision")
	fs.StringVar(&rs.keyPrefix, "redis-prefix", "ratelab:replay:", "the `PREFIX` of the redis/ stages' keys, which the replay deletes before it starts")
	withHeaders := fs.Bool("headers", false, "write, beside each --limiter's decision, the RateLimit and Retry-After header fields a server would send with it (RateLimit-Policy on standard error), instead of the wait columns")
	compare := fs.Bool("compare", false, "compare each --limiter's decisions with the ones production logged (nginx's $limit_req_status, or the statuses of --refused-status) instead of writing the decisions CSV")
	var lf logFlags
	lf.register(fs)
	positional, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if _, err := lf.options(); err != nil {
		return err
	}
	if len(positional) > 0 {
		return usageErrorf("replay: unexpected argument %q (the trace is given with --in)", positional[0])
	}
	if *in == "" {
		return usageErrorf("replay: --in TRACE.csv is required (--in - reads standard input)")
	}
	if *out == "" {
		return usageErrorf("replay: --out '': give a FILE, or - for standard output (the default)")
	}
	if len(specs) == 0 {
		return usageErrorf("replay: at least one --limiter SPEC is required")
	}
	var lanes []redislanes.Lane
	remote := false
	for _, text := range specs {
		if name, _, named := splitLaneName(text); named {
			return usageErrorf("replay: --limiter %s: replay names its columns by their specs; a lane cannot be named %q here", quoteArg(text), name)
		}
		lane, err := redislanes.ParseLane(text)
		if err != nil {
			return usageErrorf("--limiter: %v", err)
		}
		if lane.HasRemote() && rs.addr == "" {
			return usageErrorf("--limiter %s: a redis/ stage needs --redis ADDR", quoteArg(text))
		}
		remote = remote || lane.HasRemote()
		lanes = append(lanes, lane)
	}
	if *withHeaders && (*compare || remote) {
		return usageErrorf("replay: --headers runs the limiters in process and writes decisions; not with --compare or a redis/ stage")
	}
	if *compare {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		switch {
		case set["out"]:
			return usageErrorf("replay: --compare prints the comparison on standard output; --out applies to the decisions CSV")
		case remote || rs.addr != "":
			return usageErrorf("replay: --compare runs the limiters in process; a redis/ stage cannot be compared")
		}
	}
	if rs.addr != "" && !remote {
		return usageErrorf("--redis %s: no --limiter has a redis/ stage (write one as redis/%s)", rs.addr, lanes[0].Specs[0])
	}
	if rs.timeout <= 0 {
		return usageErrorf("--redis-timeout %s: must be positive", limiters.FormatDuration(rs.timeout))
	}
	if _, err := limiters.ParseFailureMode(rs.onFailure); err != nil {
		return usageErrorf("--redis-on-failure: %v", err)
	}
	var trace io.Reader = e.stdin
	source := "standard input"
	if *in == "-" {
		err = outfile.NoteStdin(ctx, "standard input (the trace)", e.stdin)
	} else {
		err = outfile.NoteInput(ctx, "the trace --in "+quoteArg(*in), *in)
	}
	if err == nil {
		err = outfile.Check(ctx, outfile.Output{Flag: "--out", Path: *out})
	}
	if err != nil {
		return err
	}
	if *in == "-" {
		readingStdin(e, "the trace")
	} else {
		f, err := os.Open(*in)
		if err != nil {
			return err
		}
		defer f.Close()
		trace, source = f, *in
	}

	// Standard output gets the decisions as they are made (a replay is a stream), whole rows
	// only: an interrupted replay leaves there the rows decided so far, never half a row.
	lines := &wholeLines{w: e.stdout}
	var w io.Writer = lines
	var o *outfile.File
	if *out != "-" {
		// Opened before the run so that a bad --out is refused before any work; a regular
		// file is written beside the target and renamed at the end, so a failed or
		// interrupted replay leaves nothing half-written at --out.
		if o, err = outfile.Create(ctx, *out); err != nil {
			return fmt.Errorf("--out %w", err)
		}
		defer o.Abort()
		w = o
	}
	// Without a redis/ stage, the stacks are built from their specs as always; with one, each
	// lane is built here, its redis/ stages behind the failure policy.
	var store *redislanes.Replay
	var sum engine.ReplaySummary
	ctxInput, stop := newCtxReader(ctx, trace)
	defer stop()
	log, err := lf.openLog(ctxInput, source)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: interrupted: %w", source, ctx.Err())
		}
		return err
	}
	if *compare {
		return compareLog(e, source, log, lanes)
	}
	if *withHeaders {
		if err := replayHeaders(e, source, log, w, lanes); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("%s: interrupted: %w", source, ctx.Err())
			}
			return err
		}
		if o != nil {
			if err := o.Commit(); err != nil {
				return fmt.Errorf("--out %w", err)
			}
		} else if err := lines.Flush(); err != nil {
			return err
		}
		printNotes(e.stderr, e.errWidth, source, log.Notes())
		return nil
	}
	var input io.Reader = log
	if remote {
		if store, err = connectRedis(ctx, rs); err != nil {
			return err
		}
		defer store.Close()
		clock := virtualclock.New()
		names, built := make([]string, len(lanes)), make([]*engine.Stack, len(lanes))
		for i, lane := range lanes {
			names[i] = lane.Name()
			if built[i], err = store.Build(ctx, i, lane, clock); err != nil {
				return err
			}
		}
		sum, err = store.Replay(ctx, input, w, names, lanes, built, clock)
	} else {
		stacks := make([][]limiters.Spec, len(lanes))
		for i, lane := range lanes {
			stacks[i] = lane.Specs
		}
		sum, err = engine.Replay(input, w, stacks)
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: interrupted after %d requests: %w", source, sum.Rows, ctx.Err())
		}
		return fmt.Errorf("%s: %w", source, err)
	}
	if o != nil {
		if err := o.Commit(); err != nil {
			return fmt.Errorf("--out %w", err)
		}
	} else if err := lines.Flush(); err != nil {
		return err
	}
	printNotes(e.stderr, e.errWidth, source, log.Notes())
	fmt.Fprintf(e.stderr, "replayed %d requests (%d permits) over %s\n", sum.Rows, sum.Permits, limiters.FormatDuration(sum.Duration))
	for i, name := range sum.Stacks {
		pct := 0.0
		if sum.Rows > 0 {
			pct = 100 * float64(sum.Admitted[i]) / float64(sum.Rows)
		}
		waited := ""
		if sum.Waits[i] {
			waited = fmt.Sprintf(", %d after a wait (longest %s)", sum.Delayed[i], limiters.FormatDuration(sum.MaxWait[i]))
		}
		fmt.Fprintf(e.stderr, "  %-50s admitted %d (%.1f%%)%s\n", name, sum.Admitted[i], pct, waited)
	}
	if store != nil {
		lines, err := store.Failures()
		for _, line := range lines {
			fmt.Fprintln(e.stderr, line)
		}
		return err
	}
	return nil
}

// ctxReader ends a read once ctx is done: the replay engine knows nothing of contexts, and
// checking before each read (a few kilobytes at a time) costs nothing.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

// newCtxReader wraps r; call stop when done reading. When r is a file that can block (a
// pipe, a FIFO, a terminal), the read under way is woken when ctx is done, too: by a deadline
// when the file supports one, else by giving up on it (see asyncReader).
func newCtxReader(ctx context.Context, r io.Reader) (reader io.Reader, stop func() bool) {
	stop = func() bool { return false }
	if f, ok := r.(*os.File); ok {
		if f.SetReadDeadline(time.Time{}) == nil {
			stop = context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
		} else if info, err := f.Stat(); err == nil && !info.Mode().IsRegular() {
			r = &asyncReader{ctx: ctx, r: f, done: make(chan readResult, 1)}
		}
	}
	return &ctxReader{ctx: ctx, r: r}, stop
}

// asyncReader reads a file that can block but takes no deadline (standard input, which Go
// leaves in blocking mode so as not to change the terminal the shell shares) on another
// goroutine, so that a cancelled ctx ends the wait. The read abandoned then stays blocked
// until the process exits; nothing reads from r again.
type asyncReader struct {
	ctx  context.Context
	r    io.Reader
	buf  []byte
	done chan readResult
}

type readResult struct {
	n   int
	err error
}

func (a *asyncReader) Read(p []byte) (int, error) {
	if len(a.buf) < len(p) {
		a.buf = make([]byte, len(p))
	}
	buf := a.buf[:len(p)]
	go func() {
		n, err := a.r.Read(buf)
		a.done <- readResult{n, err}
	}()
	select {
	case res := <-a.done:
		return copy(p, buf[:res.n]), res.err
	case <-a.ctx.Done():
		a.buf = nil // the abandoned read may still write to it
		return 0, a.ctx.Err()
	}
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	if err != nil && c.ctx.Err() != nil {
		return n, c.ctx.Err()
	}
	return n, err
}

// wholeLines writes to w up to the last newline written, holding back the rest of a line
// until it is complete (or Flush).
type wholeLines struct {
	w    io.Writer
	tail []byte
}

func (l *wholeLines) Write(p []byte) (int, error) {
	i := bytes.LastIndexByte(p, '\n')
	if i < 0 {
		l.tail = append(l.tail, p...)
		return len(p), nil
	}
	if len(l.tail) > 0 {
		if _, err := l.w.Write(l.tail); err != nil {
			return 0, err
		}
		l.tail = l.tail[:0]
	}
	if _, err := l.w.Write(p[:i+1]); err != nil {
		return 0, err
	}
	l.tail = append(l.tail, p[i+1:]...)
	return len(p), nil
}

// Flush writes what is held back.
func (l *wholeLines) Flush() error {
	if len(l.tail) == 0 {
		return nil
	}
	_, err := l.w.Write(l.tail)
	l.tail = nil
	return err
}
