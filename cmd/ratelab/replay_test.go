package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// endless is a trace with no end: one row per nanosecond, generated as it is read.
type endless struct {
	pending []byte
	at      int64
	read    chan struct{} // closed after the first read
}

func (e *endless) Read(p []byte) (int, error) {
	if e.read != nil {
		close(e.read)
		e.read = nil
	}
	if e.pending == nil {
		e.pending = []byte("t_ns\n")
	}
	n := 0
	for n < len(p) {
		if len(e.pending) == 0 {
			e.pending = strconv.AppendInt(e.pending, e.at, 10)
			e.pending = append(e.pending, '\n')
			e.at++
		}
		c := copy(p[n:], e.pending)
		n += c
		e.pending = e.pending[c:]
	}
	return n, nil
}

func TestCtxReaderStopsAnEndlessReplay(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan struct{})
	src := &endless{read: first}
	r, stop := newCtxReader(ctx, src)
	defer stop()
	go func() {
		<-first
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	n, err := io.Copy(io.Discard, r)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Greater(t, n, int64(0))
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestCtxReaderWakesABlockedRead(t *testing.T) {
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r, stop := newCtxReader(ctx, pr)
	defer stop()
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err = r.Read(make([]byte, 10)) // nobody writes: blocks until cancelled
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 5*time.Second)
}

// replay stops on Ctrl-C as run and plot do: it says it was interrupted, exits 130, and
// leaves no output file and no temporary file.
func TestReplayStopsWhenInterrupted(t *testing.T) {
	for _, blocked := range []bool{false, true} {
		t.Run(map[bool]string{false: "endless trace", true: "stalled trace"}[blocked], func(t *testing.T) {
			dir := t.TempDir()
			in := mkfifo(t, dir, "trace.csv")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			finished := make(chan struct{})
			defer close(finished)
			go func() { // the trace's writer: rows forever, or a few rows and then nothing
				f, err := os.OpenFile(in, os.O_WRONLY, 0)
				if err != nil {
					return
				}
				defer f.Close()
				if blocked {
					f.WriteString("t_ns\n0\n1\n2\n")
					time.Sleep(100 * time.Millisecond)
					cancel()
					<-finished // keep the FIFO open: only the cancellation can end the read
					return
				}
				first := make(chan struct{})
				go func() { <-first; time.Sleep(100 * time.Millisecond); cancel() }()
				src := &endless{read: first}
				io.Copy(f, src)
			}()
			out := filepath.Join(dir, "decisions.csv")
			var stdout, stderr bytes.Buffer
			start := time.Now()
			err := run(ctx, []string{"replay", "--in", in, "--out", out, "--limiter", "leaky-bucket:rate=100/1s"}, strings.NewReader(""), &stdout, &stderr)
			assert.Less(t, time.Since(start), 5*time.Second, "stops promptly")
			require.Error(t, err)
			assert.True(t, errors.Is(err, context.Canceled), "%v", err)
			assert.Equal(t, "interrupted", err.Error(), "Ctrl-C says so and nothing else")
			assert.Equal(t, 130, report(err, io.Discard), "exit 130, as for a process the signal killed")
			assert.False(t, isUsage(err))
			assert.ElementsMatch(t, []string{"trace.csv"}, names(t, dir), "no output, no temporary file")
		})
	}
}
