package plots

import (
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plots returns the figure's panels as gonum plots, row by row (nil where a row is short), as
// Draw lays them out for an image widthPx pixels wide: for callers who compose their own
// figures. The title, legend and note are the Figure's, not the plots'.
func (f *Figure) Plots(widthPx int) [][]*plot.Plot {
	cols, rows := f.cols(), f.rows()
	columns := max(widthPx/cols-80, 50) // data pixels per panel, roughly
	ranges := f.yRanges()
	grid := make([][]*plot.Plot, rows)
	for r := range rows {
		grid[r] = make([]*plot.Plot, cols)
		for k := range cols {
			if i := r*cols + k; i < len(f.Panels) {
				last := i+cols >= len(f.Panels) // nothing below it: it labels the x axis
				grid[r][k] = f.panelPlot(f.Panels[i], ranges[i], last, columns)
			}
		}
	}
	return grid
}

// yRanges is each panel's y range: shared per column when ShareY.
func (f *Figure) yRanges() [][2]float64 {
	out := make([][2]float64, len(f.Panels))
	for i, p := range f.Panels {
		out[i] = p.yRange()
	}
	groups := map[string][2]float64{}
	for i, p := range f.Panels {
		if p.YGroup != "" {
			r, ok := groups[p.YGroup]
			if !ok {
				r = out[i]
			}
			groups[p.YGroup] = [2]float64{min(r[0], out[i][0]), max(r[1], out[i][1])}
		}
	}
	for i, p := range f.Panels {
		if p.YGroup != "" {
			out[i] = groups[p.YGroup]
		}
	}
	if f.ShareY {
		cols := f.cols()
		for k := range cols {
			lo, hi := math.Inf(1), math.Inf(-1)
			for i := k; i < len(out); i += cols {
				lo, hi = min(lo, out[i][0]), max(hi, out[i][1])
			}
			for i := k; i < len(out); i += cols {
				out[i] = [2]float64{lo, hi}
			}
		}
	}
	return out
}

// yRange is the panel's fixed range, or [YMin, 1.12·max] of the data (room above the
// highest line so it never runs along the frame); data below YMin (a mirrored series) get
// the same room below.
func (p *Panel) yRange() [2]float64 {
	if p.YMax > p.YMin {
		return [2]float64{p.YMin, p.YMax}
	}
	hi, lo := math.Inf(-1), math.Inf(1)
	for _, s := range p.Series {
		if s.Role == RoleMarker || s.Role == RoleBoundary || s.Role == RoleNow || s.Role == RoleFault {
			continue
		}
		for _, v := range s.Y {
			hi, lo = max(hi, v), min(lo, v)
		}
		for _, v := range s.Lo {
			lo = min(lo, v)
		}
	}
	if math.IsInf(hi, -1) || hi <= p.YMin {
		hi = p.YMin + 1
	}
	hi = p.YMin + (hi-p.YMin)*1.12
	bottom := p.YMin
	if lo < p.YMin {
		bottom = p.YMin - (p.YMin-lo)*1.12
	}
	if p.IntY {
		hi = math.Max(math.Ceil(hi), p.YMin+1)
		bottom = math.Floor(bottom)
	}
	return [2]float64{bottom, hi}
}

func (f *Figure) panelPlot(pn *Panel, yr [2]float64, bottom bool, columns int) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil
	p.Title.Text = pn.Title
	p.Title.TextStyle = textStyle(panelSize, true, darkGrey)
	p.Title.TextStyle.Handler = spaceOnly{plot.DefaultTextHandler} // drawn by drawPanelTitle, left-aligned
	p.Title.Padding = vg.Points(3)
	p.X.Min, p.X.Max = pn.XMin, pn.XMax
	p.Y.Min, p.Y.Max = yr[0], yr[1]
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Padding = 0
		ax.Tick.Label.Font = fontOf(sans, tickSize)
		ax.Tick.Label.Color = darkGrey
		ax.Label.TextStyle.Font = fontOf(sans, labelSize)
		ax.Tick.Color = midGrey
		ax.Color = midGrey
	}
	yTarget := 4
	if f.rows() == 1 {
		yTarget = 6
	}
	xTarget := max(8/f.cols(), 4)
	p.Y.Tick.Marker = ticker{target: yTarget, integer: pn.IntY, abs: pn.AbsYTicks}
	p.X.Tick.Marker = ticker{target: xTarget}
	p.Y.Label.Text = pn.YLabel
	if bottom {
		p.X.Label.Text = f.XLabel
		if pn.XLabel != "" {
			p.X.Label.Text = pn.XLabel
		}
	} else {
		p.X.Tick.Marker = ticker{target: xTarget, blank: true}
	}
	if pn.LogX {
		p.X.Scale = plot.LogScale{}
	}
	if pn.XTicks != nil {
		ticks := slices.Clone(pn.XTicks)
		if !bottom {
			for i := range ticks {
				ticks[i].Label = ""
			}
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	}
	if pn.HideYTicks {
		p.Y.Tick.Marker = plot.ConstantTicks{}
	}
	if pn.XWords != nil {
		p.X.Tick.Marker = labelTicks{labels: pn.XWords, target: 2 * xTarget, blank: !bottom}
	}
	if h := pn.Heat; h != nil {
		p.X.Tick.Marker = labelTicks{labels: h.Cols, target: 2 * xTarget, blank: !bottom}
		p.Y.Tick.Marker = labelTicks{labels: h.Rows, target: 2 * yTarget}
		p.Add(h)
		for _, s := range pn.Series {
			for _, pl := range seriesPlotters(s, pn.XMin, pn.XMax, columns) {
				p.Add(pl)
			}
		}
		p.X.Min, p.X.Max = pn.XMin, pn.XMax
		p.Y.Min, p.Y.Max = yr[0], yr[1]
		return p
	}
	g := plotter.NewGrid()
	g.Vertical.Color, g.Horizontal.Color = gridGrey, gridGrey
	g.Vertical.Width, g.Horizontal.Width = vg.Points(0.6), vg.Points(0.6)
	if pn.HideYTicks {
		g.Horizontal.Width = 0
	}
	// The offered area goes under the grid, so that the grid reads through it; every
	// line goes over it.
	for _, under := range []bool{true, false} {
		for _, s := range pn.Series {
			if (s.Role == RoleOffered) != under {
				continue
			}
			for _, pl := range seriesPlotters(s, pn.XMin, pn.XMax, columns) {
				p.Add(pl)
			}
		}
		if under {
			p.Add(g)
			if pn.AbsYTicks && yr[0] < 0 && yr[1] > 0 { // a mirrored panel: the zero line between the halves
				p.Add(hline{y: 0, style: draw.LineStyle{Color: midGrey, Width: vg.Points(0.8)}})
			}
		}
	}
	// Add widened the ranges to the data; keep the figure's.
	p.X.Min, p.X.Max = pn.XMin, pn.XMax
	p.Y.Min, p.Y.Max = yr[0], yr[1]
	if len(pn.Labels) > 0 {
		p.Add(labels{pn.Labels})
	}
	return p
}

