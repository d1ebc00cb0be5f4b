package trace

// Bounded reading: a line longer than MaxLine is refused, naming its line, on every path,
// having read little more than the cap; and memory (and, on the plain path, allocations) do
// not grow with the trace.

import (
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/internal/tracegen"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTraceRefusesALineLongerThanTheCap(t *testing.T) {
	for _, tc := range tracegen.LongLines() {
		t.Run(tc.Name, func(t *testing.T) {
			src := &tracegen.EndlessTail{Prefix: tc.Prefix, Tail: tc.Tail}
			res := readWith(func() (nexter, error) { return NewReader(src) })
			require.Error(t, res.err)
			assert.Equal(t, tc.Want, res.err.Error())
			assert.Equal(t, tc.Rows, len(res.rows))
			assert.Less(t, src.N, int64(MaxLine+256<<10), "read %d bytes", src.N)
		})
	}
}

// A line of exactly MaxLine bytes (its newline aside) is read, on every path.
func TestTraceReadsALineOfTheCap(t *testing.T) {
	for _, tc := range []struct{ name, header, row string }{
		{"plain", "t_ns,permits,key", "5,1,"},
		{"general", "t_ns,key,permits", "5,"},
		{"csv", "t_ns,permits,key", `5,1,"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, crlf := range []bool{false, true} {
				pad := MaxLine - len(tc.row) - strings.Count(tc.row, `"`)
				if crlf {
					pad--
				}
				key := strings.Repeat("k", pad)
				line := tc.row + key + strings.Repeat(`"`, strings.Count(tc.row, `"`))
				eol := "\n"
				if crlf {
					eol = "\r\n"
				}
				require.Equal(t, MaxLine, len(line)+len(eol)-1)
				rows, err := readAll(t, tc.header+"\n"+line+eol+"6,1\n")
				require.NoError(t, err)
				require.Len(t, rows, 2)
				assert.Equal(t, key, rows[0].Key)
				_, err = readAll(t, tc.header+"\n"+line+"k"+eol)
				assert.EqualError(t, err, "line 2: the line is longer than 1 MiB (1048576 bytes)")
			}
		})
	}
}

// The heap does not grow with the trace's length, on any path; on the plain path, neither
// do the allocations (none per row), for Next (whose keys are interned; engine tests Replay the same way).
func TestTraceMemoryIsFlat(t *testing.T) {
	plain, quoted, seconds := tracegen.KeyedRows() // none allocates per row
	keys := make([]string, 100)                    // the keys they write, made before the rows are counted
	for i := range keys {
		keys[i] = "tenant-" + strconv.Itoa(i)
	}
	rows := 1_000_000
	if testing.Short() || raceDetector {
		rows = 200_000
	}
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
				{
					r, err := NewReader(g)
					require.NoError(t, err)
					n := 0
					for ; ; n++ {
						row, err := r.Next()
						if err == io.EOF {
							break
						}
						require.NoError(t, err)
						if row.Key != keys[n%100] {
							require.Equal(t, keys[n%100], row.Key)
						}
					}
					require.Equal(t, tc.rows, n)
				}
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
