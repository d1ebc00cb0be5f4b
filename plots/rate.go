package plots

import (
	"fmt"
	"math"
	"time"

	"github.com/ratelab/ratelab/engine"
)

var rateChart = Chart{
	Name:    "rate",
	Summary: "offered, admitted and rejected requests per second, one panel per lane",
	Applies: always,
	Build:   Rate,
	Zooms:   true,
}

// rateBins is how many display bins the rate charts aim for at most.
const rateBins = 150

// Rate shows offered, admitted and refused requests per second in each bin, one panel per
// lane on shared axes, with the lane's configured limit (its stages' least nominal rate) as a
// dotted reference line. Refused attempts are drawn downward, below zero, so that they never
// hide under the admitted line when the two are equal (a sliding window admitting half of a
// burst). Engine bins are grouped (×1, 2, 5, 10, …) to at most 150 over the axis, so that a
// rate is a count over a span long enough to mean something; the bin width is in the subtitle.
//
// p.View is the stretch shown, its bins grouped for it.
func Rate(sc *engine.Scenario, res *engine.Results, p Params) (*Figure, error) {
	v := p.View
	if len(res.Lanes) == 0 {
		return nil, fmt.Errorf("rate: %w: no lanes", ErrNotApplicable)
	}
	ax := newAxis(res, v)
	g := niceGroup(len(ax.bins(res.Lanes[0].Bins, res.BinWidth)), rateBins)
	per := ax.per
	retries, refusals := false, false
	for _, l := range res.Lanes {
		retries = retries || l.Totals.Retried > 0
		refusals = refusals || l.Totals.RefusedAttempts > 0
	}
	f := &Figure{
		Name:     "rate",
		Title:    res.Scenario + ": requests per second, offered, admitted and refused",
		Subtitle: fmt.Sprintf("%s · bins of %s", runText(sc, res), fmtDur(time.Duration(g)*res.BinWidth)),
		XLabel:   ax.label(),
		Note:     ax.note(),
		ShareY:   true,
		TimeAxis: true,
		TimeUnit: per,
	}
	limits := false
	for i, l := range res.Lanes {
		spans := group(ax.bins(l.Bins, res.BinWidth), res.BinWidth, res.Horizon, g)
		c := LaneColor(sc.Lanes[i])
		pn := ax.panel(laneTitle(sc, res, i))
		pn.TitleColor, pn.YLabel, pn.AbsYTicks = c, "req/s", refusals
		pn.Series = append(pn.Series, stepSeries("offered", RoleOffered, nil, spans, per,
			func(s span) float64 { return perSecond(s.offered, s.dur) }))
		if lim, ok := limitSeries(sc.Lanes[i], pn.XMin, pn.XMax); ok {
			pn.Series = append(pn.Series, lim)
			limits = true
		}
		if retries {
			pn.Series = append(pn.Series, stepSeries("attempts", RoleAttempts, nil, spans, per,
				func(s span) float64 { return perSecond(s.attempts, s.dur) }))
		}
		pn.Series = append(pn.Series,
			stepSeries("admitted", RoleAdmitted, c, spans, per, func(s span) float64 { return perSecond(s.admitted, s.dur) }))
		if refusals {
			pn.Series = append(pn.Series,
				stepSeries("refused attempts (downward)", RoleRejected, nil, spans, per, func(s span) float64 { return 0 - perSecond(s.rejected, s.dur) }))
		}
		f.Panels = append(f.Panels, pn)
	}
	f.PanelHeight = panelHeight(len(f.Panels))
	clipSpikes(f, "/s")
	f.Legend = []LegendEntry{{Label: "offered", Role: RoleOffered}}
	if retries {
		f.Legend = append(f.Legend, LegendEntry{Label: "attempts (first tries and retries)", Role: RoleAttempts})
	}
	f.Legend = append(f.Legend, LegendEntry{Label: "admitted (lane colour)", Role: RoleAdmitted, Colors: laneColors(sc)})
	if refusals {
		f.Legend = append(f.Legend, LegendEntry{Label: "refused attempts, drawn below 0", Role: RoleRejected})
	}
	if limits {
		f.Legend = append(f.Legend, LegendEntry{Label: "configured limit (nominal rate)", Role: RoleNominal})
	}
	return f, nil
}

// limitSeries is the lane's configured limit in permits per second — the least nominal rate
// of its timed stages (token-bucket rate=100/1s: 100/s; fixed-window limit=100,window=1s:
// 100/s) — as a horizontal line; false for a lane with no timed stage (a concurrency limit).
func limitSeries(lane engine.LaneSpec, xmin, xmax float64) (Series, bool) {
	best, ok := math.Inf(1), false
	for _, s := range lane.Stack {
		if rate, timed := s.NominalRate(); timed && rate.Window > 0 {
			best, ok = min(best, float64(rate.Permits)/rate.Window.Seconds()), true
		}
	}
	if !ok {
		return Series{}, false
	}
	return Series{Label: fmt.Sprintf("limit %s/s", g(best)), Role: RoleNominal, X: []float64{xmin, xmax}, Y: []float64{best, best}}, true
}
