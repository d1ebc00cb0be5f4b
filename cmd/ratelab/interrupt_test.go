package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run cancelled half-way (Ctrl-C) says "interrupted", exits 130 and prints nothing of its
// results; plot leaves no file behind.
func TestInterruptedRunPrintsNothing(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", "poisson", "--horizon", "1000h"},
		{"run", "poisson", "--horizon", "1000h", "--format", "json"},
		{"plot", "poisson", "--horizon", "1000h", "--out", dir},
		{"sweep", "poisson", "--horizon", "1000h", "--vary", "token-bucket.capacity=1..3", "--out", dir},
		{"sweep", "poisson", "--horizon", "1000h", "--vary", "token-bucket.capacity=1..3", "--format", "csv"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		var stdout, stderr bytes.Buffer
		start := time.Now()
		err := run(ctx, args, strings.NewReader(""), &stdout, &stderr)
		cancel()
		assert.Less(t, time.Since(start), 15*time.Second, "%v stops promptly (cancelled after 100ms; the bound is for -race on a loaded 2-core machine)", args)
		require.Error(t, err, "%v", args)
		assert.Equal(t, "interrupted", err.Error())
		assert.True(t, errors.Is(err, context.Canceled))
		assert.Equal(t, 130, report(err, io.Discard))
		assert.Empty(t, stdout.String(), "%v: no partial output", args)
		assert.Empty(t, names(t, dir), "%v", args)
	}
}

