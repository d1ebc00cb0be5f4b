package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// The fleet chart's roles.
const (
	// RoleStacked is one instance's layer of a stacked area: at each X it covers [Lo, Y] until
	// the next X, Lo being the instances below it. Filled in a tint of the instance's colour
	// (InstanceColor), its top edge a line in the colour itself.
	RoleStacked Role = "stacked"
	// RoleLimit is the global limit over one bin: the configured limit's dotted line, dark
	// grey on a white halo so that it reads over the stacked colours.
	RoleLimit Role = "limit"
	// RoleFault is a set of fault intervals: X holds [from, until) pairs on the time axis (Y is
	// 0 at each), each shaded across the panel's height. A reference: the timeline configured,
	// not measured.
	RoleFault Role = "fault"
)

// fleetBins is how many display bins the fleet chart aims for at most: as the rate chart.
const fleetBins = rateBins

// Fleet shows, for each fleet lane (engine.LaneSpec.Fleet), its admissions per display bin
// stacked by the instance that admitted them (instance 0 at the bottom, one colour each,
// InstanceColor), against the global limit over one bin as a dotted line: the lane's nominal
// rate × the bin's width (150/s in bins of 100ms: 15). Three local instances behind a
// round-robin balancer stack three layers of 15, twice the line. The fault timeline is drawn
// in every panel: store outages and partitions shaded dark, added latency light, joins and
// leaves as dashed lines. Each panel's title names the lane's coordination model (with a
// central store's failure policy) and the overshoot the engine measured: the most admitted in
// any natural window over what one limiter may admit there (engine.FleetResult.Overshoot).
// Engine bins are grouped as the rate chart groups them (×1, 2, 5, 10, … to at most 150).
//
// p.View is the stretch shown, its bins grouped for it.
func Fleet(sc *engine.Scenario, res *engine.Results, p Params) (*Figure, error) {
	v := p.View
	lanes := fleetLanes(sc, res)
	if len(lanes) == 0 {
		return nil, fmt.Errorf("fleet: %w: no lane runs on a fleet (a fleet: block and a lane's fleet: model)", ErrNotApplicable)
	}
	ax := newAxis(res, v)
	per := ax.per
	first := res.Lanes[lanes[0]]
	lo, hi := ax.binRange(len(first.Bins), res.BinWidth)
	grouped := niceGroup(hi-lo, fleetBins)
	width := time.Duration(grouped) * res.BinWidth
	n := sc.Fleet.Instances
	f := &Figure{
		Name:  "fleet",
		Title: res.Scenario + ": admissions by instance against the global limit",
		Subtitle: fmt.Sprintf("%s · %d instances behind a %s balancer · bins of %s%s",
			runText(sc, res), n, sc.Fleet.Balancer, fmtDur(width), clockText(sc.Faults)),
		XLabel:   ax.label(),
		ShareY:   true,
		TimeAxis: true,
		TimeUnit: per,
	}
	faults := faultSeries(sc.Faults, ax)
	layers := instanceLayers(n)
	top := 0.0
	var limits, storeless []string
	for _, i := range lanes {
		lane := res.Lanes[i]
		pn := ax.panel(fleetTitle(sc.Lanes[i], lane, n))
		pn.YLabel, pn.IntY = "per "+fmtDur(width), true
		if usesStore(sc.Lanes[i]) {
			pn.Series = append(pn.Series, faults...) // under the stacks
		} else if len(faults) > 0 {
			storeless = append(storeless, string(sc.Lanes[i].Fleet.Model))
		}
		spans := group(lane.Bins[lo:hi], res.BinWidth, res.Horizon, grouped)
		below := make([]float64, len(spans))
		for _, ly := range layers {
			s := Series{Label: ly.label, Role: RoleStacked, Color: ly.color, Step: true}
			for k, sp := range spans {
				var count int64
				b0 := lo + k*grouped
				for _, in := range lane.Fleet.Instances[ly.from:ly.to] {
					for _, c := range in.Bins[b0:min(b0+grouped, hi)] {
						count += c
					}
				}
				s.X, s.Lo, s.Y = append(s.X, toUnit(sp.start, per)), append(s.Lo, below[k]), append(s.Y, below[k]+float64(count))
				below[k] += float64(count)
				top = max(top, below[k])
			}
			if k := len(spans) - 1; k >= 0 { // the last bin holds to its end
				s.X, s.Lo, s.Y = append(s.X, toUnit(spans[k].start+spans[k].dur, per)), append(s.Lo, s.Lo[k]), append(s.Y, s.Y[k])
			}
			pn.Series = append(pn.Series, s)
		}
		if limit, ok := nominal(sc.Lanes[i].Stack, width); ok {
			rate, _ := nominal(sc.Lanes[i].Stack, time.Second)
			pn.Series = append(pn.Series, Series{Label: fmt.Sprintf("global limit %s per %s (%s/s)", g(limit), fmtDur(width), g(rate)),
				Role: RoleLimit, X: []float64{pn.XMin, pn.XMax}, Y: []float64{limit, limit}})
			top = max(top, limit)
			limits = append(limits, fmt.Sprintf("%s per %s (%s/s)", g(limit), fmtDur(width), g(rate)))
		}
		pn.Series = append(pn.Series, eventSeries(sc.Faults, ax)...)
		f.Panels = append(f.Panels, pn)
	}
	// One y range for every panel, fixed so that the fault labels sit near its top.
	ymax := math.Max(math.Ceil(top*1.15), 1)
	for k, pn := range f.Panels {
		pn.YMin, pn.YMax = 0, ymax
		pn.Labels = faultLabels(sc.Faults, ax, ymax, usesStore(sc.Lanes[lanes[k]]))
	}

	f.PanelHeight = max(panelHeight(len(f.Panels)), 170)
	for _, ly := range layers {
		f.Legend = append(f.Legend, LegendEntry{Label: ly.label, Role: RoleStacked, Colors: []color.Color{ly.color}})
	}
	if len(limits) > 0 {
		label := "global limit: " + limits[0]
		if slices.ContainsFunc(limits, func(l string) bool { return l != limits[0] }) {
			label = "global limit over one bin (the lane's rate × " + fmtDur(width) + ")"
		}
		f.Legend = append(f.Legend, LegendEntry{Label: label, Role: RoleLimit})
	}
	for _, s := range faults {
		f.Legend = append(f.Legend, LegendEntry{Label: s.Label, Role: RoleFault, Colors: []color.Color{s.Color}})
	}
	if len(eventSeries(sc.Faults, ax)) > 0 {
		f.Legend = append(f.Legend, LegendEntry{Label: "instance joins or leaves", Role: RoleMarker})
	}
	window := first.Fleet.Window
	f.Note = joinNote(ax.note(), fmt.Sprintf("Overshoot: the most the fleet admitted in any %s over the most one limiter of the lane's spec may admit in %s (its rate and its burst).",
		fmtDur(window), fmtDur(window)))
	if len(storeless) > 0 {
		slices.Sort(storeless)
		storeless = slices.Compact(storeless)
		f.Note = joinNote(f.Note, "A "+strings.Join(storeless, " or ")+" lane keeps no shared store: the store's faults are not shaded on it.")
	}
	return f, nil
}

