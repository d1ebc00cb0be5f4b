package plots

import (
	"fmt"
	"image/color"
	"time"

	fitpkg "github.com/ratelab/ratelab/fit"
	"github.com/ratelab/ratelab/limiters"
)

// Burstiness is the burstiness curve of a fit: σ(ρ), the least token-bucket capacity that
// admits the whole trace at each rate of the grid, in the token bucket's colour, with the
// trace's mean and peak rates as markers, the knee (or the rate asked for) as a square and,
// when asked, the relaxed capacity as a cross.
func Burstiness(rep *fitpkg.Report) *Figure {
	tb := KindColor(limiters.KindTokenBucket)
	st := rep.Stats
	curve := Series{Label: "σ(ρ)", Role: RoleAdmitted, Color: tb}
	marks := Series{Label: "grid", Role: RoleMarks, Mark: MarkAdmitted, Color: tb}
	xmax := 0.0
	for _, p := range rep.Curve {
		if !p.Fits() {
			continue
		}
		curve.X = append(curve.X, p.PerSec)
		curve.Y = append(curve.Y, float64(p.Capacity))
		xmax = max(xmax, p.PerSec)
	}
	marks.X, marks.Y = curve.X, curve.Y
	chosen := rep.Recommended()
	what := "knee"
	if rep.Chosen != rep.Knee {
		what = "asked"
	}
	pick := Series{Label: what, Role: RoleMarks, Mark: MarkFailed, X: []float64{chosen.PerSec}, Y: []float64{float64(chosen.Capacity)}}
	pn := &Panel{XMin: 0, XMax: xmax * 1.04, IntY: true, YLabel: "capacity σ (permits)",
		Series: []Series{curve, marks, pick}}
	top := float64(rep.Curve[firstFit(rep.Curve)].Capacity)
	// The point's own label goes above it and the relaxed one below, clear of the curve.
	pn.Labels = append(pn.Labels, Label{X: chosen.PerSec, Y: float64(chosen.Capacity) + 0.08*top,
		Text: fmt.Sprintf("%s: %s, capacity %d", what, chosen.RateText, chosen.Capacity), Small: true})
	legend := []LegendEntry{
		{Label: "σ(ρ): least capacity that admits every request", Role: RoleAdmitted, Colors: []color.Color{tb}},
		{Label: what, Role: RoleMarks, Mark: MarkFailed},
	}
	if r := rep.Relaxed; r != nil {
		pn.Series = append(pn.Series, Series{Label: "relaxed", Role: RoleMarks, Mark: MarkRejected,
			X: []float64{chosen.PerSec}, Y: []float64{float64(r.Capacity)}})
		pn.Labels = append(pn.Labels, Label{X: chosen.PerSec, Y: float64(r.Capacity) - 0.08*top,
			Text: fmt.Sprintf("refusing ≤ %s: capacity %d", percent(r.PPM), r.Capacity), Small: true})
		legend = append(legend, LegendEntry{Label: fmt.Sprintf("least capacity refusing ≤ %s of permits", percent(r.PPM)), Role: RoleMarks, Mark: MarkRejected})
	}
	for _, m := range []struct {
		name string
		x    float64
	}{{"mean", st.MeanPerSec}, {"peak", st.PeakPerSec}} {
		if m.x <= 0 || m.x > pn.XMax {
			continue
		}
		pn.Series = append(pn.Series, Series{Label: m.name, Role: RoleMarker, X: []float64{m.x}, Y: []float64{0}})
		pn.Labels = append(pn.Labels, Label{X: m.x, Y: top, Text: fmt.Sprintf("%s %.4g/s", m.name, m.x)})
	}
	legend = append(legend, LegendEntry{Label: fmt.Sprintf("the trace's mean and peak (most in %s) rates", fmtDur(st.Window)), Role: RoleMarker})
	return &Figure{
		Name:  "burstiness",
		Title: fmt.Sprintf("%s: the capacity a token bucket needs at each rate", rep.Source),
		Subtitle: fmt.Sprintf("%d requests, %d permits over %s · token-bucket:capacity=σ,rate=ρ, T rounded up to a whole ns",
			st.Requests, st.Permits, fmtDur(st.Span().Round(time.Millisecond))),
		XLabel:      "rate ρ (permits/s)",
		Note:        fmt.Sprintf("Recommended: %s, replayed over the whole trace: it admits all %d requests; capacity %d refuses %d.", rep.Specs[0].Spec, st.Requests, chosen.Capacity-1, rep.Specs[0].BelowRefused),
		Panels:      []*Panel{pn},
		Legend:      legend,
		PanelHeight: 420,
	}
}

func firstFit(curve []fitpkg.Point) int {
	for i, p := range curve {
		if p.Fits() {
			return i
		}
	}
	return 0
}

// percent prints parts per million as a percentage: 10000 is "1%", 500 "0.05%".
func percent(ppm int64) string {
	return trimZeros(fmt.Sprintf("%.4f", float64(ppm)/1e4)) + "%"
}
