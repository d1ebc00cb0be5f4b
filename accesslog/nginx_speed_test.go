package accesslog_test

import (
	"io"
	"runtime"
	"testing"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/stretchr/testify/require"
)

// Once warm — its reorder window's rows held in slots it reuses — reading an nginx combined
// log allocates nothing per row: 20 runs of 1000 rows, record by record (Reader.Next), row by
// row as replay reads them (Reader.NextRow) and as the CSV text other readers read
// (Input.Read), allocate less than once per 1000 rows.
func TestNginxCombinedAllocatesNothingPerRowOnceWarm(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector allocates")
	}
	in, err := accesslog.Open(newCombinedGen(-1), accesslog.Options{Format: "combined"})
	require.NoError(t, err)
	rd := in.Log()
	next := func(rows int) {
		for range rows {
			if _, err := rd.Next(); err != nil {
				t.Fatal(err)
			}
		}
	}
	next(3 * benchLogRate) // three seconds of stamps: the window's slots exist
	allocs := testing.AllocsPerRun(20, func() { next(1000) })
	require.Zero(t, allocs, "allocations per 1000 rows read by Next, once warm")

	// As engine.Replay reads a log: row by row (Reader.NextRow).
	rows, err := accesslog.Open(newCombinedGen(-1), accesslog.Options{Format: "combined"})
	require.NoError(t, err)
	nextRow := func(n int) {
		for range n {
			if _, _, _, _, err := rows.Log().NextRow(); err != nil {
				t.Fatal(err)
			}
		}
	}
	nextRow(3 * benchLogRate)
	allocs = testing.AllocsPerRun(20, func() { nextRow(1000) })
	require.Zero(t, allocs, "allocations per 1000 rows read by NextRow, once warm")

	text, err := accesslog.Open(newCombinedGen(-1), accesslog.Options{Format: "combined"})
	require.NoError(t, err)
	buf := make([]byte, 1000*24) // about 1000 rows of "t_ns,1,10.0.N.M\n"
	read := func() {
		if _, err := io.ReadFull(text, buf); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 * benchLogRate / 1000 {
		read()
	}
	allocs = testing.AllocsPerRun(20, read)
	require.Zero(t, allocs, "allocations per 24 KB of CSV text (about 1000 rows), once warm")
}

// Memory stays flat however long the log: the live heap after 2,000,000 rows of a combined
// log generated as it is read is within 1 MiB of the heap after 1,000,000 (the reader holds a
// second of rows, its reorder window, whatever came before).
func TestNginxCombinedMemoryIsFlat(t *testing.T) {
	if raceDetector || testing.Short() {
		t.Skip("2,000,000 rows: not under -race or -short")
	}
	in, err := accesslog.Open(newCombinedGen(-1), accesslog.Options{Format: "combined"})
	require.NoError(t, err)
	rd := in.Log()
	heapAfter := func(rows int) uint64 {
		for range rows {
			if _, err := rd.Next(); err != nil {
				t.Fatal(err)
			}
		}
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	first := heapAfter(1_000_000)
	second := heapAfter(1_000_000)
	t.Logf("live heap after 1,000,000 rows: %d B; after 2,000,000: %d B", first, second)
	require.Less(t, int64(second)-int64(first), int64(1<<20), "the heap grew by more than 1 MiB over the second 1,000,000 rows")
	runtime.KeepAlive(in)
}
