package plots

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratelab/ratelab/engine"
	fitpkg "github.com/ratelab/ratelab/fit"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/sweep"
)

// Sweep draws metric m of a sweep: a heatmap for two dimensions, a line chart for one. sigma,
// when not nil, is σ(ρ) at each value of the sweep's token-bucket rate dimension (see
// SigmaAxes), drawn over the heatmap.
func Sweep(res *sweep.Result, m sweep.Metric, sigma []fitpkg.Point) (*Figure, error) {
	switch len(res.Dims) {
	case 2:
		return Heatmap(res, m, sigma)
	case 1:
		return SweepLine(res, m)
	}
	return nil, fmt.Errorf("plots: a sweep of %d dimensions has no chart", len(res.Dims))
}

// SigmaAxes finds, in a two-dimensional sweep, the token bucket's rate and capacity: the
// dimensions σ(ρ) can be drawn over. ok is false when the sweep is not of those two.
func SigmaAxes(res *sweep.Result) (rate, capacity int, ok bool) {
	if len(res.Dims) != 2 {
		return 0, 0, false
	}
	rate, capacity = -1, -1
	for i, d := range res.Dims {
		if d.Kind != limiters.KindTokenBucket {
			return 0, 0, false
		}
		switch d.Field {
		case "rate":
			rate = i
		case "capacity":
			capacity = i
		}
	}
	return rate, capacity, rate >= 0 && capacity >= 0
}

// Heat is a panel's grid of coloured cells: column c of row r holds Values[r·len(Cols)+c],
// drawn in its Scale's colour with its Text, in data coordinates c ± ½, r ± ½. A NaN value (a
// cell with nothing to measure) is light grey; an invalid cell (Invalid[i], a cell that did not
// run) is hatched, with no text, so that it reads as neither a value nor an empty measure.
type Heat struct {
	Cols, Rows []string // the columns' and rows' labels
	Values     []float64
	Text       []string
	Invalid    []bool // nil: every cell ran
	Scale      Scale
}

// RoleInvalid is a legend entry for a sweep's invalid cells: the heatmap's hatch, or the line
// chart's mark.
const RoleInvalid Role = "invalid"

// invalidFill and invalidHatch are an invalid cell's ground and hatch: a white ground (no
// colour of the scale is white: its lightest is #f6f6f6) under dark grey diagonals 4pt apart,
// which no value's flat colour resembles.
var (
	invalidFill  = color.RGBA{0xff, 0xff, 0xff, 0xff}
	invalidHatch = draw.LineStyle{Color: midGrey, Width: vg.Points(0.9)}
)

// hatch fills rect as an invalid cell: its ground, and diagonals from bottom left to top
// right every 4pt, clipped to it.
func hatch(c draw.Canvas, rect vg.Rectangle) {
	c.SetColor(invalidFill)
	c.Fill(rect.Path())
	w, h := rect.Max.X-rect.Min.X, rect.Max.Y-rect.Min.Y
	step := vg.Points(4)
	for d := step / 2; d < w+h; d += step {
		// the line x − y = rect.Min.X − rect.Min.Y + d − h, clipped to the rectangle
		x0, y0 := rect.Min.X+max(0, d-h), rect.Min.Y+max(0, h-d)
		x1, y1 := rect.Min.X+min(w, d), rect.Min.Y+min(h, h-d+w)
		c.StrokeLine2(invalidHatch, x0, y0, x1, y1)
	}
	c.StrokeLines(draw.LineStyle{Color: midGrey, Width: vg.Points(0.6)}, []vg.Point{rect.Min, {X: rect.Max.X, Y: rect.Min.Y}, rect.Max, {X: rect.Min.X, Y: rect.Max.Y}, rect.Min})
}

// hatchThumb is the legend's swatch of an invalid cell.
func hatchThumb(c *draw.Canvas) { hatch(*c, c.Rectangle) }

// Scale maps values in [Lo, Hi] to colours: from near white through Hue to a dark shade of
// it, so that more reads darker in colour and in grey alike.
type Scale struct {
	Lo, Hi float64
	Hue    color.Color
}

