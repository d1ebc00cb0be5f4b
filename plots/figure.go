package plots

import (
	"bufio"
	"bytes"
	"fmt"
	"image/color"
	"io"
	"strconv"
	"time"

	"gonum.org/v1/plot"
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
		rasterRenderer.draw(f, draw.New(c), width)
		_, err := vgimg.PngCanvas{Canvas: c}.WriteTo(w)
		return err
	case "svg":
		// Text in an SVG is drawn by the viewer, in whatever font it has: Liberation Sans, or
		// Arial and Arimo, which have the same metrics; failing those a wider sans. The layout
		// leaves room for a font 20% wider (svgRenderer), and the family names the compatible
		// ones.
		c := vgsvg.New(wl, hl)
		svgRenderer.draw(f, draw.New(c), width)
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

// px is n pixels at DPI as a length.
func px(n int) vg.Length { return vg.Length(n) * vg.Inch / DPI }

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
