package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sample = `goos: linux
BenchmarkAcquireAt/kind=floor/path=admit-2         	100	         2.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkAcquireAt/kind=floor/path=admit-2         	100	         3.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkAcquireAt/kind=floor/path=admit-2         	100	         2.50 ns/op	       0 B/op	       0 allocs/op
BenchmarkAcquireAt/kind=token-bucket/path=admit-2  	100	         5.00 ns/op	         1.000 admits/op	       0 B/op	       0 allocs/op
BenchmarkAcquireAt/kind=token-bucket/path=admit-2  	100	         6.00 ns/op	         1.000 admits/op	       0 B/op	       0 allocs/op
BenchmarkRunSixLanes     	       4	 282578408 ns/op	       135.3 cpu-ns/event	         0.2876 cpu/wall	       470.7 ns/event
BenchmarkRunSixLanes-2   	       3	 371311009 ns/op	       131.8 cpu-ns/event	         0.2130 cpu/wall	       235.0 ns/event
PASS
`

// Medians (odd and even counts), ranges, ratios of medians with the extremes' range, and
// the GOMAXPROCS suffix kept apart only where it differs.
func TestParseAndRatios(t *testing.T) {
	r := results{}
	require.NoError(t, r.parse(strings.NewReader(sample)))
	floor := r.ns("AcquireAt/kind=floor/path=admit")
	assert.Equal(t, stat{median: 2.5, lo: 2, hi: 3, n: 3}, floor)
	tb := r.ns("AcquireAt/kind=token-bucket/path=admit")
	assert.Equal(t, stat{median: 5.5, lo: 5, hi: 6, n: 2}, tb)
	assert.Equal(t, "2.20× (1.67–3.00)", ratio(tb, floor))
	assert.Equal(t, "2.50 ns (2.00–3.00)", dur(floor))
	assert.Equal(t, 470.7, r.get("RunSixLanes", "ns/event").median, "no suffix: GOMAXPROCS 1 in a -cpu 1,2 run")
	assert.Equal(t, 235.0, r.get("RunSixLanes/cpu=2", "ns/event").median)
	assert.Equal(t, "–", ratio(r.ns("nothing"), floor))

	report := r.report("a test box", loadSentence("0.2 1.5"), "plot: 10 requests")
	assert.Contains(t, report, "| token bucket | 2.20× (1.67–3.00) |")
	assert.Contains(t, report, "on a test box:\nthe 1-minute load average stayed between 0.2 and 1.5 on its 2 cores (2 samples)")
	assert.Contains(t, report, "plot: 10 requests")
}

// The report says the load the benchmarks ran under, as sampled, and reads the cores' speed-up
// as measured only when the second core was the benchmark's.
func TestLoadAndCores(t *testing.T) {
	assert.Contains(t, loadSentence("8 21 12.5"), "shared with other jobs: the 1-minute load average was 8 to 21 on its 2 cores (3 samples)")
	assert.Equal(t, "; the machine's load was not sampled", loadSentence(""))
	r := results{}
	require.NoError(t, r.parse(strings.NewReader(sample)))
	require.Equal(t, 0.213, r.get("RunSixLanes/cpu=2", "cpu/wall").median)
	assert.Contains(t, r.report("a test box", "", ""), "other jobs had the second core, and the speed-up was not\nmeasured")
	r["RunSixLanes/cpu=2"]["cpu/wall"] = []float64{1.81, 1.83, 1.84}
	assert.NotContains(t, r.report("a test box", "", ""), "other jobs had the second core")
}

func TestSpliceReplacesOnlyTheSection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	require.NoError(t, os.WriteFile(path, []byte("# x\n<!-- performance:begin -->\nold\n<!-- performance:end -->\ntail\n"), 0o644))
	require.NoError(t, splice(path, "new\n"))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "# x\n<!-- performance:begin -->\nnew\n<!-- performance:end -->\ntail\n", string(data))
	require.NoError(t, os.WriteFile(path, []byte("no markers\n"), 0o644))
	assert.ErrorContains(t, splice(path, "new\n"), "no <!-- performance:begin -->")
}
