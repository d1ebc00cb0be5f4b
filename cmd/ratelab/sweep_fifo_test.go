//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A shard from a FIFO (or standard input) can be read once: the merge keeps a copy as its
// first pass reads it, and its second pass reads the copy, instead of waiting on the FIFO
// for a writer that has gone.
func TestSweepMergeReadsAFIFOShardOnce(t *testing.T) {
	dir := t.TempDir()
	base := []string{"sweep", "steady", "--horizon", "1s", "--vary", "token-bucket.capacity=1..100", "--steps", "6"}
	whole, _, err := ratelab(t, append(base, "--format", "csv")...)
	require.NoError(t, err)
	first, _, err := ratelab(t, append(base, "--shard", "0/2")...)
	require.NoError(t, err)
	second, _, err := ratelab(t, append(base, "--shard", "1/2")...)
	require.NoError(t, err)
	file := filepath.Join(dir, "shard-1.csv")
	require.NoError(t, os.WriteFile(file, []byte(second), 0o644))
	fifo := mkfifo(t, dir, "shard-0")
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the merge to open it
		if err != nil {
			return
		}
		f.WriteString(first)
		f.Close()
	}()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the copy goes
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out bytes.Buffer
	err = run(ctx, []string{"sweep", "merge", fifo, file}, strings.NewReader(""), &out, io.Discard)
	require.NoError(t, err, "the second pass must not wait on the FIFO (it waited until the 10s deadline)")
	assert.Equal(t, whole, out.String())
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "the copy is removed")
}
