package plots

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"io"
	"slices"
	"time"

	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/present"
)

// The animation: gifFrames frames that draw the chart up to a moving "now" line, gifDelay
// apart, then the whole chart held for gifHold. 48 frames at 0.1s each is a 4.8s sweep —
// long enough to follow a burst, short enough to watch twice.
const (
	gifFrames = 48
	gifDelay  = 10  // hundredths of a second
	gifHold   = 300 // hundredths of a second
)

// ErrNoTimeAxis is returned by WriteGIF for a figure whose x axis is not virtual time.
var ErrNoTimeAxis = errors.New("plots: the chart has no time axis to animate")

// WriteGIF writes the figure as an animated GIF that builds the chart up over virtual time:
// frame k shows every measured series up to k/48 of the axis, with a "now" line and its time;
// references (bounds, limits, boundaries) are there from the first frame, and the axes never
// move. The last frame is the whole chart, held 3s; the animation loops.
//
// The colours are a fixed palette (gifPalette: white, greys, and every registry kind's colour
// in tints toward white, as antialiasing and translucent bands make them), each pixel mapped to
// its nearest entry; after the first, each frame stores only the rectangle that changed, with
// unchanged pixels transparent. The same figure gives the same bytes.
func (f *Figure) WriteGIF(w io.Writer, width, height int) error {
	if !f.TimeAxis || len(f.Panels) == 0 {
		return fmt.Errorf("%s: %w", f.Name, ErrNoTimeAxis)
	}
	if width <= 0 {
		width = DefaultWidth
	}
	if height <= 0 {
		height = f.DefaultHeight()
	}
	fixed := f.withFixedRanges()
	xmin, xmax := f.Panels[0].XMin, f.Panels[0].XMax
	q := newQuantizer()
	anim := &gif.GIF{Config: image.Config{ColorModel: q.palette, Width: width, Height: height}}
	var prev *image.Paletted
	add := func(fig *Figure, delay int) {
		img := q.paletted(render(fig, width, height))
		frame := img
		if prev != nil {
			frame = changed(prev, img)
		}
		anim.Image = append(anim.Image, frame)
		anim.Delay = append(anim.Delay, delay)
		anim.Disposal = append(anim.Disposal, gif.DisposalNone)
		prev = img
	}
	for k := 1; k <= gifFrames; k++ {
		t := xmin + (xmax-xmin)*float64(k)/gifFrames
		add(fixed.until(t, k == gifFrames), gifDelay)
	}
	add(fixed, gifHold)
	return gif.EncodeAll(w, anim)
}

// render draws fig as an RGBA image of width×height pixels.
func render(fig *Figure, width, height int) *image.RGBA {
	c := vgimg.NewWith(vgimg.UseWH(px(width), px(height)), vgimg.UseDPI(DPI))
	fig.Draw(draw.New(c), width)
	return c.Image().(*image.RGBA)
}

// withFixedRanges is a copy of f whose panels keep the y ranges of the whole chart: frames
// must not rescale as data arrive.
func (f *Figure) withFixedRanges() *Figure {
	out := *f
	ranges := f.yRanges()
	out.Panels = make([]*Panel, len(f.Panels))
	for i, p := range f.Panels {
		cp := *p
		cp.YMin, cp.YMax = ranges[i][0], ranges[i][1]
		out.Panels[i] = &cp
	}
	return &out
}

// until is f with every measured series cut at x = t (a step line held to t), the "now" line
// at t in every panel and its time above the first; last leaves the line out.
func (f *Figure) until(t float64, last bool) *Figure {
	out := *f
	out.Panels = make([]*Panel, len(f.Panels))
	for i, p := range f.Panels {
		cp := *p
		cp.Series = nil
		for _, s := range p.Series {
			if !s.Role.reference() {
				s = seriesUntil(s, t)
			}
			cp.Series = append(cp.Series, s)
		}
		cp.Labels = slices.DeleteFunc(slices.Clone(p.Labels), func(l Label) bool { return l.Small && l.X > t })
		if !last {
			cp.Series = append(cp.Series, Series{Label: "now", Role: RoleNow, X: []float64{t}, Y: []float64{0}})
			if i == 0 {
				top := cp.YMin + 0.93*(cp.YMax-cp.YMin)
				cp.Labels = append(cp.Labels, Label{X: t, Y: top, Text: shortDur(time.Duration(t * float64(f.TimeUnit))),
					Small: true, Left: t > cp.XMin+0.85*(cp.XMax-cp.XMin)})
			}
		}
		out.Panels[i] = &cp
	}
	return &out
}

