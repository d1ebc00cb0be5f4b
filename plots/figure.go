package plots

import (
	"bufio"
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure is one chart: a title and subtitle naming the scenario and its parameters, a legend
// row above the panels (so it never covers data), a grid of panels on a shared time axis, and
// an optional note under them. It holds the plotted data, not pixels: Draw renders it at any
// size, and Dump prints its series as text for golden tests.
type Figure struct {
	Name     string // the chart's name: "rate", "guarantee", …
	Title    string
	Subtitle string
	Note     string // a caption under the panels
	XLabel   string
	Cols     int // panels per row; 0 means 1
	Panels   []*Panel
	Legend   []LegendEntry
	ShareY   bool // panels in the same column share their y range
	// PanelHeight is the default height of one row of panels, in pixels at DPI.
	PanelHeight int
	// ColorBar, when set, is drawn right of the panels: the scale of their heatmaps.
	ColorBar *ColorBar
	// TimeAxis says the x axis is virtual time in units of TimeUnit: the figure can be
	// animated (WriteGIF) and its frames cut at a time.
	TimeAxis bool
	TimeUnit time.Duration

	slack float64 // while drawing an SVG: room for a wider substitute font (see Write)
}

// Panel is one set of axes: usually one lane.
type Panel struct {
	Title      string
	TitleColor color.Color // the swatch before the title: the lane's colour; nil for none
	YLabel     string
	XMin, XMax float64
	YMin, YMax float64 // YMax ≤ YMin: from the data, with headroom
	IntY       bool    // the y axis counts whole things: integer ticks only
	HideYTicks bool
	AbsYTicks  bool // tick labels without sign: a mirrored axis (refusals drawn downward)
	// YGroup names a set of panels that share their y range (as ShareY does per column).
	YGroup string
	// LogX draws the x axis on a log scale; XTicks, when set, are its ticks (value, label).
	LogX   bool
	XTicks []plot.Tick
	XLabel string // this panel's x label, when its column's axis differs from the figure's
	// TitleSpan lets the title run over this many panels of its row (the lane's name over a
	// row of quantities); 0 or 1: its own panel.
	TitleSpan int
	Series    []Series
	Labels    []Label // text in data coordinates (the timeline's row names)
	// Heat, when set, fills the panel with a grid of coloured cells (a sweep's heatmap),
	// under its series; its column and row labels replace the axes' numbers.
	Heat *Heat
	// XWords, when set, label the x axis at 0, 1, 2, … instead of numbers (a sweep's values
	// that are words).
	XWords []string
}

// Series is one plotted line or set of marks.
type Series struct {
	Label string // what it is, for the golden dump ("admitted", "bound for 1s", …)
	Role  Role
	Color color.Color // the lane's or stage's colour, for roles that take one
	Step  bool        // a post-step line: the value holds until the next point
	Mark  Mark        // RoleMarks: the glyph
	X, Y  []float64
	// Lo, when set, makes the series a band: at each X it covers [Lo, Y] until the next X
	// (a range drawn deliberately, say so in the legend). A RoleBoundary series uses it for
	// each line's bottom, Y for its top.
	Lo []float64
}

// Label is text placed in data coordinates: a name left-aligned above the point, or a small
// note (a count) just right of it, centred on it.
type Label struct {
	X, Y  float64
	Text  string
	Small bool
	Left  bool // a small note ends just left of the point instead (near the right edge)
}

// LegendEntry is one item of the legend row. A role drawn in lane colours shows a thumbnail
// made of every lane colour in the chart.
type LegendEntry struct {
	Label  string
	Role   Role
	Mark   Mark
	Colors []color.Color
	Band   bool // the thumbnail is a band (with the role's line through it unless RoleBand)
}

// DefaultWidth is the default figure width in pixels: README width on GitHub is about 880,
// and a slightly larger image scales down crisply.
const DefaultWidth = 1000

// DefaultHeight is the figure's natural height in pixels for a width.
func (f *Figure) DefaultHeight() int {
	rows := f.rows()
	ph := f.PanelHeight
	if ph == 0 {
		ph = 170
	}
	h := 110 + rows*ph + 40
	if f.Note != "" {
		h += 30
	}
	return h
}

func (f *Figure) cols() int { return max(f.Cols, 1) }

func (f *Figure) rows() int { return (len(f.Panels) + f.cols() - 1) / f.cols() }

// Write renders the figure as format ("png" or "svg") at width×height pixels (at DPI; 0
// means DefaultWidth and DefaultHeight) to w.
func (f *Figure) Write(w io.Writer, format string, width, height int) error {
	if width <= 0 {
		width = DefaultWidth
	}
	if height <= 0 {
		height = f.DefaultHeight()
	}
	wl, hl := px(width), px(height)
	switch format {
	case "png":
		c := vgimg.NewWith(vgimg.UseWH(wl, hl), vgimg.UseDPI(DPI))
		f.Draw(draw.New(c), width)
		_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
		return err
	case "svg":
		// Text in an SVG is drawn by the viewer, in whatever font it has: Liberation Sans, or
		// Arial and Arimo, which have the same metrics; failing those a wider sans. The layout
		// leaves room for a font 20% wider, and the family names the compatible ones.
		c := vgsvg.New(wl, hl)
		f.slack = svgSlack
		f.Draw(draw.New(c), width)
		f.slack = 0
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			return err
		}
		_, err := w.Write(bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"), []byte(svgFamilies)))
		return err
	case "gif":
		return f.WriteGIF(w, width, height)
	}
	return fmt.Errorf("plots: unknown format %q (png, svg or gif)", format)
}

// svgFamilies replaces the SVG's font family: Liberation Sans or a font with its metrics.
const svgFamilies = "font-family:'Liberation Sans',Arimo,Arial,Helvetica,sans-serif;"

// svgSlack is how much wider than Liberation Sans the SVG's layout lets text be.
const svgSlack = 1.2

// px is n pixels at DPI as a length.
func px(n int) vg.Length { return vg.Length(n) * vg.Inch / DPI }

func textStyle(f vg.Length, bold bool, c color.Color) text.Style {
	fnt := fontOf(sans, f)
	if bold {
		fnt = fontOf(sansBold, f)
	}
	return text.Style{Color: c, Font: fnt, XAlign: draw.XLeft, YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
}

// wrap breaks s into lines no wider than width in style sty.
func wrap(sty text.Style, s string, width vg.Length, slack float64) []string {
	width /= vg.Length(max(slack, 1))
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			try := word
			if line != "" {
				try = line + " " + word
			}
			if line != "" && sty.Width(try) > width {
				lines = append(lines, line)
				line = word
				continue
			}
			line = try
		}
		lines = append(lines, line)
	}
	return lines
}

