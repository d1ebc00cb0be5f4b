package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// binary builds cmd/ratelab once for the package's tests.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		module, err := moduleRoot()
		if err != nil {
			buildErr = err
			return
		}
		dir, err := os.MkdirTemp("", "adversarial-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin, buildErr = Build(module, dir)
	})
	require.NoError(t, buildErr)
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

// TestAdversarialInputs runs the fast subset of the catalogue through the real binary
// (RATELAB_ADVERSARIAL=full: every case) and fails on any panic, internal error, timeout,
// memory exhaustion or clobbered output.
func TestAdversarialInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	syscall.Umask(0o022)
	bin := binary(t)
	work := t.TempDir()
	full := os.Getenv("RATELAB_ADVERSARIAL") == "full"
	cases, err := Select(bin, !full, "")
	require.NoError(t, err)
	r := &Runner{Binary: bin, Timeout: 20 * time.Second, Memory: 3 << 30, Root: filepath.Join(work, "cases")}
	outcomes := r.Run(cases, 2, nil)
	var report strings.Builder
	Report(&report, outcomes, false)
	t.Log("\n" + report.String())
	for _, o := range outcomes {
		if o.Class.Fatal() {
			t.Errorf("%s: %s/%s: %s %s", o.Class, o.Case.Category, o.Case.Name, o.Detail, firstLine(o.Stderr))
		}
	}
}

// The classifier on the outcomes the issue describes, each as ratelab printed it.
func TestJudge(t *testing.T) {
	flag := &Case{Names: []string{"--horizon"}}
	file := &Case{Located: true, Names: []string{"s.yaml"}}
	for _, tc := range []struct {
		c      *Case
		exit   int
		stderr string
		want   Class
	}{
		{flag, 0, "", ClassRan},
		{&Case{Want: WantRefuse}, 0, "", ClassAccepted},
		{flag, 2, "ratelab: --horizon 5: a duration needs a unit, e.g. 5s\n", ClassRefused},
		{flag, 2, "ratelab: a duration needs a unit\n", ClassVague},
		{file, 1, "ratelab: s.yaml:1:1: did not find expected node content\n", ClassRefused},
		{&Case{Want: WantRun}, 1, "ratelab: s.yaml:1:1: no\n", ClassRejected},
		{file, 1, "ratelab: steady: about 324G events (…), over the budget of 10G events: shorten the horizon, or raise the budget with --max-events 330G\n", ClassBudget},
		{file, 2, "panic: invalid argument to Int64N\n\ngoroutine 1 [running]:\nmath/rand/v2.(*Rand).Int64N(…)\n", ClassPanic},
		{file, 2, "runtime: out of memory: cannot allocate 377487360-byte block\nfatal error: out of memory\n\ngoroutine 1 [running]:\n", ClassMemory},
		{file, 1, "ratelab: virtualclock: AdvanceTo(-2562047h47m16.854775808s): the clock at 1s cannot move backwards\n", ClassInternal},
		{file, 1, "ratelab: s.yaml: runtime error: makeslice: len out of range\n", ClassInternal},
		{file, 1, "ratelab: s.yaml:2:3: first line\nand a second\n", ClassInternal},
		{file, 1, "", ClassInternal},
		{file, 139, "", ClassInternal},
		{&Case{Interrupt: time.Second}, 130, "ratelab: interrupted\n", ClassRan},
	} {
		got, _ := judge(tc.c, tc.exit, tc.stderr, false)
		assert.Equal(t, tc.want, got, "exit %d, %q", tc.exit, tc.stderr)
	}
	got, _ := judge(file, 0, "", true)
	assert.Equal(t, ClassTimeout, got)
}

// The harness catches the broken writer the issue found (replay --out renaming its temporary
// file over a FIFO): a stand-in binary that does just that is judged clobbered, and one that
// leaves its temporary file behind too.
func TestHarnessCatchesAClobberingWriter(t *testing.T) {
	dir := t.TempDir()
	for name, script := range map[string]string{
		"renames-over-the-target": "#!/bin/sh\nfor a; do last=$a; done\necho x > .tmp-out && mv .tmp-out \"$last\"\n",
		"leaves-its-temporary":    "#!/bin/sh\nfor a; do last=$a; done\necho x > \".$last.tmp-1\"\n",
	} {
		bin := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(bin, []byte(script), 0o755))
		r := &Runner{Binary: bin, Timeout: 10 * time.Second, Root: filepath.Join(dir, "cases-"+name)}
		for _, c := range outputCases() {
			if !strings.HasPrefix(c.Name, "replay→") || !(strings.HasSuffix(c.Name, "→fifo") || strings.HasSuffix(c.Name, "→symlink-to-file")) {
				continue
			}
			o := r.RunOne(c, 0)
			assert.Equal(t, ClassClobbered, o.Class, "%s on %s: %s", name, c.Name, o.Detail)
		}
	}
}

// The catalogue is generated: every kind's every field is varied, every flag of every
// command gets bad values, and names are unique.
func TestCatalogueCoversTheRegistryAndTheFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	cases, err := Catalogue(binary(t))
	require.NoError(t, err)
	assert.Greater(t, len(cases), 2000)
	seen := map[string]bool{}
	for _, c := range cases {
		key := c.Category + "/" + c.Name
		assert.False(t, seen[key], "duplicate %s", key)
		seen[key] = true
	}
	for _, want := range []string{"spec/sentinel.max_queue=-1ns", "spec/two-counter.window=1ns", "flag/sweep --shard 0/0",
		"flag/plot --width -1", "flag/run --max-memory -1MiB", "trace/replay/t_ns=9223372036854775808", "scenario/overflow/script-2000000h-1000000h",
		"output/replay→fifo", "interrupt/replay-fifo-no-writer", "budget/steady-100000h"} {
		assert.True(t, seen[want], "the catalogue has %s", want)
	}
	fast := FastSubset(cases)
	assert.Less(t, len(fast), len(cases)/4)
}
