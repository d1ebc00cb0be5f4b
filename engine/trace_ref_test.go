package engine

// The seed's Replay, kept as it was (a row at a time through trace.Reader's Next, itself
// held to the seed's encoding/csv reader in trace/ref_test.go) as the reference the
// differential tests hold Replay's fast path to: same output and errors, byte for byte.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/trace"
	"github.com/ratelab/ratelab/virtualclock"
)

// refReplay is the seed's Replay, for stacks whose callers do not wait (its summary's wait
// counts stay zero).
func refReplay(in io.Reader, out io.Writer, stacks [][]limiters.Spec) (ReplaySummary, error) {
	sum := ReplaySummary{Admitted: make([]int64, len(stacks)), Waits: make([]bool, len(stacks)),
		Delayed: make([]int64, len(stacks)), MaxWait: make([]time.Duration, len(stacks))}
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
	reader, err := trace.NewReader(in) // held to the seed's reader in trace/ref_test.go
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