// seriesPlotters turns a series into gonum plotters, reducing long lines to per-column
// envelopes first.
func seriesPlotters(s Series, xmin, xmax float64, columns int) []plot.Plotter {
	switch s.Role {
	case RoleMarks:
		xys := make(plotter.XYs, len(s.X))
		for i := range s.X {
			xys[i] = plotter.XY{X: s.X[i], Y: s.Y[i]}
		}
		sc := &plotter.Scatter{XYs: xys, GlyphStyle: markGlyph(s.Mark, s.Color)}
		return []plot.Plotter{sc}
	case RoleInterval:
		return []plot.Plotter{intervalArea{xs: s.X, ys: s.Y, fill: intervalFill(s.Color)}}
	case RoleStacked:
		return []plot.Plotter{stackArea{xs: s.X, lo: s.Lo, hi: s.Y, c: s.Color}}
	case RoleFault:
		return []plot.Plotter{faultArea{xs: s.X, c: s.Color}}
	case RoleLimit:
		return []plot.Plotter{limitLine{xs: s.X, ys: s.Y}}
	case RoleMarker, RoleBoundary, RoleNow:
		var out []plot.Plotter
		for i, x := range s.X {
			v := vline{x: x, style: lineStyle(s.Role, s.Color)}
			if s.Lo != nil {
				v.y0, v.y1, v.partial = s.Lo[i], s.Y[i], true
			}
			out = append(out, v)
		}
		return out
	}
	if s.Lo != nil {
		return []plot.Plotter{bandOf(s, xmin, xmax, columns)}
	}
	xs, ys := s.X, s.Y
	if len(xs) > 4*columns {
		if s.Step && s.Role != RoleOffered {
			// A dense step line (a sawtooth of permits) is drawn as its per-column band:
			// stroking thousands of full-height zigzags is what rasterisers are slowest at.
			lo, hi, ok := Columns(xs, ys, xmin, xmax, columns)
			return []plot.Plotter{band{xmin: xmin, xmax: xmax, lo: lo, hi: hi, ok: ok, style: lineStyle(s.Role, s.Color)}}
		}
		xs, ys = Envelope(xs, ys, xmin, xmax, columns, s.Step)
	}
	xys := make(plotter.XYs, len(xs))
	for i := range xs {
		xys[i] = plotter.XY{X: xs[i], Y: ys[i]}
	}
	l := &plotter.Line{XYs: xys, LineStyle: lineStyle(s.Role, s.Color)}
	if s.Step {
		l.StepStyle = plotter.PostStep
	}
	switch s.Role {
	case RoleOffered:
		return []plot.Plotter{area{l, lightFill}}
	case RoleHistogram:
		return []plot.Plotter{area{l, withAlpha(s.Color, 0.35)}}
	}
	return []plot.Plotter{l}
}