// The real binary, sent SIGINT (Ctrl-C), SIGTERM or SIGHUP while it runs, or while it waits
// for a scenario or a trace on standard input that never ends: one line on stderr, exit 130
// (143 for SIGTERM, 129 for SIGHUP), nothing on stdout.
func TestBinaryExits130OnCtrlC(t *testing.T) {
	bin := ratelabBinary(t)
	for _, tc := range []struct {
		name  string
		args  []string
		sig   syscall.Signal
		code  int
		says  string
		stdin string // written first: once the program has read it, it is running main
		fifo  string // made in the working directory, opened by nobody else: the open waits
	}{
		{"long run", []string{"run", "poisson", "--horizon", "1000h"}, syscall.SIGINT, 130, "ratelab: interrupted\n", "", ""},
		{"long run, terminated", []string{"run", "poisson", "--horizon", "1000h"}, syscall.SIGTERM, 143, "ratelab: terminated\n", "", ""},
		{"long run, hung up", []string{"run", "poisson", "--horizon", "1000h"}, syscall.SIGHUP, 129, "ratelab: hung up\n", "", ""},
		// replay --out writes beside its target and renames at the end: a hang-up leaves no
		// temporary file (it left .out.csv.tmp-PID-1 and exited 129 without a word).
		{"replay to a file, hung up", []string{"replay", "--in", "-", "--out", "out.csv", "--limiter", "leaky-bucket:rate=1/1s"}, syscall.SIGHUP, 129, "ratelab: hung up\n", "t_ns\n" + strings.Repeat("0\n", 100000), ""},
		// tui --record writes beside its target: interrupted, it left .out.cast.tmp-PID-1
		// (the recording never looked at the signal, and main gave up waiting after 1s).
		{"tui recording, interrupted", []string{"tui", "poisson", "--horizon", "1000h", "--record", "out.cast"}, syscall.SIGINT, 130, "ratelab: interrupted\n", "", ""},
		{"long sweep", []string{"sweep", "poisson", "--horizon", "1000h", "--vary", "token-bucket.capacity=1..3", "--out", "figures"}, syscall.SIGINT, 130, "ratelab: interrupted\n", "", ""},
		{"scenario on stdin", []string{"run", "-"}, syscall.SIGINT, 130, "ratelab: interrupted\n", strings.Repeat("# a comment\n", 20000), ""},
		{"trace on stdin", []string{"replay", "--in", "-", "--limiter", "leaky-bucket:rate=1/1s"}, syscall.SIGINT, 130, "ratelab: interrupted\n", "t_ns\n" + strings.Repeat("0\n", 100000), ""},
		// An open of a FIFO waits in the kernel, where the signal's cancellation does not
		// reach: before, these ignored Ctrl-C until killed (the adversarial harness's
		// interrupt/*-fifo-no-writer). A scenario named by a FIFO is refused before it is
		// opened (TestScenarioFromAFIFOIsRefusedByAnyName).
		{"trace from a FIFO nobody writes", []string{"replay", "--in", "in.csv", "--limiter", "leaky-bucket:rate=1/1s"}, syscall.SIGTERM, 143, "ratelab: terminated\n", "", "in.csv"},
		{"fit of a FIFO nobody writes", []string{"fit", "--in", "in.csv"}, syscall.SIGINT, 130, "ratelab: interrupted\n", "", "in.csv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, tc.args...)
			cmd.Dir = t.TempDir()
			if tc.fifo != "" {
				mkfifo(t, cmd.Dir, tc.fifo)
			}
			stdin, err := cmd.StdinPipe() // held open: standard input never ends
			require.NoError(t, err)
			defer stdin.Close()
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Start())
			// Signal only once main has set up its handling (before, a signal kills the
			// process as it would any Go program): it has read standard input, more than a
			// pipe holds, or it has run a while.
			switch {
			case tc.stdin != "":
				_, err := io.WriteString(stdin, tc.stdin)
				require.NoError(t, err)
			case tc.fifo != "":
				waitForFIFOOpen(t, cmd.Process.Pid) // blocked in the open: no CPU to wait for
			default:
				waitForCPU(t, cmd.Process.Pid, 200*time.Millisecond)
			}
			require.NoError(t, cmd.Process.Signal(tc.sig))
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("%v did not stop on %v", tc.args, tc.sig)
			}
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "%v", err)
			assert.Equal(t, tc.code, exit.ExitCode())
			says := stderr.String()
			if tc.args[0] == "run" && slices.Contains(tc.args, "1000h") {
				// A long run is announced first, its estimate on standard error (even when that
				// is not a terminal): 1000h of poisson is about 6.2G events.
				first, rest, _ := strings.Cut(says, "\n")
				assert.Contains(t, first, "poisson: about 6.2G events")
				says = rest
			}
			assert.Equal(t, tc.says, says)
			if tc.args[0] == "replay" && tc.fifo == "" && !slices.Contains(tc.args, "--out") {
				// Decisions stream to standard output: those made so far are there, in
				// whole rows.
				out := stdout.String()
				assert.True(t, strings.HasPrefix(out, "t_ns,permits,leaky-bucket:rate=1/1s\n0,1,1\n0,1,0\n"), out[:min(len(out), 80)])
				assert.True(t, strings.HasSuffix(out, "0,1,0\n"), "whole rows: %q", out[max(0, len(out)-20):])
			} else {
				assert.Empty(t, stdout.String())
			}
			if tc.fifo == "" {
				assert.Empty(t, names(t, cmd.Dir), "nothing written")
			}
		})
	}
}

// waitForCPU waits until process pid has used d of CPU time (user and system, from
// /proc/PID/stat).
func waitForCPU(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		require.NoError(t, err)
		fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		utime, _ := strconv.Atoi(fields[11]) // fields 14 and 15 of stat, counted after the name
		stime, _ := strconv.Atoi(fields[12])
		if time.Duration(utime+stime)*10*time.Millisecond >= d { // clock ticks of 1/100 s
			return
		}
		require.False(t, time.Now().After(deadline), "process %d never ran %v", pid, d)
		time.Sleep(20 * time.Millisecond)
	}
}

// waitForFIFOOpen waits until one of pid's threads waits in the kernel for a FIFO's other end
// (wchan wait_for_partner): main has set up its signal handling by then. Where /proc does not
// say, it waits a second.
func waitForFIFOOpen(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
		if err != nil || len(tasks) == 0 {
			time.Sleep(time.Second)
			return
		}
		for _, w := range tasks {
			if b, err := os.ReadFile(w); err == nil && strings.Contains(string(b), "wait_for_partner") {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("pid %d never waited to open the FIFO", pid)
}
