package engine

import (
	"bufio"
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
	w := bufio.NewWriterSize(out, 64<<10)
	w.WriteString("t_ns,permits")
	for _, name := range sum.Stacks {
		w.WriteByte(',')
		w.WriteString(csvField(name))
	}
	w.WriteByte('\n')
	line := make([]byte, 0, 64)
	for {
		row, err := reader.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return sum, err
		}
		if err := clock.AdvanceTo(row.At); err != nil {
			return sum, fmt.Errorf("line %d: %w", row.Line, err)
		}
		sum.Rows++
		sum.Permits += int64(row.Permits)
		sum.Duration = row.At
		line = strconv.AppendInt(line[:0], int64(row.At), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(row.Permits), 10)
		for i, stack := range built {
			// A refusal gives back what the stages before it took; an admitted caller
			// completes at once, so it gives back what every stage took.
			if d, _, _ := stack.Acquire(row.At, row.Permits, nil); d == limiters.Admitted {
				stack.Release(row.Permits, stack.Len())
				sum.Admitted[i]++
				line = append(line, ",1"...)
			} else {
				line = append(line, ",0"...)
			}
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return sum, err
		}
	}
	return sum, w.Flush()
}

// csvField quotes a field that holds a comma, a quote or a newline, as RFC 4180 does.
func csvField(s string) string {
	if !strings.ContainsAny(s, ",\"\n") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