// fleetLanes is the lanes that ran on the fleet and measured per-bin admissions per instance.
func fleetLanes(sc *engine.Scenario, res *engine.Results) []int {
	if sc.Fleet == nil {
		return nil
	}
	var out []int
	for i, spec := range sc.Lanes {
		if spec.Fleet == nil || i >= len(res.Lanes) || res.Lanes[i].Fleet == nil {
			continue
		}
		lane := res.Lanes[i]
		ok := len(lane.Fleet.Instances) == sc.Fleet.Instances
		for _, in := range lane.Fleet.Instances {
			ok = ok && len(in.Bins) == len(lane.Bins)
		}
		if ok {
			out = append(out, i)
		}
	}
	return out
}

var fleetChart = Chart{
	Name:    "fleet",
	Summary: "each fleet lane's admissions per bin, stacked by instance, against the global limit, with the fault timeline",
	Applies: hasFleet,
	Build:   Fleet,
	Zooms:   true,
}

func hasFleet(sc *engine.Scenario, res *engine.Results, _ Params) bool {
	return len(fleetLanes(sc, res)) > 0
}

// binRange is the indices [lo, hi) of the engine bins that overlap the axis.
func (a axis) binRange(n int, width time.Duration) (lo, hi int) {
	if width <= 0 {
		return 0, n
	}
	lo = min(int(a.lo/width), n)
	hi = min(int((a.hi+width-1)/width), n)
	return lo, max(lo, hi)
}

