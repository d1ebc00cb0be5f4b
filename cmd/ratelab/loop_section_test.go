package main

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/assert"
)

// The loop section says retry-herd's measures — the herd of 400 at 10.5s, 2000× the mean,
// time to success 20.4s at the median and 40s at the 99th percentile — fits 80 columns by
// putting each lane's items under its name, and is absent for a scenario whose clients
// drop.
func TestLoopSectionSaysTheLoopAndFits80Columns(t *testing.T) {
	sc, res := runScenario(t, "retry-herd")
	wide := loopSection(sc, res, 0)
	assert.Contains(t, wide, "Retry-After obeyed       goodput 10/s  amplification 3.00  herd 400 in 10ms at 10.5s (×2000)  success p50 20.4s p99 40s  latency p50 20.4s p99 40s")
	assert.Contains(t, wide, "herd 4 in 10ms at 10.9s (×20)")
	narrow := loopSection(sc, res, 80)
	for _, line := range strings.Split(narrow, "\n") {
		assert.LessOrEqual(t, ansi.StringWidth(line), 80, line)
	}
	assert.Contains(t, narrow, "  Retry-After obeyed\n")
	assert.Contains(t, narrow, "success p50 20.4s p99 40s")

	sc, res = runScenario(t, "retry-herd", "token-bucket:capacity=10,rate=10/1s")
	sc.Client.Policy = "drop"
	assert.Empty(t, loopSection(sc, res, 80))
}
