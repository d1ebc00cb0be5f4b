package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

func replayCommand(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	in := fs.String("in", "", "the trace `FILE`, CSV with a t_ns or t column, optional permits and key (required)")
	out := fs.String("out", "", "the `FILE` to write the decisions CSV to (default: standard output)")
	var specs stringList
	fs.Var(&specs, "limiter", "a limiter `SPEC`, repeatable, one column each; stack with + (at least one is required)")
	positional, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usageErrorf("replay: unexpected argument %q (the trace is given with --in)", positional[0])
	}
	if *in == "" {
		return usageErrorf("replay: --in TRACE.csv is required")
	}
	if len(specs) == 0 {
		return usageErrorf("replay: at least one --limiter SPEC is required")
	}
	var stacks [][]limiters.Spec
	for _, text := range specs {
		stack, err := engine.ParseStack(text)
		if err != nil {
			return usageErrorf("--limiter: %v", err)
		}
		stacks = append(stacks, stack)
	}
	f, err := os.Open(*in)
	if err != nil {
		return err
	}
	defer f.Close()

	var w io.Writer = e.stdout
	var o *outFile
	if *out != "" {
		// Opened before the run so that a bad --out is refused before any work; a regular
		// file is written beside the target and renamed at the end, so a failed or
		// interrupted replay leaves nothing half-written at --out.
		if o, err = createOutput(ctx, *out); err != nil {
			return fmt.Errorf("--out %w", err)
		}
		defer o.Abort()
		w = o
	}
	input, stop := newCtxReader(ctx, f)
	defer stop()
	sum, err := engine.Replay(input, w, stacks)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: interrupted after %d requests: %w", *in, sum.Rows, ctx.Err())
		}
		return fmt.Errorf("%s: %w", *in, err)
	}
	if o != nil {
		if err := o.Commit(); err != nil {
			return fmt.Errorf("--out %w", err)
		}
	}
	fmt.Fprintf(e.stderr, "replayed %d requests (%d permits) over %s\n", sum.Rows, sum.Permits, limiters.FormatDuration(sum.Duration))
	for i, name := range sum.Stacks {
		pct := 0.0
		if sum.Rows > 0 {
			pct = 100 * float64(sum.Admitted[i]) / float64(sum.Rows)
		}
		fmt.Fprintf(e.stderr, "  %-50s admitted %d (%.1f%%)\n", name, sum.Admitted[i], pct)
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
// pipe, a FIFO), the read under way is woken when ctx is done, too.
func newCtxReader(ctx context.Context, r io.Reader) (reader io.Reader, stop func() bool) {
	stop = func() bool { return false }
	if f, ok := r.(*os.File); ok {
		stop = context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Unix(1, 0)) })
	}
	return &ctxReader{ctx: ctx, r: r}, stop
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
