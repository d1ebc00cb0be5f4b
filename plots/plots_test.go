package plots

import (
	"bytes"
	"context"
	"flag"
	"image/color"
	"image/png"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/cmpimg"
	"gonum.org/v1/plot/plotter"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/internal/goldenfile"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/present"
	"github.com/ratelab/ratelab/scenarios"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenFiles compare the plotted data with testdata/*.golden byte for byte.
var goldenFiles = goldenfile.Options{Update: update, Rerun: "go test ./plots"}

// goldenImages compare pictures with testdata/*.png within a tolerance: font rasterisation
// may differ by a few pixels between platforms, the data may not.
var goldenImages = goldenfile.Options{Update: update, Rerun: "go test ./plots",
	Equal: func(want, got []byte) (bool, error) { return cmpimg.EqualApprox("png", want, got, 0.01) }}

// runScenario runs a built-in scenario, traced, after mutate (which may be nil).
func runScenario(t testing.TB, name string, mutate func(*engine.Scenario)) (*engine.Scenario, *engine.Results) {
	t.Helper()
	sc, err := scenarios.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	sc.Trace = true
	if mutate != nil {
		mutate(sc)
	}
	res, err := engine.Run(context.Background(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sc, res
}

func bins(n int) func(*engine.Scenario) { return func(sc *engine.Scenario) { sc.Bins = n } }

// goldenCases pin the plotted data of the teaching charts. Each golden file's first line
// says in words what it shows.
var goldenCases = []struct {
	scenario, chart string
	mutate          func(*engine.Scenario)
	says            string
}{
	{"burst-after-idle", "timeline", nil,
		"the token bucket (capacity 3) admits 3 of the 5 requests at 50ms and 150ms; the leaky bucket admits 1"},
	{"boundary-attack", "guarantee", bins(60),
		"the fixed window admits 200 in a 1s window (2× its limit of 100, its documented bound); the sliding window 100; the token bucket 101"},
	{"burst-after-idle", "guarantee", bins(50),
		"in a run shorter than two 1s windows the chart uses T = 10ms: the token bucket reaches its capacity of 3, the leaky bucket 1"},
	{"boundary-attack", "rate", bins(60), "all 200 offered requests arrive in one 50ms bin; the fixed window admits all of them"},
	{"cold-start", "warmup", bins(100),
		"the warm-up bucket's admitted rate follows rate/(3 − 2a/P) from 33/s to 100/s over 10s; the token bucket admits 100/s from the start"},
	{"slow-downstream", "downstream", bins(60),
		"after 10s only the token bucket alone overfills the pool of 20; the concurrency limit keeps refusals at 0"},
	{"burst-after-idle", "state", bins(25), "the token bucket's available permits fall from 3 at each burst and refill at 100/s"},
	{"fleet", "fleet", bins(20),
		"per 500ms: local stacks its three instances' 50 to 150, twice the limit of 75; split and central hold 75 (25 each) after the first burst; while the store is down (4s to 6s) central fail-open admits 150, fail-closed 0; async 145"},
	{"poisson", "guarantee", func(sc *engine.Scenario) { sc.Trace = false; sc.Bins = 40; sc.Horizon = 4 * time.Second },
		"without a trace the rolling 1s count is summed from 100ms bins; every lane stays within its bound"},
}

func TestGoldenData(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.scenario+"-"+tc.chart, func(t *testing.T) {
			sc, res := runScenario(t, tc.scenario, tc.mutate)
			fig, err := Build(tc.chart, sc, res)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			buf.WriteString("# " + tc.says + "\n")
			if err := fig.Dump(&buf); err != nil {
				t.Fatal(err)
			}
			goldenfile.Compare(t, filepath.Join("testdata", tc.scenario+"-"+tc.chart+".golden"), buf.Bytes(), goldenFiles)
		})
	}
}

// imageCases are compared as pictures, with a tolerance: font rasterisation may differ by a
// few pixels between platforms, the data may not.
var imageCases = []struct {
	scenario, chart string
	mutate          func(*engine.Scenario)
}{
	{"burst-after-idle", "timeline", nil},
	{"boundary-attack", "guarantee", nil},
	{"cold-start", "warmup", nil},
	{"slow-downstream", "downstream", nil},
}

func TestImages(t *testing.T) {
	for _, tc := range imageCases {
		t.Run(tc.scenario+"-"+tc.chart, func(t *testing.T) {
			sc, res := runScenario(t, tc.scenario, tc.mutate)
			fig, err := Build(tc.chart, sc, res)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := fig.Write(&buf, "png", 0, 0); err != nil {
				t.Fatal(err)
			}
			goldenfile.Compare(t, filepath.Join("testdata", tc.scenario+"-"+tc.chart+".png"), buf.Bytes(), goldenImages)
		})
	}
}

// Same input, same bytes: a regenerated gallery shows no diff unless a chart changed.
func TestDeterministic(t *testing.T) {
	sc, res := runScenario(t, "boundary-attack", nil)
	for _, format := range []string{"png", "svg"} {
		var a, b bytes.Buffer
		for _, buf := range []*bytes.Buffer{&a, &b} {
			fig, err := Build("rate", sc, res)
			if err != nil {
				t.Fatal(err)
			}
			if err := fig.Write(buf, format, 800, 0); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two renderings of the same figure differ", format)
		}
	}
}

func TestSizeFlagsAreHonoured(t *testing.T) {
	sc, res := runScenario(t, "burst-after-idle", nil)
	fig, err := Build("rate", sc, res)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fig.Write(&buf, "png", 640, 300); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 640 || b.Dy() != 300 {
		t.Errorf("got %dx%d, want 640x300", b.Dx(), b.Dy())
	}
}

func TestApplicableCharts(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		want     string
	}{
		{"burst-after-idle", "timeline rate state guarantee"},
		{"cold-start", "rate state guarantee warmup"},
		{"slow-downstream", "rate state guarantee downstream"},
	} {
		sc, res := runScenario(t, tc.scenario, nil)
		if got := strings.Join(Applicable(sc, res), " "); got != tc.want {
			t.Errorf("%s: charts %q, want %q", tc.scenario, got, tc.want)
		}
	}
	sc, res := runScenario(t, "cold-start", nil)
	if _, err := Build("timeline", sc, res); err == nil {
		t.Error("timeline of 4000 requests per lane: want ErrNotApplicable")
	}
	if _, err := Build("pie", sc, res); err == nil {
		t.Error("unknown chart: want an error")
	}
}

func TestEnvelopeKeepsEveryColumnsExtremes(t *testing.T) {
	var xs, ys []float64
	for i := range 100_000 {
		xs = append(xs, float64(i))
		ys = append(ys, float64((i*7919)%1000)) // jagged
	}
	const columns = 500
	ex, ey := Envelope(xs, ys, 0, 100_000, columns, true)
	if len(ex) > 4*columns {
		t.Fatalf("%d points for %d columns, want at most 4 per column", len(ex), columns)
	}
	width := 100_000.0 / columns
	for c := range columns {
		lo, hi := 1e18, -1e18
		for i := int(float64(c) * width); i < int(float64(c+1)*width); i++ {
			lo, hi = min(lo, ys[i]), max(hi, ys[i])
		}
		elo, ehi := 1e18, -1e18
		for i := range ex {
			if int(ex[i]/width) == c {
				elo, ehi = min(elo, ey[i]), max(ehi, ey[i])
			}
		}
		if lo != elo || hi != ehi {
			t.Fatalf("column %d: envelope [%v, %v], data [%v, %v]", c, elo, ehi, lo, hi)
		}
	}
	if sx, _ := Envelope(xs[:100], ys[:100], 0, 100, columns, true); len(sx) != 100 {
		t.Error("a short line must be drawn as it is")
	}
}

// benchRun is a long run of n requests: Poisson arrivals at 1000/s through a token bucket
// and a warm-up bucket, with a downstream, binned in 100000 bins for the 1M run (so that
// envelopes, not bins, bound the drawing).
func benchRun(b *testing.B, n int) (*engine.Scenario, *engine.Results) {
	stack := func(s string) []engine.LaneSpec {
		st, err := engine.ParseStack(s)
		if err != nil {
			b.Fatal(err)
		}
		return []engine.LaneSpec{{Stack: st}}
	}
	sc := &engine.Scenario{
		Name: "bench", Seed: 1, Horizon: time.Duration(n) * time.Millisecond, Bins: min(n/10, 100_000),
		Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 1000}},
		Lanes: append(stack("token-bucket:capacity=50,rate=900/1s"),
			stack("warm-up:capacity=50,rate=900/1s,warmup=10s")...),
		Downstream: &engine.Downstream{Pool: 50, Phases: []engine.Phase{{Service: engine.Distribution{Kind: engine.DistConstant, Mean: 20 * time.Millisecond}}}},
	}
	res, err := engine.Run(context.Background(), sc, nil)
	if err != nil {
		b.Fatal(err)
	}
	return sc, res
}

// BenchmarkRender builds and renders each chart to PNG for runs of 10k and 1M requests per
// lane. Drawing time depends on bins and pixels, not on requests.
func BenchmarkRender(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"10k", 10_000}, {"1M", 1_000_000}} {
		sc, res := benchRun(b, size.n)
		for _, chart := range []string{"rate", "state", "guarantee", "warmup", "downstream"} {
			b.Run(size.name+"/"+chart, func(b *testing.B) {
				b.ReportAllocs()
				var buf bytes.Buffer
				for b.Loop() {
					buf.Reset()
					fig, err := Build(chart, sc, res)
					if err != nil {
						b.Fatal(err)
					}
					if err := fig.Write(&buf, "png", 0, 0); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// syntheticRun is a run of 100000 bins per lane, built directly (no engine): a sawtooth of
// permits, in flight and refusals in every bin.
func syntheticRun(t testing.TB) (*engine.Scenario, *engine.Results) {
	t.Helper()
	var lanes []engine.LaneSpec
	for _, text := range []string{"token-bucket:capacity=50,rate=900/1s", "warm-up:capacity=50,rate=900/1s,warmup=10s", "fixed-window:limit=900,window=1s"} {
		st, err := engine.ParseStack(text)
		if err != nil {
			t.Fatal(err)
		}
		lanes = append(lanes, engine.LaneSpec{Stack: st})
	}
	const n = 100_000
	width := 10 * time.Millisecond
	sc := &engine.Scenario{Name: "synthetic", Seed: 1, Horizon: n * width, Bins: n, Lanes: lanes,
		Downstream: &engine.Downstream{Pool: 50, Phases: []engine.Phase{{Service: engine.Distribution{Kind: engine.DistConstant, Mean: 20 * time.Millisecond}}}}}
	res := &engine.Results{Scenario: sc.Name, Seed: 1, Horizon: sc.Horizon, BinWidth: width}
	for range lanes {
		lr := engine.LaneResult{Bins: make([]engine.Bin, n)}
		for b := range lr.Bins {
			v := int64((b * 7919) % 13)
			lr.Bins[b] = engine.Bin{Start: time.Duration(b) * width, Offered: 10 + v, Attempts: 10 + v, Admitted: 9, RefusedAttempts: 1 + v,
				Failed: v % 3, MaxInFlight: int(v) * 4, Available: []int{int(v) * 3}}
		}
		res.Lanes = append(res.Lanes, lr)
	}
	return sc, res
}

// Whatever the number of bins, no line reaches the rasteriser with more than about four points
// per pixel column: drawing time depends on the image, not on the run.
func TestLongRunsDrawBoundedPoints(t *testing.T) {
	sc, res := syntheticRun(t)
	const columns = 900
	for _, chart := range []string{"rate", "state", "guarantee", "warmup", "downstream"} {
		fig, err := Build(chart, sc, res)
		if err != nil {
			t.Fatalf("%s: %v", chart, err)
		}
		for _, p := range fig.Panels {
			for _, s := range p.Series {
				for _, pl := range seriesPlotters(s, p.XMin, p.XMax, columns) {
					switch pl := pl.(type) {
					case *plotter.Line:
						if len(pl.XYs) > 4*columns+2 {
							t.Errorf("%s: series %q draws %d points for %d columns", chart, s.Label, len(pl.XYs), columns)
						}
					case band:
						if len(pl.lo) != columns {
							t.Errorf("%s: band of %d columns, want %d", chart, len(pl.lo), columns)
						}
					case *plotter.Scatter:
						t.Errorf("%s: marks in a long-run chart", chart)
					}
				}
			}
		}
	}
}

// An SVG names fonts with Liberation Sans's metrics as fallbacks and holds only valid colours
// (a transparent placeholder once wrote "fill:#-8000…", which viewers draw black).
func TestSVGFontsAndColours(t *testing.T) {
	sc, res := runScenario(t, "slow-downstream", nil)
	fig, err := Build("downstream", sc, res)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fig.Write(&buf, "svg", 0, 0); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	if !strings.Contains(svg, "font-family:'Liberation Sans',Arimo,Arial,Helvetica,sans-serif;") {
		t.Error("the SVG does not list the metric-compatible fonts")
	}
	if strings.Contains(svg, "font-family:Liberation Sans;") || strings.Contains(svg, "#-") {
		t.Error("the SVG has a bare font family or an invalid colour")
	}
}

// Every kind in the registry has a chart colour of its own, its style's (package present);
// only a kind outside the registry falls back to the neutral dark grey.
func TestEveryKindHasItsColour(t *testing.T) {
	seen := map[color.Color]limiters.Kind{}
	for _, info := range limiters.Kinds() {
		c := KindColor(info.Kind)
		if c == color.Color(darkGrey) {
			t.Errorf("%s: drawn in the neutral grey: its style's colour %q does not parse", info.Kind, present.Of(string(info.Kind)).Color)
		}
		if other, ok := seen[c]; ok {
			t.Errorf("%s and %s are drawn in the same colour", info.Kind, other)
		}
		seen[c] = info.Kind
	}
	if KindColor("not-a-kind") != color.Color(darkGrey) {
		t.Error("a kind outside the registry: want dark grey")
	}
}

// A bound far beyond what a panel shows (Guava's, which one request of any size can reach) is
// named in the panel's title, not drawn: drawn, it would flatten the data onto the axis.
func TestGuaranteeNamesABoundOffTheScale(t *testing.T) {
	sc, res := runScenario(t, "guava-prepay", nil)
	f, err := Build("guarantee", sc, res)
	if err != nil {
		t.Fatal(err)
	}
	for i, pn := range f.Panels {
		drawn := false
		for _, s := range pn.Series {
			drawn = drawn || s.Role == RoleBound
		}
		guava := strings.HasPrefix(sc.Lanes[i].Label(), "guava-")
		if guava == drawn || guava != strings.Contains(pn.Title, "no bound in permits (a single request of any size can pass)") {
			t.Errorf("panel %q: bound drawn %v; a Guava lane's bound is said in words (no number of permits bounds it), the token bucket's drawn", pn.Title, drawn)
		}
		if guava && strings.Contains(pn.Title, "2147483") {
			t.Errorf("panel %q: Guava's bound is not a number of permits", pn.Title)
		}
	}
}
