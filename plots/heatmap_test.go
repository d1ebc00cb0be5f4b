package plots

import (
	"bytes"
	"context"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fitpkg "github.com/ratelab/ratelab/fit"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/scenarios"
	"github.com/ratelab/ratelab/sweep"
)

func sweepResult(t *testing.T, name string, steps sweep.Steps, varies ...string) *sweep.Result {
	t.Helper()
	sc, err := scenarios.Get(name)
	require.NoError(t, err)
	var dims []sweep.Dimension
	for _, v := range varies {
		d, err := sweep.ParseDimension(v, steps)
		require.NoError(t, err)
		dims = append(dims, d)
	}
	g, err := sweep.New(sc, dims)
	require.NoError(t, err)
	rows, err := sweep.Run(context.Background(), g, sweep.Options{})
	require.NoError(t, err)
	res, err := sweep.Assemble(rows)
	require.NoError(t, err)
	return res
}

// The heatmap holds every cell's value at its column and row, on one scale with a colour bar
// in the metric's unit, and σ(ρ) placed between the capacity rows that bracket it.
func TestHeatmapHoldsEveryCellAndSigma(t *testing.T) {
	res := sweepResult(t, "replay", sweep.Steps{N: 6}, "token-bucket.rate=100/1s..600/1s", "token-bucket.capacity=10..460")
	rateDim, capDim, ok := SigmaAxes(res)
	require.True(t, ok)
	assert.Equal(t, 0, rateDim)
	assert.Equal(t, 1, capDim)
	var rates []limiters.Rate
	for _, v := range res.Dims[0].Values {
		r, err := limiters.ParseRate(v.Text)
		require.NoError(t, err)
		rates = append(rates, r)
	}
	sc, err := scenarios.Get("replay")
	require.NoError(t, err)
	sigma, err := fitpkg.Curve(context.Background(), fitpkg.Scenario(sc), rates)
	require.NoError(t, err)
	m, _ := sweep.LookupMetric("refused%")
	f, err := Sweep(res, m, sigma)
	require.NoError(t, err)
	require.Len(t, f.Panels, 1)
	pn := f.Panels[0]
	assert.Equal(t, "token-bucket:capacity=↑,rate=→", pn.Title)
	h := pn.Heat
	require.NotNil(t, h)
	assert.Equal(t, []string{"100/1s", "200/1s", "300/1s", "400/1s", "500/1s", "600/1s"}, h.Cols)
	assert.Equal(t, []string{"10", "100", "190", "280", "370", "460"}, h.Rows)
	for i := range h.Cols {
		for j := range h.Rows {
			v, _ := m.Value(res.At(0, i, j).Metrics)
			assert.Equal(t, v, h.Values[j*len(h.Cols)+i])
		}
	}
	assert.Equal(t, 0.0, f.ColorBar.Scale.Lo)
	assert.Equal(t, "% of offered", f.ColorBar.Label)
	line := pn.Series[0]
	require.Equal(t, RoleCurve, line.Role)
	require.Len(t, line.X, len(sigma))
	for k, p := range sigma {
		assert.Equal(t, float64(k), line.X[k])
		j := int(math.Floor(line.Y[k]))
		lo, hi := h.Rows[j], h.Rows[min(j+1, len(h.Rows)-1)]
		// σ lies between the rows either side of it: the row below refuses, the one above not.
		below, above := res.At(0, k, j).Refused, res.At(0, k, min(j+1, len(h.Rows)-1)).Refused
		if float64(p.Capacity) > res.Dims[1].Values[j].Num {
			assert.Positive(t, below, "rate %s: row %s is below σ = %d", p.RateText, lo, p.Capacity)
		}
		if j+1 < len(h.Rows) {
			assert.Zero(t, above, "rate %s: row %s is at or above σ = %d", p.RateText, hi, p.Capacity)
		}
	}
	var dump bytes.Buffer
	require.NoError(t, f.Dump(&dump))
	assert.Contains(t, dump.String(), "colorbar \"% of offered\" [0, ")
	assert.Contains(t, dump.String(), "  heat 6×6 scale=[0, ")
	for _, format := range []string{"png", "svg"} {
		var b bytes.Buffer
		require.NoError(t, f.Write(&b, format, 0, 0))
		assert.Greater(t, b.Len(), 10000)
	}
	// A sweep that is not of a token bucket's rate and capacity has no curve.
	other := sweepResult(t, "boundary-attack", sweep.Steps{N: 3}, "sliding-window.limit=50..150", "sliding-window.slots=2,5,10")
	_, _, ok = SigmaAxes(other)
	assert.False(t, ok)
	f, err = Sweep(other, m, nil)
	require.NoError(t, err)
	assert.Empty(t, f.Panels[0].Series)
	assert.Empty(t, f.Legend)
}

