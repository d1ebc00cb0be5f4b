package plots

import (
	"fmt"
	"image/color"
	"math"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

var warmUpChart = Chart{
	Name:    "warmup",
	Summary: "a warm-up bucket's admitted rate against its documented curve and the token bucket",
	Applies: hasWarmUp,
	Build:   WarmUp,
	Zooms:   true,
}

func hasWarmUp(sc *engine.Scenario, res *engine.Results, _ Params) bool {
	i, _ := warmUpLane(sc)
	return i >= 0
}

// warmUpLane is the first lane whose first stage is a warm-up bucket, and its spec.
func warmUpLane(sc *engine.Scenario) (int, limiters.WarmUpSpec) {
	for i, l := range sc.Lanes {
		if len(l.Stack) > 0 {
			if spec, ok := l.Stack[0].(limiters.WarmUpSpec); ok {
				return i, spec
			}
		}
	}
	return -1, limiters.WarmUpSpec{}
}

// WarmUp plots the warm-up lane's admitted rate against the limiter's age (the run starts
// with the limiter), with the documented curve rate·T/I(a) and, for comparison, the token
// bucket lane of the same rate (or, without one, the token bucket's flat rate).
//
// p.View is the stretch shown; the zero View is the run's first twice the warm-up period.
func WarmUp(sc *engine.Scenario, res *engine.Results, p Params) (*Figure, error) {
	v := p.View
	wi, spec := warmUpLane(sc)
	if wi < 0 {
		return nil, fmt.Errorf("warmup: %w: no warm-up lane", ErrNotApplicable)
	}
	wl := res.Lanes[wi]
	// The chart is about the warm-up: it shows the first 2P of a longer run.
	start, end := time.Duration(0), res.Horizon
	first, nb := 0, len(wl.Bins)
	if !v.Whole() {
		ax := newAxis(res, v)
		start, end = ax.lo, ax.hi
		first = min(int(start/res.BinWidth), nb)
		nb = min(int((end+res.BinWidth-1)/res.BinWidth), nb)
	} else if 2*spec.WarmUp < end { // whole bins only, so that the last rate is over a whole bin
		nb = min(int((2*spec.WarmUp+res.BinWidth-1)/res.BinWidth), nb)
		end = min(time.Duration(nb)*res.BinWidth, res.Horizon)
	}
	g := niceGroup(nb-first, 100)
	spans := group(wl.Bins[first:nb], res.BinWidth, res.Horizon, g)
	per, unit := timeUnit(end - start)
	rate := float64(spec.Rate.Permits) / spec.Rate.Window.Seconds()
	pn := &Panel{XMin: toUnit(start, per), XMax: toUnit(end, per), YLabel: "req/s"}
	pn.Series = append(pn.Series,
		stepSeries("offered", RoleOffered, nil, spans, per, func(s span) float64 { return perSecond(s.offered, s.dur) }))
	curve := Series{Label: "documented curve", Role: RoleCurve}
	const samples = 200
	for k := 0; k <= samples; k++ {
		t := start + (end-start)*time.Duration(k)/samples
		curve.X = append(curve.X, toUnit(t, per))
		curve.Y = append(curve.Y, spec.RateAt(t))
	}
	warmAdmitted := func(l engine.LaneResult) int64 {
		var n int64
		for _, b := range l.Bins {
			if b.Start+res.BinWidth <= spec.WarmUp {
				n += b.Admitted
			}
		}
		return n
	}
	tb := -1
	for i, l := range sc.Lanes {
		if len(l.Stack) == 1 {
			if b, ok := l.Stack[0].(limiters.TokenBucketSpec); ok && b.Rate == spec.Rate {
				tb = i
				break
			}
		}
	}
	legend := []LegendEntry{{Label: "offered", Role: RoleOffered}}
	if tb >= 0 {
		tspans := group(res.Lanes[tb].Bins[first:nb], res.BinWidth, res.Horizon, g)
		pn.Series = append(pn.Series, stepSeries("token bucket admitted", RoleAdmitted, KindColor(limiters.KindTokenBucket), tspans, per,
			func(s span) float64 { return perSecond(s.admitted, s.dur) }))
		legend = append(legend, LegendEntry{Label: "token bucket, admitted", Role: RoleAdmitted, Colors: []color.Color{KindColor(limiters.KindTokenBucket)}})
	} else {
		pn.Series = append(pn.Series, Series{Label: "token bucket rate", Role: RoleNominal,
			X: []float64{pn.XMin, pn.XMax}, Y: []float64{rate, rate}})
		legend = append(legend, LegendEntry{Label: "a token bucket's rate", Role: RoleNominal})
	}
	pn.Series = append(pn.Series,
		stepSeries("warm-up admitted", RoleAdmitted, KindColor(limiters.KindWarmUpTokenBucket), spans, per,
			func(s span) float64 { return perSecond(s.admitted, s.dur) }),
		curve,
		Series{Label: "end of warm-up", Role: RoleMarker, X: []float64{toUnit(spec.WarmUp, per)}, Y: []float64{0}})
	legend = append(legend,
		LegendEntry{Label: "warm-up bucket, admitted", Role: RoleAdmitted, Colors: []color.Color{KindColor(limiters.KindWarmUpTokenBucket)}},
		LegendEntry{Label: "documented: rate·T/I(a), I(a) = T(3 − 2a/P)", Role: RoleCurve},
		LegendEntry{Label: fmt.Sprintf("P = %s", fmtDur(spec.WarmUp)), Role: RoleMarker})
	f := &Figure{
		Name:  "warmup",
		Title: fmt.Sprintf("%s: warm-up bucket's admitted rate vs its age", res.Scenario),
		Subtitle: fmt.Sprintf("%s · %s · bins of %s", runText(sc, res), sc.Lanes[wi].Label(),
			fmtDur(time.Duration(g)*res.BinWidth)),
		XLabel:      fmt.Sprintf("limiter age (%s)", unit),
		Panels:      []*Panel{pn},
		Legend:      legend,
		PanelHeight: 380,
		TimeAxis:    true,
		TimeUnit:    per,
	}
	if !v.Whole() {
		f.Subtitle += fmt.Sprintf(" · shown: %s to %s", fmtDur(start), fmtDur(end))
	} else if end < res.Horizon {
		f.Subtitle += fmt.Sprintf(" · its first %s (twice the warm-up period)", fmtDur(2*spec.WarmUp))
	}
	if spec.WarmUp <= res.Horizon {
		f.Note = fmt.Sprintf("Admitted during the %s warm-up: %d by the warm-up bucket", fmtDur(spec.WarmUp), warmAdmitted(wl))
		if tb >= 0 {
			f.Note += fmt.Sprintf(", %d by the token bucket", warmAdmitted(res.Lanes[tb]))
		}
		f.Note += fmt.Sprintf("; under saturating demand the curve predicts (ln 3 / 2)·rate·P ≈ %.0f plus the cold burst of %d.",
			math.Log(3)/2*rate*spec.WarmUp.Seconds(), spec.InitialPermits())
	}
	return f, nil
}
