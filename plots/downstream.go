package plots

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratelab/ratelab/engine"
)

var downstreamChart = Chart{
	Name:    "downstream",
	Summary: "requests in flight against the downstream's pool, and the requests the pool refused",
	Applies: hasDownstream,
	Build:   Downstream,
	Zooms:   true,
}

func hasDownstream(sc *engine.Scenario, _ *engine.Results, _ Params) bool {
	return sc.Downstream != nil
}

// Downstream shows, per lane, the requests in flight at the downstream against its pool
// size (left) and the admitted requests the pool refused, per second (right; only when the
// pool is limited). Dotted vertical lines mark where the service time changes.
//
// p.View is the stretch shown.
func Downstream(sc *engine.Scenario, res *engine.Results, p Params) (*Figure, error) {
	v := p.View
	ds := sc.Downstream
	if ds == nil {
		return nil, fmt.Errorf("downstream: %w: the scenario has no downstream", ErrNotApplicable)
	}
	ax := newAxis(res, v)
	per := ax.per
	g := niceGroup(len(ax.bins(res.Lanes[0].Bins, res.BinWidth)), rateBins)
	var phases []float64
	var phaseText []string
	for i, p := range ds.Phases {
		if i > 0 && p.From >= ax.lo && p.From <= ax.hi {
			phases = append(phases, toUnit(p.From, per))
		}
		phaseText = append(phaseText, distText(p.Service)+untilText(ds.Phases, i))
	}
	poolText := "no pool limit"
	if ds.Pool > 0 {
		poolText = fmt.Sprintf("pool of %d", ds.Pool)
	}
	f := &Figure{
		Name:     "downstream",
		Title:    res.Scenario + ": requests in flight at the downstream, and what its pool refused",
		Subtitle: fmt.Sprintf("%s · %s · service time %s", runText(sc, res), poolText, strings.Join(phaseText, ", then ")),
		XLabel:   ax.label(),
		Note:     ax.note(),
		Cols:     2,
		ShareY:   true,
		TimeAxis: true,
		TimeUnit: per,
	}
	if ds.Pool == 0 { // nothing can be refused: in flight alone
		f.Cols = 1
		f.Title = res.Scenario + ": requests in flight at the downstream"
	}
	for i, l := range res.Lanes {
		c := LaneColor(sc.Lanes[i])
		left := ax.panel(laneTitle(sc, res, i))
		left.TitleColor, left.YLabel, left.IntY = c, "in flight", true
		if ds.Pool > 0 {
			left.Series = append(left.Series, Series{Label: "pool", Role: RoleBound,
				X: []float64{left.XMin, left.XMax}, Y: []float64{float64(ds.Pool), float64(ds.Pool)}})
		}
		fspans := group(ax.bins(l.Bins, res.BinWidth), res.BinWidth, res.Horizon, g)
		left.Series = append(left.Series, stepSeries("in flight", RoleLaneInFlow, c, fspans, per,
			func(s span) float64 { return float64(s.maxInFlight) }))
		right := ax.panel(fmt.Sprintf("refused by the pool: %d", l.Totals.Failed))
		right.YLabel = "req/s"
		right.Series = append(right.Series, stepSeries("refused by the pool", RoleFailed, nil, fspans, per,
			func(s span) float64 { return perSecond(s.fail, s.dur) }))
		if len(phases) > 0 {
			m := Series{Label: "service time changes", Role: RoleMarker, X: phases, Y: make([]float64, len(phases))}
			left.Series = append(left.Series, m)
			right.Series = append(right.Series, m)
		}
		f.Panels = append(f.Panels, left)
		if ds.Pool > 0 {
			f.Panels = append(f.Panels, right)
		}
	}
	f.PanelHeight = panelHeight(len(res.Lanes))
	f.Legend = []LegendEntry{{Label: fmt.Sprintf("in flight, most per %s bin (lane colour)", fmtDur(time.Duration(g)*res.BinWidth)), Role: RoleLaneInFlow, Colors: laneColors(sc)}}
	if ds.Pool > 0 {
		f.Legend = append(f.Legend, LegendEntry{Label: "pool size", Role: RoleBound})
	}
	if ds.Pool > 0 {
		f.Legend = append(f.Legend, LegendEntry{Label: fmt.Sprintf("refused by the pool (per %s bin)", fmtDur(time.Duration(g)*res.BinWidth)), Role: RoleFailed})
	}
	if len(phases) > 0 {
		f.Legend = append(f.Legend, LegendEntry{Label: "service time changes", Role: RoleMarker})
	}
	return f, nil
}

func distText(d engine.Distribution) string {
	switch d.Kind {
	case engine.DistUniform:
		return fmt.Sprintf("uniform %s–%s", fmtDur(d.Min), fmtDur(d.Max))
	case engine.DistExponential:
		return fmt.Sprintf("exponential, mean %s", fmtDur(d.Mean))
	case engine.DistLogNormal:
		return fmt.Sprintf("lognormal, median %s", fmtDur(d.Mean))
	}
	return fmtDur(d.Mean)
}

func untilText(ps []engine.Phase, i int) string {
	if i+1 < len(ps) {
		return " until " + fmtDur(ps[i+1].From)
	}
	return ""
}
