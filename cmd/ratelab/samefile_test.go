package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sameFileTrace = "t_ns,permits\n0,1\n1000000,1\n2000000,3\n50000000,1\n"

// sameFileDir is a directory with in.csv (a trace), s.yaml (a scenario reading in.csv), a
// symbolic and a hard link to each.
func sameFileDir(t *testing.T) string {
	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("in.csv", sameFileTrace)
	write("s.yaml", "name: s\nhorizon: 100ms\nsources:\n  - kind: trace\n    file: in.csv\nlimiters:\n  - \"token-bucket:capacity=2,rate=50/1s\"\n")
	for _, name := range []string{"in.csv", "s.yaml"} {
		require.NoError(t, os.Symlink(name, filepath.Join(dir, "sym-"+name)))
		require.NoError(t, os.Link(filepath.Join(dir, name), filepath.Join(dir, "hard-"+name)))
	}
	return dir
}

// unchanged checks that dir's in.csv and s.yaml hold what sameFileDir wrote, and that
// nothing else (a temporary file) appeared beside them.
func unchanged(t *testing.T, dir string, args []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "in.csv"))
	require.NoError(t, err)
	assert.Equal(t, sameFileTrace, string(data), "%v destroyed its input", args)
	data, err = os.ReadFile(filepath.Join(dir, "s.yaml"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), "name: s\n"), "%v destroyed its scenario file", args)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 6, "%v left a file beside its input", args)
}

// Every command refuses an output that is one of its inputs, under its own name, ./name, a
// symbolic link or a hard link, before writing anything: each of these once overwrote the
// input and exited 0.
func TestAnOutputIsNeverAnInput(t *testing.T) {
	dir := sameFileDir(t)
	t.Chdir(dir)
	for _, out := range []string{"in.csv", "./in.csv", "sym-in.csv", "hard-in.csv", dir + "/in.csv"} {
		for _, args := range [][]string{
			{"fit", "--in", "in.csv", "--chart", out},
			{"fit", "--in", "sym-in.csv", "--chart", out},
			{"fit", "s.yaml", "--chart", out}, // the scenario's trace file is an input too
			{"translate", "rate=10/1s,burst=2", "--in", "in.csv", "--chart", out},
			{"translate", "rate=10/1s,burst=2", "--scenario", "s.yaml", "--chart", out},
			{"replay", "--in", "in.csv", "--limiter", "token-bucket:capacity=2,rate=50/1s", "--out", out},
			{"replay", "--in", "hard-in.csv", "--limiter", "token-bucket:capacity=2,rate=50/1s", "--out", out},
			{"tui", "s.yaml", "--record", out},
		} {
			stdout, _, err := ratelab(t, args...)
			require.Error(t, err, "%v", args)
			assert.True(t, isUsage(err), "%v: %v", args, err)
			assert.Contains(t, err.Error(), quoteArg(out)+": the same file as the ", args)
			assert.Contains(t, err.Error(), "ratelab does not write over what it reads: give another path", args)
			assert.Empty(t, stdout, args)
			unchanged(t, dir, args)
		}
	}
	for _, out := range []string{"s.yaml", "./s.yaml", "sym-s.yaml", "hard-s.yaml"} {
		for _, args := range [][]string{{"tui", "s.yaml", "--record", out}, {"tui", "hard-s.yaml", "--record", out}} {
			_, _, err := ratelab(t, args...)
			require.Error(t, err, "%v", args)
			assert.Contains(t, err.Error(), "--record "+out+": the same file as the scenario file ", args)
			unchanged(t, dir, args)
		}
	}
	_, _, err := ratelab(t, "fit", "--in", "in.csv", "--chart", "sym-in.csv")
	assert.Equal(t, "--chart sym-in.csv: the same file as the trace --in in.csv; ratelab does not write over what it reads: give another path", err.Error())
	_, _, err = ratelab(t, "fit", "s.yaml", "--chart", "in.csv")
	assert.Equal(t, "--chart in.csv: the same file as the trace file in.csv of the scenario s; ratelab does not write over what it reads: give another path", err.Error())

	// plot and sweep write DIR/NAME-CHART.EXT: refused when one of those is an input.
	require.NoError(t, os.Link("in.csv", "s-rate.png"))
	require.NoError(t, os.Link("in.csv", "s-sweep-refused-pct.png"))
	for _, args := range [][]string{
		{"plot", "s.yaml", "--out", "."},
		{"plot", "s.yaml", "--out", ".", "--chart", "rate"},
		{"sweep", "s.yaml", "--vary", "token-bucket.capacity=1..3", "--out", dir},
	} {
		_, _, err := ratelab(t, args...)
		require.Error(t, err, "%v", args)
		assert.Contains(t, err.Error(), "--out ", args)
		assert.Contains(t, err.Error(), ": the same file as the trace file ", args)
		data, err := os.ReadFile("in.csv")
		require.NoError(t, err)
		assert.Equal(t, sameFileTrace, string(data), args)
	}
	_, _, err = ratelab(t, "plot", "s.yaml", "--out", ".", "--chart", "timeline")
	require.NoError(t, err, "another chart's file is not an input")
	require.NoError(t, os.Remove("s-timeline.png"))

	// A file given to sweep merge twice, under any name, is refused before it is opened.
	for _, second := range []string{"in.csv", "./in.csv", "sym-in.csv", "hard-in.csv"} {
		_, _, err := ratelab(t, "sweep", "merge", "in.csv", second)
		require.Error(t, err)
		assert.Equal(t, "sweep merge: in.csv and "+second+" are the same file: give each shard once", err.Error())
	}
}

