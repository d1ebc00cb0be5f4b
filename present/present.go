// Package present is how a limiter kind looks: its chart colour, the colour's name for legends
// and docs, and the glyph that marks its series where colour cannot (print, colour
// blindness). The limiters only decide; what they look like is the shells' business (plots,
// tui, web, cmd/ratelab), so it lives here, keyed by the kind's name, and package limiters
// knows nothing of it.
//
// Every built-in kind has its style in this package's table: ratelab's six in the Okabe–Ito
// palette (token-bucket blue #0072b2, leaky-bucket bluish green #009e73, sliding-window orange
// #e69f00, fixed-window vermillion #d55e00, warm-up reddish purple #cc79a7, concurrency sky
// blue #56b4e9), which stays distinct under the common forms of colour blindness; the five
// adaptive kinds, the twelve peers and failsafe-adaptive each a colour of their own. A kind
// registered from outside (limiters.Register) gives its style with Register, from the same
// init function, as image formats register with package image:
//
//	func init() {
//		limiters.Register(countdownKind)
//		present.Register("countdown", present.Style{Color: "#44aa99", ColorName: "toy teal", Glyph: "cross"})
//	}
//
// A kind nobody styled still draws, in Fallback's colour: derived from its name alone, never a
// built-in's.
//
// The package imports only the standard library, and nothing imports it below the shells.
package present

import (
	"fmt"
	"hash/fnv"
	"image/color"
	"math"
	"slices"
	"sync"
)

// Style is how one kind looks in every chart, legend and page.
type Style struct {
	// Color is the kind's chart colour as "#rrggbb" (lower case in the table), never one of
	// Neutrals: grey means "in flight", black and white are bounds and paper.
	Color string
	// ColorName names Color for legends and docs ("blue"): "token-bucket blue, …".
	ColorName string
	// Glyph marks the kind's series where colour cannot: one of Glyphs, and within a family
	// (limiters.Family) each kind its own.
	Glyph string
}

// RGBA is Color as an opaque color.RGBA; a Color that is not "#rrggbb" (which Register and the
// table never hold) is the neutral dark grey #333333.
func (s Style) RGBA() color.RGBA {
	c, err := parseHex(s.Color)
	if err != nil {
		return color.RGBA{0x33, 0x33, 0x33, 0xff}
	}
	return c
}

// Glyphs are the point marks a kind can be given (gonum's glyph drawers by name).
var Glyphs = []string{"circle", "ring", "square", "box", "triangle", "pyramid", "plus", "cross"}

// Neutrals are the colours of what is not a limiter (offered traffic, in flight, bounds, grid,
// paper); no kind is drawn in one of them.
var Neutrals = []string{"#000000", "#333333", "#888888", "#dddddd", "#ebebeb", "#ffffff"}

// builtin is the style of every kind ratelab ships, keyed by kind name: the six and the
// adaptive kinds of package limiters, the peers of limiters/peers, failsafe-go's adaptive
// limiter. Colours are pairwise distinct (TestEveryKindHasAStyleOfItsOwn).
var builtin = map[string]Style{
	// ratelab's own six: the Okabe–Ito palette.
	"token-bucket":   {"#0072b2", "blue", "circle"},
	"leaky-bucket":   {"#009e73", "green", "square"},
	"sliding-window": {"#e69f00", "orange", "ring"},
	"fixed-window":   {"#d55e00", "vermillion", "triangle"},
	"warm-up":        {"#cc79a7", "purple", "pyramid"},
	"concurrency":    {"#56b4e9", "sky blue", "box"},
	// The adaptive concurrency limits: Netflix's four, Envoy's gradient.
	"aimd":           {"#2ca02c", "green", "circle"},
	"gradient":       {"#9467bd", "purple", "square"},
	"gradient2":      {"#e377c2", "orchid", "triangle"},
	"vegas":          {"#d62728", "brick red", "ring"},
	"envoy-gradient": {"#ac6bbf", "envoy violet", "box"},
	// The peers (limiters/peers).
	"nginx":        {"#999933", "olive", "circle"},
	"guava-bursty": {"#4e7d1e", "guava leaf", "circle"},
	"guava-warmup": {"#a4c639", "guava lime", "pyramid"},
	"x-time-rate":  {"#00add8", "gopher cyan", "plus"},
	"uber":         {"#3b2a8c", "indigo", "cross"},
	"sentinel":     {"#b2182b", "sentinel crimson", "box"},
	"resilience4j": {"#8c564b", "resilience brown", "square"},
	"flash5-fixed": {"#882255", "wine", "triangle"},
	"flash5-token": {"#cc6677", "rose", "ring"},
	"two-counter":  {"#f38020", "cloudflare orange", "plus"},
	"haproxy":      {"#1d4f91", "haproxy navy", "ring"},
	// failsafe-go's adaptive limiter (limiters/failsafego).
	"failsafe-adaptive": {"#7b3294", "plum", "pyramid"},
}

var (
	mu         sync.RWMutex
	registered = map[string]Style{}
)

