package plots

import (
	"bytes"
	"errors"
	"image"
	"image/draw"
	"image/gif"
	"testing"

	"github.com/ratelab/ratelab/scenarios"
)

// decodeFrames composites an animation's frames as a viewer shows them (disposal none).
func decodeFrames(t *testing.T, data []byte) (*gif.GIF, []*image.RGBA) {
	t.Helper()
	g, err := gif.DecodeAll(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	canvas := image.NewRGBA(image.Rect(0, 0, g.Config.Width, g.Config.Height))
	var frames []*image.RGBA
	for _, fr := range g.Image {
		draw.Draw(canvas, fr.Bounds(), fr, fr.Bounds().Min, draw.Over)
		frames = append(frames, image.NewRGBA(canvas.Bounds()))
		copy(frames[len(frames)-1].Pix, canvas.Pix)
	}
	return g, frames
}

// The animation builds the chart up: 48 frames and a held last one, which is the whole chart
// exactly as its own rendering quantized to the palette (the changed-rectangle frames lose
// nothing); an early frame shows less than the last. Two encodings are byte-identical.
func TestGIFBuildsUpTheChart(t *testing.T) {
	sc, res := runScenario(t, "burst-after-idle", nil)
	fig, err := Build("timeline", sc, res)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := fig.Write(&a, "gif", 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := fig.Write(&b, "gif", 0, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two encodings of the same figure differ")
	}
	g, frames := decodeFrames(t, a.Bytes())
	if len(g.Image) != gifFrames+1 || g.Delay[len(g.Delay)-1] != gifHold || g.Delay[0] != gifDelay {
		t.Fatalf("%d frames, delays %d…%d; want %d, %d…%d", len(g.Image), g.Delay[0], g.Delay[len(g.Delay)-1], gifFrames+1, gifDelay, gifHold)
	}
	if w, h := g.Config.Width, g.Config.Height; w != DefaultWidth || h != fig.DefaultHeight() {
		t.Errorf("size %dx%d, want %dx%d", w, h, DefaultWidth, fig.DefaultHeight())
	}
	q := newQuantizer()
	want := q.paletted(render(fig.withFixedRanges(), DefaultWidth, fig.DefaultHeight()))
	last := frames[len(frames)-1]
	for y := 0; y < g.Config.Height; y++ {
		for x := 0; x < g.Config.Width; x++ {
			r1, g1, b1, _ := last.At(x, y).RGBA()
			r2, g2, b2, _ := want.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 {
				t.Fatalf("the last frame differs from the chart at (%d, %d)", x, y)
			}
		}
	}
	// Frame 10 of 48 is at 52ms of 250ms: the first burst (50ms) is there, the second
	// (150ms) not yet — it has fewer coloured pixels than the last frame.
	colored := func(img *image.RGBA) int {
		n := 0
		for i := 0; i < len(img.Pix); i += 4 {
			r, g, b := int(img.Pix[i]), int(img.Pix[i+1]), int(img.Pix[i+2])
			if max(r, g, b)-min(r, g, b) > 60 {
				n++
			}
		}
		return n
	}
	if early, full := colored(frames[9]), colored(last); early == 0 || early >= full*3/4 {
		t.Errorf("frame 10 has %d coloured pixels, the whole chart %d: want some, and clearly fewer", early, full)
	}
	if _, err := Build("waits", sc, res); err == nil {
		t.Fatal("burst-after-idle has waits?")
	}
	sc, res = runScenario(t, "diurnal", nil)
	w, err := Build("waits", sc, res)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&a, "gif", 0, 0); !errors.Is(err, ErrNoTimeAxis) {
		t.Errorf("waits chart as a GIF: %v, want ErrNoTimeAxis", err)
	}
}

// Every built-in scenario animates within 2 MB at the default size: its timeline where it
// has one (plot SCENARIO --chart timeline --format gif), else its rate chart; and diurnal's
// state chart, the busiest of all (18 panels, bands in each) at 414 KB.
func TestGIFOfEveryBuiltInIsSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 49 frames per scenario")
	}
	const limit = 2 << 20
	check := func(t *testing.T, name, chart string) {
		sc, res := runScenario(t, name, nil)
		if chart == "timeline" && !hasTimeline(sc, res, Params{}) {
			chart = "rate"
		}
		fig, err := Build(chart, sc, res)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := fig.Write(&buf, "gif", 0, 0); err != nil {
			t.Fatalf("%s %s: %v", name, chart, err)
		}
		t.Logf("%s %s: %d KB", name, chart, buf.Len()>>10)
		if buf.Len() > limit {
			t.Errorf("%s %s: %d bytes, over 2 MB", name, chart, buf.Len())
		}
	}
	names := scenarios.Names()
	if raceDetector {
		// Under -race each frame renders about 10 times slower: two scenarios here (the
		// timeline with the most marks, and the state chart below, the largest GIF), all of
		// them in the plain run.
		names = []string{"boundary-attack", "guava-prepay"}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) { t.Parallel(); check(t, name, "timeline") })
	}
	t.Run("diurnal-state", func(t *testing.T) { t.Parallel(); check(t, "diurnal", "state") })
}