// layer is one stacked layer: instances [from, to) summed.
type layer struct {
	from, to int
	label    string
	color    color.Color
}

// instanceLayers is a layer per instance while the palette lasts; beyond it the last layer
// sums the rest, in grey: 9 instances are instances 0 to 4, then "instances 5–8".
func instanceLayers(n int) []layer {
	var out []layer
	for k := 0; k < n; k++ {
		if n > len(instanceColors) && k == len(instanceColors)-1 {
			out = append(out, layer{from: k, to: n, label: fmt.Sprintf("instances %d–%d", k, n-1), color: midGrey})
			break
		}
		out = append(out, layer{from: k, to: k + 1, label: fmt.Sprintf("instance %d", k), color: InstanceColor(k)})
	}
	return out
}

// fleetTitle names the lane, its coordination model and the overshoot it measured:
// "central fail-open · central store, fail-open after 20ms · overshoot 1.68 (300 in 1s, one limiter 179)".
func fleetTitle(spec engine.LaneSpec, lane engine.LaneResult, n int) string {
	c := spec.Fleet
	var how string
	switch c.Model {
	case engine.CoordLocal:
		how = "the full limit on each instance"
	case engine.CoordSplit:
		how = fmt.Sprintf("the limit divided by %d", n)
		if len(spec.Stack) == 1 {
			if part, err := limiters.SplitSpec(spec.Stack[0], n); err == nil {
				how += ", each instance " + part.String()
			}
		}
	case engine.CoordCentral:
		clock := ""
		if c.Clock == engine.ClockCaller {
			clock = " by the callers' clocks"
		}
		how = fmt.Sprintf("one store%s, %s when it does not answer in %s", clock, c.OnFailure, fmtDur(c.Timeout))
	case engine.CoordAsync:
		how = fmt.Sprintf("local decisions synced every %s via instance %d", fmtDur(c.Sync), c.Owner)
	}
	model := string(c.Model)
	if how != "" {
		model += ": " + how
	}
	if strings.HasPrefix(lane.Name, string(c.Model)) && how != "" { // "local" needs no "local: "
		model = how
	}
	fr := lane.Fleet
	over := "no bound to overshoot"
	if fr.Bound > 0 {
		over = fmt.Sprintf("overshoot %s (%d in %s, one limiter %d)", strconv.FormatFloat(fr.Overshoot, 'f', 2, 64), fr.MaxAdmitted, fmtDur(fr.Window), fr.Bound)
	}
	return lane.Name + " · " + model + " · " + over
}

// Fault shading, opaque greys of the GIF palette's ramp drawn under the stacks (so that the
// instances keep their colours), with a strip across the top of the panel, which the stacks
// never reach: outages and partitions darker, added latency lighter.
var (
	outageShade  = color.RGBA{0xcc, 0xcc, 0xcc, 0xff} // grey 20/25
	latencyShade = color.RGBA{0xe0, 0xe0, 0xe0, 0xff} // grey 22/25
)

