package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"time"

	"github.com/ratelab/ratelab/engine"
)

// TimelineLimit is the most marks per lane the timeline draws: beyond it a mark per request
// is no longer a picture. Longer runs use the rate chart.
const TimelineLimit = 300

// TimelineFits reports whether a run with these results is small enough for the timeline
// (whether or not it was traced): a caller may then rerun it with Scenario.Trace set.
func TimelineFits(res *engine.Results) bool {
	for _, l := range res.Lanes {
		if l.Totals.Attempts+l.Totals.Failed > TimelineLimit {
			return false
		}
	}
	return len(res.Lanes) > 0
}

var timelineChart = Chart{
	Name:    "timeline",
	Summary: "every request of every lane as a mark: admitted, rejected, retried (small runs, needs the trace)",
	Applies: hasTimeline,
	Build:   Timeline,
	Zooms:   true,
}

func hasTimeline(sc *engine.Scenario, res *engine.Results, _ Params) bool {
	if !TimelineFits(res) {
		return false
	}
	for _, l := range res.Lanes {
		if l.Truncated || (len(l.Trace) == 0 && l.Totals.Attempts > 0) {
			return false
		}
	}
	return true
}

// Timeline draws every request of every lane as a mark on a shared time axis, one row per
// lane: admitted ●, admitted on a retry ▲, rejected ✕, a retry rejected +, refused by the
// downstream's pool □. Marks in the same column of time stack upward in arrival order; thin
// lines in a lane's kind colour mark its window or slot boundaries (limiters.Grid). It needs
// the trace (Scenario.Trace) and a small run (TimelineLimit). A run whose requests all fall in
// a short stretch of it is zoomed to them.
//
// p.View is the stretch shown; the zero View is the whole run, or where its requests are.
func Timeline(sc *engine.Scenario, res *engine.Results, p Params) (*Figure, error) {
	v := p.View
	if !hasTimeline(sc, res, p) {
		return nil, fmt.Errorf("timeline: %w (it needs a traced run of at most %d attempts per lane)", ErrNotApplicable, TimelineLimit)
	}
	type mark struct {
		at   time.Duration
		kind Mark
	}
	marks := make([][]mark, len(res.Lanes))
	first, last := time.Duration(math.MaxInt64), time.Duration(-1)
	for i, l := range res.Lanes {
		for _, r := range l.Trace {
			var m Mark
			switch r.Outcome {
			case engine.OutcomeAdmitted:
				m = MarkAdmitted
				if r.Attempt > 1 {
					m = MarkAdmittedRetry
				}
			case engine.OutcomeRejected, engine.OutcomeNever:
				m = MarkRejected
				if r.Attempt > 1 {
					m = MarkRejectedRetry
				}
			case engine.OutcomeFailed:
				m = MarkFailed
			default:
				continue
			}
			marks[i] = append(marks[i], mark{r.At, m})
			first, last = min(first, r.At), max(last, r.At)
		}
	}
	ax := newAxis(res, v)
	zoomed := false
	if v.Whole() && last >= 0 && (last-first) < res.Horizon/4 {
		pad := max((last-first)/8, time.Millisecond)
		q := roundTo(last - first)
		lo, hi := max((first-pad)/q*q, 0), min((last+pad+q-1)/q*q, res.Horizon)
		ax = newAxis(res, View{From: lo, To: hi})
		zoomed = true
	}
	lo, hi, per := ax.lo, ax.hi, ax.per
	for i := range marks { // only the marks on the axis
		marks[i] = slices.DeleteFunc(marks[i], func(m mark) bool { return m.at < lo || m.at > hi })
	}
	xmin, xmax := ax.xmin(), ax.xmax()
	const columns = 110
	colOf := func(t time.Duration) int { return int(float64(t-lo) / float64(hi-lo) * columns) }
	maxStack := 1
	for _, ms := range marks {
		counts := map[int]int{}
		for _, m := range ms {
			counts[colOf(m.at)]++
			maxStack = max(maxStack, counts[colOf(m.at)])
		}
	}
	// Marks fill [base−0.36, base+0.12]; the lane's name sits above. Stacks of up to
	// tallStack marks share one spacing; a taller one is squeezed into the same height and
	// labelled with its count.
	const tallStack = 8
	step := 0.14
	if maxStack > 1 {
		step = min(step, 0.48/float64(min(maxStack, tallStack)-1))
	}
	n := len(res.Lanes)
	pn := &Panel{XMin: xmin, XMax: xmax, YMin: -0.5, YMax: float64(n) - 0.45, HideYTicks: true}
	present := map[Mark]bool{}
	tall := false
	var bounds boundarySet
	for i, ms := range marks {
		base := float64(n - 1 - i)
		c := LaneColor(sc.Lanes[i])
		pn.Labels = append(pn.Labels, Label{X: xmin, Y: base + 0.17, Text: laneTitle(sc, res, i)})
		if b, what, ok := boundaries(sc.Lanes[i], ax); ok { // under the marks, across the lane's row only
			b.Lo = make([]float64, len(b.X))
			for k := range b.X {
				b.Lo[k], b.Y[k] = base-0.45, base+0.45
			}
			pn.Series = append(pn.Series, b)
			bounds.add(what, b.Color)
		} else {
			bounds.skip(what)
		}
		byKind := map[Mark]*Series{}
		height := map[int]int{}
		for _, m := range ms {
			height[colOf(m.at)]++
		}
		counts := map[int]int{}
		for _, m := range ms {
			col := colOf(m.at)
			st := step
			if h := height[col]; h > tallStack {
				st = 0.48 / float64(h-1)
				if counts[col] == 0 {
					pn.Labels = append(pn.Labels, Label{X: toUnit(m.at, per), Y: base - 0.12, Text: fmt.Sprintf("×%d", h), Small: true})
					tall = true
				}
			}
			y := base - 0.36 + float64(counts[col])*st
			counts[col]++
			s := byKind[m.kind]
			if s == nil {
				s = &Series{Label: fmt.Sprintf("%s: %s", res.Lanes[i].Name, m.kind), Role: RoleMarks, Mark: m.kind, Color: c}
				byKind[m.kind] = s
			}
			s.X = append(s.X, toUnit(m.at, per))
			s.Y = append(s.Y, y)
			present[m.kind] = true
		}
		for _, k := range markOrder {
			if s := byKind[k]; s != nil {
				pn.Series = append(pn.Series, *s)
			}
		}
	}
	f := &Figure{
		Name:        "timeline",
		Title:       res.Scenario + ": every request, lane by lane",
		Subtitle:    runText(sc, res),
		XLabel:      ax.label(),
		Panels:      []*Panel{pn},
		PanelHeight: 40 + 75*n,
		Note:        fmt.Sprintf("Marks less than %s apart stack upward in arrival order.", shortDur((hi-lo)/columns)),
		TimeAxis:    true,
		TimeUnit:    per,
	}
	if tall {
		f.Note += " A number beside a stack counts its marks."
	}
	switch {
	case zoomed:
		f.Note = fmt.Sprintf("Zoomed to %s–%s, where the requests are (the run is %s). ", shortDur(lo), shortDur(hi), fmtDur(res.Horizon)) + f.Note
	case ax.zoomed():
		f.Note = ax.note() + " " + f.Note
	}
	lanes := laneColors(sc)
	for _, k := range markOrder {
		if present[k] {
			e := LegendEntry{Label: string(k), Role: RoleMarks, Mark: k}
			if k == MarkAdmitted || k == MarkAdmittedRetry {
				e.Colors = lanes
				if len(lanes) > 1 {
					e.Label += " (lane colour)"
				}
			} else {
				e.Colors = []color.Color{black}
			}
			f.Legend = append(f.Legend, e)
		}
	}
	bounds.legend(f)
	return f, nil
}

// roundTo is the power of ten a tenth of span rounds the zoomed axis to (at least 1µs).
func roundTo(span time.Duration) time.Duration {
	q := time.Microsecond
	for q*100 <= span {
		q *= 10
	}
	return q
}
