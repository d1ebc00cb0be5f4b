package sweep

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// synthRow is cell c of a made-up sweep of n cells: rows that read back and add up, made
// without running anything, for merges of many cells.
func synthRow(c, n int) Row {
	r := Row{Sweep: "5eed5eed5eed5eed", Scenario: "synthetic", Seed: 1, Horizon: time.Second, Cell: c, Cells: n,
		Lane: "token-bucket:capacity=10,rate=100/1s", Spec: "token-bucket:capacity=" + strconv.Itoa(c+1) + ",rate=100/1s"}
	r.Fields[0], r.Values[0] = "token-bucket.capacity", strconv.Itoa(c+1)
	r.Offered, r.Admitted, r.Refused = 100, int64(min(c+1, 100)), int64(100-min(c+1, 100))
	r.Bound, r.Keys, r.Fairness = -1, 3, 1/(1+float64(c%7))
	r.Nominal = limiters.Rate{Permits: 100, Window: time.Second}
	return r
}

// shardGen is shard i of k of a synthetic sweep of n cells as CSV, made as it is read: no
// more than a line of it is ever in memory.
type shardGen struct {
	cell, step, cells int
	buf               bytes.Buffer
	w                 *CSVWriter
	done              bool
}

func newShardGen(i, k, n int) *shardGen {
	g := &shardGen{cell: i, step: k, cells: n}
	g.w = NewCSVWriter(&g.buf)
	return g
}

func (g *shardGen) Read(p []byte) (int, error) {
	for g.buf.Len() == 0 {
		switch {
		case g.cell < g.cells:
			g.w.Write(synthRow(g.cell, g.cells))
			g.cell += g.step
		case g.done:
			return 0, io.EOF
		default:
			g.done = true
		}
		g.w.Flush()
	}
	return g.buf.Read(p)
}

