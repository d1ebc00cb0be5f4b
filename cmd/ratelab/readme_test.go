package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/cmpimg"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
)

// docFiles are the README and the guides in docs/, which hold the generated blocks and the
// commands the tests run.
func docFiles(t *testing.T) []string {
	t.Helper()
	guides, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	return append([]string{"../../README.md"}, guides...)
}

// readmeBlock returns the text between <!-- name:begin --> and <!-- name:end --> in the one
// document (the README or a guide in docs/) that has the block.
func readmeBlock(t *testing.T, name string) string {
	t.Helper()
	_, block := docBlock(t, name)
	return block
}

// docBlock is readmeBlock and the path of the document that holds the block.
func docBlock(t *testing.T, name string) (path, block string) {
	t.Helper()
	begin, end := "<!-- "+name+":begin -->", "<!-- "+name+":end -->"
	for _, p := range docFiles(t) {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		text := string(data)
		i, j := strings.Index(text, begin), strings.Index(text, end)
		if i >= 0 && j > i {
			require.Empty(t, path, "two documents have a %s block: %s and %s", name, path, p)
			path, block = p, text[i+len(begin):j]
		}
	}
	require.NotEmpty(t, path, "no document has a %s block", name)
	return path, block
}

// The README's scenario file example is complete and loads as documented.
func TestReadmeScenarioFileExampleLoads(t *testing.T) {
	block := readmeBlock(t, "scenario-files")
	_, rest, ok := strings.Cut(block, "```yaml\n")
	require.True(t, ok)
	example, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)

	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "scenarios", "traces"), 0o755))
	trace, err := os.ReadFile("../../scenarios/traces/api-gateway.csv")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "scenarios", "traces", "api-gateway.csv"), trace, 0o644))
	path := filepath.Join(dir, "checkout.yaml")
	require.NoError(t, os.WriteFile(path, []byte(example), 0o644))
	sc, err := scenarios.LoadFile(path)
	require.NoError(t, err)

	assert.Equal(t, "checkout-peak", sc.Name)
	assert.Equal(t, uint64(42), sc.Seed)
	assert.Equal(t, 30*time.Second, sc.Horizon)
	assert.Len(t, sc.Sources, 7)
	assert.Equal(t, engine.PolicyBackoff, sc.Client.Policy)
	require.Len(t, sc.Lanes, 4)
	assert.Equal(t, 50*time.Millisecond, sc.Lanes[3].MaxWait)
	assert.Equal(t, "bucket + bulkhead", sc.Lanes[2].Label())
	assert.Len(t, sc.Lanes[2].Stack, 2)
	require.NotNil(t, sc.Lanes[2].Client)
	assert.Equal(t, engine.PolicyRetryAfter, sc.Lanes[2].Client.Policy)
	require.NotNil(t, sc.Downstream)
	assert.Len(t, sc.Downstream.Phases, 2)
	assert.Equal(t, filepath.Join(dir, "scenarios", "traces", "api-gateway.csv"), sc.Sources[6].TraceFile, "trace paths are relative to the file")

	out, _, err := ratelab(t, "run", path, "--format", "csv")
	require.NoError(t, err, "the example runs")
	assert.Equal(t, 5, strings.Count(out, "\n"))
}

var update = flag.Bool("update", false, "rewrite the kinds and families blocks from the registry, and doc.go from the commands table")

// The kinds table of docs/SPECS.md is the registry's: a kind added without it fails here.
func TestReadmeKindsBlockIsTheRegistry(t *testing.T) {
	want, err := kindsMarkdown()
	require.NoError(t, err)
	checkGeneratedBlock(t, "kinds", want, "TestReadmeKindsBlock")
}

// The README's short table of kinds is the registry's families, each with its kinds.
func TestReadmeFamiliesBlockIsTheRegistry(t *testing.T) {
	checkGeneratedBlock(t, "families", familiesMarkdown(), "TestReadmeFamiliesBlock")
}

