package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/golden"
)

func runGuarantees(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"guarantees"}, args...), strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func TestGuaranteesList(t *testing.T) {
	out, _, err := runGuarantees(t)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, len(golden.Catalogue())+1)
	assert.True(t, strings.HasPrefix(lines[0], "ID"))
	for i, g := range golden.Catalogue() {
		assert.True(t, strings.HasPrefix(lines[i+1], g.ID+" "), lines[i+1])
		assert.Contains(t, lines[i+1], g.Claim)
	}
}

func TestGuaranteesRun(t *testing.T) {
	g := golden.Catalogue()[0]
	out, _, err := runGuarantees(t, "run", g.ID)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, g.ID+": ok"), out)
	want, err := os.ReadFile("../../golden/" + g.Golden())
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(out, string(want)), "run prints the golden text")
}

func TestGuaranteesUsage(t *testing.T) {
	for _, args := range [][]string{{"run"}, {"run", "nope"}, {"run", "a", "b"}, {"frobnicate"}} {
		_, _, err := runGuarantees(t, args...)
		var usage *usageError
		assert.True(t, errors.As(err, &usage), "%v: want a usage error (exit 2), got %v", args, err)
		if err != nil {
			assert.NotContains(t, err.Error(), "\n", "one line")
		}
	}
}