// Color is v's colour; values outside [Lo, Hi] take the nearest end's.
func (s Scale) Color(v float64) color.Color {
	if math.IsNaN(v) {
		return lightFill
	}
	t := 0.0
	if s.Hi > s.Lo {
		t = min(max((v-s.Lo)/(s.Hi-s.Lo), 0), 1)
	}
	light := color.RGBA{0xf6, 0xf6, 0xf6, 0xff}
	hue := rgba(s.Hue)
	dark := color.RGBA{hue.R / 5, hue.G / 5, hue.B / 5, 0xff}
	if t < 0.6 {
		return lerp(light, hue, t/0.6)
	}
	return lerp(hue, dark, (t-0.6)/0.4)
}

// dark is whether text on v's colour should be white.
func (s Scale) dark(v float64) bool {
	r, g, b, _ := s.Color(v).RGBA()
	return 0.2126*float64(r)+0.7152*float64(g)+0.0722*float64(b) < 0.5*0xffff
}

func rgba(c color.Color) color.RGBA {
	r, g, b, a := c.RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
}

func lerp(a, b color.RGBA, t float64) color.RGBA {
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + t*(float64(y)-float64(x)))) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}

// Plot fills the cells, a hairline of white between them, and writes each value where it fits.
func (h *Heat) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	gap := vg.Points(0.5)
	sty := textStyle(tickSize-1, false, black)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	for r := range h.Rows {
		for k := range h.Cols {
			i := r*len(h.Cols) + k
			v := h.Values[i]
			x0, x1 := trX(float64(k)-0.5)+gap, trX(float64(k)+0.5)-gap
			y0, y1 := trY(float64(r)-0.5)+gap, trY(float64(r)+0.5)-gap
			rect := vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x1, Y: y1}}
			if h.Invalid != nil && h.Invalid[i] {
				hatch(c, rect)
				continue
			}
			c.SetColor(h.Scale.Color(v))
			c.Fill(rect.Path())
			text := h.Text[i]
			if text == "" || sty.Width(text)+vg.Points(4) > x1-x0 || sty.Height(text)+vg.Points(2) > y1-y0 {
				continue
			}
			sty.Color = black
			if h.Scale.dark(v) {
				sty.Color = color.White
			}
			c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, text)
		}
	}
}

// labelTicks labels positions 0, 1, 2, … with labels: all of them when at most target fit,
// else every k-th (the first and the last always), so that labels never overlap.
type labelTicks struct {
	labels []string
	target int
	blank  bool
}

func (t labelTicks) Ticks(lo, hi float64) []plot.Tick {
	n := len(t.labels)
	every := max(1, (n+max(t.target, 2)-1)/max(t.target, 2))
	var out []plot.Tick
	for i := range n {
		tk := plot.Tick{Value: float64(i)}
		if !t.blank && (i%every == 0 || i == n-1 && (n-1)%every >= every/2+1) {
			tk.Label = t.labels[i]
		}
		out = append(out, tk)
	}
	return out
}

// ColorBar is a heatmap's legend: its Scale as a vertical bar with ticks, and what the
// numbers are (Label, with the unit).
type ColorBar struct {
	Scale Scale
	Label string
}

func (b *ColorBar) ticks() []plot.Tick {
	var out []plot.Tick
	for _, tk := range (ticker{target: 5}).Ticks(b.Scale.Lo, b.Scale.Hi) {
		if tk.Label != "" && tk.Value >= b.Scale.Lo-1e-9*math.Abs(b.Scale.Hi-b.Scale.Lo) && tk.Value <= b.Scale.Hi*(1+1e-12)+1e-12 {
			out = append(out, tk)
		}
	}
	return out
}

// width is the room the bar takes right of the panels: the gap, the bar, its tick labels.
func (b *ColorBar) width(r renderer) vg.Length {
	sty := textStyle(tickSize, false, darkGrey)
	w := vg.Length(0)
	for _, tk := range b.ticks() {
		w = max(w, sty.Width(tk.Label))
	}
	w = vg.Points(14+5) + w
	label := textStyle(labelSize, false, darkGrey)
	for _, word := range strings.Fields(b.Label) {
		w = max(w, label.Width(word))
	}
	return vg.Points(14) + w*vg.Length(r.slack) + vg.Points(4)
}