// checkGeneratedBlock fails when the document's block name is not want, naming the test that
// rewrites it, and rewrites it under -update.
func checkGeneratedBlock(t *testing.T, name, want, test string) {
	t.Helper()
	path, got := docBlock(t, name)
	if strings.TrimSpace(got) == strings.TrimSpace(want) {
		return
	}
	if !*update {
		t.Fatalf("%s's %s block is stale; rewrite it with: go test ./cmd/ratelab -run %s -update\nwant:\n%s", path, name, test, want)
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	text := strings.Replace(string(data), "<!-- "+name+":begin -->"+got+"<!-- "+name+":end -->",
		"<!-- "+name+":begin -->\n"+want+"<!-- "+name+":end -->", 1)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
}

// The README's scenario table has one row per built-in scenario, in catalogue order.
func TestReadmeListsEveryScenario(t *testing.T) {
	var rows []string
	for _, line := range strings.Split(readmeBlock(t, "scenarios"), "\n") {
		if name, ok := strings.CutPrefix(line, "| "); ok && !strings.HasPrefix(line, "| ---") && !strings.HasPrefix(line, "| scenario ") {
			rows = append(rows, strings.TrimSpace(strings.SplitN(name, "|", 2)[0]))
		}
	}
	assert.Equal(t, scenarios.Names(), rows)
}

// The README's sweep example is real: its command prints exactly the output shown, and writes
// the image shown.
func TestReadmeSweepExampleIsReal(t *testing.T) {
	block := readmeBlock(t, "sweep")
	_, rest, ok := strings.Cut(block, "```sh\ngo run ./cmd/ratelab ")
	require.True(t, ok)
	command, rest, ok := strings.Cut(rest, "\n```")
	require.True(t, ok)
	_, rest, ok = strings.Cut(rest, "```text\n")
	require.True(t, ok)
	want, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	args := strings.Fields(command)
	require.Equal(t, []string{"--out", "docs/img"}, args[len(args)-2:])
	dir := t.TempDir()
	args[len(args)-1] = dir
	got, stderr, err := ratelab(t, args...)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, filepath.Join(dir, "replay-sweep-refused-pct.png")+"\n", stderr)
	shown, err := os.ReadFile("../../docs/img/replay-sweep-refused-pct.png")
	require.NoError(t, err)
	drawn, err := os.ReadFile(filepath.Join(dir, "replay-sweep-refused-pct.png"))
	require.NoError(t, err)
	same, err := cmpimg.EqualApprox("png", shown, drawn, 0.01)
	require.NoError(t, err)
	assert.True(t, same, "docs/img/replay-sweep-refused-pct.png is stale: rerun the README's command")
}

// The README's translate example is real: each text block is its command's output, with lines
// left out but none changed or moved, and the chart is the one it draws.
func TestReadmeTranslateExampleIsReal(t *testing.T) {
	block := readmeBlock(t, "translate")
	_, rest, ok := strings.Cut(block, "```sh\ngo run ./cmd/ratelab ")
	require.True(t, ok)
	command, rest, ok := strings.Cut(rest, "\n```")
	require.True(t, ok)
	args := strings.Fields(strings.ReplaceAll(command, "'", ""))
	require.Equal(t, []string{"--chart", "docs/img/translate-probe.png"}, args[len(args)-2:])
	path := filepath.Join(t.TempDir(), "translate-probe.png")
	args[len(args)-1] = path
	got, _, err := ratelab(t, args...)
	require.NoError(t, err)
	blocks := 0
	for {
		var part string
		if _, rest, ok = strings.Cut(rest, "```text\n"); !ok {
			break
		}
		part, rest, _ = strings.Cut(rest, "```")
		lines := strings.Split(got, "\n")
		for _, want := range strings.Split(strings.TrimSuffix(part, "\n"), "\n") {
			for len(lines) > 0 && lines[0] != want {
				lines = lines[1:]
			}
			if !assert.NotEmpty(t, lines, "README.md's translate output is stale (rerun its command): %q", want) {
				break
			}
			lines = lines[1:]
		}
		blocks++
	}
	assert.Equal(t, 3, blocks)
	shown, err := os.ReadFile("../../docs/img/translate-probe.png")
	require.NoError(t, err)
	drawn, err := os.ReadFile(path)
	require.NoError(t, err)
	same, err := cmpimg.EqualApprox("png", shown, drawn, 0.01)
	require.NoError(t, err)
	assert.True(t, same, "docs/img/translate-probe.png is stale: rerun the README's command")
}
