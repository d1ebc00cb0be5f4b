package plots

import (
	"fmt"
	"image/color"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/replicate"
)

// RoleInterval is a 95% confidence band: a translucent area in the lane's colour. Its
// series is the band's outline, a closed polygon: the upper edge left to right, then the
// lower edge right to left (intervalSeries), so the golden dump lists both edges.
const RoleInterval Role = "interval"

// RateInterval is the rate chart of K replications: per lane, the mean offered, admitted and
// refused-attempt rates in each display bin (grouped as Rate groups them), and around the
// admitted rate its 95% interval over the replications (Student t, K−1 degrees of freedom).
// A bin's band is where another seed's admitted rate would fall, on average, 95 times out
// of 100 for the mean of K; with K = 1 there is no band.
func RateInterval(sc *engine.Scenario, set *replicate.Set) (*Figure, error) {
	res := set.First
	if len(set.Lanes) == 0 {
		return nil, fmt.Errorf("rate: %w: no lanes", ErrNotApplicable)
	}
	k := set.K()
	bins := len(set.Lanes[0].Admitted[0])
	g := niceGroup(bins, rateBins)
	per, unit := timeUnit(res.Horizon)
	f := &Figure{
		Name:  "rate",
		Title: fmt.Sprintf("%s: requests per second, the mean of %d replications", res.Scenario, k),
		Subtitle: fmt.Sprintf("seeds %d…%d · %s of virtual time each · bins of %s · band: 95%% interval of the admitted rate (Student t, %d degrees of freedom)",
			set.Seeds[0], set.Seeds[k-1], fmtDur(res.Horizon), fmtDur(time.Duration(g)*res.BinWidth), k-1),
		XLabel: fmt.Sprintf("time (%s)", unit),
		ShareY: true,
	}
	if k == 1 {
		f.Subtitle = fmt.Sprintf("seed %d · %s of virtual time · bins of %s · one replication: no interval",
			set.Seeds[0], fmtDur(res.Horizon), fmtDur(time.Duration(g)*res.BinWidth))
	}
	for i, lane := range set.Lanes {
		c := LaneColor(sc.Lanes[i])
		spans := group(res.Lanes[i].Bins, res.BinWidth, res.Horizon, g) // the layout; counts come from the set
		offered := spanEstimates(lane.Offered, spans, g)
		admitted := spanEstimates(lane.Admitted, spans, g)
		refused := spanEstimates(lane.RefusedAttempts, spans, g)
		pn := &Panel{Title: laneTitle(sc, res, i), TitleColor: c, YLabel: "req/s", XMin: 0, XMax: toUnit(res.Horizon, per)}
		pn.Series = append(pn.Series, meanSeries("offered (mean)", RoleOffered, nil, spans, per, offered))
		if k > 1 {
			pn.Series = append(pn.Series, intervalSeries("admitted 95% interval", c, spans, per, admitted))
		}
		pn.Series = append(pn.Series,
			meanSeries("admitted (mean)", RoleAdmitted, c, spans, per, admitted),
			meanSeries("refused attempts (mean)", RoleRejected, nil, spans, per, refused))
		f.Panels = append(f.Panels, pn)
	}
	f.PanelHeight = panelHeight(len(f.Panels))
	f.Legend = []LegendEntry{{Label: "offered (mean)", Role: RoleOffered},
		{Label: "admitted (mean, lane colour)", Role: RoleAdmitted, Colors: laneColors(sc)}}
	if k > 1 {
		f.Legend = append(f.Legend, LegendEntry{Label: fmt.Sprintf("95%% interval of admitted over %d seeds", k), Role: RoleInterval, Colors: laneColors(sc)})
	}
	f.Legend = append(f.Legend, LegendEntry{Label: "refused attempts (mean)", Role: RoleRejected})
	return f, nil
}

// spanEstimates is, for each display span, the interval over replications of its rate:
// counts[r][bin] summed over the span's bins, per second of the span.
func spanEstimates(counts [][]int64, spans []span, g int) []replicate.Interval {
	out := make([]replicate.Interval, len(spans))
	values := make([]float64, len(counts))
	for s := range spans {
		for r, bins := range counts {
			var n int64
			for _, c := range bins[s*g : min((s+1)*g, len(bins))] {
				n += c
			}
			values[r] = perSecond(n, spans[s].dur)
		}
		out[s] = replicate.Estimate(values)
	}
	return out
}

// meanSeries is the post-step line of the spans' means (as stepSeries draws one run's).
func meanSeries(label string, role Role, c color.Color, spans []span, per time.Duration, ivs []replicate.Interval) Series {
	s := Series{Label: label, Role: role, Color: c, Step: true}
	for k, sp := range spans {
		s.X = append(s.X, toUnit(sp.start, per))
		s.Y = append(s.Y, ivs[k].Mean)
	}
	if n := len(spans); n > 0 {
		s.X = append(s.X, toUnit(spans[n-1].start+spans[n-1].dur, per))
		s.Y = append(s.Y, ivs[n-1].Mean)
	}
	return s
}

// intervalSeries is the outline of a step band: the upper edge (mean + half-width) as a
// post-step line left to right, then the lower edge back, each span's level held across it.
func intervalSeries(label string, c color.Color, spans []span, per time.Duration, ivs []replicate.Interval) Series {
	s := Series{Label: label, Role: RoleInterval, Color: c}
	for k, sp := range spans {
		x0, x1 := toUnit(sp.start, per), toUnit(sp.start+sp.dur, per)
		s.X = append(s.X, x0, x1)
		s.Y = append(s.Y, ivs[k].High(), ivs[k].High())
	}
	for k := len(spans) - 1; k >= 0; k-- {
		sp := spans[k]
		x0, x1 := toUnit(sp.start, per), toUnit(sp.start+sp.dur, per)
		s.X = append(s.X, x1, x0)
		s.Y = append(s.Y, max(ivs[k].Low(), 0), max(ivs[k].Low(), 0))
	}
	return s
}

// intervalArea fills a band's outline (see intervalSeries) in its colour at 30% opacity:
// light enough that the mean line over it and the offered area under it stay readable.
type intervalArea struct {
	xs, ys []float64
	fill   color.Color
}

func (a intervalArea) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	poly := make([]vg.Point, len(a.xs))
	for i := range a.xs {
		poly[i] = vg.Point{X: trX(a.xs[i]), Y: trY(a.ys[i])}
	}
	c.FillPolygon(a.fill, c.ClipPolygonXY(poly))
}

// intervalFill is c at 30% opacity.
func intervalFill(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 77}
}

// intervalThumb draws a legend thumbnail of bands: one swatch per lane colour.
func intervalThumb(c *draw.Canvas, colors []color.Color) {
	w := (c.Max.X - c.Min.X) / vg.Length(len(colors))
	for i, col := range colors {
		x0 := c.Min.X + vg.Length(i)*w
		c.FillPolygon(intervalFill(col), []vg.Point{{X: x0, Y: c.Min.Y}, {X: x0 + w, Y: c.Min.Y}, {X: x0 + w, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	}
}