// faultStrip is the height of the strip a fault's shading has across the panel's top.
var faultStrip = vg.Points(4)

// faultSeries is the fault timeline's intervals on the axis, one series per kind of shading:
// store outages (every instance cut off), partitions (some instances), added latency.
func faultSeries(faults []engine.Fault, a axis) []Series {
	var out []Series
	add := func(label string, c color.Color, from, until time.Duration) {
		from, until = max(from, a.lo), min(until, a.hi)
		if from >= until {
			return
		}
		for i := range out {
			if out[i].Label == label {
				out[i].X, out[i].Y = append(out[i].X, a.x(from), a.x(until)), append(out[i].Y, 0, 0)
				return
			}
		}
		out = append(out, Series{Label: label, Role: RoleFault, Color: c, X: []float64{a.x(from), a.x(until)}, Y: []float64{0, 0}})
	}
	for _, ft := range faults {
		switch ft.Kind {
		case engine.FaultOutage:
			if len(ft.Instances) == 0 {
				add("store outage", outageShade, ft.From, ft.Until)
			} else {
				add("partition: "+instancesText(ft.Instances)+" cut off from the store", outageShade, ft.From, ft.Until)
			}
		case engine.FaultLatency:
			add(fmt.Sprintf("store latency +%s", fmtDur(ft.Add)), latencyShade, ft.From, ft.Until)
		}
	}
	return out
}

// usesStore: the lane's instances share a store (central) or talk to an owner (async), so
// the store's outages and latency reach it; a local or split lane has neither.
func usesStore(lane engine.LaneSpec) bool {
	return lane.Fleet != nil && (lane.Fleet.Model == engine.CoordCentral || lane.Fleet.Model == engine.CoordAsync)
}

// faultLabels names each shaded interval in the panel, near its top: "store down", "+50ms";
// the store's faults only where the lane has a store.
func faultLabels(faults []engine.Fault, a axis, ymax float64, store bool) []Label {
	var out []Label
	for _, ft := range faults {
		if !store {
			break
		}
		from, until := max(ft.From, a.lo), min(ft.Until, a.hi)
		var text string
		switch ft.Kind {
		case engine.FaultOutage:
			text = "store down"
			if len(ft.Instances) > 0 {
				text = "partition: " + instancesText(ft.Instances)
			}
		case engine.FaultLatency:
			text = "+" + fmtDur(ft.Add)
		default:
			continue
		}
		if from < until {
			out = append(out, Label{X: a.x(from), Y: ymax * 0.9, Text: text, Small: true})
		}
	}
	for _, ft := range faults {
		if (ft.Kind == engine.FaultJoin || ft.Kind == engine.FaultLeave) && ft.At > a.lo && ft.At < a.hi {
			out = append(out, Label{X: a.x(ft.At), Y: ymax * 0.8, Text: fmt.Sprintf("%d %ss", ft.Instance, ft.Kind), Small: true})
		}
	}
	return out
}

// eventSeries is the joins and leaves on the axis, as dashed vertical lines.
func eventSeries(faults []engine.Fault, a axis) []Series {
	s := Series{Label: "joins and leaves", Role: RoleMarker}
	for _, ft := range faults {
		if (ft.Kind == engine.FaultJoin || ft.Kind == engine.FaultLeave) && ft.At > a.lo && ft.At < a.hi {
			s.X, s.Y = append(s.X, a.x(ft.At)), append(s.Y, 0)
		}
	}
	if len(s.X) == 0 {
		return nil
	}
	return []Series{s}
}

// instancesText is "instance 2" or "instances 1, 2".
func instancesText(ks []int) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprint(k)
	}
	if len(ks) == 1 {
		return "instance " + parts[0]
	}
	return "instances " + strings.Join(parts, ", ")
}

