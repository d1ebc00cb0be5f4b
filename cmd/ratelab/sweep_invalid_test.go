package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A sweep with invalid cells writes every cell (the table says "invalid" and lists why, the
// CSV gives each its row and reason), then fails with a one-line summary: exit 1, not a
// usage error. Its shards succeed, and their merge is the same bytes and the same failure.
func TestSweepWithInvalidCellsGoesOnAndFails(t *testing.T) {
	args := []string{"sweep", "fleet", "--vary", "token-bucket.capacity=5,10,15,30"}
	out, _, err := ratelab(t, args...)
	require.Error(t, err)
	assert.False(t, isUsage(err))
	assert.Equal(t, 1, report(err, &strings.Builder{}))
	assert.Equal(t, "sweep: 2 of 24 cells invalid, not run: the first, cell 8 (split, token-bucket.capacity=5): capacity=5 is not a multiple of 3 instances: each share would round and change the global limit; each invalid cell's row gives its reason", err.Error())
	assert.Contains(t, out, "                      5         49.9      0  invalid ")
	assert.Contains(t, out, "invalid: 2 of 24 cells did not run, the scenario refusing their lane:\n  split, 2 cells (capacity 5, 10): capacity is not a multiple of 3 instances")

	csvOut, _, err := ratelab(t, append(args, "--format", "csv")...)
	require.Error(t, err)
	lines := strings.Split(strings.TrimSuffix(csvOut, "\n"), "\n")
	require.Len(t, lines, 25, "a header and every cell")
	assert.True(t, strings.HasSuffix(lines[0], ",overshoot,error"))
	invalid := 0
	for _, l := range lines[1:] {
		if strings.HasSuffix(l, ",") {
			continue // ran: an empty error
		}
		invalid++
		assert.Contains(t, l, ",split,")
		assert.Contains(t, l, "is not a multiple of 3 instances")
	}
	assert.Equal(t, 2, invalid)

	dir := t.TempDir()
	var files []string
	for _, shard := range []string{"0/2", "1/2"} {
		part, stderr, err := ratelab(t, append(args, "--shard", shard)...)
		require.NoError(t, err, "a shard with an invalid cell succeeds")
		assert.Contains(t, stderr, "cells invalid")
		path := filepath.Join(dir, shard[:1]+".csv")
		require.NoError(t, os.WriteFile(path, []byte(part), 0o644))
		files = append(files, path)
	}
	merged, _, err := ratelab(t, "sweep", "merge", files[1], files[0])
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 of 24 cells invalid")
	assert.Equal(t, csvOut, merged)
	table, _, err := ratelab(t, "sweep", "merge", files[0], files[1], "--format", "table")
	require.Error(t, err)
	assert.Equal(t, out, table)
}
