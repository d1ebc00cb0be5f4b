package plots

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/sweep"
)

// fleet's split lane refuses a capacity that is not a multiple of its 3 instances: the
// heatmap hatches exactly those cells, with no value in them, keeps them off the colour scale,
// names the reason once in the legend and counts them in the note.
func TestHeatmapHatchesInvalidCells(t *testing.T) {
	res := sweepResult(t, "fleet", sweep.Steps{N: 6}, "token-bucket.capacity=5..30", "token-bucket.rate=60/1s,150/1s,300/1s")
	m, _ := sweep.LookupMetric("refused%")
	f, err := Heatmap(res, m, nil)
	require.NoError(t, err)
	require.Len(t, f.Panels, len(res.Lanes))
	hatched := 0
	for lane, pn := range f.Panels {
		h := pn.Heat
		if res.Lanes[lane] != "split" {
			assert.Nil(t, h.Invalid, "lane %s: every cell ran", res.Lanes[lane])
			continue
		}
		require.NotNil(t, h.Invalid)
		for k, bad := range h.Invalid {
			col := h.Cols[k%len(h.Cols)]
			want := col == "5" || col == "10" || col == "20" || col == "25"
			assert.Equal(t, want, bad, "split capacity %s", col)
			if bad {
				hatched++
				assert.Empty(t, h.Text[k], "a hatched cell shows no value")
			} else {
				assert.NotEmpty(t, h.Text[k])
			}
		}
	}
	assert.Equal(t, 12, hatched)
	var entries []string
	for _, e := range f.Legend {
		if e.Role == RoleInvalid {
			entries = append(entries, e.Label)
		}
	}
	assert.Equal(t, []string{"invalid (split, 12 cells): capacity is not a multiple of 3 instances: each share would round and change the global limit"}, entries)
	assert.Contains(t, f.Note, "Hatched: 12 invalid cells, not run")

	// It draws, as PNG and as SVG with the legend's words.
	var buf bytes.Buffer
	require.NoError(t, f.Write(&buf, "png", DefaultWidth, 0))
	_, err = png.Decode(&buf)
	require.NoError(t, err)
	var svg bytes.Buffer
	require.NoError(t, f.Write(&svg, "svg", DefaultWidth, 0))
	assert.True(t, strings.Contains(svg.String(), "invalid (split, 12 cells)"))
}

// A line chart breaks its line at an invalid cell and crosses it on the axis.
func TestSweepLineMarksInvalidCells(t *testing.T) {
	res := sweepResult(t, "fleet", sweep.Steps{N: 6}, "token-bucket.capacity=5..30")
	m, _ := sweep.LookupMetric("refused%")
	f, err := SweepLine(res, m)
	require.NoError(t, err)
	for lane, pn := range f.Panels {
		var lines, crosses int
		for _, s := range pn.Series {
			switch {
			case s.Role == RoleAdmitted:
				lines++
			case s.Role == RoleMarks && s.Mark == MarkRejected:
				crosses += len(s.X)
				assert.Equal(t, []float64{5, 10, 20, 25}, s.X)
			}
		}
		if res.Lanes[lane] == "split" {
			assert.Equal(t, 2, lines, "15 and 30, apart: the line does not join them through 20 and 25")
			assert.Equal(t, 4, crosses)
		} else {
			assert.Equal(t, 1, lines)
			assert.Zero(t, crosses)
		}
	}
	assert.Contains(t, f.Note, "Crosses on the axis: 4 invalid cells")
}
