package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ratelabIn runs the CLI in-process with stdin as its standard input.
func ratelabIn(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

const smallScenario = "name: small\nhorizon: 2s\nsources:\n  - kind: constant\n    rate: 20\nlimiters:\n  - leaky-bucket:rate=5/1s\n  - \"token-bucket:capacity=3,rate=5/1s\"\n"

// `run -` reads the scenario file from standard input, exactly as from a file.
func TestRunDashReadsTheScenarioFromStdin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "small.yaml")
	require.NoError(t, os.WriteFile(path, []byte(smallScenario), 0o644))
	for _, format := range []string{"table", "csv", "json"} {
		fromFile, _, err := ratelab(t, "run", path, "--format", format)
		require.NoError(t, err)
		fromStdin, stderr, err := ratelabIn(t, smallScenario, "run", "-", "--format", format)
		require.NoError(t, err)
		assert.Empty(t, stderr)
		assert.Equal(t, fromFile, fromStdin, format)
	}
	// A mistake in it is located as in a file, the file being "stdin".
	_, _, err := ratelabIn(t, strings.Replace(smallScenario, "rate: 20", "rate: -20", 1), "run", "-")
	require.Error(t, err)
	assert.False(t, isUsage(err))
	assert.Contains(t, err.Error(), "stdin:5:11: sources[0].rate")
	_, _, err = ratelabIn(t, "", "run", "-")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stdin:1:1: the file is empty")
}

// A scenario file is known by its content: an existing file is read as one whatever its name.
func TestAScenarioFileNeedsNoYAMLSuffix(t *testing.T) {
	dir := t.TempDir()
	want, _, err := ratelabIn(t, smallScenario, "run", "-", "--format", "csv")
	require.NoError(t, err)
	for _, name := range []string{"small", "small.txt", "small.scenario"} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(smallScenario), 0o644))
		got, _, err := ratelab(t, "run", path, "--format", "csv")
		require.NoError(t, err, name)
		assert.Equal(t, want, got, name)
	}
	// A broken one says where, as a .yaml file would.
	broken := filepath.Join(dir, "broken")
	require.NoError(t, os.WriteFile(broken, []byte("horizon: 2s\nsources: [\n"), 0o644))
	_, _, err = ratelab(t, "run", broken)
	require.Error(t, err)
	assert.Contains(t, err.Error(), broken+":")
	// A file that is not a scenario file says so.
	trace := writeTrace(t, dir, smallTrace)
	_, _, err = ratelab(t, "run", trace)
	require.Error(t, err)
	assert.False(t, isUsage(err))
	assert.Equal(t, trace+": not a scenario file (a scenario file is YAML: a mapping of name, sources, limiters…; see docs/SCENARIOS.md)", err.Error())
	_, _, err = ratelab(t, "run", dir)
	require.Error(t, err)
	assert.Equal(t, dir+": is a directory, not a scenario file", err.Error())
	_, _, err = ratelab(t, "run", filepath.Join(dir, "missing"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing: no such file or directory")
}

// A file in the current folder named like a built-in scenario: a scenario file is read (and
// the choice said on stderr); anything else is not in the way of the built-in.
func TestAFileNamedLikeABuiltinScenario(t *testing.T) {
	t.Chdir(t.TempDir())
	builtin, _, err := ratelab(t, "run", "steady", "--format", "csv")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile("steady", []byte("not a scenario\n"), 0o644))
	out, stderr, err := ratelab(t, "run", "steady", "--format", "csv")
	require.NoError(t, err)
	assert.Equal(t, builtin, out)
	assert.Empty(t, stderr)

	require.NoError(t, os.WriteFile("steady", []byte(smallScenario), 0o644))
	out, stderr, err = ratelab(t, "run", "steady", "--format", "csv")
	require.NoError(t, err)
	assert.Contains(t, out, "leaky-bucket:rate=5/1s")
	assert.Equal(t, "ratelab: steady: reading the scenario file steady, not the built-in scenario steady\n", stderr)
	_, stderr, err = ratelab(t, "run", "./steady", "--format", "csv")
	require.NoError(t, err)
	assert.Empty(t, stderr, "./steady can only be the file")
}

// `replay --in -` reads the trace from standard input and `--out -` writes the decisions to
// standard output (the summary stays on stderr); the result is the files' byte for byte.
func TestReplayDashIsStdinAndStdout(t *testing.T) {
	dir := t.TempDir()
	in := writeTrace(t, dir, smallTrace)
	out := filepath.Join(dir, "decisions.csv")
	_, fileSummary, err := ratelab(t, "replay", "--in", in, "--out", out, "--limiter", "leaky-bucket:rate=100/1s")
	require.NoError(t, err)
	stdout, stderr, err := ratelabIn(t, smallTrace, "replay", "--in", "-", "--out", "-", "--limiter", "leaky-bucket:rate=100/1s")
	require.NoError(t, err)
	assert.Equal(t, smallDecisions, stdout)
	assert.Equal(t, fileSummary, stderr)
	stdout, _, err = ratelabIn(t, smallTrace, "replay", "--in", "-", "--limiter", "leaky-bucket:rate=100/1s")
	require.NoError(t, err)
	assert.Equal(t, smallDecisions, stdout, "--out defaults to standard output")
	_, err = os.Stat("-")
	assert.True(t, os.IsNotExist(err), "no file named -")
}

// `plot --out -` writes one chart to standard output; several, or the gallery, cannot go there.
func TestPlotDashWritesOneChartToStdout(t *testing.T) {
	out, _, err := ratelab(t, "plot", "burst-after-idle", "--chart", "rate", "--format", "svg", "--out", "-")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "<?xml") || strings.HasPrefix(out, "<svg"), out[:min(len(out), 40)])
	dir := t.TempDir()
	path := filepath.Join(dir, "x")
	_, _, err = ratelab(t, "plot", "burst-after-idle", "--chart", "rate", "--format", "svg", "--out", path)
	require.NoError(t, err)
	file, err := os.ReadFile(filepath.Join(path, "burst-after-idle-rate.svg"))
	require.NoError(t, err)
	assert.Equal(t, string(file), out, "the same image as plot writes to a file")

	for _, args := range [][]string{
		{"plot", "burst-after-idle", "--out", "-"},
		{"plot", "burst-after-idle", "--chart", "rate", "--chart", "state", "--out", "-"},
		{"plot", "--gallery", "-"},
	} {
		_, _, err := ratelab(t, args...)
		require.Error(t, err, "%v", args)
		assert.True(t, isUsage(err), "%v: %v", args, err)
	}
	_, err = os.Stat("-")
	assert.True(t, os.IsNotExist(err), "no file or folder named -")
}

// The real binary, with pipes for its streams: `run -` and `replay --in - --out -` create
// nothing named - in the folder they run in.
func TestBinaryDashCreatesNoFileNamedDash(t *testing.T) {
	bin := ratelabBinary(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"run", "-", "--format", "csv"}, smallScenario, "leaky-bucket:rate=5/1s,"},
		{[]string{"replay", "--in", "-", "--out", "-", "--limiter", "leaky-bucket:rate=100/1s"}, smallTrace, smallDecisions},
		{[]string{"plot", "-", "--chart", "rate", "--out", "-"}, smallScenario, "\x89PNG"},
	} {
		cmd := exec.Command(bin, tc.args...)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(tc.stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "%v: %s", tc.args, stderr.String())
		assert.Contains(t, string(out), tc.want, "%v", tc.args)
		assert.Empty(t, names(t, dir), "%v", tc.args)
	}
}
