package plots

import (
	"image/color"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/present"
)

// Neutrals, for what is not a limiter: offered traffic, refusals, bounds, grid. Limiter kinds
// take their colours from package present (present.Of): ratelab's own six are the Okabe–Ito
// palette, which stays distinct under the common forms of colour blindness.
var (
	black     = color.RGBA{0x00, 0x00, 0x00, 0xff}
	darkGrey  = color.RGBA{0x33, 0x33, 0x33, 0xff}
	midGrey   = color.RGBA{0x88, 0x88, 0x88, 0xff}
	lightFill = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	gridGrey  = color.RGBA{0xeb, 0xeb, 0xeb, 0xff}
)

// KindColor is the one colour a registered limiter kind has in every chart, its style's
// (present.Of): token-bucket blue, leaky-bucket bluish green, sliding-window orange,
// fixed-window vermillion, warm-up reddish purple, concurrency sky blue; a registered kind
// nobody styled, present's fallback hue. A kind outside the registry (a test's stand-in) is
// dark grey.
func KindColor(k limiters.Kind) color.Color {
	if _, ok := limiters.Lookup(k); !ok {
		return darkGrey
	}
	return present.Of(string(k)).RGBA()
}

// LaneColor is the colour of a lane: its first stage's kind.
func LaneColor(spec engine.LaneSpec) color.Color {
	if len(spec.Stack) == 0 {
		return darkGrey
	}
	return KindColor(spec.Stack[0].Kind())
}

// instanceColors are a fleet's instances in the fleet chart, instance k in the k-th: the
// Okabe–Ito blue, orange, bluish green, reddish purple, sky blue and vermillion, which stay
// distinct under the common forms of colour blindness. They are registry kinds' colours too
// (so the GIF palette has them and their tints), but a fleet chart's panel is one lane, one
// kind: there they name instances.
var instanceColors = []color.RGBA{
	{0x00, 0x72, 0xb2, 0xff}, {0xe6, 0x9f, 0x00, 0xff}, {0x00, 0x9e, 0x73, 0xff},
	{0xcc, 0x79, 0xa7, 0xff}, {0x56, 0xb4, 0xe9, 0xff}, {0xd5, 0x5e, 0x00, 0xff},
}

// InstanceColor is the colour of a fleet's instance k, the same in every panel of the fleet
// chart; past the six colours the chart sums the remaining instances in grey.
func InstanceColor(k int) color.Color {
	if k < 0 || k >= len(instanceColors) {
		return midGrey
	}
	return instanceColors[k]
}

// Font sizes, in points at 96 dpi: chosen so that a 1000-pixel-wide figure scaled down to a
// README's ~880 pixels keeps tick labels at about 12 pixels.
const (
	titleSize    = 16
	subtitleSize = 12
	panelSize    = 12
	labelSize    = 12
	tickSize     = 11
	legendSize   = 12
	noteSize     = 11
)

// DPI is the resolution of PNG output: width and height flags are pixels at this DPI.
const DPI = 96

var (
	sans     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}
)

func fontOf(f font.Font, size vg.Length) font.Font { f.Size = size; return f }

// Role is what a series shows; each role has one look in every chart. Roles drawn in a
// lane's colour take it from the lane; the others are neutral. Data are drawn solid (or as
// marks, bands and bars); dashes and dots are kept for references — bounds, documented
// curves, the configured limit, annotations — so that no measured line looks like a bound.
type Role string

// The roles.
const (
	RoleOffered    Role = "offered"        // light grey area
	RoleAttempts   Role = "attempts"       // thin grey solid line: offered plus retries
	RoleAdmitted   Role = "admitted"       // the lane's colour, solid
	RoleRejected   Role = "rejected"       // black, solid: drawn downward, below zero, in the rate chart
	RoleAvailable  Role = "available"      // the stage kind's colour, solid step
	RoleInFlight   Role = "in flight"      // dark grey solid step (or the lane's colour in the downstream chart)
	RoleQueue      Role = "queue"          // dark grey solid step, in a panel of its own
	RoleBand       Role = "band"           // the series' colour, translucent fill: a range drawn deliberately
	RoleBound      Role = "bound"          // black dashed
	RoleNominal    Role = "nominal"        // grey dotted: the configured rate (× a window)
	RoleCurve      Role = "curve"          // black long-dash–dot: a documented formula
	RoleFailed     Role = "failed"         // black step
	RoleMarker     Role = "marker"         // a vertical annotation line
	RoleBoundary   Role = "boundary"       // a thin vertical line in the stage kind's colour: a window or slot boundary
	RoleNow        Role = "now"            // the animation's current time: a solid dark vertical line
	RoleMarks      Role = "marks"          // glyphs (the timeline)
	RoleRolling    Role = "rolling"        // the lane's colour, solid: admitted in a rolling window
	RoleLaneInFlow Role = "lane in flight" // the lane's colour, solid step
	RoleHistogram  Role = "histogram"      // the lane's colour: bars, translucent with a solid outline
	RolePercentile Role = "percentile"     // the lane's colour, solid: a percentile curve
)

