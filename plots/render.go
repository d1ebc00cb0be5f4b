package plots

import (
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// renderer draws a Figure onto a canvas: the title, subtitle, legend row, grid of panels and
// note. Its one setting is how much room it gives text. Text is measured in Liberation Sans;
// a PNG or GIF is drawn in Liberation Sans itself (rasterRenderer, slack 1), while an SVG's
// text is drawn by its viewer in whatever font it has, so its layout leaves room for a font
// svgSlack (20%) wider (svgRenderer). The renderer is a value chosen per output: a Figure
// holds data only, and drawing it never changes it.
type renderer struct {
	// slack multiplies every measured text width when deciding what fits (wrapping,
	// shrinking a title, the legend's spacing); at least 1.
	slack float64
}

// svgSlack is how much wider than Liberation Sans the SVG's layout lets text be.
const svgSlack = 1.2

var (
	rasterRenderer = renderer{slack: 1}
	svgRenderer    = renderer{slack: svgSlack}
)

func textStyle(f vg.Length, bold bool, c color.Color) text.Style {
	fnt := fontOf(sans, f)
	if bold {
		fnt = fontOf(sansBold, f)
	}
	return text.Style{Color: c, Font: fnt, XAlign: draw.XLeft, YAlign: draw.YTop, Handler: plot.DefaultTextHandler}
}

// wrap breaks s into lines no wider than width in style sty.
func (r renderer) wrap(sty text.Style, s string, width vg.Length) []string {
	width /= vg.Length(r.slack)
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

// Draw renders the figure onto c as a PNG is drawn (its text in Liberation Sans). widthPx is
// the output's width in pixels: long series are reduced to at most four points per pixel
// column before drawing.
func (f *Figure) Draw(c draw.Canvas, widthPx int) { rasterRenderer.draw(f, c, widthPx) }

// draw renders f onto c; see Draw.
func (r renderer) draw(f *Figure, c draw.Canvas, widthPx int) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	margin := vg.Points(12)
	left, right := c.Min.X+margin, c.Max.X-margin
	y := c.Max.Y - vg.Points(10)

	title := r.fit(textStyle(titleSize, true, black), f.Title, right-left, subtitleSize)
	c.FillText(title, vg.Point{X: left, Y: y}, f.Title)
	y -= title.Height(f.Title) + vg.Points(4)
	if f.Subtitle != "" {
		sub := textStyle(subtitleSize, false, darkGrey)
		for _, line := range r.wrap(sub, f.Subtitle, right-left) {
			c.FillText(sub, vg.Point{X: left, Y: y}, line)
			y -= sub.Height("Ag") + vg.Points(2)
		}
	}
	y -= vg.Points(4)
	y = r.legend(f, c, left, right, y)

	bottom := c.Min.Y + vg.Points(6)
	if f.Note != "" {
		note := textStyle(noteSize, false, darkGrey)
		lines := r.wrap(note, f.Note, right-left)
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
		area.Max.X -= f.ColorBar.width(r)
		f.ColorBar.draw(r, c, area.Max.X+vg.Points(14), area.Min.Y, area.Max.Y)
	}
	cols, rows := f.cols(), f.rows()
	grid := f.Plots(widthPx)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(14), PadY: vg.Points(6)}
	canvases := plot.Align(grid, tiles, area)
	for row := range rows {
		for k := range cols {
			p := grid[row][k]
			if p == nil {
				continue
			}
			p.Draw(canvases[row][k])
			i := row*cols + k
			right := p.DataCanvas(canvases[row][k]).Max.X
			if last := k + f.Panels[i].TitleSpan - 1; last > k && last < cols && grid[row][last] != nil {
				right = grid[row][last].DataCanvas(canvases[row][last]).Max.X
			}
			r.panelTitle(p, f.Panels[i], canvases[row][k], right)
		}
	}
}

// panelTitle draws the panel's title from its data area's left edge, fitted to end at right.
func (r renderer) panelTitle(p *plot.Plot, pn *Panel, c draw.Canvas, right vg.Length) {
	if pn.Title == "" {
		return
	}
	dc := p.DataCanvas(c)
	sty := textStyle(panelSize, true, darkGrey)
	sty = r.fit(sty, pn.Title, right-dc.Min.X-sty.Height("A")-vg.Points(5), 9)
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
// for the renderer's slack): a long stack's name must not run into the next panel.
func (r renderer) fit(sty text.Style, txt string, width vg.Length, smallest vg.Length) text.Style {
	for sty.Font.Size > smallest && sty.Width(txt)*vg.Length(r.slack) > width {
		sty.Font.Size -= 0.5
	}
	return sty
}

// drawLegend lays the entries out left to right, wrapping, and returns the y below them.
func (r renderer) legend(f *Figure, c draw.Canvas, left, right, y vg.Length) vg.Length {
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
		w := thumbW + vg.Points(5) + sty.Width(e.Label)*vg.Length(r.slack) + vg.Points(16)
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
	if e.Role == RoleInvalid {
		if e.Mark != "" {
			c.DrawGlyph(markGlyph(e.Mark, colors[0]), c.Center())
		} else {
			hatchThumb(c)
		}
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

// spaceOnly measures text like its Handler and draws nothing: the plot reserves room for the
// panel title, which drawPanelTitle draws left-aligned with the lane's swatch.
type spaceOnly struct{ text.Handler }

func (spaceOnly) Draw(vg.Canvas, string, text.Style, vg.Point) {}
