package scenarios

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unclosedFlowList is a scenario whose sources list opens with "[" on line 2 and never
// closes, padded with lines to about size bytes.
func unclosedFlowList(size int) []byte {
	var b strings.Builder
	b.WriteString("horizon: 10s\nsources: [\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "  {kind: constant, rate: %d},\n", i+1)
	}
	b.WriteString("limiters: [concurrency:max=1]\n")
	return []byte(b.String())
}

// countReparse counts the bytes firstBadLine parses again while f runs.
func countReparse(t *testing.T, f func()) int {
	t.Helper()
	parsed := 0
	orig := reparse
	reparse = func(prefix []byte) error { parsed += len(prefix); return orig(prefix) }
	defer func() { reparse = orig }()
	f()
	return parsed
}

// Refusing a broken file takes work linear in its size: the search for the bad line parses
// at most a fixed budget again, however many lines the file has (it used to parse every
// prefix: minutes for a few megabytes).
func TestSyntaxErrorSearchIsLinear(t *testing.T) {
	for _, size := range []int{20 << 10, 300 << 10, 1 << 20} {
		data := unclosedFlowList(size)
		var err error
		parsed := countReparse(t, func() { _, err = Load("f.yaml", data) })
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), "f.yaml:2:1: "), "the line of the unclosed [, at %d bytes: %v", len(data), err)
		assert.LessOrEqual(t, parsed, 2*reparseBudget, "%d bytes", len(data))
	}
}

// A file broken near its end is still located exactly: by the search from the end when the
// file fits in the budget, by yaml's own line past it.
func TestSyntaxErrorNearTheEndOfALargeFile(t *testing.T) {
	for _, tc := range []struct {
		size int
		last string
	}{
		{400 << 10, "limiters: [concurrency:max=1\n"}, // an unclosed [ on the last line
		{400 << 10, "\tseed: 1\n"},                    // a tab
		{1200 << 10, "\tseed: 1\n"},
	} {
		var b strings.Builder
		b.WriteString("horizon: 10s\nsources:\n  - kind: script\n    arrivals:\n")
		for i := 0; b.Len() < tc.size; i++ {
			fmt.Fprintf(&b, "      - {at: %dms}\n", i)
		}
		lines := strings.Count(b.String(), "\n")
		b.WriteString(tc.last)
		var err error
		parsed := countReparse(t, func() { _, err = Load("f.yaml", []byte(b.String())) })
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), fmt.Sprintf("f.yaml:%d:1: ", lines+1)), "%d bytes, %q: %v", b.Len(), tc.last, err)
		assert.LessOrEqual(t, parsed, 2*reparseBudget)
	}
}

// BenchmarkRefuseUnclosedFlowList refuses a 2.5 MB file with an unclosed "[" on line 2
// (go test -bench Refuse ./scenarios): a fraction of a second, most of it yaml's own parse.
func BenchmarkRefuseUnclosedFlowList(b *testing.B) {
	data := unclosedFlowList(2500 << 10)
	for b.Loop() {
		if _, err := Load("f.yaml", data); err == nil {
			b.Fatal("accepted")
		}
	}
}
