package plots

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/engine"
)

var limitChart = Chart{
	Name:    "limit",
	Summary: "an adaptive limit over time, with the requests in flight and the RTT it reacts to",
	Applies: hasAdaptive,
	Build:   Limit,
	Zooms:   true,
}

func hasAdaptive(_ *engine.Scenario, res *engine.Results, _ Params) bool {
	for _, l := range res.Lanes {
		if l.Adaptive != nil {
			return true
		}
	}
	return false
}

// Limit shows each adaptive lane (a stage whose limit moves: aimd, vegas, gradient, …) in a
// row: on the left its limit at each bin's end (the lane's colour), the most requests in
// flight in the bin (grey) and the server's reference concurrency c·(S + network)/S (dashed,
// phase by phase); on the right the mean latency of the completions it heard (RTT, from
// admission: answers and callers' timeouts), with a triangle on its zero line under each bin in
// which the rule probed for the no-load RTT (Vegas, Gradient, Envoy's minRTT windows: probe-cost's
// Gradient probes ~103 times a minute, so nearly every 500ms bin has one; Vegas 18). Dotted
// vertical lines mark the server's phase changes. Each panel has its own y range: the limits differ tenfold between rules.
// server-slowdown: the reference drops from 32 to 20 at 20s while the RTT rises
// fourfold, and each rule's limit follows, or not.
//
// p.View is the stretch shown.
func Limit(sc *engine.Scenario, res *engine.Results, p Params) (*Figure, error) {
	var lanes []int
	for i, l := range res.Lanes {
		if l.Adaptive != nil {
			lanes = append(lanes, i)
		}
	}
	if len(lanes) == 0 {
		return nil, fmt.Errorf("limit: %w: no lane has an adaptive limit", ErrNotApplicable)
	}
	ax := newAxis(res, p.View)
	per := ax.per
	first := ax.bins(res.Lanes[lanes[0]].Bins, res.BinWidth)
	g := niceGroup(len(first), rateBins)
	ds := sc.Downstream
	var phases []float64
	if ds != nil {
		for i, ph := range ds.Phases {
			if i > 0 && ph.From >= ax.lo && ph.From <= ax.hi {
				phases = append(phases, toUnit(ph.From, per))
			}
		}
	}
	f := &Figure{
		Name:     "limit",
		Title:    res.Scenario + ": adaptive limits, the requests in flight, and the RTT they react to",
		Subtitle: runText(sc, res),
		XLabel:   ax.label(),
		Note:     ax.note(),
		Cols:     2,
		TimeAxis: true,
		TimeUnit: per,
	}
	binText := fmtDur(time.Duration(g) * res.BinWidth)
	anyProbe := false
	for _, i := range lanes {
		l := res.Lanes[i]
		c := LaneColor(sc.Lanes[i])
		bins := ax.bins(l.Bins, res.BinWidth)
		off := 0
		if len(bins) > 0 {
			off = int(bins[0].Start / res.BinWidth)
		}
		left := ax.panel(laneTitle(sc, res, i))
		left.TitleColor, left.YLabel, left.IntY = c, "limit, in flight", true
		right := ax.panel("mean RTT heard")
		if n := l.Adaptive.Probes; n > 0 {
			right.Title += fmt.Sprintf(" · %d no-load RTT probe", n)
			if n > 1 {
				right.Title += "s"
			}
		}
		right.YLabel = "RTT (ms)"
		lim := Series{Label: "limit", Role: RoleLaneInFlow, Color: c, Step: true}
		fl := Series{Label: "in flight", Role: RoleInFlight, Step: true}
		rtt := Series{Label: "mean RTT", Role: RolePercentile, Color: c, Step: true}
		probes := Series{Label: "probes", Role: RoleMarks, Mark: MarkAdmittedRetry, Color: c}
		var end time.Duration
		for k := 0; k < len(bins); k += g {
			grp := bins[k:min(k+g, len(bins))]
			x := toUnit(grp[0].Start, per)
			most, probed := 0, 0
			var sum, n float64
			for j, b := range grp {
				most = max(most, b.MaxInFlight)
				probed += b.Probes
				idx := off + k + j
				if idx < len(l.Adaptive.RTT) && l.Adaptive.RTT[idx] > 0 {
					w := float64(max(b.Completed, 1))
					sum += w * float64(l.Adaptive.RTT[idx])
					n += w
				}
			}
			lim.X, lim.Y = append(lim.X, x), append(lim.Y, float64(grp[len(grp)-1].Limit))
			fl.X, fl.Y = append(fl.X, x), append(fl.Y, float64(most))
			if n > 0 {
				rtt.X, rtt.Y = append(rtt.X, x), append(rtt.Y, sum/n/1e6)
			}
			if probed > 0 {
				mid := toUnit(grp[0].Start+time.Duration(len(grp))*res.BinWidth/2, per)
				probes.X, probes.Y = append(probes.X, mid), append(probes.Y, 0)
			}
			end = min(grp[len(grp)-1].Start+res.BinWidth, res.Horizon)
		}
		for _, s := range []*Series{&lim, &fl, &rtt} {
			if n := len(s.X); n > 0 {
				s.X, s.Y = append(s.X, toUnit(end, per)), append(s.Y, s.Y[n-1])
			}
		}
		if ref := referenceSeries(ds, ax); len(ref.X) > 0 {
			left.Series = append(left.Series, ref)
		}
		left.Series = append(left.Series, fl, lim)
		right.Series = append(right.Series, rtt)
		if len(probes.X) > 0 {
			right.Series = append(right.Series, probes)
			anyProbe = true
		}
		if len(phases) > 0 {
			m := Series{Label: "phase changes", Role: RoleMarker, X: phases, Y: make([]float64, len(phases))}
			left.Series = append(left.Series, m)
			right.Series = append(right.Series, m)
		}
		f.Panels = append(f.Panels, left, right)
	}
	f.PanelHeight = panelHeight(len(lanes))
	f.Legend = []LegendEntry{
		{Label: "limit at the bin's end (lane colour)", Role: RoleLaneInFlow, Colors: laneColors(sc)},
		{Label: "in flight, most per " + binText + " bin", Role: RoleInFlight},
		{Label: "reference c·(S+network)/S", Role: RoleBound},
		{Label: "mean RTT per " + binText + " bin", Role: RolePercentile, Colors: laneColors(sc)},
	}
	if anyProbe {
		f.Legend = append(f.Legend, LegendEntry{Label: "a " + binText + " bin with a no-load RTT probe", Role: RoleMarks, Mark: MarkAdmittedRetry, Colors: laneColors(sc)})
	}
	if len(phases) > 0 {
		f.Legend = append(f.Legend, LegendEntry{Label: "server phase changes", Role: RoleMarker})
	}
	return f, nil
}

// referenceSeries is the server's reference concurrency phase by phase over the axis, a step
// line; empty without a server.
func referenceSeries(ds *engine.Downstream, ax axis) Series {
	s := Series{Label: "reference", Role: RoleBound, Step: true}
	if ds == nil || ds.Server == nil {
		return s
	}
	for i, ph := range ds.Phases {
		to := ax.hi
		if i+1 < len(ds.Phases) {
			to = min(ds.Phases[i+1].From, ax.hi)
		}
		from := max(ph.From, ax.lo)
		if from >= to {
			continue
		}
		s.X = append(s.X, toUnit(from, ax.per))
		s.Y = append(s.Y, ds.ReferenceConcurrency(ph.From))
	}
	if n := len(s.Y); n > 0 {
		s.X, s.Y = append(s.X, ax.xmax()), append(s.Y, s.Y[n-1])
	}
	return s
}