// reference reports whether a role draws the configuration (a bound, a limit, a boundary),
// not what the run measured: an animation shows it whole from the first frame.
func (r Role) reference() bool {
	switch r {
	case RoleBound, RoleNominal, RoleCurve, RoleMarker, RoleBoundary, RoleFault, RoleLimit:
		return true
	}
	return false
}

// Mark is one kind of glyph in the timeline; shapes differ so that they read without colour.
type Mark string

// The timeline's marks.
const (
	MarkAdmitted      Mark = "admitted"            // filled circle, lane colour
	MarkAdmittedRetry Mark = "admitted on a retry" // filled triangle, lane colour
	MarkRejected      Mark = "rejected"            // ✕, black
	MarkRejectedRetry Mark = "retry rejected"      // +, black
	MarkFailed        Mark = "downstream refused"  // square outline, black
)

var markOrder = []Mark{MarkAdmitted, MarkAdmittedRetry, MarkRejected, MarkRejectedRetry, MarkFailed}

func markGlyph(m Mark, lane color.Color) draw.GlyphStyle {
	r := vg.Points(3.2)
	switch m {
	case MarkAdmitted:
		return draw.GlyphStyle{Color: lane, Radius: r, Shape: draw.CircleGlyph{}}
	case MarkAdmittedRetry:
		return draw.GlyphStyle{Color: lane, Radius: r * 1.15, Shape: draw.PyramidGlyph{}}
	case MarkRejected:
		return draw.GlyphStyle{Color: black, Radius: r * 0.9, Shape: strokeGlyph{cross: true}}
	case MarkRejectedRetry:
		return draw.GlyphStyle{Color: black, Radius: r * 1.1, Shape: strokeGlyph{}}
	}
	return draw.GlyphStyle{Color: black, Radius: r * 0.9, Shape: draw.BoxGlyph{}}
}

// strokeGlyph is a ✕ (cross) or + drawn with a 1.3pt stroke: gonum's are 0.5pt, too faint
// beside filled marks.
type strokeGlyph struct{ cross bool }

func (g strokeGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	ls := draw.LineStyle{Color: sty.Color, Width: vg.Points(1.3)}
	r := sty.Radius
	if g.cross {
		c.StrokeLine2(ls, pt.X-r, pt.Y-r, pt.X+r, pt.Y+r)
		c.StrokeLine2(ls, pt.X-r, pt.Y+r, pt.X+r, pt.Y-r)
		return
	}
	c.StrokeLine2(ls, pt.X-r, pt.Y, pt.X+r, pt.Y)
	c.StrokeLine2(ls, pt.X, pt.Y-r, pt.X, pt.Y+r)
}

// lineStyle is the line of a role; c is the lane's or stage's colour where the role takes one.
func lineStyle(role Role, c color.Color) draw.LineStyle {
	switch role {
	case RoleAdmitted, RoleRolling, RoleAvailable, RoleLaneInFlow, RolePercentile:
		return draw.LineStyle{Color: c, Width: vg.Points(1.8)}
	case RoleHistogram, RoleStacked:
		return draw.LineStyle{Color: c, Width: vg.Points(1)}
	case RoleBand:
		return draw.LineStyle{Color: c, Width: vg.Points(1.2)}
	case RoleAttempts:
		return draw.LineStyle{Color: midGrey, Width: vg.Points(1.1)}
	case RoleRejected:
		return draw.LineStyle{Color: black, Width: vg.Points(1.3)}
	case RoleInFlight, RoleQueue:
		return draw.LineStyle{Color: darkGrey, Width: vg.Points(1.3)}
	case RoleBound:
		return draw.LineStyle{Color: black, Width: vg.Points(1.3), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}
	case RoleCurve:
		return draw.LineStyle{Color: black, Width: vg.Points(1.3), Dashes: []vg.Length{vg.Points(8), vg.Points(2.5), vg.Points(1.5), vg.Points(2.5)}}
	case RoleLimit:
		return draw.LineStyle{Color: darkGrey, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(1.5), vg.Points(2.5)}}
	case RoleNominal:
		return draw.LineStyle{Color: midGrey, Width: vg.Points(1.4), Dashes: []vg.Length{vg.Points(1.5), vg.Points(2.5)}}
	case RoleFailed:
		return draw.LineStyle{Color: black, Width: vg.Points(1.4)}
	case RoleMarker:
		return draw.LineStyle{Color: midGrey, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}
	case RoleBoundary:
		if c == nil {
			c = midGrey
		}
		return draw.LineStyle{Color: faint(c), Width: vg.Points(1.2)}
	case RoleNow:
		return draw.LineStyle{Color: darkGrey, Width: vg.Points(1.2)}
	case RoleOffered:
		return draw.LineStyle{Color: midGrey, Width: vg.Points(0.6)}
	}
	return draw.LineStyle{Color: c, Width: vg.Points(1)}
}

// faint is c mixed 45% toward white, opaque (so that a GIF's fixed palette has it): a
// boundary reads as a grid line of the lane's colour.
func faint(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8((float64(v>>8)*0.55 + 255*0.45) + 0.5) }
	return color.RGBA{mix(r), mix(g), mix(b), 0xff}
}