// Standard input and standard output are inputs and outputs too: a replay of standard input
// into the file standard input reads, or a run whose standard output appends to its scenario
// file, is refused before it writes.
func TestStandardStreamsAreNeverBothInputAndOutput(t *testing.T) {
	dir := sameFileDir(t)
	t.Chdir(dir)
	stdin, err := os.Open("in.csv")
	require.NoError(t, err)
	defer stdin.Close()
	var out, errOut bytes.Buffer
	err = run(context.Background(), []string{"replay", "--in", "-", "--limiter", "fixed-window:limit=1,window=1s", "--out", "sym-in.csv"}, stdin, &out, &errOut)
	require.Error(t, err)
	assert.Equal(t, "--out sym-in.csv: the same file as standard input (the trace); ratelab does not write over what it reads: give another path", err.Error())
	unchanged(t, dir, nil)

	for _, args := range [][]string{
		{"run", "s.yaml"}, {"run", "hard-s.yaml"}, {"show", "sym-s.yaml"},
		{"fit", "--in", "in.csv"}, {"replay", "--in", "in.csv", "--limiter", "fixed-window:limit=1,window=1s"},
	} {
		for _, target := range []string{"s.yaml", "in.csv"} {
			if target == "s.yaml" && args[0] == "fit" || target == "s.yaml" && args[0] == "replay" {
				continue
			}
			stdout, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND, 0)
			require.NoError(t, err)
			err = run(context.Background(), args, strings.NewReader(""), stdout, &errOut)
			stdout.Close()
			require.Error(t, err, "%v > %s", args, target)
			assert.True(t, isUsage(err))
			assert.Contains(t, err.Error(), "standard output is the ", args)
			unchanged(t, dir, args)
		}
	}
}

// replay with an empty --out path once wrote nothing anywhere and exited 0.
func TestReplayRefusesAnEmptyOut(t *testing.T) {
	dir := sameFileDir(t)
	_, _, err := ratelab(t, "replay", "--in", filepath.Join(dir, "in.csv"), "--limiter", "fixed-window:limit=1,window=1s", "--out", "")
	require.Error(t, err)
	assert.True(t, isUsage(err))
	assert.Equal(t, "replay: --out '': give a FILE, or - for standard output (the default)", err.Error())
}