// area is a post-step line filled down to zero (gonum fills to the axis's minimum, which in
// a mirrored panel is below zero).
type area struct {
	line *plotter.Line
	fill color.Color
}

func (a area) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	ps := a.line.XYs
	if len(ps) == 0 {
		return
	}
	base := trY(max(0, p.Y.Min))
	poly := []vg.Point{{X: trX(ps[0].X), Y: base}}
	for i, pt := range ps {
		if i > 0 {
			poly = append(poly, vg.Point{X: trX(pt.X), Y: trY(ps[i-1].Y)})
		}
		poly = append(poly, vg.Point{X: trX(pt.X), Y: trY(pt.Y)})
	}
	poly = append(poly, vg.Point{X: trX(ps[len(ps)-1].X), Y: base})
	c.FillPolygon(a.fill, c.ClipPolygonXY(poly))
	a.line.Plot(c, p)
}

// vline is a vertical line across the whole data area (an event on the time axis), or,
// when partial, from y0 to y1 in data coordinates (a boundary in one lane's row).
type vline struct {
	x       float64
	y0, y1  float64
	partial bool
	style   draw.LineStyle
}

func (v vline) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	x := trX(v.x)
	if x < c.Min.X || x > c.Max.X {
		return
	}
	lo, hi := c.Min.Y, c.Max.Y
	if v.partial {
		lo, hi = max(trY(v.y0), lo), min(trY(v.y1), hi)
	}
	c.StrokeLine2(v.style, x, lo, x, hi)
}

// hline is a horizontal line across the whole data area.
type hline struct {
	y     float64
	style draw.LineStyle
}

func (h hline) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(h.y)
	c.StrokeLine2(h.style, c.Min.X, y, c.Max.X, y)
}

// labels draws text in data coordinates.
type labels struct{ items []Label }

func (l labels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := textStyle(panelSize, true, darkGrey)
	sty.YAlign = draw.YBottom
	small := textStyle(tickSize, false, darkGrey)
	small.YAlign = draw.YCenter
	for _, it := range l.items {
		if it.Small {
			x := trX(it.X) + vg.Points(6)
			if it.Left {
				x = trX(it.X) - vg.Points(6) - small.Width(it.Text)
			}
			c.FillText(small, vg.Point{X: x, Y: trY(it.Y)}, it.Text)
			continue
		}
		c.FillText(sty, vg.Point{X: trX(it.X) + vg.Points(4), Y: trY(it.Y)}, it.Text)
	}
}

