//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A scenario named by a FIFO or a device is refused before it is opened, whatever it is
// called: docs/LIMITS.md said so of every scenario file, and it was true only of a .yaml path
// (scenarios.LoadFile); a FIFO called "in" was opened, waiting for a writer until Ctrl-C,
// and /dev/zero was read for 64 MiB before it was refused. A FIFO with a writer waiting is
// not read either (its writer is left blocked: nothing opened it). A FIFO named as a built-in
// scenario is not a scenario file: the built-in runs.
func TestScenarioFromAFIFOIsRefusedByAnyName(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"in", "s.yaml", "scenario.yml", "trace.csv"} {
		fifo := mkfifo(t, dir, name)
		for _, command := range []string{"run", "show", "plot", "sweep", "fit"} {
			args := []string{command, fifo}
			switch command {
			case "plot":
				args = append(args, "--out", filepath.Join(dir, "plots"))
			case "sweep":
				args = append(args, "--vary", "token-bucket.capacity=1..3")
			}
			done := make(chan error, 1)
			go func() { done <- run(context.Background(), args, strings.NewReader(""), io.Discard, io.Discard) }()
			select {
			case err := <-done:
				require.Error(t, err, "%v", args)
				assert.Equal(t, fifo+": is a FIFO (named pipe), not a scenario file: only regular files are read", err.Error(), "%v", args)
			case <-time.After(5 * time.Second):
				t.Fatalf("%v: waited in the FIFO's open for a writer", args) // nothing cancels an open
			}
		}
	}
	for _, device := range []string{"/dev/zero", "/dev/null"} {
		_, _, err := ratelab(t, "run", device)
		require.Error(t, err)
		assert.Equal(t, device+": is a device, not a scenario file: only regular files are read", err.Error())
	}

	// A writer waiting on the FIFO is never let in.
	fifo := mkfifo(t, dir, "fed")
	opened := make(chan struct{})
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for a reader
		if err == nil {
			close(opened)
			f.WriteString("name: fed\nhorizon: 1s\nsources: [{kind: constant, rate: 5}]\nlimiters: [concurrency:max=1]\n")
			f.Close()
		}
	}()
	_, _, err := ratelab(t, "run", fifo)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is a FIFO")
	select {
	case <-opened:
		t.Fatal("the FIFO was opened")
	case <-time.After(100 * time.Millisecond):
	}
	if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil { // release the writer
		io.Copy(io.Discard, f)
		f.Close()
	}

	// A FIFO called as a built-in is not a scenario file.
	t.Chdir(dir)
	mkfifo(t, dir, "steady")
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"run", "steady", "--horizon", "10ms"}, strings.NewReader(""), &out, io.Discard))
	assert.True(t, strings.HasPrefix(out.String(), "steady — seed 1, 10ms of virtual time\n"))
}