// More reads darker: the scale's luminance falls from Lo to Hi, for every kind's colour, and
// cell text switches to white where the colour is dark.
func TestScaleDarkensMonotonically(t *testing.T) {
	lum := func(s Scale, v float64) float64 {
		r, g, b, _ := s.Color(v).RGBA()
		return 0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)
	}
	for _, k := range limiters.Kinds() {
		s := Scale{Lo: 0, Hi: 100, Hue: KindColor(k.Kind)}
		prev := math.Inf(1)
		for v := 0.0; v <= 100; v += 2 {
			l := lum(s, v)
			assert.Less(t, l, prev, "%s at %g", k.Kind, v)
			prev = l
		}
		assert.False(t, s.dark(0), k.Kind)
		assert.True(t, s.dark(100), k.Kind)
	}
	assert.Equal(t, lightFill, Scale{Hi: 1, Hue: black}.Color(math.NaN()), "no value: the neutral fill")
}

// Labels never crowd: at most about target of them, the first always.
func TestLabelTicksThin(t *testing.T) {
	labels := make([]string, 50)
	for i := range labels {
		labels[i] = strings.Repeat("x", 1+i%3)
	}
	ticks := labelTicks{labels: labels, target: 10}.Ticks(-0.5, 49.5)
	require.Len(t, ticks, 50, "a tick at every cell")
	n := 0
	for _, tk := range ticks {
		if tk.Label != "" {
			n++
		}
	}
	assert.LessOrEqual(t, n, 11)
	assert.NotEmpty(t, ticks[0].Label)
	all := labelTicks{labels: labels[:6], target: 10}.Ticks(-0.5, 5.5)
	for _, tk := range all {
		assert.NotEmpty(t, tk.Label)
	}
}

// One dimension draws a line per template lane, on a number line for numbers and in order for
// words.
func TestSweepLine(t *testing.T) {
	res := sweepResult(t, "retry-storm", sweep.Steps{N: 4}, "token-bucket.capacity=1..100")
	m, _ := sweep.LookupMetric("not_admitted%")
	f, err := Sweep(res, m, nil)
	require.NoError(t, err)
	require.Len(t, f.Panels, 3)
	for lane, pn := range f.Panels {
		line := pn.Series[0]
		assert.Equal(t, []float64{1, 34, 67, 100}, line.X)
		for i := range line.X {
			v, _ := m.Value(res.At(lane, i).Metrics)
			assert.Equal(t, v, line.Y[i])
		}
		assert.Nil(t, pn.XWords)
	}
	assert.Equal(t, "immediate retry", f.Panels[0].Title)
	words := sweepResult(t, "peers", sweep.Steps{}, "x-time-rate.mode=try,wait")
	f, err = Sweep(words, m, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"try", "wait"}, f.Panels[0].XWords)
	assert.Equal(t, []float64{0, 1}, f.Panels[0].Series[0].X)
	var b bytes.Buffer
	require.NoError(t, f.Write(&b, "png", 0, 0))
}

// Per-key fairness draws on the index's whole range, 0 to 1, with a colour bar that says it is
// Jain's index; a keyed template's title keeps its keys(…) and puts the arrows in its spec.
func TestHeatmapOfFairness(t *testing.T) {
	res := sweepResult(t, "noisy-neighbour", sweep.Steps{N: 3}, "token-bucket.capacity=1..100", "token-bucket.rate=5/1s..50/1s")
	m, ok := sweep.LookupMetric("fairness")
	require.True(t, ok)
	f, err := Sweep(res, m, nil)
	require.NoError(t, err)
	assert.Equal(t, "Jain index, 1 = fair", f.ColorBar.Label)
	assert.Equal(t, Scale{Lo: 0, Hi: 1, Hue: f.ColorBar.Scale.Hue}, f.ColorBar.Scale)
	require.Len(t, f.Panels, 4)
	assert.Equal(t, "token-bucket:capacity=→,rate=↑", f.Panels[0].Title)
	assert.Equal(t, "keys(max=1000,evict=lru):token-bucket:capacity=→,rate=↑", f.Panels[1].Title)
	h := f.Panels[1].Heat
	for i := range h.Cols {
		for j := range h.Rows {
			v, ok := m.Value(res.At(1, i, j).Metrics)
			require.True(t, ok)
			assert.Equal(t, v, h.Values[j*len(h.Cols)+i])
			assert.Equal(t, strconv.FormatFloat(v, 'f', 2, 64), h.Text[j*len(h.Cols)+i])
		}
	}
}
