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
	"github.com/ratelab/ratelab/limiters"
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

// A broken limiter makes `guarantees run` print the failed bound and return an error that is
// not a usage error (exit 1), in one line.
func TestGuaranteesRunFails(t *testing.T) {
	guaranteeFactory = func(s limiters.Spec, c limiters.Clock) (limiters.Limiter, error) {
		if s, ok := s.(limiters.TokenBucketSpec); ok {
			return limiters.NewTokenBucket(s.Capacity+1, s.Rate, c) // τ one interval too large
		}
		return s.New(c)
	}
	defer func() { guaranteeFactory = nil }()
	out, _, err := runGuarantees(t, "run", "token-bucket-burst")
	require.Error(t, err)
	var usage *usageError
	assert.False(t, errors.As(err, &usage), "a broken guarantee is a failure (exit 1), not a usage error")
	assert.NotContains(t, err.Error(), "\n")
	assert.Contains(t, err.Error(), "guarantee token-bucket-burst broken")
	assert.True(t, strings.HasPrefix(out, "token-bucket-burst: FAILED\n"), out)
	assert.Contains(t, out, "admission 4 was at 50ms, expected at 60ms")
}
