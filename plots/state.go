package plots

import (
	"fmt"
	"image/color"
	"math"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

var stateChart = Chart{
	Name:    "state",
	Summary: "each stage's available permits, requests in flight and the client queue over time",
	Applies: always,
	Build:   State,
	Zooms:   true,
}

// stateBins is how many points a full-width state line has at most before it is drawn as a
// band; a row of n panels allows stateBins/n.
const stateBins = 150

// State shows each lane's limiter state over time, one row per lane and one panel per
// quantity, each on its own axis: every stage's available permits at the end of each bin (in
// the stage kind's colour), the most requests in flight at the downstream during each bin,
// and the longest client queue during each bin. In-flight and queue panels share their axis
// down the column, so lanes compare; permits do not (a window of 100 and a bucket of 3).
//
// A run of more than 150 bins on the axis is grouped to at most 150 spans: each quantity is
// then drawn as the range of its per-bin values in each span (a translucent band) with their
// mean as a line. That is the picture a fixed window's sawtooth really makes at this scale —
// drawn per bin, a 1s sawtooth in 120ms bins is a hatch of vertical strokes — and the legend
// and subtitle say so.
//
// p.View is the stretch shown.
func State(sc *engine.Scenario, res *engine.Results, p Params) (*Figure, error) {
	ax := newAxis(res, p.View)
	per := ax.per
	inFlight := sc.Downstream != nil
	queue := sc.Client.Policy == engine.PolicyQueue
	for _, l := range sc.Lanes {
		for _, s := range l.Stack {
			_, timed := s.NominalRate()
			inFlight = inFlight || !timed
		}
		queue = queue || (l.Client != nil && l.Client.Policy == engine.PolicyQueue)
	}
	nbins := 0
	if len(res.Lanes) > 0 {
		nbins = len(ax.bins(res.Lanes[0].Bins, res.BinWidth))
	}
	cols := 1
	if inFlight {
		cols++
	}
	if queue {
		cols++
	}
	// Narrower panels, fewer spans: about one per 4 pixels of a panel.
	g := niceGroup(nbins, stateBins/cols)
	banded := g > 1
	f := &Figure{
		Name:     "state",
		Title:    res.Scenario + ": limiter state over time",
		Subtitle: fmt.Sprintf("%s · sampled per %s bin", runText(sc, res), fmtDur(res.BinWidth)),
		XLabel:   ax.label(),
		Note:     ax.note(),
		Cols:     cols,
		TimeAxis: true,
		TimeUnit: per,
	}
	spanText := fmtDur(time.Duration(g) * res.BinWidth)
	if banded {
		f.Subtitle += fmt.Sprintf(", in %s spans", spanText)
	}
	kinds := map[limiters.Kind]bool{}
	var kindOrder []limiters.Kind
	for i, l := range res.Lanes {
		bins := ax.bins(l.Bins, res.BinWidth)
		lane := ax.panel(laneTitle(sc, res, i))
		lane.TitleColor, lane.YLabel, lane.IntY, lane.TitleSpan = LaneColor(sc.Lanes[i]), "permits", true, cols
		for k, spec := range stackOf(sc.Lanes[i], l) {
			label := fmt.Sprintf("available permits: stage %d (%s)", k+1, spec.Kind())
			c := KindColor(spec.Kind())
			sample := func(b engine.Bin) (float64, bool) {
				if k < len(b.Available) {
					return float64(b.Available[k]), true
				}
				return 0, false
			}
			if banded {
				lane.Series = append(lane.Series, bandSeries(label, RoleAvailable, c, bins, res.BinWidth, res.Horizon, g, per, sample)...)
			} else {
				s := Series{Label: label, Role: RoleAvailable, Color: c, Step: true}
				if len(bins) > 0 && bins[0].Start == 0 {
					s.X = append(s.X, 0)
					s.Y = append(s.Y, float64(spec.InitialPermits()))
				}
				for _, b := range bins {
					if v, ok := sample(b); ok {
						s.X = append(s.X, toUnit(min(b.Start+res.BinWidth, res.Horizon), per))
						s.Y = append(s.Y, v)
					}
				}
				lane.Series = append(lane.Series, s)
			}
			if !kinds[spec.Kind()] {
				kinds[spec.Kind()] = true
				kindOrder = append(kindOrder, spec.Kind())
			}
		}
		f.Panels = append(f.Panels, lane)
		perBin := func(label, ylabel, yGroup string, role Role, value func(engine.Bin) int) {
			pn := ax.panel("")
			pn.YLabel, pn.IntY, pn.YGroup = ylabel, true, yGroup
			sample := func(b engine.Bin) (float64, bool) { return float64(value(b)), true }
			if banded {
				pn.Series = bandSeries(label, role, darkGrey, bins, res.BinWidth, res.Horizon, g, per, sample)
			} else {
				spans := group(bins, res.BinWidth, res.Horizon, 1)
				pn.Series = []Series{stepSeries(label, role, nil, spans, per, func(s span) float64 {
					if role == RoleQueue {
						return float64(s.maxQueue)
					}
					return float64(s.maxInFlight)
				})}
			}
			f.Panels = append(f.Panels, pn)
		}
		if inFlight {
			perBin("most in flight", "in flight", "in flight", RoleInFlight, func(b engine.Bin) int { return b.MaxInFlight })
		}
		if queue {
			perBin("longest queue", "queue", "queue", RoleQueue, func(b engine.Bin) int { return b.MaxQueue })
		}
	}
	f.PanelHeight = panelHeight(len(res.Lanes))
	if cols > 1 {
		f.PanelHeight = min(f.PanelHeight, 150)
	}
	for _, k := range kindOrder {
		f.Legend = append(f.Legend, LegendEntry{Label: "available permits: " + string(k), Role: RoleAvailable, Colors: []color.Color{KindColor(k)}, Band: banded})
	}
	if inFlight {
		f.Legend = append(f.Legend, LegendEntry{Label: "in flight (most per bin)", Role: RoleInFlight, Band: banded})
	}
	if queue {
		f.Legend = append(f.Legend, LegendEntry{Label: "client queue (longest per bin)", Role: RoleQueue, Band: banded})
	}
	if banded {
		f.Legend = append(f.Legend, LegendEntry{Label: fmt.Sprintf("band: lowest to highest per-bin value in each %s; line: their mean", spanText),
			Role: RoleBand, Band: true, Colors: []color.Color{midGrey}})
	}
	return f, nil
}

// bandSeries groups bins by g and makes, for each span, the range of value over its bins (a
// band series) and their mean (a step line), both in colour c. A span starts at its first
// bin's start; value reads a bin's sample (false: none). Cost: O(len(bins)).
func bandSeries(label string, role Role, c color.Color, bins []engine.Bin, width, horizon time.Duration, g int, per time.Duration,
	value func(engine.Bin) (float64, bool)) []Series {
	rng := Series{Label: label + ": range", Role: RoleBand, Color: c, Step: true}
	mean := Series{Label: label + ": mean", Role: role, Color: c, Step: true}
	if role == RoleInFlight || role == RoleQueue {
		mean.Color = nil
	}
	for i := 0; i < len(bins); i += g {
		lo, hi, sum, n := math.Inf(1), math.Inf(-1), 0.0, 0
		for _, b := range bins[i:min(i+g, len(bins))] {
			if v, ok := value(b); ok {
				lo, hi, sum, n = min(lo, v), max(hi, v), sum+v, n+1
			}
		}
		if n == 0 {
			continue
		}
		x := toUnit(bins[i].Start, per)
		rng.X, rng.Lo, rng.Y = append(rng.X, x), append(rng.Lo, lo), append(rng.Y, hi)
		mean.X, mean.Y = append(mean.X, x), append(mean.Y, sum/float64(n))
	}
	if n := len(rng.X); n > 0 { // the last span holds to its end
		end := toUnit(min(bins[len(bins)-1].Start+width, horizon), per)
		rng.X, rng.Lo, rng.Y = append(rng.X, end), append(rng.Lo, rng.Lo[n-1]), append(rng.Y, rng.Y[n-1])
		mean.X, mean.Y = append(mean.X, end), append(mean.Y, mean.Y[n-1])
	}
	return []Series{rng, mean}
}

// stackOf is the lane's specs (one per stage).
func stackOf(spec engine.LaneSpec, r engine.LaneResult) []limiters.Spec {
	if len(r.Bins) > 0 && len(r.Bins[0].Available) != len(spec.Stack) {
		return spec.Stack[:min(len(spec.Stack), len(r.Bins[0].Available))]
	}
	return spec.Stack
}
