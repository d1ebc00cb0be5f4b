package present

import (
	"fmt"
	"go/build"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
	_ "github.com/ratelab/ratelab/limiters/failsafego" // registers failsafe-adaptive, after the peers
)

// Every registered kind (ratelab's, the adaptive ones, the peers, failsafe-go's) has a style in
// the table, whole, in a colour no other kind has and no neutral, with a glyph of its own
// within its family; and the table has no row for a kind that does not exist.
func TestEveryKindHasAStyleOfItsOwn(t *testing.T) {
	colours := map[string]limiters.Kind{}
	glyphs := map[string]limiters.Kind{}
	kinds := limiters.Kinds()
	for _, k := range kinds {
		s, ok := Lookup(string(k.Kind))
		if !assert.True(t, ok, "%s has no style: add its row to builtin in present/present.go (or, for a kind outside ratelab, call present.Register from the init that registers it)", k.Kind) {
			continue
		}
		assert.NoError(t, s.check(), "%s", k.Kind)
		c := strings.ToLower(s.Color)
		assert.Equal(t, s.Color, c, "%s: the table writes colours in lower case", k.Kind)
		if other, ok := colours[c]; ok {
			t.Errorf("%s and %s share the colour %s", k.Kind, other, c)
		}
		colours[c] = k.Kind
		g := string(k.Family) + "/" + s.Glyph
		if other, ok := glyphs[g]; ok {
			t.Errorf("%s and %s share the glyph %s in family %s", k.Kind, other, s.Glyph, k.Family)
		}
		glyphs[g] = k.Kind
	}
	for name := range builtin {
		_, ok := limiters.Lookup(limiters.Kind(name))
		assert.True(t, ok, "the table styles %q, which no package registers", name)
	}
	assert.Len(t, builtin, len(kinds), "one row per built-in kind")
}

// The doc comment's palette for ratelab's own six is the table's.
func TestTheSixAreOkabeIto(t *testing.T) {
	for kind, want := range map[limiters.Kind]string{
		limiters.KindTokenBucket: "#0072b2 blue", limiters.KindLeakyBucket: "#009e73 green",
		limiters.KindSlidingWindow: "#e69f00 orange", limiters.KindFixedWindow: "#d55e00 vermillion",
		limiters.KindWarmUpTokenBucket: "#cc79a7 purple", limiters.KindConcurrency: "#56b4e9 sky blue",
	} {
		s := Of(string(kind))
		assert.Equal(t, want, s.Color+" "+s.ColorName, "%s", kind)
	}
	assert.Equal(t, [4]uint8{0x00, 0x72, 0xb2, 0xff}, rgba4(Of("token-bucket")))
}

func rgba4(s Style) [4]uint8 { c := s.RGBA(); return [4]uint8{c.R, c.G, c.B, c.A} }

// A kind nobody styled gets the same style every time, from its name alone: a whole style, in
// a colour that is no built-in's and no neutral, and different names mostly different colours.
func TestFallbackIsDeterministicAndNoBuiltinColour(t *testing.T) {
	builtinColours := map[string]string{}
	for k, s := range builtin {
		builtinColours[s.Color] = k
	}
	distinct := map[string]bool{}
	for i := range 500 {
		name := fmt.Sprintf("stranger-%d", i)
		s := Fallback(name)
		assert.Equal(t, s, Fallback(name), "%s: twice the same", name)
		assert.Equal(t, s, Of(name), "%s: Of falls back", name)
		_, styled := Lookup(name)
		assert.False(t, styled)
		require.NoError(t, s.check(), "%s: %+v", name, s)
		if k, ok := builtinColours[s.Color]; ok {
			t.Errorf("%s falls back to %s's colour %s", name, k, s.Color)
		}
		assert.True(t, strings.HasPrefix(s.ColorName, "hue ") && strings.HasSuffix(s.ColorName, "°"), s.ColorName)
		distinct[s.Color] = true
	}
	assert.Greater(t, len(distinct), 250, "500 names spread over the 360 hues")

	// The rule, pinned: FNV-1a("my-kind") = 0x9ba2e0fc = 2611142908; 2611142908 mod 360 =
	// 268°, glyph Glyphs[(2611142908/360) mod 8] = Glyphs[6] = plus.
	assert.Equal(t, Style{Color: "#672bab", ColorName: "hue 268°", Glyph: "plus"}, Fallback("my-kind"))
	assert.Equal(t, "#ab2b2b", Style{Color: fmtHex(hsl(0, 0.6, 0.42))}.Color, "hsl's doc comment")
}