// Draw renders the figure onto c. widthPx is the output's width in pixels: long series are
// reduced to at most four points per pixel column before drawing.
func (f *Figure) Draw(c draw.Canvas, widthPx int) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	margin := vg.Points(12)
	left, right := c.Min.X+margin, c.Max.X-margin
	y := c.Max.Y - vg.Points(10)

	title := fit(textStyle(titleSize, true, black), f.Title, right-left, f.slack, subtitleSize)
	c.FillText(title, vg.Point{X: left, Y: y}, f.Title)
	y -= title.Height(f.Title) + vg.Points(4)
	if f.Subtitle != "" {
		sub := textStyle(subtitleSize, false, darkGrey)
		for _, line := range wrap(sub, f.Subtitle, right-left, f.slack) {
			c.FillText(sub, vg.Point{X: left, Y: y}, line)
			y -= sub.Height("Ag") + vg.Points(2)
		}
	}
	y -= vg.Points(4)
	y = f.drawLegend(c, left, right, y)

	bottom := c.Min.Y + vg.Points(6)
	if f.Note != "" {
		note := textStyle(noteSize, false, darkGrey)
		lines := wrap(note, f.Note, right-left, f.slack)
		lh := note.Height("Ag") + vg.Points(2)
		for i, line := range lines {
			c.FillText(note, vg.Point{X: left, Y: bottom + vg.Length(len(lines)-i)*lh}, line)
		}
		bottom += vg.Length(len(lines))*lh + vg.Points(6)
	}

	area := c
	area.Min.Y, area.Max.Y = bottom, y-vg.Points(2)
	area.Min.X, area.Max.X = c.Min.X+vg.Points(4), right
	if f.ColorBar != nil {
		area.Max.X -= f.ColorBar.width(f.slack)
		f.ColorBar.draw(c, area.Max.X+vg.Points(14), area.Min.Y, area.Max.Y, f.slack)
	}
	cols, rows := f.cols(), f.rows()
	grid := f.Plots(widthPx)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(14), PadY: vg.Points(6)}
	canvases := plot.Align(grid, tiles, area)
	for r := range rows {
		for k := range cols {
			p := grid[r][k]
			if p == nil {
				continue
			}
			p.Draw(canvases[r][k])
			i := r*cols + k
			right := p.DataCanvas(canvases[r][k]).Max.X
			if last := k + f.Panels[i].TitleSpan - 1; last > k && last < cols && grid[r][last] != nil {
				right = grid[r][last].DataCanvas(canvases[r][last]).Max.X
			}
			drawPanelTitle(p, f.Panels[i], canvases[r][k], right, f.slack)
		}
	}
}

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