// clockText names the clock faults for the subtitle: " · instance 1's clock 50ms ahead".
func clockText(faults []engine.Fault) string {
	var out string
	for _, ft := range faults {
		if ft.Kind == engine.FaultClock && ft.Offset > 0 {
			out += fmt.Sprintf(" · instance %d's clock %s ahead", ft.Instance, fmtDur(ft.Offset))
		}
	}
	return out
}

// stackedTint is how far toward white a stacked layer's fill is, in tenths: a tint the GIF
// palette has, so that an animation keeps the fills exact.
const stackedTint = 3

// stackArea fills one stacked layer, post-step, between its bottom and top, and strokes its
// top edge.
type stackArea struct {
	xs, lo, hi []float64
	c          color.Color
}

func (s stackArea) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := len(s.xs)
	if n < 2 {
		return
	}
	var top, bottom []vg.Point
	for i := 0; i+1 < n; i++ {
		x0, x1 := trX(s.xs[i]), trX(s.xs[i+1])
		top = append(top, vg.Point{X: x0, Y: trY(s.hi[i])}, vg.Point{X: x1, Y: trY(s.hi[i])})
		bottom = append(bottom, vg.Point{X: x0, Y: trY(s.lo[i])}, vg.Point{X: x1, Y: trY(s.lo[i])})
	}
	poly := append([]vg.Point{}, top...)
	for i := len(bottom) - 1; i >= 0; i-- {
		poly = append(poly, bottom[i])
	}
	c.FillPolygon(tint(s.c, stackedTint), c.ClipPolygonXY(poly))
	c.StrokeLines(lineStyle(RoleStacked, s.c), c.ClipLinesXY(top)...)
}

// limitLine is a horizontal reference drawn over a white halo.
type limitLine struct {
	xs, ys []float64
}

func (l limitLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	pts := make([]vg.Point, len(l.xs))
	for i := range l.xs {
		pts[i] = vg.Point{X: trX(l.xs[i]), Y: trY(l.ys[i])}
	}
	style := lineStyle(RoleLimit, nil)
	halo := draw.LineStyle{Color: color.White, Width: style.Width * 2.6}
	c.StrokeLines(halo, c.ClipLinesXY(pts)...)
	c.StrokeLines(style, c.ClipLinesXY(pts)...)
}

// faultArea shades each [from, until) pair of xs across the data area's height, with a
// darker strip along its top.
type faultArea struct {
	xs []float64
	c  color.Color
}

func (f faultArea) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for i := 0; i+1 < len(f.xs); i += 2 {
		x0, x1 := max(trX(f.xs[i]), c.Min.X), min(trX(f.xs[i+1]), c.Max.X)
		if x1 <= x0 {
			continue
		}
		c.FillPolygon(f.c, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
		y := c.Max.Y - faultStrip
		c.FillPolygon(midGrey, []vg.Point{{X: x0, Y: y}, {X: x1, Y: y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	}
}

// tint is c mixed tenths/10 toward white, opaque, exactly as gifPalette mixes its tints.
func tint(c color.Color, tenths int) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((float64(v>>8)*float64(10-tenths) + 255*float64(tenths)) / 10) }
	return color.RGBA{mix(r), mix(g), mix(b), 0xff}
}

// stackedThumb is a legend swatch of a stacked layer: its tint with its top edge.
func stackedThumb(c *draw.Canvas, col color.Color) {
	c.FillPolygon(tint(col, stackedTint), []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
	c.StrokeLine2(lineStyle(RoleStacked, col), c.Min.X, c.Max.Y, c.Max.X, c.Max.Y)
}

// faultThumb is a legend swatch of a fault's shading, with its strip.
func faultThumb(c *draw.Canvas, col color.Color) {
	c.FillPolygon(col, []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
	y := c.Max.Y - faultStrip*0.75
	c.FillPolygon(midGrey, []vg.Point{{X: c.Min.X, Y: y}, {X: c.Max.X, Y: y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
}
