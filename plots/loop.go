package plots

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/engine"
)

var loopChart = Chart{
	Name:    "loop",
	Summary: "the client loop of lanes whose clients retry: attempts and retries per 10ms, and goodput over time",
	Applies: hasRetryingClients,
	Build:   Loop,
	Zooms:   true,
}

// hasRetryingClients reports whether some lane's clients retry (or pace themselves): the
// scenario's client or the lane's own.
func hasRetryingClients(sc *engine.Scenario, _ *engine.Results, _ Params) bool {
	for i := range sc.Lanes {
		if laneClient(sc, i).Retries() {
			return true
		}
	}
	return false
}

// laneClient is lane i's client: its own, or the scenario's.
func laneClient(sc *engine.Scenario, i int) engine.Client {
	if c := sc.Lanes[i].Client; c != nil {
		return *c
	}
	return sc.Client
}

// Loop shows, per lane whose clients retry, two panels on one row: left, the attempts and
// the retries among them per 10ms in the engine's bins, ungrouped (a bin's count × 10ms over
// its width: exact for bins of 10ms, as retry-herd's are, a mean per 10ms over wider ones), with a marker at the herd's
// peak (Loop.HerdPeak, counted in 10ms bins whatever the engine's bins); right, goodput —
// requests admitted per second — against what was offered. retry-herd's obedient clients
// send 400 retries into the 10ms at 10.5s, and goodput is a spike of 100 admissions per
// window either way.
//
// p.View is the stretch shown, its bins grouped for it.
func Loop(sc *engine.Scenario, res *engine.Results, p Params) (*Figure, error) {
	var lanes []int
	for i := range res.Lanes {
		if i < len(sc.Lanes) && laneClient(sc, i).Retries() {
			lanes = append(lanes, i)
		}
	}
	if len(lanes) == 0 {
		return nil, fmt.Errorf("loop: %w: no lane's clients retry", ErrNotApplicable)
	}
	ax := newAxis(res, p.View)
	per := ax.per
	g := niceGroup(len(ax.bins(res.Lanes[0].Bins, res.BinWidth)), rateBins)
	width := time.Duration(g) * res.BinWidth
	per10ms := func(n int64, d time.Duration) float64 {
		if d <= 0 {
			return 0
		}
		return float64(n) * float64(engine.HerdBin) / float64(d)
	}
	f := &Figure{
		Name:     "loop",
		Title:    res.Scenario + ": the client loop, attempts per 10ms and goodput",
		Subtitle: fmt.Sprintf("%s · attempts in bins of %s, goodput in bins of %s", runText(sc, res), fmtDur(res.BinWidth), fmtDur(width)),
		XLabel:   ax.label(),
		Note:     ax.note(),
		Cols:     2,
		TimeAxis: true,
		TimeUnit: per,
	}
	marked := false
	for _, i := range lanes {
		l := res.Lanes[i]
		c := LaneColor(sc.Lanes[i])
		// The attempts in the engine's own bins, ungrouped, so that a herd stays a spike (the
		// renderer keeps each pixel column's extremes); goodput in grouped ones.
		bins := ax.bins(l.Bins, res.BinWidth)
		fine := group(bins, res.BinWidth, res.Horizon, 1)
		spans := group(bins, res.BinWidth, res.Horizon, g)
		left := ax.panel(fmt.Sprintf("%s — amplification %.2f, goodput %.3g/s", laneTitle(sc, res, i), l.Loop.Amplification, l.Loop.GoodputPerSec))
		left.TitleColor, left.TitleSpan, left.YLabel, left.YGroup = c, 2, "per 10ms", "attempts"
		left.Series = append(left.Series,
			stepSeries("attempts", RoleAttempts, nil, fine, per, func(s span) float64 { return per10ms(s.attempts, s.dur) }))
		left.Series = append(left.Series, stepSeries("retries", RoleFailed, nil, fine, per, func(s span) float64 {
			return per10ms(bins[int((s.start-fine[0].start)/res.BinWidth)].Retried, s.dur)
		}))
		if l.Loop.HerdPeak > 0 && l.Loop.HerdPeakAt >= ax.lo && l.Loop.HerdPeakAt <= ax.hi {
			left.Series = append(left.Series, Series{Label: fmt.Sprintf("herd peak: %d retries in 10ms", l.Loop.HerdPeak), Role: RoleMarker,
				X: []float64{toUnit(l.Loop.HerdPeakAt, per)}, Y: []float64{0}})
			marked = true
		}
		right := ax.panel("")
		right.YLabel, right.YGroup = "req/s", "goodput"
		right.Series = append(right.Series,
			stepSeries("offered", RoleOffered, nil, spans, per, func(s span) float64 { return perSecond(s.offered, s.dur) }),
			stepSeries("admitted", RoleAdmitted, c, spans, per, func(s span) float64 { return perSecond(s.admitted, s.dur) }))
		f.Panels = append(f.Panels, left, right)
	}
	f.PanelHeight = panelHeight(len(lanes))
	f.Legend = []LegendEntry{
		{Label: "attempts per 10ms (first tries and retries)", Role: RoleAttempts},
		{Label: "retries per 10ms", Role: RoleFailed},
		{Label: "offered per second", Role: RoleOffered},
		{Label: "goodput: admitted per second (lane colour)", Role: RoleAdmitted, Colors: laneColors(sc)},
	}
	if marked {
		f.Legend = append(f.Legend, LegendEntry{Label: "the herd's peak 10ms", Role: RoleMarker})
	}
	return f, nil
}