// seriesUntil is s up to x = t: marks and points at or before t; a step line (or band) then
// holds its last value to t.
func seriesUntil(s Series, t float64) Series {
	n := 0
	for n < len(s.X) && s.X[n] <= t {
		n++
	}
	out := s
	out.X, out.Y = slices.Clone(s.X[:n]), slices.Clone(s.Y[:n])
	if s.Lo != nil {
		out.Lo = slices.Clone(s.Lo[:n])
	}
	if s.Step && n > 0 && n < len(s.X) && s.X[n-1] < t {
		out.X, out.Y = append(out.X, t), append(out.Y, s.Y[n-1])
		if s.Lo != nil {
			out.Lo = append(out.Lo, s.Lo[n-1])
		}
	}
	return out
}

// changed is the part of next that differs from prev: its bounding rectangle, with the pixels
// that did not change transparent (index 0), so that the frame compresses to almost nothing.
// With nothing changed it is a single transparent pixel.
func changed(prev, next *image.Paletted) *image.Paletted {
	b := next.Bounds()
	x0, y0, x1, y1 := b.Max.X, b.Max.Y, b.Min.X-1, b.Min.Y-1
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := y * next.Stride
		for x := b.Min.X; x < b.Max.X; x++ {
			if next.Pix[row+x] != prev.Pix[row+x] {
				x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
			}
		}
	}
	if x1 < x0 {
		return image.NewPaletted(image.Rect(0, 0, 1, 1), next.Palette)
	}
	r := image.Rect(x0, y0, x1+1, y1+1)
	out := image.NewPaletted(r, next.Palette)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if v := next.Pix[y*next.Stride+x]; v != prev.Pix[y*prev.Stride+x] {
				out.Pix[out.PixOffset(x, y)] = v
			}
		}
	}
	return out
}

// quantizer maps RGBA pixels to the nearest colour of the fixed palette, remembering each
// colour it has seen (a chart has a few thousand distinct antialiased colours).
type quantizer struct {
	palette color.Palette
	seen    map[uint32]uint8
}

func newQuantizer() *quantizer {
	return &quantizer{palette: gifPalette(), seen: map[uint32]uint8{}}
}

func (q *quantizer) paletted(img *image.RGBA) *image.Paletted {
	b := img.Bounds()
	out := image.NewPaletted(b, q.palette)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			i := img.PixOffset(x, y)
			r, g, bl := img.Pix[i], img.Pix[i+1], img.Pix[i+2]
			key := uint32(r)<<16 | uint32(g)<<8 | uint32(bl)
			idx, ok := q.seen[key]
			if !ok {
				idx = q.nearest(r, g, bl)
				q.seen[key] = idx
			}
			out.Pix[out.PixOffset(x, y)] = idx
		}
	}
	return out
}

// nearest is the opaque palette entry closest to (r, g, b) in squared RGB distance, the
// first on a tie.
func (q *quantizer) nearest(r, g, b uint8) uint8 {
	best, bestD := 1, int(^uint(0)>>1)
	for i := 1; i < len(q.palette); i++ {
		c := q.palette[i].(color.RGBA)
		dr, dg, db := int(c.R)-int(r), int(c.G)-int(g), int(c.B)-int(b)
		if d := dr*dr + dg*dg + db*db; d < bestD {
			best, bestD = i, d
		}
	}
	return uint8(best)
}

// gifPalette is the animation's colours: transparent first (unchanged pixels), then white,
// black and a ramp of 24 greys (text, axes, grid, the offered area), then each registered
// kind's colour (present.Of) and its tints 10% … 90% toward white (antialiased edges,
// translucent bands and bars over white, boundaries). The 31 fixed colours leave 225 of a GIF's
// 256: 22 kinds get their ten, a 23rd (the registry holds 23 when the peers and failsafe-go are
// linked in) gets five, and kinds past it share their nearest colour. A figure draws a few
// kinds, so sharing a tint with an undrawn kind costs nothing.
func gifPalette() color.Palette {
	pal := color.Palette{color.RGBA{}, color.RGBA{0xff, 0xff, 0xff, 0xff}, color.RGBA{0, 0, 0, 0xff}}
	for k := 1; k <= 24; k++ {
		v := uint8(k * 255 / 25)
		pal = append(pal, color.RGBA{v, v, v, 0xff})
	}
	for _, c := range []color.RGBA{lightFill, gridGrey, midGrey, darkGrey} {
		pal = append(pal, c)
	}
	for _, info := range limiters.Kinds() {
		c := present.Of(string(info.Kind)).RGBA()
		for t := 0; t < 10 && len(pal) < 256; t++ {
			mix := func(v uint8) uint8 { return uint8((float64(v)*float64(10-t) + 255*float64(t)) / 10) }
			pal = append(pal, color.RGBA{mix(c.R), mix(c.G), mix(c.B), 0xff})
		}
	}
	return pal
}