// drawPanelTitle draws the panel's title from its data area's left edge, fitted to end at
// right.
func drawPanelTitle(p *plot.Plot, pn *Panel, c draw.Canvas, right vg.Length, slack float64) {
	if pn.Title == "" {
		return
	}
	dc := p.DataCanvas(c)
	sty := textStyle(panelSize, true, darkGrey)
	sty = fit(sty, pn.Title, right-dc.Min.X-sty.Height("A")-vg.Points(5), slack, 9)
	x := dc.Min.X
	top := c.Max.Y
	if pn.TitleColor != nil {
		h := sty.Height("A") * 0.8
		sq := vg.Rectangle{Min: vg.Point{X: x, Y: top - h - vg.Points(1)}, Max: vg.Point{X: x + h, Y: top - vg.Points(1)}}
		c.SetColor(pn.TitleColor)
		c.Fill(sq.Path())
		x += h + vg.Points(5)
	}
	c.FillText(sty, vg.Point{X: x, Y: top}, pn.Title)
}

// fit is sty with its font shrunk, down to smallest points, until txt fits width (allowing
// for slack, see Figure.slack): a long stack's name must not run into the next panel.
func fit(sty text.Style, txt string, width vg.Length, slack float64, smallest vg.Length) text.Style {
	for sty.Font.Size > smallest && sty.Width(txt)*vg.Length(max(slack, 1)) > width {
		sty.Font.Size -= 0.5
	}
	return sty
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

// drawLegend lays the entries out left to right, wrapping, and returns the y below them.
func (f *Figure) drawLegend(c draw.Canvas, left, right, y vg.Length) vg.Length {
	if len(f.Legend) == 0 {
		return y
	}
	sty := textStyle(legendSize, false, black)
	sty.YAlign = draw.YCenter
	h := sty.Height("Ag")
	thumbW := vg.Points(26)
	x := left
	rowY := y - h/2
	for _, e := range f.Legend {
		w := thumbW + vg.Points(5) + sty.Width(e.Label)*vg.Length(max(f.slack, 1)) + vg.Points(16)
		if x > left && x+w > right {
			x = left
			rowY -= h + vg.Points(5)
		}
		thumb := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: rowY - h/2 + vg.Points(1)}, Max: vg.Point{X: x + thumbW, Y: rowY + h/2 - vg.Points(1)}}}
		drawThumb(&thumb, e)
		c.FillText(sty, vg.Point{X: x + thumbW + vg.Points(5), Y: rowY}, e.Label)
		x += w
	}
	return rowY - h/2 - vg.Points(8)
}

