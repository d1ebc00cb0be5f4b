package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A traced run printed as JSON is estimated with each record's state (a sliding window's
// every slot) and the trace's JSON text: 4096 slots are refused up front (they grew to 10 GB
// and died), as are ten 10-slot lanes (estimated 643 MiB, dead at 4 GB); the same file as a
// table, which prints no trace, runs.
func TestTracedJSONRunIsEstimatedWhole(t *testing.T) {
	dir := t.TempDir()
	scenario := func(slots string, lanes int) string {
		var b strings.Builder
		b.WriteString("name: traced\nseed: 1\nhorizon: 2s\ntrace: true\nsources:\n  - kind: poisson\n    rate: 200000\nlimiters:\n")
		for i := range lanes {
			b.WriteString("  - \"sliding-window:limit=" + string(rune('1'+i)) + "00000,window=4096s,slots=" + slots + "\"\n")
		}
		path := filepath.Join(dir, slots+"-"+string(rune('0'+lanes))+".yaml")
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
		return path
	}
	_, _, err := ratelab(t, "run", scenario("4096", 1), "--format", "json")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the trace as JSON")
	assert.Contains(t, err.Error(), "--max-memory")
	_, _, err = ratelab(t, "run", scenario("10", 9), "--format", "json")
	require.Error(t, err, "nine traced lanes of 200,000 records: over 2 GiB as JSON")
	assert.Contains(t, err.Error(), "over the budget of 2 GiB")
	out, _, err := ratelab(t, "run", scenario("4096", 1), "--horizon", "100ms")
	require.NoError(t, err, "as a table the trace is not kept")
	assert.Contains(t, out, "sliding-window")
}