func fmtHex(c interface{ RGBA() (r, g, b, a uint32) }) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

// Where a name's hue lands on a built-in's colour, the hue moves on 7°.
func TestFallbackStepsOffABuiltinColour(t *testing.T) {
	first := Fallback("my-kind") // hue 268°
	builtin["zz-test-collision"] = first
	defer delete(builtin, "zz-test-collision")
	moved := Fallback("my-kind")
	assert.Equal(t, "hue 275°", moved.ColorName)
	assert.Equal(t, fmtHex(hsl(275, 0.6, 0.42)), moved.Color)
	assert.Equal(t, first.Glyph, moved.Glyph, "the glyph is the name's")
}

// Register styles a kind from outside; it refuses, naming the kind, whatever would leave a
// style incomplete or not its own.
func TestRegisterRefusesWhatIsNotWholeOrNotItsOwn(t *testing.T) {
	Register("test-register", Style{Color: "#123456", ColorName: "test navy", Glyph: "ring"})
	s, ok := Lookup("test-register")
	require.True(t, ok)
	assert.Equal(t, Style{Color: "#123456", ColorName: "test navy", Glyph: "ring"}, s)
	assert.Equal(t, s, Of("test-register"))

	for _, c := range []struct {
		kind string
		s    Style
		want string
	}{
		{"test-register", Style{"#123457", "n", "ring"}, `present: Register: kind "test-register" is styled already`},
		{"token-bucket", Style{"#123458", "n", "ring"}, `present: Register: kind "token-bucket" is styled already`},
		{"test-b", Style{"#0072B2", "n", "ring"}, `present: Register: kind "test-b": colour #0072B2 is token-bucket's`},
		{"test-b", Style{"#123456", "n", "ring"}, `present: Register: kind "test-b": colour #123456 is test-register's`},
		{"test-b", Style{"#888888", "n", "ring"}, `present: Register: kind "test-b": colour #888888 is a neutral (offered, in flight, bounds, paper)`},
		{"test-b", Style{"123456", "n", "ring"}, `present: Register: kind "test-b": colour "123456" is not #rrggbb`},
		{"test-b", Style{"#12345g", "n", "ring"}, `present: Register: kind "test-b": colour "#12345g" is not #rrggbb`},
		{"test-b", Style{"#123459", "", "ring"}, `present: Register: kind "test-b": no colour name`},
		{"test-b", Style{"#123459", "n", "star"}, `present: Register: kind "test-b": glyph "star" is not one of [circle ring square box triangle pyramid plus cross]`},
		{"", Style{"#123459", "n", "ring"}, `present: Register: empty kind name`},
	} {
		assert.PanicsWithValue(t, c.want, func() { Register(c.kind, c.s) })
	}
	_, ok = Lookup("test-b")
	assert.False(t, ok, "a refused style is not kept")
}

// Styles registered from several goroutines while others look kinds up (run with -race) are
// all kept.
func TestRegisterAndLookupConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			Register(fmt.Sprintf("test-concurrent-%d", i), Style{Color: fmt.Sprintf("#2200%02x", i+1), ColorName: "n", Glyph: "box"})
		}()
		go func() {
			defer wg.Done()
			for range 100 {
				_ = Of("token-bucket")
				_ = Of(fmt.Sprintf("test-concurrent-%d", i))
			}
		}()
	}
	wg.Wait()
	for i := range 8 {
		s, ok := Lookup(fmt.Sprintf("test-concurrent-%d", i))
		assert.True(t, ok)
		assert.Equal(t, fmt.Sprintf("#2200%02x", i+1), s.Color)
	}
}

// The package imports only the standard library, and the kinds' packages do not import it:
// how a kind looks stays out of the library a Go user links into a server.
func TestOnlyTheStandardLibraryAndNoKindImportsIt(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	for _, imp := range pkg.Imports {
		first, _, _ := strings.Cut(imp, "/")
		assert.NotContains(t, first, ".", "present imports %s: only the standard library", imp)
	}
	for _, dir := range []string{"../limiters", "../limiters/peers", "../limiters/failsafego"} {
		pkg, err := build.ImportDir(dir, 0)
		require.NoError(t, err, dir)
		assert.NotContains(t, pkg.Imports, "github.com/ratelab/ratelab/present", "%s imports present", dir)
	}
}