// draw puts the bar at x, from a little above ymin (clear of the x axis's labels) to a little
// below ymax (room for the label above it).
func (b *ColorBar) draw(r renderer, c draw.Canvas, x, ymin, ymax vg.Length) {
	label := textStyle(labelSize, false, darkGrey)
	label.XAlign = draw.XLeft
	label.YAlign = draw.YBottom
	lines := r.wrap(label, b.Label, b.width(r)-vg.Points(14))
	lh := label.Height("Ag")
	top := ymax - vg.Length(len(lines))*lh - vg.Points(14)
	bottom := ymin + vg.Points(44)
	if top <= bottom {
		return
	}
	for i, line := range lines {
		c.FillText(label, vg.Point{X: x, Y: top + vg.Points(6) + vg.Length(len(lines)-1-i)*lh}, line)
	}
	barW := vg.Points(14)
	const slices = 96
	for i := range slices {
		y0 := bottom + (top-bottom)*vg.Length(i)/slices
		y1 := bottom + (top-bottom)*vg.Length(i+1)/slices
		v := b.Scale.Lo + (b.Scale.Hi-b.Scale.Lo)*(float64(i)+0.5)/slices
		c.SetColor(b.Scale.Color(v))
		c.Fill(vg.Rectangle{Min: vg.Point{X: x, Y: y0}, Max: vg.Point{X: x + barW, Y: y1 + vg.Points(0.2)}}.Path())
	}
	frame := draw.LineStyle{Color: midGrey, Width: vg.Points(0.6)}
	c.StrokeLines(frame, []vg.Point{{X: x, Y: bottom}, {X: x + barW, Y: bottom}, {X: x + barW, Y: top}, {X: x, Y: top}, {X: x, Y: bottom}})
	sty := textStyle(tickSize, false, darkGrey)
	sty.YAlign = draw.YCenter
	span := b.Scale.Hi - b.Scale.Lo
	for _, tk := range b.ticks() {
		y := bottom
		if span > 0 {
			y = bottom + (top-bottom)*vg.Length((tk.Value-b.Scale.Lo)/span)
		}
		c.StrokeLine2(frame, x+barW, y, x+barW+vg.Points(3), y)
		c.FillText(sty, vg.Point{X: x + barW + vg.Points(5), Y: y}, tk.Label)
	}
}

// sweepValues is metric m of every cell, in its display unit (a wait in ms), NaN where the
// cell has none or did not run (an invalid cell), and the scale they span: from 0 for shares,
// counts and waits, 0 to 1 for an index.
func sweepValues(res *sweep.Result, m sweep.Metric) ([]float64, float64, float64) {
	out := make([]float64, len(res.Rows))
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, r := range res.Rows {
		v, ok := m.Value(r.Metrics)
		if !ok || r.Invalid != "" {
			out[i] = math.NaN()
			continue
		}
		if m.Kind == sweep.Wait {
			v /= 1e6
		}
		out[i] = v
		lo, hi = min(lo, v), max(hi, v)
	}
	if math.IsInf(lo, 1) || m.Kind == sweep.Index {
		lo, hi = 0, 1 // an index's scale is its whole range: 0.5 reads the same in every sweep
	}
	if m.Kind != sweep.Ratio {
		lo = min(lo, 0)
	}
	if hi-lo < 1e-9 {
		lo, hi = lo-0.5, hi+0.5
		if m.Kind != sweep.Ratio {
			lo, hi = 0, max(1, 2*hi)
		}
	}
	return out, lo, hi
}

