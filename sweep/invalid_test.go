package sweep

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On fleet, a capacity that is not a multiple of the 3 instances is refused by the split
// lane: those cells are rows with their reason, every other cell runs, and the rows are those
// of a sweep of the valid values alone.
func TestInvalidCellsAreRowsWithTheirReason(t *testing.T) {
	sc := scenario(t, "fleet")
	g := grid(t, sc, Steps{N: 6}, "token-bucket.capacity=5..30") // 5 10 15 20 25 30
	rows, err := Run(context.Background(), g, Options{})
	require.NoError(t, err, "an invalid cell does not stop the sweep")
	require.Len(t, rows, len(g.Cells), "one row per cell, valid or not")
	var invalid []string
	for i, r := range rows {
		require.Equal(t, i, r.Cell)
		if r.Invalid == "" {
			assert.Positive(t, r.Offered, "cell %d ran", i)
			continue
		}
		invalid = append(invalid, r.Lane+" "+r.Values[0])
		assert.Contains(t, r.Invalid, "capacity="+r.Values[0]+" is not a multiple of 3 instances")
		assert.Equal(t, "capacity="+r.Values[0]+" is not a multiple of 3 instances: each share would round and change the global limit", r.ShortReason())
		assert.Zero(t, r.Metrics, "an invalid cell measured nothing")
	}
	assert.Equal(t, []string{"split 5", "split 10", "split 20", "split 25"}, invalid)
	assert.Len(t, InvalidCells(rows), 4)

	// The valid cells are what a sweep of the valid values alone measures.
	clean := grid(t, sc, Steps{}, "token-bucket.capacity=15,30")
	cleanRows, err := Run(context.Background(), clean, Options{})
	require.NoError(t, err)
	require.Empty(t, InvalidCells(cleanRows))
	for _, c := range cleanRows {
		at := 2 // 15
		if c.Values[0] == "30" {
			at = 5
		}
		r := rows[slicesIndex(g.Lanes, c.Lane)*6+at]
		assert.Equal(t, c.Metrics, r.Metrics, "%s capacity=%s", c.Lane, c.Values[0])
	}

	// The CSV has the error column, an invalid cell's measures empty, and reads back.
	text := csvOf(t, rows)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	require.Len(t, lines, 1+len(g.Cells))
	assert.Equal(t, strings.Join(ErrorHeader, ","), lines[0])
	split5 := lines[1+slicesIndex(g.Lanes, "split")*6]
	assert.Contains(t, split5, `"token-bucket:capacity=5,rate=150/1s",,,,,,,,,,,,,,,,,,,,"fleet.model: stage 1: split: `)
	back, err := ReadCSV(strings.NewReader(text), "s.csv")
	require.NoError(t, err)
	assert.Equal(t, rows, back)
	assert.Equal(t, text, csvOf(t, back))

	// Shards merge into the same bytes, invalid rows and all.
	var parts []Part
	for i := range 4 {
		part, err := Run(context.Background(), g, Options{Shard: i, Shards: 4})
		require.NoError(t, err)
		parts = append(parts, Part{Name: "s", Rows: part})
	}
	merged, err := Merge(parts)
	require.NoError(t, err)
	assert.Equal(t, text, csvOf(t, merged))
	var emitted []Row
	readers := []*CSVReader{NewCSVReader(strings.NewReader(csvOf(t, parts[1].Rows)), "b"), NewCSVReader(strings.NewReader(csvOf(t, parts[0].Rows)), "a"),
		NewCSVReader(strings.NewReader(csvOf(t, parts[3].Rows)), "d"), NewCSVReader(strings.NewReader(csvOf(t, parts[2].Rows)), "c")}
	require.NoError(t, MergeCSV(readers, func(r Row) error { emitted = append(emitted, r); return nil }))
	assert.Equal(t, rows, emitted)

	// The grid is whole; its groups say which cells one rule refused.
	res, err := Assemble(rows)
	require.NoError(t, err)
	groups := res.InvalidGroups()
	require.Len(t, groups, 1)
	assert.Equal(t, "capacity is not a multiple of 3 instances: each share would round and change the global limit", groups[0].Reason)
	assert.Equal(t, []string{"split"}, groups[0].Lanes)
	assert.Equal(t, "capacity 5, 10, 20, 25", groups[0].Where(res.Dims))
}

// A sweep without an invalid cell writes the header it always did, and a row that claims to be
// invalid but holds a measure, or an invalid row under the plain header, is refused.
func TestInvalidCellCSVChecks(t *testing.T) {
	g := grid(t, scenario(t, "fleet"), Steps{}, "token-bucket.capacity=15,30")
	rows, err := Run(context.Background(), g, Options{})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(csvOf(t, rows), strings.Join(Header, ",")+"\n"), "no error column without an invalid cell")

	bad := rows[0]
	bad.Invalid = "refused"
	var b strings.Builder
	assert.ErrorContains(t, NewCSVWriter(&b).Write(bad), "cell 0 is invalid (refused), and the CSV has no error column")

	b.Reset()
	w := NewCSVWriter(&b)
	w.ErrorColumn = true
	for _, r := range rows {
		require.NoError(t, w.Write(r))
	}
	require.NoError(t, w.Flush())
	lines := strings.SplitN(b.String(), "\n", 3)
	require.True(t, strings.HasSuffix(lines[1], ","), "a valid cell's error is empty")
	back, err := ReadCSV(strings.NewReader(b.String()), "x.csv")
	require.NoError(t, err)
	assert.Equal(t, rows, back)
	lines[1] += "refused"
	_, err = ReadCSV(strings.NewReader(strings.Join(lines, "\n")), "x.csv")
	require.ErrorContains(t, err, "x.csv:2:", "a row marked invalid with its measures is refused")
	assert.ErrorContains(t, err, "offered: \"3000\" in an invalid cell's row")
}

func slicesIndex[T interface{ Label() string }](lanes []T, label string) int {
	for i, l := range lanes {
		if l.Label() == label {
			return i
		}
	}
	return -1
}