func drawThumb(c *draw.Canvas, e LegendEntry) {
	colors := e.Colors
	if len(colors) == 0 {
		colors = []color.Color{darkGrey}
	}
	if e.Role == RoleMarks {
		glyphColor := colors[0]
		if len(colors) > 1 {
			glyphColor = darkGrey
		}
		c.DrawGlyph(markGlyph(e.Mark, glyphColor), c.Center())
		return
	}
	if e.Role == RoleInterval {
		intervalThumb(c, colors)
		return
	}
	if e.Role == RoleStacked {
		stackedThumb(c, colors[0])
		return
	}
	if e.Role == RoleFault {
		faultThumb(c, colors[0])
		return
	}
	if e.Role == RoleOffered {
		c.FillPolygon(lightFill, []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
		return
	}
	if e.Band { // a band in each colour, each with its mean line through it
		w := (c.Max.X - c.Min.X) / vg.Length(len(colors))
		for i, col := range colors {
			x0 := c.Min.X + vg.Length(i)*w
			c.FillPolygon(withAlpha(col, bandAlpha), []vg.Point{{X: x0, Y: c.Min.Y}, {X: x0 + w, Y: c.Min.Y}, {X: x0 + w, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
			if e.Role != RoleBand {
				ls := lineStyle(e.Role, col)
				c.StrokeLine2(ls, x0, c.Center().Y, x0+w, c.Center().Y)
			}
		}
		return
	}
	if e.Role == RoleBoundary || e.Role == RoleNow { // vertical lines, as drawn
		step := (c.Max.X - c.Min.X) / vg.Length(len(colors)+1)
		for i, col := range colors {
			x := c.Min.X + vg.Length(i+1)*step
			c.StrokeLine2(lineStyle(e.Role, col), x, c.Min.Y, x, c.Max.Y)
		}
		return
	}
	y := c.Center().Y
	w := (c.Max.X - c.Min.X) / vg.Length(len(colors))
	for i, col := range colors {
		ls := lineStyle(e.Role, col)
		ls.Width *= 1.3
		x0 := c.Min.X + vg.Length(i)*w
		c.StrokeLine2(ls, x0, y, x0+w, y)
	}
}

// Dump writes the figure's data as text: the reviewable form of a chart, for golden files.
// Runs of points with the same y are written as one line "x0..x1 y".
func (f *Figure) Dump(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "figure %s\ntitle %s\nsubtitle %s\n", f.Name, f.Title, f.Subtitle)
	if f.Note != "" {
		fmt.Fprintf(bw, "note %s\n", f.Note)
	}
	fmt.Fprintf(bw, "x %s\n", f.XLabel)
	for _, e := range f.Legend {
		fmt.Fprintf(bw, "legend %q %s %s\n", e.Label, e.Role, e.Mark)
	}
	if b := f.ColorBar; b != nil {
		fmt.Fprintf(bw, "colorbar %q [%s, %s]\n", b.Label, g(b.Scale.Lo), g(b.Scale.Hi))
	}
	for _, p := range f.Panels {
		fmt.Fprintf(bw, "\npanel %q y=%q x=[%s, %s]", p.Title, p.YLabel, g(p.XMin), g(p.XMax))
		if p.YMax > p.YMin {
			fmt.Fprintf(bw, " y=[%s, %s]", g(p.YMin), g(p.YMax))
		}
		fmt.Fprintln(bw)
		for _, l := range p.Labels {
			fmt.Fprintf(bw, "  label (%s, %s) %q\n", g(l.X), g(l.Y), l.Text)
		}
		if h := p.Heat; h != nil {
			fmt.Fprintf(bw, "  heat %d×%d scale=[%s, %s] cols=%q rows=%q\n", len(h.Cols), len(h.Rows), g(h.Scale.Lo), g(h.Scale.Hi), h.Cols, h.Rows)
			for r := len(h.Rows) - 1; r >= 0; r-- {
				fmt.Fprintf(bw, "    %s:", h.Rows[r])
				for c := range h.Cols {
					fmt.Fprintf(bw, " %s", h.Text[r*len(h.Cols)+c])
				}
				fmt.Fprintln(bw)
			}
		}
		for _, s := range p.Series {
			fmt.Fprintf(bw, "  series %q role=%s", s.Label, s.Role)
			if s.Mark != "" {
				fmt.Fprintf(bw, " mark=%q", s.Mark)
			}
			if s.Step {
				fmt.Fprint(bw, " step")
			}
			if s.Lo != nil {
				fmt.Fprint(bw, " band")
			}
			fmt.Fprintf(bw, " points=%d\n", len(s.X))
			if s.Role == RoleMarker || s.Role == RoleBoundary || s.Role == RoleNow { // vertical lines: where
				fmt.Fprint(bw, "    at")
				for _, x := range s.X {
					fmt.Fprintf(bw, " %s", g(x))
				}
				fmt.Fprintln(bw)
				continue
			}
			if s.Role == RoleFault { // intervals: from where to where
				for i := 0; i+1 < len(s.X); i += 2 {
					fmt.Fprintf(bw, "    [%s, %s)\n", g(s.X[i]), g(s.X[i+1]))
				}
				continue
			}
			value := func(i int) string {
				if s.Lo != nil {
					return fmt.Sprintf("[%s, %s]", g(s.Lo[i]), g(s.Y[i]))
				}
				return g(s.Y[i])
			}
			for i := 0; i < len(s.X); {
				j := i
				if s.Role != RoleMarks {
					for j+1 < len(s.X) && value(j+1) == value(i) {
						j++
					}
				}
				if j > i {
					fmt.Fprintf(bw, "    %s..%s %s\n", g(s.X[i]), g(s.X[j]), value(i))
				} else {
					fmt.Fprintf(bw, "    %s %s\n", g(s.X[i]), value(i))
				}
				i = j + 1
			}
		}
	}
	return bw.Flush()
}

func g(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

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

// spaceOnly measures text like its Handler and draws nothing: the plot reserves room for the
// panel title, which drawPanelTitle draws left-aligned with the lane's swatch.
type spaceOnly struct{ text.Handler }

func (spaceOnly) Draw(vg.Canvas, string, text.Style, vg.Point) {}