func shardReaders(k, n int, skip ...int) []*CSVReader {
	var out []*CSVReader
	for i := range k {
		if !containsInt(skip, i) {
			out = append(out, NewCSVReader(newShardGen(i, k, n), fmt.Sprintf("shard-%d.csv", i)))
		}
	}
	return out
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// heapNow is the live heap after a collection.
func heapNow() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// MergeCSV of 50000 cells in 4 shards writes the bytes of the whole sweep's CSV in cell order
// (the same hash as WriteCSV of every row), and its live heap does not grow from the 1000th
// row to the last: a row of each shard at a time. Collecting the rows instead, as Merge did
// for every merge, grows it by tens of MB: the measure sees the difference.
func TestMergeCSVMemoryIsFlat(t *testing.T) {
	const cells, shards = 50_000, 4
	whole := sha256.New()
	all := NewCSVWriter(whole)
	for c := range cells {
		require.NoError(t, all.Write(synthRow(c, cells)))
	}
	require.NoError(t, all.Flush())

	out := sha256.New()
	w := NewCSVWriter(out)
	var early, late uint64
	rows := 0
	err := MergeCSV(shardReaders(shards, cells), func(r Row) error {
		require.Equal(t, rows, r.Cell)
		rows++
		switch rows {
		case 1000:
			early = heapNow()
		case cells:
			late = heapNow()
		}
		return w.Write(r)
	})
	require.NoError(t, err)
	require.NoError(t, w.Flush())
	assert.Equal(t, cells, rows)
	assert.Equal(t, whole.Sum(nil), out.Sum(nil), "the merged CSV is the one-machine CSV")
	grown := int64(late) - int64(early)
	t.Logf("streaming: live heap %d KiB at row 1000, %d KiB at row %d", early>>10, late>>10, cells)
	assert.Less(t, grown, int64(256<<10), "the live heap grew by %d bytes over %d rows", grown, cells-1000)

	// The control: keeping every row, as a table or a figure must.
	var kept []Row
	rows = 0
	err = MergeCSV(shardReaders(shards, cells), func(r Row) error {
		kept = append(kept, r)
		rows++
		switch rows {
		case 1000:
			early = heapNow()
		case cells:
			late = heapNow()
		}
		return nil
	})
	require.NoError(t, err)
	t.Logf("keeping the rows: live heap %d KiB at row 1000, %d KiB at row %d", early>>10, late>>10, cells)
	assert.Greater(t, int64(late)-int64(early), int64(10<<20), "the measure sees rows kept")
	runtime.KeepAlive(kept)
}

// MergeCSV refuses what Merge refuses, in Merge's words, and a shard whose rows are out of
// cell order where the row stands; after a missing cell it emits nothing more.
func TestMergeCSVRefusals(t *testing.T) {
	const cells = 20
	emitted := 0
	count := func(Row) error { emitted++; return nil }
	err := MergeCSV(shardReaders(3, cells, 1), count)
	assert.EqualError(t, err, "sweep merge: 13 of 20 cells, missing 1, 4, 7, 10, 13, …: a shard left out?")
	assert.Equal(t, 1, emitted, "cell 0 only: after cell 1 is found missing nothing is emitted")

	emitted = 0
	err = MergeCSV(shardReaders(4, cells, 3), count)
	assert.EqualError(t, err, "sweep merge: 15 of 20 cells, missing 3, 7, 11, 15, 19: a shard left out?")

	twice := append(shardReaders(2, cells), NewCSVReader(newShardGen(1, 2, cells), "again.csv"))
	err = MergeCSV(twice, count)
	assert.EqualError(t, err, "sweep merge: cell 1 is in shard-1.csv and in again.csv: a shard given twice, or shards of different --shard counts")

	// Rows out of order in one shard: cells 0, 2, 1.
	var b bytes.Buffer
	require.NoError(t, WriteCSV(&b, []Row{synthRow(0, 3), synthRow(2, 3), synthRow(1, 3)}))
	err = MergeCSV([]*CSVReader{NewCSVReader(&b, "mixed.csv")}, count)
	assert.EqualError(t, err, "sweep merge: mixed.csv:4: cell 1 after cell 2: a shard's rows are in cell order (as ratelab sweep --shard writes them)")

	// Another sweep's rows.
	other := synthRow(1, cells)
	other.Sweep = "0123456789abcdef"
	b.Reset()
	require.NoError(t, WriteCSV(&b, []Row{other}))
	err = MergeCSV([]*CSVReader{shardReaders(2, cells)[0], NewCSVReader(&b, "other.csv")}, count)
	assert.EqualError(t, err, "sweep merge: shard-0.csv cell 0 is of sweep 5eed5eed5eed5eed (synthetic, 20 cells), other.csv cell 1 of sweep 0123456789abcdef (synthetic, 20 cells): shards of different sweeps")

	// No rows at all, and a file that is not a sweep CSV, named.
	err = MergeCSV([]*CSVReader{NewCSVReader(strings.NewReader(strings.Join(Header, ",")+"\n"), "empty.csv")}, count)
	assert.EqualError(t, err, "sweep merge: no rows in empty.csv")
	err = MergeCSV([]*CSVReader{NewCSVReader(strings.NewReader("t_ns\n1\n"), "trace.csv")}, count)
	assert.EqualError(t, err, "trace.csv:1: not a sweep CSV: the header is not ratelab sweep's (sweep,scenario,seed,horizon_ns,…)")
}

// BenchmarkMergeCSV merges 4 synthetic shards of 10000 and of 100000 cells: B/op grows with
// the cells (each row is read and parsed), the live heap at the end (live-KiB) does not.
//
//	go test ./sweep -run X -bench MergeCSV -benchmem -benchtime 3x
func BenchmarkMergeCSV(b *testing.B) {
	for _, cells := range []int{10_000, 100_000} {
		b.Run(strconv.Itoa(cells), func(b *testing.B) {
			b.ReportAllocs()
			var live uint64
			for b.Loop() {
				w := NewCSVWriter(io.Discard)
				rows := 0
				err := MergeCSV(shardReaders(4, cells), func(r Row) error {
					if rows++; rows == cells {
						live = heapNow()
					}
					return w.Write(r)
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(live>>10), "live-KiB")
			b.ReportMetric(float64(cells*b.N)/b.Elapsed().Seconds(), "cells/s")
		})
	}
}

// MergeCSV trusts no row: a row whose parameters are not its spec's, a value outside its
// field's domain, a spec that is not a limiter stack (shell text), a changed scenario column,
// a control byte, a cell that is not its lane's template with its own values, and a lane that
// comes back are refused with the shard's name and line, and nothing after is emitted.
func TestMergeCSVValidatesRows(t *testing.T) {
	const cells = 4
	for _, c := range []struct {
		name   string
		change func(r *Row)
		want   string
	}{
		{"a parameter changed", func(r *Row) { r.Values[0] = "999" },
			`a.csv:3:112: spec: the cell's parameters token-bucket.capacity=999 make the spec "token-bucket:capacity=999,rate=100/1s", not "token-bucket:capacity=2,rate=100/1s"`},
		{"NaN", func(r *Row) { r.Values[0] = "NaN" }, `a.csv:3:106: x: "NaN" is not a value of token-bucket.capacity: `},
		{"negative", func(r *Row) { r.Values[0], r.Spec = "-1", "token-bucket:capacity=-1,rate=100/1s" }, `a.csv:3:111: spec: not a limiter stack: limiter spec "token-bucket:capacity=-1,rate=100/1s": capacity=-1: must be at least 1`},
		{"shell text", func(r *Row) { r.Spec = "$(rm -rf ~)" }, `a.csv:3:110: spec: not a limiter stack: limiter spec "$(rm -rf ~)": unknown kind`},
		{"scenario changed", func(r *Row) { r.Scenario = "other" },
			`sweep merge: a.csv:3: cell 1's scenario is "other", where a.csv cell 0 of the same sweep 5eed5eed5eed5eed has "synthetic": a row was changed`},
		{"seed changed", func(r *Row) { r.Seed = 2 }, `sweep merge: a.csv:3: cell 1's seed is "2", where a.csv cell 0`},
		{"a NUL", func(r *Row) { r.Lane = "token-bucket\x00" }, `a.csv:3:45: lane: "token-bucket\x00" holds the control character U+0000: a sweep writes none`},
		{"an escape", func(r *Row) { r.Scenario = "\x1b[2Jsynthetic" }, `a.csv:3:18: scenario: "\x1b[2Jsynthetic" holds the control character U+001B`},
		{"not UTF-8", func(r *Row) { r.Values[0] = "2\xff" }, `a.csv:3:106: x: "2\xff" is not UTF-8 text`},
		{"not an ID", func(r *Row) { r.Sweep = "5eed5eed5eed5eeZ" }, `a.csv:3:1: sweep: "5eed5eed5eed5eeZ" is not a sweep's ID (16 hex digits)`},
		{"another template", func(r *Row) {
			r.Spec, r.Nominal = "token-bucket:capacity=2,rate=999/1s", limiters.Rate{Permits: 999, Window: time.Second}
		},
			`sweep merge: a.csv:3: cell 1 is not its lane's template with its own parameters: the cell's parameters token-bucket.capacity=2 make the spec "token-bucket:capacity=2,rate=100/1s", not "token-bucket:capacity=2,rate=999/1s"`},
		{"nominal rate", func(r *Row) { r.Nominal = limiters.Rate{Permits: 7, Window: time.Second} }, `nominal_rate: "7/1s" is not the first stage's nominal rate ("100/1s")`},
		{"a y value without its field", func(r *Row) { r.Values[1] = "5" }, `a.csv:3:109: y: "5" without a field: y_field is empty`},
		{"a field that is not one", func(r *Row) { r.Fields[0] = "capacity" }, `x_field: "capacity" is not TARGET.FIELD`},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows := []Row{synthRow(0, cells), synthRow(1, cells), synthRow(2, cells), synthRow(3, cells)}
			c.change(&rows[1])
			var b bytes.Buffer
			require.NoError(t, WriteCSV(&b, rows))
			emitted := 0
			err := MergeCSV([]*CSVReader{NewCSVReader(&b, "a.csv")}, func(Row) error { emitted++; return nil })
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.LessOrEqual(t, emitted, 1, "nothing past the bad row")
		})
	}

	// A lane that comes back after another.
	lane := func(c int, name string) Row {
		r := synthRow(c, cells)
		r.Lane = name
		return r
	}
	var b bytes.Buffer
	require.NoError(t, WriteCSV(&b, []Row{lane(0, "a"), lane(1, "b"), lane(2, "a"), lane(3, "b")}))
	err := MergeCSV([]*CSVReader{NewCSVReader(&b, "lanes.csv")}, func(Row) error { return nil })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sweep merge: lanes.csv:4: cell 2 is of lane a again, after lane b: a sweep's cells run lane by lane")

	// The rows a sweep writes pass: a real grid of two dimensions, two lanes and a keyed stage.
	sc := &engine.Scenario{Name: "real", Seed: 3, Horizon: time.Second, Client: engine.Client{Policy: engine.PolicyDrop},
		Sources: []engine.Source{{Kind: engine.SourceConstant, Rate: 50}}}
	for _, spec := range []string{"token-bucket:capacity=5,rate=20/1s", "keys(max=10,evict=lru):token-bucket:capacity=3,rate=10/1s+concurrency:max=4"} {
		stack, err := engine.ParseStack(spec)
		require.NoError(t, err)
		sc.Lanes = append(sc.Lanes, engine.LaneSpec{Stack: stack})
	}
	capacity, err := ParseDimension("token-bucket.capacity=1..9", Steps{N: 3})
	require.NoError(t, err)
	rate, err := ParseDimension("token-bucket.rate=10/1s..40/1s", Steps{N: 2})
	require.NoError(t, err)
	g, err := New(sc, []Dimension{capacity, rate})
	require.NoError(t, err)
	rows, err := Run(context.Background(), g, Options{Workers: 1})
	require.NoError(t, err)
	b.Reset()
	require.NoError(t, WriteCSV(&b, rows))
	var merged []Row
	require.NoError(t, MergeCSV([]*CSVReader{NewCSVReader(&b, "real.csv")}, func(r Row) error { merged = append(merged, r); return nil }))
	assert.Equal(t, rows, merged)
}
