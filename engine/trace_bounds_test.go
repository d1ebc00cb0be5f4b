package engine

// Bounded reading: a line longer than trace.MaxLine is refused, naming its line, on every path,
// having read little more than the cap; and memory (and, on the plain path, allocations) do
// not grow with the trace.

import (
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/internal/tracegen"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/trace"
)

func TestTraceRefusesALineLongerThanTheCap(t *testing.T) {
	for _, tc := range tracegen.LongLines() {
		t.Run(tc.Name, func(t *testing.T) {
			src := &tracegen.EndlessTail{Prefix: tc.Prefix, Tail: tc.Tail}
			sum, err := Replay(src, io.Discard, [][]limiters.Spec{{limiters.ConcurrencySpec{Max: 1}}})
			rows := int(sum.Rows)
			require.Error(t, err)
			assert.Equal(t, tc.Want, err.Error())
			assert.Equal(t, tc.Rows, rows)
			assert.Less(t, src.N, int64(trace.MaxLine+256<<10), "read %d bytes", src.N)
		})
	}
}

// The heap does not grow with the trace's length, on any path; on the plain path, neither
// do the allocations (none per row), for Replay and for Next (whose keys are interned).
func TestTraceMemoryIsFlat(t *testing.T) {
	plain, quoted, seconds := tracegen.KeyedRows() // none allocates per row
	rows := 1_000_000
	if testing.Short() || raceDetector {
		rows = 200_000
	}
	spec, err := ParseStack("token-bucket:capacity=5,rate=50/1s")
	require.NoError(t, err)
	for _, tc := range []struct {
		name, header string
		format       func([]byte, int, int64) []byte
		rows         int
		noAllocs     bool
	}{
		{"plain", "t_ns,permits,key\n", plain, rows, true},
		{"csv", "t_ns,permits,key\n", quoted, rows / 4, false},
		{"general", "t,permits,key\n", seconds, rows / 4, false},
	} {
		{
			t.Run(tc.name, func(t *testing.T) {
				var early, late runtime.MemStats
				early10 := tc.rows / 10
				g := &tracegen.Generated{Header: tc.header, Format: tc.format, Rows: tc.rows, Marks: map[int]*runtime.MemStats{early10: &early, tc.rows - 1000: &late}}
				sum, err := Replay(g, io.Discard, [][]limiters.Spec{spec})
				require.NoError(t, err)
				require.Equal(t, int64(tc.rows), sum.Rows)
				between := int64(tc.rows - 1000 - early10)
				growth := int64(late.HeapAlloc) - int64(early.HeapAlloc)
				t.Logf("%d rows: heap %d → %d bytes, %.4f allocations per row", between, early.HeapAlloc, late.HeapAlloc,
					float64(late.Mallocs-early.Mallocs)/float64(between))
				assert.Less(t, growth, int64(256<<10), "the heap grew by %d bytes over %d rows", growth, between)
				if tc.noAllocs {
					assert.Less(t, late.Mallocs-early.Mallocs, uint64(100), "allocations over %d rows", between)
				}
			})
		}
	}
}