// Register gives a kind registered outside ratelab its style; call it once per kind, from the
// init function that registers the kind (limiters.Register). It panics, naming the kind, on an
// empty kind name, a kind styled already (built-in or registered), a Color that is not
// "#rrggbb" or is one of Neutrals, a Color another kind has already, an empty ColorName, or a
// Glyph not in Glyphs: a style is whole and its own, or the program does not start.
func Register(kind string, s Style) {
	if kind == "" {
		panic("present: Register: empty kind name")
	}
	if err := s.check(); err != nil {
		panic(fmt.Sprintf("present: Register: kind %q: %v", kind, err))
	}
	mu.Lock()
	defer mu.Unlock()
	if _, ok := builtin[kind]; ok {
		panic(fmt.Sprintf("present: Register: kind %q is styled already", kind))
	}
	if _, ok := registered[kind]; ok {
		panic(fmt.Sprintf("present: Register: kind %q is styled already", kind))
	}
	if other, ok := colourOwner(s.RGBA()); ok {
		panic(fmt.Sprintf("present: Register: kind %q: colour %s is %s's", kind, s.Color, other))
	}
	registered[kind] = s
}

// colourOwner is the kind whose style has colour c, built-in first; the caller holds mu.
func colourOwner(c color.RGBA) (string, bool) {
	for _, table := range []map[string]Style{builtin, registered} {
		for k, s := range table {
			if s.RGBA() == c {
				return k, true
			}
		}
	}
	return "", false
}

// check says what is wrong with s, nil when nothing.
func (s Style) check() error {
	c, err := parseHex(s.Color)
	if err != nil {
		return err
	}
	for _, n := range Neutrals {
		if nc, _ := parseHex(n); nc == c {
			return fmt.Errorf("colour %s is a neutral (offered, in flight, bounds, paper)", s.Color)
		}
	}
	if s.ColorName == "" {
		return fmt.Errorf("no colour name")
	}
	if !slices.Contains(Glyphs, s.Glyph) {
		return fmt.Errorf("glyph %q is not one of %v", s.Glyph, Glyphs)
	}
	return nil
}

// Lookup is the style of a kind, built-in or registered; false for a kind nobody styled.
func Lookup(kind string) (Style, bool) {
	if s, ok := builtin[kind]; ok {
		return s, true
	}
	mu.RLock()
	defer mu.RUnlock()
	s, ok := registered[kind]
	return s, ok
}

// Of is the style of a kind: Lookup's, else Fallback's.
func Of(kind string) Style {
	if s, ok := Lookup(kind); ok {
		return s
	}
	return Fallback(kind)
}

// Fallback is the style of a kind nobody styled, a function of its name alone (the same in
// every run, on every machine, whatever else is registered). The name's 32-bit FNV-1a hash h
// picks the hue, h mod 360 degrees, drawn at saturation 0.6 and lightness 0.42 (so never a
// grey, black or white: never one of Neutrals); where that lands on a built-in's colour, the hue
// moves on 7° at a time until it does not. The glyph is Glyphs[(h/360) mod 8]: eight glyphs
// among 23 built-in kinds are all taken, so the colour, not the glyph, is what sets a stranger
// apart. ColorName is "hue N°", e.g. "hue 212°".
func Fallback(kind string) Style {
	f := fnv.New32a()
	f.Write([]byte(kind))
	h := f.Sum32()
	hue := int(h % 360)
	c := hsl(float64(hue), 0.6, 0.42)
	for step := 0; builtinColour(c) && step < 360/7; step++ {
		hue = (hue + 7) % 360
		c = hsl(float64(hue), 0.6, 0.42)
	}
	return Style{
		Color:     fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B),
		ColorName: fmt.Sprintf("hue %d°", hue),
		Glyph:     Glyphs[int(h/360)%len(Glyphs)],
	}
}

// builtinColour reports whether c is a built-in kind's colour.
func builtinColour(c color.RGBA) bool {
	for _, s := range builtin {
		if s.RGBA() == c {
			return true
		}
	}
	return false
}

// hsl is the colour of hue h (degrees), saturation s and lightness l (0 to 1), each channel
// rounded to the nearest of 0–255: hsl(0, 0.6, 0.42) is #ab2b2b.
func hsl(h, s, l float64) color.RGBA {
	c := (1 - math.Abs(2*l-1)) * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	m := l - c/2
	var r, g, b float64
	switch {
	case h < 60:
		r, g, b = c, x, 0
	case h < 120:
		r, g, b = x, c, 0
	case h < 180:
		r, g, b = 0, c, x
	case h < 240:
		r, g, b = 0, x, c
	case h < 300:
		r, g, b = x, 0, c
	default:
		r, g, b = c, 0, x
	}
	ch := func(v float64) uint8 { return uint8(math.Round((v + m) * 255)) }
	return color.RGBA{ch(r), ch(g), ch(b), 0xff}
}

// parseHex reads "#rrggbb" (either case).
func parseHex(s string) (color.RGBA, error) {
	if len(s) != 7 || s[0] != '#' {
		return color.RGBA{}, fmt.Errorf("colour %q is not #rrggbb", s)
	}
	var v [3]uint8
	for i := range v {
		hi, ok1 := hexDigit(s[1+2*i])
		lo, ok2 := hexDigit(s[2+2*i])
		if !ok1 || !ok2 {
			return color.RGBA{}, fmt.Errorf("colour %q is not #rrggbb", s)
		}
		v[i] = hi<<4 | lo
	}
	return color.RGBA{v[0], v[1], v[2], 0xff}, nil
}

func hexDigit(b byte) (uint8, bool) {
	switch {
	case '0' <= b && b <= '9':
		return b - '0', true
	case 'a' <= b && b <= 'f':
		return b - 'a' + 10, true
	case 'A' <= b && b <= 'F':
		return b - 'A' + 10, true
	}
	return 0, false
}
