package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A budget that would round to 0 is refused, not read as "no limit": --max-events 0.5 once
// started a 324G-event run. Only 0 itself lifts a limit; a count is whole.
func TestBudgetFlagsParseExactly(t *testing.T) {
	for _, c := range []struct{ flag, value, want string }{
		{"--max-events", "0.5", "--max-events 0.5: less than one event, which would round to 0, and 0 means no limit: give 1 or more, or 0 for no limit"},
		{"--max-events", "1e-300", "--max-events 1e-300: less than one event"},
		{"--max-events", "0.0000001k", "less than one event"},
		{"--max-events", "2.5", "--max-events 2.5: not a whole number of events (e.g. 2 or 3)"},
		{"--max-events", "1.0000005M", "not a whole number of events (e.g. 1000000 or 1000001)"},
		{"--max-memory", "0.5", "--max-memory 0.5: less than one byte, which would round to 0, and 0 means no limit"},
		{"--max-memory", "0.0001KiB", "less than one byte"},
		{"--max-memory", "1e-300 B", "less than one byte"},
	} {
		for _, cmd := range [][]string{{"run", "steady"}, {"plot", "steady", "--out", t.TempDir() + "/x.png"}, {"sweep", "steady", "--vary", "token-bucket.capacity=1..3"}, {"fit", "steady"}} {
			_, _, err := ratelab(t, append(cmd, c.flag, c.value)...)
			require.Error(t, err, "%v %s %s", cmd, c.flag, c.value)
			assert.True(t, isUsage(err), "%v: %v", cmd, err)
			assert.Contains(t, err.Error(), c.want, cmd)
		}
	}
	for _, ok := range []struct {
		in     string
		events int64
	}{{"0", 0}, {"1", 1}, {"1.5M", 1500000}, {"5e10", 5e10}, {"0.001k", 1}} {
		n, err := parseCount(ok.in)
		require.NoError(t, err, ok.in)
		assert.Equal(t, ok.events, n, ok.in)
	}
	for _, ok := range []struct {
		in    string
		bytes int64
	}{{"0", 0}, {"1", 1}, {"1.1KiB", 1126}, {"0.5KiB", 512}} {
		n, err := parseSize(ok.in)
		require.NoError(t, err, ok.in)
		assert.Equal(t, ok.bytes, n, ok.in)
	}
}