// ticker puts about target labelled ticks on an axis at a nice step (1, 2, 2.5 or 5 × 10ⁿ),
// with an unlabelled tick between each two; labels are plain ("1500", not "1.5e+03"). integer
// keeps steps whole (counts); blank drops the labels (a shared axis above the bottom row).
type ticker struct {
	target              int
	integer, blank, abs bool
}

func (t ticker) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return nil
	}
	step := niceStep(hi-lo, max(t.target, 2))
	if t.integer {
		step = math.Max(step, 1)
	}
	decimals := max(0, int(-math.Floor(math.Log10(step)))+1)
	var out []plot.Tick
	first := math.Ceil(lo/step*2-1e-9) / 2 // in half steps
	for k := 0; ; k++ {
		v := (first + float64(k)/2) * step
		if v > hi+step*1e-9 {
			break
		}
		major := math.Abs(v/step-math.Round(v/step)) < 1e-6
		if !major && t.integer && v != math.Trunc(v) {
			continue
		}
		tk := plot.Tick{Value: v}
		if major && !t.blank {
			if t.abs {
				v = math.Abs(v)
			}
			tk.Label = trimZeros(strconv.FormatFloat(v, 'f', decimals, 64))
		}
		out = append(out, tk)
	}
	return out
}

// niceStep is the least of 1, 2, 2.5, 5 × 10ⁿ that divides span into at most target steps.
func niceStep(span float64, target int) float64 {
	raw := span / float64(target)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// bandOf is a band series (Series.Lo) as a per-column band: in each pixel column the lowest
// Lo and the highest Y of the steps that cover it.
func bandOf(s Series, xmin, xmax float64, columns int) band {
	lo, _, ok := Columns(s.X, s.Lo, xmin, xmax, columns)
	_, hi, _ := Columns(s.X, s.Y, xmin, xmax, columns)
	last := len(s.X) - 1
	for k := range ok { // a step series ends at its last x: nothing after it
		if last >= 0 && xmin+float64(k)*(xmax-xmin)/float64(columns) >= s.X[last] {
			ok[k] = false
		}
	}
	return band{xmin: xmin, xmax: xmax, lo: lo, hi: hi, ok: ok, style: lineStyle(RoleBand, s.Color), alpha: bandAlpha}
}

// band fills, in each pixel column, the range a dense line covers there: the picture the line
// itself would make, at a cost of O(columns). A column where the line is flat gets the line's
// width, so a flat stretch looks like the line.
type band struct {
	xmin, xmax float64
	lo, hi     []float64
	ok         []bool
	style      draw.LineStyle
	alpha      float64 // the fill's opacity; 0 means 0.6
}

func (b band) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := len(b.lo)
	width := (b.xmax - b.xmin) / float64(n)
	half := b.style.Width / 2
	var top, bottom []vg.Point
	flush := func() {
		if len(top) == 0 {
			return
		}
		poly := append(top, bottom...)
		slices.Reverse(poly[len(top):])
		alpha := b.alpha
		if alpha == 0 {
			alpha = 0.6
		}
		c.FillPolygon(withAlpha(b.style.Color, alpha), c.ClipPolygonXY(poly))
		top, bottom = top[:0], bottom[:0]
	}
	for k := range n {
		if !b.ok[k] {
			flush()
			continue
		}
		x0, x1 := trX(b.xmin+float64(k)*width), trX(b.xmin+float64(k+1)*width)
		y0, y1 := trY(b.lo[k])-half, trY(b.hi[k])+half
		top = append(top, vg.Point{X: x0, Y: y1}, vg.Point{X: x1, Y: y1})
		bottom = append(bottom, vg.Point{X: x0, Y: y0}, vg.Point{X: x1, Y: y0})
	}
	flush()
}

// withAlpha is c at opacity a.
func withAlpha(c color.Color, a float64) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: uint8(255 * a)}
}

// bandAlpha is the opacity of a deliberate band (RoleBand): light enough that its mean line
// reads through it and two stages' bands through each other.
const bandAlpha = 0.3
