package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// fit reads its trace several times; a FIFO (or any file that is not regular) can be read
// once, so fit keeps it as it keeps standard input. Before, fit opened the FIFO to check it,
// closed it, and its first pass then waited for a writer forever (the adversarial harness's
// input/fit←fifo-with-writer).
func TestFitReadsAFIFOOnce(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	fifo := mkfifo(t, t.TempDir(), "trace.csv")
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the reader
		if err != nil {
			return
		}
		f.WriteString("t_ns\n0\n1000000\n2000000\n")
		f.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out strings.Builder
	err := run(ctx, []string{"fit", "--in", fifo, "--steps", "4"}, strings.NewReader(""), &out, io.Discard)
	require.NoError(t, err, "fit of a FIFO must finish (it waited for a writer until the 10s deadline)")
	assert.Contains(t, out.String(), "trace.csv: 3 requests")
	assert.Empty(t, names(t, tmp), "the copy is removed")
}

// Standard input that is not a trace (/dev/zero) is refused at its first overlong line, as
// the trace reader refuses it, instead of being copied to the disk until it fills.
func TestFitRefusesAnEndlessLineOnStandardInput(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	zeros := io.LimitReader(zeroReader{}, 1<<40) // 1 TiB, never stored
	err := run(context.Background(), []string{"fit", "--in", "-"}, zeros, io.Discard, io.Discard)
	require.EqualError(t, err, "standard input: line 1: the line is longer than 1 MiB (1048576 bytes)")
	assert.Empty(t, names(t, tmp), "the copy is removed")
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// A scenario on standard input is read up to one byte past the largest scenario file and
// refused there: before, `run -` read the whole stream to report its size (7s for 300 MB,
// forever for /dev/zero).
func TestRunStopsReadingAnEndlessStandardInput(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	zeros := io.LimitReader(zeroReader{}, 1<<40) // 1 TiB
	err := run(ctx, []string{"run", "-"}, zeros, io.Discard, io.Discard)
	require.EqualError(t, err, "stdin: more than 16777216 bytes: a scenario file may hold at most 16777216 (16 MiB)")
}

// fit SCENARIO and sweep check their work against the budget before they start, as run and
// plot do: before, `--horizon 100000h` on the steady scenario (18G requests) ran for hours
// (the adversarial harness's budget/fit-steady-100000h and budget/sweep-100000h).
func TestFitAndSweepAreRefusedOverTheBudget(t *testing.T) {
	// fit passes 50/s × 100000h = 18G requests once per rate of its grid (24) and once per
	// kind's replay: with the 20 kinds registered when this was written, 792G events, and the
	// budget's suggestion rounded up to two digits, 800G.
	fitEvents := int64(18e9) * int64(24+len(limiters.Kinds()))
	scale := math.Pow(10, math.Floor(math.Log10(float64(fitEvents)))-1)
	fitRaise := int64(math.Ceil(float64(fitEvents)/scale) * scale)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"fit", "steady", "--horizon", "100000h"},
			fmt.Sprintf("scenario steady: about 18G requests to fit, %s events over its 24 rates and every kind's replay, over the budget of 10G events: shorten the horizon, or raise the budget with --max-events %s",
				engine.SI(fitEvents), engine.SI(fitRaise))},
		{[]string{"sweep", "steady", "--horizon", "100000h", "--vary", "token-bucket.capacity=1..5", "--steps", "2"},
			"steady (a sweep of 2 cells): about 108G events (18G requests through 2 lanes; 3h at 100ns an event), over the budget of 10G events: shorten the horizon, or raise the budget with --max-events 110G"},
		{[]string{"sweep", "steady", "--horizon", "10h", "--vary", "token-bucket.capacity=1..5", "--steps", "4", "--shard", "1/2", "--max-events", "1M"},
			"steady (a sweep of 2 cells): about 10.8M events (1.8M requests through 2 lanes; 1.08s at 100ns an event), over the budget of 1M events: shorten the horizon, or raise the budget with --max-events 11M"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := run(ctx, tc.args, strings.NewReader(""), io.Discard, io.Discard)
		cancel()
		require.EqualError(t, err, tc.says, "%v", tc.args)
	}
	// Within the budget they run.
	_, _, err := ratelab(t, "fit", "steady", "--horizon", "10s", "--max-events", "1M")
	require.NoError(t, err)
}