// cellText prints a cell's value for its heatmap cell: shares to 0.1%, waits to three digits
// (in ms), ratios and indices to 0.01, counts whole.
func cellText(m sweep.Metric, v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	switch m.Kind {
	case sweep.Percent:
		switch {
		case v == 0:
			return "0" // none at all, apart from a share that rounds to 0.0
		case v < 0.05:
			return "<0.1"
		}
		return strconv.FormatFloat(v, 'f', 1, 64)
	case sweep.Ratio, sweep.Index:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case sweep.Wait:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// sweepHue is the sweep's colour: its first dimension's kind's, else its cells' first stage's.
func sweepHue(res *sweep.Result) color.Color {
	for _, d := range res.Dims {
		if d.Kind != "" {
			return KindColor(d.Kind)
		}
	}
	if stack, err := engine.ParseStack(res.Rows[0].Spec); err == nil {
		return KindColor(stack[0].Kind())
	}
	return darkGrey
}

func valueTexts(d sweep.Dimension) []string {
	out := make([]string, len(d.Values))
	for i, v := range d.Values {
		out[i] = v.Text
	}
	return out
}

func sweepSubtitle(res *sweep.Result) string {
	return fmt.Sprintf("%d cells · seed %d · %s of virtual time · each cell is one lane run alone on the same offered traffic",
		len(res.Rows), res.Seed, fmtDur(res.Horizon))
}

// Heatmap draws metric m over a two-dimensional sweep: the first dimension across, the second
// up, one panel per template lane, all on one colour scale, with a colour bar naming the unit.
// sigma (see Sweep) draws σ(ρ), interpolated between the capacity rows, as a dashed line.
func Heatmap(res *sweep.Result, m sweep.Metric, sigma []fitpkg.Point) (*Figure, error) {
	if len(res.Dims) != 2 {
		return nil, fmt.Errorf("plots: a heatmap needs two dimensions, the sweep has %d", len(res.Dims))
	}
	values, lo, hi := sweepValues(res, m)
	scale := Scale{Lo: lo, Hi: hi, Hue: sweepHue(res)}
	dx, dy := res.Dims[0], res.Dims[1]
	nx, ny := len(dx.Values), len(dy.Values)
	f := &Figure{
		Name:     "sweep-" + metricFileName(m),
		Title:    fmt.Sprintf("%s: %s by %s and %s", res.Scenario, m.Title, dx.Name(), dy.Name()),
		Subtitle: sweepSubtitle(res),
		XLabel:   axisLabel(dx),
		Note:     fmt.Sprintf("Each cell: %s.", m.Meaning),
		ColorBar: &ColorBar{Scale: scale, Label: m.Unit()},
		Cols:     min(len(res.Lanes), 2),
	}
	rateDim, capDim, overlay := SigmaAxes(res)
	overlay = overlay && len(sigma) == len(res.Dims[rateDim].Values)
	for lane, name := range res.Lanes {
		h := &Heat{Cols: valueTexts(dx), Rows: valueTexts(dy), Scale: scale,
			Values: make([]float64, nx*ny), Text: make([]string, nx*ny)}
		for i := range nx {
			for j := range ny {
				row := res.At(lane, i, j)
				v := values[row.Cell]
				h.Values[j*nx+i], h.Text[j*nx+i] = v, cellText(m, v)
				if row.Invalid != "" {
					if h.Invalid == nil {
						h.Invalid = make([]bool, nx*ny)
					}
					h.Invalid[j*nx+i], h.Text[j*nx+i] = true, ""
				}
			}
		}
		pn := &Panel{Title: templateTitle(res, name, "→", "↑"), TitleColor: scale.Hue, YLabel: axisLabel(dy), Heat: h,
			XMin: -0.5, XMax: float64(nx) - 0.5, YMin: -0.5, YMax: float64(ny) - 0.5}
		if overlay {
			pn.Series = sigmaSeries(res, sigma, rateDim, capDim)
		}
		f.Panels = append(f.Panels, pn)
	}
	if overlay {
		f.Legend = []LegendEntry{{Label: "σ(ρ): the least capacity that admits every request at each rate (ratelab fit)", Role: RoleCurve},
			{Label: "σ at a rate of the grid", Role: RoleMarks, Mark: MarkFailed}}
		f.Note += " Dashed: σ(ρ), exact at each rate of the grid; with a dropping client, the cells at or above it refuse nothing."
	}
	invalidLegend(f, res, "Hatched", "")
	f.PanelHeight = 440
	if f.rows() > 1 {
		f.PanelHeight = 340
	}
	return f, nil
}

// sigmaSeries is σ(ρ) in the heatmap's cell coordinates: at each rate's column (or row), the
// capacity placed between the two capacity rows around it, linearly.
func sigmaSeries(res *sweep.Result, sigma []fitpkg.Point, rateDim, capDim int) []Series {
	caps := res.Dims[capDim].Values
	line := Series{Label: "σ(ρ)", Role: RoleCurve}
	marks := Series{Label: "σ at the grid's rates", Role: RoleMarks, Mark: MarkFailed}
	for i, p := range sigma {
		if !p.Fits() {
			continue
		}
		y := position(caps, float64(p.Capacity))
		x := float64(i)
		if rateDim == 1 {
			x, y = y, x
		}
		line.X, line.Y = append(line.X, x), append(line.Y, y)
		marks.X, marks.Y = append(marks.X, x), append(marks.Y, y)
	}
	return []Series{line, marks}
}

// position is where v falls among ascending values, in index units: 2.5 halfway between the
// third and the fourth; beyond the ends, extended by the nearest step.
func position(values []sweep.Value, v float64) float64 {
	n := len(values)
	if n == 1 {
		return 0
	}
	k := 0
	for k < n-2 && values[k+1].Num < v {
		k++
	}
	a, b := values[k].Num, values[k+1].Num
	if b == a {
		return float64(k)
	}
	return float64(k) + (v-a)/(b-a)
}

// templateTitle is a panel's title: the template lane's name, and when the name is its stack,
// the stack with each varied field's value replaced by its axis's arrow,
// "token-bucket:capacity=↑,rate=→", so that no value in the title contradicts a cell.
func templateTitle(res *sweep.Result, name string, arrows ...string) string {
	stack, err := engine.ParseStack(name)
	if err != nil || engine.StackString(stack) != name {
		return name
	}
	parts := strings.Split(name, "+")
	for i, s := range stack {
		for k, d := range res.Dims {
			if d.Kind != s.Kind() {
				continue
			}
			keys, spec := "", parts[i]
			if _, keyed := s.(limiters.KeyedSpec); keyed { // keys(max=…):kind:fields
				end := strings.Index(spec, "):") + 2
				keys, spec = spec[:end], spec[end:]
			}
			kind, params, _ := strings.Cut(spec, ":")
			fields := strings.Split(params, ",")
			set := false
			for j, f := range fields {
				if key, _, _ := strings.Cut(f, "="); key == d.Field {
					fields[j], set = key+"="+arrows[k], true
				}
			}
			if !set {
				fields = append(fields, d.Field+"="+arrows[k])
			}
			parts[i] = keys + kind + ":" + strings.Join(fields, ",")
		}
	}
	return strings.Join(parts, "+")
}

func axisLabel(d sweep.Dimension) string {
	if u := d.Unit(); u != "" && u != "permits/s" {
		return d.Name() + " (" + u + ")"
	}
	return d.Name()
}

// metricFileName is a metric's name as a file name part: "refused%" → "refused-pct".
func metricFileName(m sweep.Metric) string {
	return strings.NewReplacer("%", "-pct", "_", "-").Replace(m.Name)
}

// MetricFileName is how a sweep's chart of m is named: sweep-refused-pct.
func MetricFileName(m sweep.Metric) string { return "sweep-" + metricFileName(m) }

// SweepLine draws metric m over a one-dimensional sweep: one panel per template lane, the
// value at each point of the dimension, on a number line when the values are numbers (rates
// in permits per second, durations in seconds), else in their order.
func SweepLine(res *sweep.Result, m sweep.Metric) (*Figure, error) {
	if len(res.Dims) != 1 {
		return nil, fmt.Errorf("plots: a line chart of a sweep needs one dimension, the sweep has %d", len(res.Dims))
	}
	values, lo, hi := sweepValues(res, m)
	d := res.Dims[0]
	hue := sweepHue(res)
	numeric := d.Numeric()
	f := &Figure{
		Name:     "sweep-" + metricFileName(m),
		Title:    fmt.Sprintf("%s: %s by %s", res.Scenario, m.Title, d.Name()),
		Subtitle: sweepSubtitle(res),
		XLabel:   axisLabel(d),
		Note:     fmt.Sprintf("Each point: %s.", m.Meaning),
		Legend:   []LegendEntry{{Label: fmt.Sprintf("%s (%s)", m.Name, m.Unit()), Role: RoleAdmitted, Colors: []color.Color{hue}}},
	}
	if d.Unit() == "permits/s" {
		f.XLabel = d.Name() + " (permits/s)"
	}
	xmin, xmax := -0.5, float64(len(d.Values))-0.5
	if numeric {
		xmin, xmax = d.Values[0].Num, d.Values[len(d.Values)-1].Num
		for _, v := range d.Values {
			xmin, xmax = min(xmin, v.Num), max(xmax, v.Num)
		}
		pad := (xmax - xmin) * 0.03
		if pad == 0 {
			pad = 1
		}
		xmin, xmax = xmin-pad, xmax+pad
	}
	for lane, name := range res.Lanes {
		// The line breaks at an invalid cell: no value there to join its neighbours through.
		var lines []Series
		line := Series{Label: m.Name, Role: RoleAdmitted, Color: hue}
		marks := Series{Label: "cells", Role: RoleMarks, Mark: MarkAdmitted, Color: hue}
		bad := Series{Label: "invalid", Role: RoleMarks, Mark: MarkRejected, Color: midGrey}
		for i, v := range d.Values {
			x := float64(i)
			if numeric {
				x = v.Num
			}
			if res.At(lane, i).Invalid != "" { // on the axis, where no value is drawn
				bad.X, bad.Y = append(bad.X, x), append(bad.Y, lo)
				if len(line.X) > 0 {
					lines = append(lines, line)
					line = Series{Label: m.Name, Role: RoleAdmitted, Color: hue}
				}
				continue
			}
			y := values[res.At(lane, i).Cell]
			if math.IsNaN(y) {
				continue
			}
			line.X, line.Y = append(line.X, x), append(line.Y, y)
			marks.X, marks.Y = append(marks.X, x), append(marks.Y, y)
		}
		if len(line.X) > 0 || len(lines) == 0 {
			lines = append(lines, line)
		}
		pn := &Panel{Title: templateTitle(res, name, "→"), TitleColor: hue, YLabel: m.Unit(), XMin: xmin, XMax: xmax, YMin: lo, YMax: hi + (hi-lo)*0.08,
			Series: append(lines, marks), IntY: m.Kind == sweep.Count}
		if len(bad.X) > 0 {
			pn.Series = append(pn.Series, bad)
		}
		if !numeric {
			pn.XWords = valueTexts(d)
		}
		f.Panels = append(f.Panels, pn)
	}
	invalidLegend(f, res, "Crosses on the axis", MarkRejected)
	f.PanelHeight = 380
	if f.rows() > 1 {
		f.PanelHeight = 220
	}
	return f, nil
}

// maxInvalidEntries is the most reasons of invalid cells a sweep's legend names.
const maxInvalidEntries = 3

// invalidLegend adds to f, a chart of res, a legend entry for each reason its invalid cells
// did not run (sweep.Result.InvalidGroups: the first maxInvalidEntries; the CSV's error column
// has every cell's), "invalid (split, 20 cells): capacity is not a multiple of 3 instances: …",
// and a sentence to its note saying what marks them (how: "Hatched"). The entries' swatch is
// mark (the line chart's), or the heatmap's hatch when mark is "".
func invalidLegend(f *Figure, res *sweep.Result, how string, mark Mark) {
	groups := res.InvalidGroups()
	total := 0
	for i, g := range groups {
		total += len(g.Cells)
		if i == maxInvalidEntries {
			f.Legend = append(f.Legend, LegendEntry{Label: fmt.Sprintf("invalid: %d more reasons (the CSV's error column gives each cell's)", len(groups)-i),
				Role: RoleInvalid, Mark: mark, Colors: []color.Color{midGrey}})
		}
		if i >= maxInvalidEntries {
			continue
		}
		cells := "1 cell"
		if len(g.Cells) > 1 {
			cells = fmt.Sprintf("%d cells", len(g.Cells))
		}
		f.Legend = append(f.Legend, LegendEntry{Label: fmt.Sprintf("invalid (%s, %s): %s", strings.Join(g.Lanes, ", "), cells, g.Reason),
			Role: RoleInvalid, Mark: mark, Colors: []color.Color{midGrey}})
	}
	if total == 0 {
		return
	}
	cells := "cell"
	if total > 1 {
		cells = "cells"
	}
	f.Note += fmt.Sprintf(" %s: %d invalid %s, not run (the scenario refuses their lane).", how, total, cells)
}
