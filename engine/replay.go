package engine

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
)

// ReplaySummary counts what each stack admitted of a replayed trace.
type ReplaySummary struct {
	Rows     int64
	Permits  int64
	Duration time.Duration // the last row's time
	Stacks   []string
	Admitted []int64 // requests admitted, per stack
}

// Replay streams a CSV trace (see TraceReader) through each stack in virtual time, open loop:
// every row is an independent caller that is admitted or not, with no retries, and an
// admitted request completes at once (a concurrency stage's permit is released immediately).
// It writes the input's t_ns and permits and one column per stack, headed by its spec, holding
// 1 (admitted) or 0. Memory does not depend on the trace's length.
func Replay(in io.Reader, out io.Writer, stacks [][]limiters.Spec) (ReplaySummary, error) {
	return replay(in, out, stacks, true)
}

// replay is Replay, reading plain rows on the plain path when plain is set (the tests compare
// the two).
func replay(in io.Reader, out io.Writer, stacks [][]limiters.Spec, plain bool) (ReplaySummary, error) {
	sum := ReplaySummary{Admitted: make([]int64, len(stacks))}
	clock := virtualclock.New()
	built := make([]*Stack, len(stacks))
	for i, specs := range stacks {
		sum.Stacks = append(sum.Stacks, StackString(specs))
		st, err := NewStack(specs, clock)
		if err != nil {
			var stage *StageError
			errors.As(err, &stage)
			return sum, fmt.Errorf("limiter %d: %w", i+1, stage.Err) // the limiter's error names its kind
		}
		built[i] = st
	}
	reader, err := NewTraceReader(in)
	if err != nil {
		return sum, err
	}
	if !plain {
		reader.plain = 0
	}
	// The output is appended to a buffer written out in chunks of exactly 64 KiB, as a
	// bufio.Writer does (so that what has been written when a row fails is as before); a
	// plain row's t_ns and permits are copied from the input.
	need := 32 + 2*len(built) // a row: 19 digits, a comma, 10 digits, 2 bytes per stack, "\n"
	w := make([]byte, 0, outChunk+need)
	w = append(w, "t_ns,permits"...)
	for _, name := range sum.Stacks {
		w = append(w, ',')
		w = append(w, csvField(name)...)
	}
	w = append(w, '\n')
	if w, err = flushChunks(out, w); err != nil {
		return sum, err
	}
	for {
		if err := reader.next(); err != nil { // the key is read only for a keyed stack
			if err == io.EOF {
				break
			}
			return sum, err
		}
		row := &reader.cur
		if err := clock.AdvanceTo(row.at); err != nil {
			return sum, fmt.Errorf("line %d: %w", row.line, err)
		}
		sum.Rows++
		sum.Permits += int64(row.permits)
		sum.Duration = row.at
		switch {
		case row.textEnd == 0:
			w = strconv.AppendInt(w, int64(row.at), 10)
			w = append(w, ',')
			w = strconv.AppendInt(w, int64(row.permits), 10)
		case row.onePermit:
			w = append(w, reader.text()...)
			w = append(w, ",1"...)
		default:
			w = append(w, reader.text()...)
		}
		key := ""
		for i, stack := range built {
			// A keyed stage decides with the row's key's limiter; a full table refuses.
			if stack.Keyed() {
				if key == "" && reader.keyCol >= 0 {
					key = reader.key()
				}
				if _, ok := stack.Bind(row.at, key); !ok {
					w = append(w, ",0"...)
					continue
				}
			}
			// A refusal gives back what the stages before it took; an admitted caller
			// completes at once, so it gives back what every stage took.
			if d, _, _ := stack.Acquire(row.at, row.permits, nil); d == limiters.Admitted {
				stack.Release(row.permits, stack.Len())
				sum.Admitted[i]++
				w = append(w, ",1"...)
			} else {
				w = append(w, ",0"...)
			}
		}
		w = append(w, '\n')
		if len(w) > outChunk {
			if w, err = flushChunks(out, w); err != nil {
				return sum, err
			}
		}
	}
	if len(w) == 0 {
		return sum, nil
	}
	return sum, write(out, w)
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
