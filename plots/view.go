package plots

import (
	"fmt"
	"image/color"
	"slices"
	"strings"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// View is the stretch of virtual time a chart shows, [From, To); the zero View is the whole
// run, and To = 0 means the horizon. Charts built for a view bin and scale for it: a rate
// chart zoomed to 1s of a 2-minute run groups the bins of that second, not of the run.
type View struct{ From, To time.Duration }

// Whole reports whether v is the whole run.
func (v View) Whole() bool { return v.From == 0 && v.To == 0 }

// span is v's [lo, hi) in a run of res, or an error naming the bad end.
func (v View) span(res *engine.Results) (lo, hi time.Duration, err error) {
	lo, hi = v.From, v.To
	if hi == 0 {
		hi = res.Horizon
	}
	switch {
	case lo < 0:
		return 0, 0, fmt.Errorf("plots: --from %s: must not be negative", fmtDur(lo))
	case hi > res.Horizon:
		return 0, 0, fmt.Errorf("plots: --to %s: past the run's horizon, %s", fmtDur(hi), fmtDur(res.Horizon))
	case lo >= hi:
		return 0, 0, fmt.Errorf("plots: --from %s must be before --to %s", fmtDur(lo), fmtDur(hi))
	}
	return lo, hi, nil
}

// axis is a chart's time axis: [lo, hi) of virtual time, in a unit chosen for its length.
type axis struct {
	lo, hi  time.Duration
	per     time.Duration
	unit    string
	horizon time.Duration
}

// newAxis is the axis of v (the whole run for the zero View) in a run of res; v must be
// valid (BuildWith checks it).
func newAxis(res *engine.Results, v View) axis {
	lo, hi, err := v.span(res)
	if err != nil {
		lo, hi = 0, res.Horizon
	}
	per, unit := timeUnit(hi - lo)
	return axis{lo: lo, hi: hi, per: per, unit: unit, horizon: res.Horizon}
}

func (a axis) x(d time.Duration) float64 { return toUnit(d, a.per) }
func (a axis) xmin() float64             { return a.x(a.lo) }
func (a axis) xmax() float64             { return a.x(a.hi) }
func (a axis) label() string             { return fmt.Sprintf("time (%s)", a.unit) }
func (a axis) zoomed() bool              { return a.lo > 0 || a.hi < a.horizon }

// note says what the axis shows of the run, when it is not all of it.
func (a axis) note() string {
	if !a.zoomed() {
		return ""
	}
	return fmt.Sprintf("Shown: %s to %s of a %s run.", fmtDur(a.lo), fmtDur(a.hi), fmtDur(a.horizon))
}

// bins is the bins that overlap [lo, hi).
func (a axis) bins(bins []engine.Bin, width time.Duration) []engine.Bin {
	if width <= 0 || len(bins) == 0 {
		return bins
	}
	i := min(int(a.lo/width), len(bins))
	j := min(int((a.hi+width-1)/width), len(bins))
	return bins[i:max(i, j)]
}

// panel is a panel on this axis.
func (a axis) panel(title string) *Panel {
	return &Panel{Title: title, XMin: a.xmin(), XMax: a.xmax()}
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " " + b
}

// cutSeries is s without its points outside [xmin, xmax]; a step line keeps the last point
// before xmin, which holds there. A horizontal reference (two points) is kept whole.
func cutSeries(s Series, xmin, xmax float64) Series {
	if s.Role.reference() && s.Role != RoleMarker && s.Role != RoleBoundary {
		return s
	}
	out := s
	out.X, out.Y, out.Lo = nil, nil, nil
	for i, x := range s.X {
		keep := x >= xmin && x <= xmax
		if !keep && s.Step && x < xmin && (i+1 == len(s.X) || s.X[i+1] > xmin) {
			keep = true
		}
		if keep {
			out.X, out.Y = append(out.X, x), append(out.Y, s.Y[i])
			if s.Lo != nil {
				out.Lo = append(out.Lo, s.Lo[i])
			}
		}
	}
	return out
}

// gridOf is the grid of the lane's first stage that has one.
func gridOf(lane engine.LaneSpec) (limiters.Grid, limiters.Kind, bool) {
	for _, s := range lane.Stack {
		if g, ok := limiters.GridOf(s); ok {
			return g, s.Kind(), true
		}
	}
	return limiters.Grid{}, "", false
}

// maxBoundaries is the most boundaries a panel draws, about one per 25 pixels of a full-width
// panel: closer, they are a wash of colour over the data (a minute of 1s windows), and the
// note says to zoom.
const maxBoundaries = 40

// boundaries is the lane's window (or slot) boundaries on axis a as a series, and what they
// are ("window", "slot"); false when the lane has none, or too many to draw (then what is
// still named, for the note).
func boundaries(lane engine.LaneSpec, a axis) (Series, string, bool) {
	grid, kind, ok := gridOf(lane)
	if !ok {
		return Series{}, "", false
	}
	cuts, ok := grid.Cuts(a.lo, a.hi, maxBoundaries)
	if !ok {
		return Series{}, grid.What, false
	}
	s := Series{Label: fmt.Sprintf("%s boundaries (%s, every %s)", grid.What, kind, fmtDur(grid.Period/time.Duration(grid.Parts))),
		Role: RoleBoundary, Color: KindColor(kind)}
	for _, t := range cuts {
		if t == a.lo || t == a.hi { // on the frame
			continue
		}
		s.X = append(s.X, a.x(t))
		s.Y = append(s.Y, 0)
	}
	return s, grid.What, len(s.X) > 0
}

// boundarySet collects the boundaries a figure draws, for its legend entry.
type boundarySet struct {
	whats   []string
	colors  []color.Color
	omitted []string // too many to draw
}

// skip notes that a lane's boundaries of this kind were too many to draw.
func (b *boundarySet) skip(what string) {
	if what != "" && !slices.Contains(b.omitted, what) {
		b.omitted = append(b.omitted, what)
	}
}

func (b *boundarySet) add(what string, c color.Color) {
	if !slices.Contains(b.whats, what) {
		b.whats = append(b.whats, what)
	}
	if !slices.ContainsFunc(b.colors, func(o color.Color) bool { return sameColor(o, c) }) {
		b.colors = append(b.colors, c)
	}
}

// legend is the entry for the boundaries drawn ("window and slot boundaries"), if any.
func (b *boundarySet) legend(f *Figure) {
	if len(b.omitted) > 0 {
		f.Note = joinNote(f.Note, fmt.Sprintf("%s boundaries are not drawn where more than %d would be in view; zoom in (--from, --to) to see them.",
			capitalize(strings.Join(b.omitted, " and ")), maxBoundaries))
	}
	if len(b.whats) == 0 {
		return
	}
	label := ""
	for i, w := range b.whats {
		switch {
		case i == 0:
		case i == len(b.whats)-1:
			label += " and "
		default:
			label += ", "
		}
		label += w
	}
	label += " boundaries"
	if len(b.colors) > 1 {
		label += " (kind colour)"
	}
	f.Legend = append(f.Legend, LegendEntry{Label: label, Role: RoleBoundary, Colors: b.colors})
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
