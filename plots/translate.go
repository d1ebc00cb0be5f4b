package plots

import (
	"errors"
	"fmt"
	"image/color"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/translate"
)

// Translation is a translate run as small multiples: one panel per translated lane, its
// cumulative admissions minus its reference's (the token bucket, or the waiting one for a
// library that never refuses), in the kind's colour, against the reference's own line at 0
// (black dashed), with a vertical line at the first request it decides otherwise. A lane on
// the dashed line admitted as many as the reference by every instant; where it leaves it, and
// by how much, is where and how the translation cannot say the intent. A lane whose callers
// wait counts a request when its wait ends, so it trails the reference by its waits even when
// it admits the same requests (the panel's title says so: checked request for request).
func Translation(rep *translate.Report) (*Figure, error) {
	refs := map[string]translate.LaneReport{}
	for _, l := range rep.Lanes {
		if l.Ran && l.Fit == translate.FitReference {
			refs[l.Lane] = l
		}
	}
	if ref, ok := refs[translate.Reference]; !ok || len(ref.Cumulative) == 0 {
		return nil, errors.New("plots: a translation report without its reference's admissions")
	}
	per, unit := timeUnit(rep.Horizon)
	xmax := toUnit(rep.Horizon, per)
	var panels []*Panel
	for _, l := range rep.Lanes {
		if !l.Ran || l.Fit == translate.FitReference {
			continue
		}
		against := refs[l.Against]
		stack, err := engine.ParseStack(l.Spec)
		if err != nil {
			return nil, fmt.Errorf("plots: %s: %w", l.Lane, err)
		}
		c := LaneColor(engine.LaneSpec{Stack: stack})
		diff := Series{Label: l.Lane + " − " + l.Against, Role: RoleAdmitted, Color: c, Step: true, X: []float64{0}, Y: []float64{0}}
		lo, hi := 0.0, 0.0
		for i := range min(len(l.Cumulative), len(against.Cumulative)) {
			end := min(time.Duration(i+1)*rep.BinWidth, rep.Horizon)
			d := float64(l.Cumulative[i] - against.Cumulative[i])
			diff.X = append(diff.X, toUnit(end, per))
			diff.Y = append(diff.Y, d)
			lo, hi = min(lo, d), max(hi, d)
		}
		if lo == hi {
			lo, hi = -1, 1
		}
		pad := 0.12 * (hi - lo)
		pn := &Panel{Title: l.Lane + ": " + verdict(l), TitleColor: c, XMin: 0, XMax: xmax, YMin: lo - pad, YMax: hi + pad, IntY: true,
			YLabel: "admitted − ref",
			Series: []Series{{Label: l.Against, Role: RoleBound, X: []float64{0, xmax}, Y: []float64{0, 0}}, diff}}
		if f := l.FirstDifference; f != nil {
			pn.Series = append(pn.Series, Series{Label: "first difference", Role: RoleMarker, X: []float64{toUnit(f.At, per)}, Y: []float64{0}})
		}
		panels = append(panels, pn)
	}
	return &Figure{
		Name:     "translate",
		Title:    fmt.Sprintf("%s in each library's terms: admissions against the token bucket's", rep.Intent),
		Subtitle: fmt.Sprintf("%s: %d requests over %s, open loop · reference %s", trafficText(rep), rep.Requests, fmtDur(rep.Horizon), rep.Reference),
		XLabel:   "time (" + unit + ")",
		Cols:     columnsFor(len(panels)),
		Panels:   panels,
		Legend: []LegendEntry{
			{Label: "admitted so far minus the reference's", Role: RoleAdmitted, Colors: laneColorsOf(rep)},
			{Label: "the reference (the waiting one for uber)", Role: RoleBound},
			{Label: "first request decided otherwise", Role: RoleMarker},
		},
		Note:        "Counted at each decision; uber and its waiting reference when each call's sleep ends.",
		PanelHeight: 140,
	}, nil
}

func laneColorsOf(rep *translate.Report) []color.Color {
	var out []color.Color
	for _, l := range rep.Lanes {
		if !l.Ran || l.Fit == translate.FitReference {
			continue
		}
		stack, err := engine.ParseStack(l.Spec)
		if err != nil {
			continue
		}
		c := LaneColor(engine.LaneSpec{Stack: stack})
		dup := false
		for _, o := range out {
			dup = dup || sameColor(o, c)
		}
		if !dup {
			out = append(out, c)
		}
	}
	return out
}

// verdict is a lane's panel title: "identical", or where it first differs.
func verdict(l translate.LaneReport) string {
	if l.FirstDifference == nil {
		return "identical"
	}
	return fmt.Sprintf("%d differ, from #%d at %s", l.Differing, l.FirstDifference.Request, fmtDur(l.FirstDifference.At))
}

func trafficText(rep *translate.Report) string {
	if rep.Traffic == "" {
		return "the traffic"
	}
	return rep.Traffic
}

// columnsFor is the panels per row: 3, unless 2 fills every row and 3 does not (a short last
// row leaves the panel above a gap without the x axis's labels).
func columnsFor(n int) int {
	if n%3 != 0 && n%2 == 0 {
		return 2
	}
	return 3
}
