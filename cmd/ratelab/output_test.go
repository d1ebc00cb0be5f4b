package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// internal/outfile's tests hold its guarantees (atomic replace, modes, links, FIFOs,
// devices, cancelling); these check that the commands write through it, with the flag that
// named the path in front of its errors.

// A small trace and what replaying it through one leaky bucket writes.
const (
	smallTrace     = "t_ns\n0\n0\n10000000\n"
	smallDecisions = "t_ns,permits,leaky-bucket:rate=100/1s\n0,1,1\n0,1,0\n10000000,1,1\n"
)

func writeTrace(t *testing.T, dir, text string) string {
	t.Helper()
	in := filepath.Join(dir, "trace.csv")
	require.NoError(t, os.WriteFile(in, []byte(text), 0o644))
	return in
}

func replayTo(t *testing.T, ctx context.Context, in, out string) error {
	t.Helper()
	var stdout, stderr bytes.Buffer
	return run(ctx, []string{"replay", "--in", in, "--out", out, "--limiter", "leaky-bucket:rate=100/1s"}, strings.NewReader(""), &stdout, &stderr)
}

// names lists dir, so that a test sees any temporary file left behind.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var n []string
	for _, e := range entries {
		n = append(n, e.Name())
	}
	return n
}

// withUmask runs f with the process's umask set to mask.
func withUmask(mask int, f func()) {
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	f()
}

// mkfifo makes a FIFO in dir, or skips the test where there are none.
func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return path
}

func TestReplayAndPlotWriteNewFiles0644LessTheUmask(t *testing.T) {
	dir := t.TempDir()
	in := writeTrace(t, dir, smallTrace)
	for _, mask := range []int{0o022, 0o077} {
		out := filepath.Join(dir, fmt.Sprintf("new-%o.csv", mask))
		withUmask(mask, func() { require.NoError(t, replayTo(t, context.Background(), in, out)) })
		info, err := os.Stat(out)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o644)&^fs.FileMode(mask), info.Mode().Perm(), "umask %03o", mask)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Equal(t, smallDecisions, string(got))
	}
	withUmask(0o022, func() {
		plots := filepath.Join(dir, "plots")
		_, _, err := ratelab(t, "plot", "cold-start", "--chart", "warmup", "--format", "svg", "--out", plots)
		require.NoError(t, err)
		info, err := os.Stat(filepath.Join(plots, "cold-start-warmup.svg"))
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o644), info.Mode().Perm(), "a chart too")
	})
}

func TestOutputToADirectoryIsAClearError(t *testing.T) {
	dir := t.TempDir()
	in := writeTrace(t, dir, smallTrace)
	target := filepath.Join(dir, "somedir")
	require.NoError(t, os.Mkdir(target, 0o755))
	err := replayTo(t, context.Background(), in, target)
	require.Error(t, err)
	assert.Equal(t, "--out "+target+": is a directory; give the path of a file", err.Error())
	assert.Empty(t, names(t, target))
	assert.ElementsMatch(t, []string{"trace.csv", "somedir"}, names(t, dir))

	// plot --out wants a directory: a file there is an error too, and stays as it was.
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	_, _, err = ratelab(t, "plot", "cold-start", "--out", file)
	require.Error(t, err)
	assert.Equal(t, "--out "+file+": is a regular file, not a directory", err.Error())
	_, _, err = ratelab(t, "plot", "--gallery", file)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a directory")
	got, _ := os.ReadFile(file)
	assert.Equal(t, "x", string(got))

	// A chart whose path is a directory.
	plots := filepath.Join(dir, "plots")
	require.NoError(t, os.MkdirAll(filepath.Join(plots, "cold-start-warmup.svg"), 0o755))
	_, _, err = ratelab(t, "plot", "cold-start", "--chart", "warmup", "--format", "svg", "--out", plots)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cold-start-warmup.svg: is a directory")
}

func TestAFailedReplayLeavesTheOldFileAndNoTemporary(t *testing.T) {
	dir := t.TempDir()
	in := writeTrace(t, dir, "t_ns\n0\n5\n3\n")
	out := filepath.Join(dir, "decisions.csv")
	require.NoError(t, os.WriteFile(out, []byte("old\n"), 0o644))
	err := replayTo(t, context.Background(), in, out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "time order")
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(got))
	assert.ElementsMatch(t, []string{"trace.csv", "decisions.csv"}, names(t, dir))

	// A folder that does not exist: one line naming the flag and the path.
	err = replayTo(t, context.Background(), in, filepath.Join(dir, "missing", "out.csv"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing/out.csv: cannot create a file in")
	assert.NotContains(t, err.Error(), ".tmp-", "the temporary name is ratelab's business")
}
