package main

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The classes section says each class's refusals and p99 latency per lane, fits 80 columns,
// and --assert reads METRIC{class=NAME}.
func TestClassSectionAndAssert(t *testing.T) {
	_, res := runScenario(t, "user-vs-prefetch")
	for _, width := range []int{0, 80} {
		out := classSection(res, width)
		require.Contains(t, out, "classes (refused of offered")
		for _, line := range strings.Split(out, "\n") {
			if width > 0 {
				assert.LessOrEqual(t, ansi.StringWidth(line), width, "%q", line)
			}
		}
		plain := strings.Join(strings.Fields(out), " ")
		assert.Contains(t, plain, "user 0/1958 refused (0%)", "the partitioned bulkhead refuses no user")
		assert.Contains(t, plain, "user 355/1958 refused (18%)", "the plain bulkhead does")
	}
	out, errOut, err := ratelab(t, "run", "user-vs-prefetch", "--assert", "partitioned.refused{class=user} == 0",
		"--assert", "bulkhead.refused%{class=user} > 10")
	require.NoError(t, err)
	assert.Contains(t, out+errOut, "2 assertions held")
	_, _, err = ratelab(t, "run", "user-vs-prefetch", "--assert", "bulkhead.refused{class=user} == 0")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bulkhead has refused{class=user} 355")
	out, _, err = ratelab(t, "run", "server-slowdown")
	require.NoError(t, err)
	assert.NotContains(t, out, "classes (", "no class, no section")
}
