package plots

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/internal/goldenfile"
	"github.com/ratelab/ratelab/scenarios"
)

// checkGolden compares the figure's dump, headed by says, with testdata/name.golden.
func checkGolden(t *testing.T, name, says string, fig *Figure) {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString("# " + says + "\n")
	if err := fig.Dump(&buf); err != nil {
		t.Fatal(err)
	}
	goldenfile.Compare(t, filepath.Join("testdata", name+".golden"), buf.Bytes(), goldenFiles)
}

// A zoomed rate chart groups the bins of its stretch, not of the run: boundary-attack's 3s
// in 60 bins of 50ms, zoomed to 0.8s–1.2s, keeps 50ms bins and draws them in milliseconds.
func TestZoomedRateChart(t *testing.T) {
	sc, res := runScenario(t, "boundary-attack", bins(60))
	fig, err := BuildWith("rate", sc, res, Params{View: View{From: 800 * time.Millisecond, To: 1200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if fig.XLabel != "time (ms)" || fig.Panels[0].XMin != 800 || fig.Panels[0].XMax != 1200 {
		t.Fatalf("axis %q [%v, %v], want time (ms) [800, 1200]", fig.XLabel, fig.Panels[0].XMin, fig.Panels[0].XMax)
	}
	checkGolden(t, "boundary-attack-rate-zoomed", "zoomed to 800ms–1.2s: 50ms bins; the fixed window admits all 200 in the bin at 1s, the others 100 and refuse 100 (drawn below 0)", fig)
}

// Every chart with a time axis, of every built-in scenario, zooms to [H/4, H/2]: every panel
// shows exactly that stretch, and no measured point lies outside it (a step line keeps the
// one point that holds at its left edge).
func TestEveryTimeAxisChartZooms(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every built-in scenario")
	}
	for _, name := range scenarios.Names() {
		sc, res := runScenario(t, name, nil)
		lo, hi := res.Horizon/4, res.Horizon/2
		for _, chart := range Applicable(sc, res) {
			full, err := Build(chart, sc, res)
			if err != nil {
				t.Fatal(err)
			}
			v := View{From: lo, To: hi}
			fig, err := BuildWith(chart, sc, res, Params{View: v})
			if !full.TimeAxis {
				if err == nil {
					t.Errorf("%s %s: no time axis, but zoomed without an error", name, chart)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %s: %v", name, chart, err)
				continue
			}
			xmin, xmax := toUnit(lo, fig.TimeUnit), toUnit(hi, fig.TimeUnit)
			for _, p := range fig.Panels {
				if p.XMin != xmin || p.XMax != xmax {
					t.Errorf("%s %s: panel %q shows [%v, %v], want [%v, %v]", name, chart, p.Title, p.XMin, p.XMax, xmin, xmax)
				}
				for _, s := range p.Series {
					if s.Role.reference() {
						continue
					}
					for i, x := range s.X {
						carried := s.Step && i == 0 && x < xmin
						if (x < xmin && !carried) || x > xmax+1e-9 {
							t.Errorf("%s %s: series %q has a point at %v, outside [%v, %v]", name, chart, s.Label, x, xmin, xmax)
							break
						}
					}
				}
			}
		}
	}
}

func TestViewErrors(t *testing.T) {
	sc, res := runScenario(t, "boundary-attack", nil)
	for _, v := range []View{{From: 2 * time.Second, To: time.Second}, {To: time.Hour}, {From: -time.Second}} {
		if _, err := BuildWith("rate", sc, res, Params{View: v}); err == nil {
			t.Errorf("view %+v: want an error", v)
		}
	}
}

// The state chart gives each quantity its own panel: diurnal's queueing client and
// concurrency limit make three columns (permits, in flight, queue), and the in-flight and
// queue columns share their axes down the lanes. Its 1000 bins are grouped into 50 spans,
// each quantity drawn as a band (range) with a mean line, and the legend says so.
func TestStateGivesEachQuantityItsOwnPanel(t *testing.T) {
	sc, res := runScenario(t, "diurnal", func(sc *engine.Scenario) { sc.Trace = false })
	fig, err := Build("state", sc, res)
	if err != nil {
		t.Fatal(err)
	}
	if fig.Cols != 3 || len(fig.Panels) != 3*len(sc.Lanes) {
		t.Fatalf("%d columns, %d panels; want 3 and %d", fig.Cols, len(fig.Panels), 3*len(sc.Lanes))
	}
	ranges := fig.yRanges()
	for i, p := range fig.Panels {
		want := []string{"permits", "in flight", "queue"}[i%3]
		if p.YLabel != want {
			t.Errorf("panel %d: y label %q, want %q", i, p.YLabel, want)
		}
		if i%3 > 0 && ranges[i] != ranges[i%3] {
			t.Errorf("panel %d: %s axis %v, not shared with the first lane's %v", i, want, ranges[i], ranges[i%3])
		}
		bands := 0
		for _, s := range p.Series {
			if s.Lo != nil {
				bands++
				if len(s.X) > stateBins/3+1 {
					t.Errorf("panel %d: a band of %d spans, want at most %d", i, len(s.X), stateBins/3+1)
				}
				for k := range s.X {
					if s.Lo[k] > s.Y[k] {
						t.Fatalf("panel %d: band upside down at %v", i, s.X[k])
					}
				}
			}
		}
		if bands == 0 {
			t.Errorf("panel %d (%s): no band", i, want)
		}
	}
	if !slices.ContainsFunc(fig.Legend, func(e LegendEntry) bool { return e.Role == RoleBand && strings.Contains(e.Label, "lowest to highest") }) {
		t.Error("the legend does not say what the band is")
	}
	// The fixed window's sawtooth (1s period) fills its 2.4s spans: the band reaches from
	// near 0 to its limit of 100 while the queue is full.
	fw := fig.Panels[3*3]
	widest := 0.0
	for _, s := range fw.Series {
		for k := range s.Lo {
			widest = max(widest, s.Y[k]-s.Lo[k])
		}
	}
	if widest < 80 {
		t.Errorf("fixed window: widest band %v, want the sawtooth's range (≥ 80)", widest)
	}
	lanes := append([]engine.LaneSpec(nil), sc.Lanes[0], sc.Lanes[3])
	sc.Lanes = lanes
	sc.Horizon, sc.Bins = 30*time.Second, 300
	res = run(t, sc)
	fig, err = Build("state", sc, res)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "diurnal-state-banded", "30s in 300 bins, grouped by 10: the fixed window's band spans its sawtooth, the token bucket's stays narrow; in flight and queue in their own panels", fig)
}

func run(t *testing.T, sc *engine.Scenario) *engine.Results {
	t.Helper()
	res, err := engine.Run(t.Context(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Data are drawn solid; dashes are for references, and no other role wears the bound's.
func TestDataNeverWearTheBoundDash(t *testing.T) {
	bound := lineStyle(RoleBound, nil).Dashes
	for _, r := range []Role{RoleOffered, RoleAttempts, RoleAdmitted, RoleRejected, RoleAvailable, RoleInFlight, RoleQueue, RoleBand,
		RoleBound, RoleNominal, RoleCurve, RoleFailed, RoleMarker, RoleBoundary, RoleNow, RoleMarks, RoleRolling, RoleLaneInFlow,
		RoleHistogram, RolePercentile} {
		d := lineStyle(r, black).Dashes
		if !r.reference() && len(d) > 0 {
			t.Errorf("role %s is data but dashed %v", r, d)
		}
		if r != RoleBound && len(d) > 0 && slices.Equal(d, bound) {
			t.Errorf("role %s wears the bound's dash", r)
		}
	}
}

// The rate chart draws each lane's configured limit, and refusals below zero: where a sliding
// window admits 100 of a 200-request burst and refuses 100, the two lines are apart.
func TestRateDrawsTheLimitAndKeepsAdmittedAndRefusedApart(t *testing.T) {
	sc, res := runScenario(t, "boundary-attack", bins(60))
	fig, err := Build("rate", sc, res)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range fig.Panels {
		var limit, admitted, refused *Series
		for k := range p.Series {
			switch s := &p.Series[k]; s.Role {
			case RoleNominal:
				limit = s
			case RoleAdmitted:
				admitted = s
			case RoleRejected:
				refused = s
			}
		}
		if limit == nil || limit.Y[0] != 100 {
			t.Fatalf("panel %d: limit line %+v, want 100/s", i, limit)
		}
		for k := range refused.Y {
			if refused.Y[k] > 0 {
				t.Fatalf("panel %d: refusals drawn upward at %v", i, refused.X[k])
			}
			if admitted.Y[k] != 0 && admitted.Y[k] == refused.Y[k] {
				t.Fatalf("panel %d: admitted and refused on the same line at %v", i, refused.X[k])
			}
		}
		if r := fig.yRanges()[i]; r[0] >= 0 {
			t.Errorf("panel %d: y range %v has no room below 0 for the refusals", i, r)
		}
	}
	if sw := fig.Panels[1]; !sw.AbsYTicks {
		t.Error("a mirrored axis labels its ticks without sign")
	}
}

// The registry builds a chart once, for its Params: a zoomed chart is not first built whole
// (the check that it applies is Applies, not a build).
func TestBuildWithBuildsOnce(t *testing.T) {
	sc, res := runScenario(t, "boundary-attack", nil)
	saved := Charts
	defer func() { Charts = saved }()
	Charts = slices.Clone(saved)
	var built []Params
	for i := range Charts {
		build := Charts[i].Build
		Charts[i].Build = func(sc *engine.Scenario, res *engine.Results, p Params) (*Figure, error) {
			built = append(built, p)
			return build(sc, res, p)
		}
	}
	p := Params{View: View{From: 100 * time.Millisecond, To: 200 * time.Millisecond}, Window: 50 * time.Millisecond}
	if _, err := BuildWith("guarantee", sc, res, p); err != nil {
		t.Fatal(err)
	}
	if len(built) != 1 || built[0] != p {
		t.Errorf("guarantee zoomed with a window: built %v, want once with %v", built, p)
	}
}

// A window given makes the guarantee chart apply to a run whose limiters have none of their
// own (a bulkhead): plot --chart guarantee --window 1s draws it; without one it is refused.
func TestGuaranteeWindowApplies(t *testing.T) {
	sc, res := runScenario(t, "aws-quota-drain", nil)
	if _, err := Build("guarantee", sc, res); !errors.Is(err, ErrNotApplicable) {
		t.Fatalf("guarantee without a window: %v, want ErrNotApplicable", err)
	}
	f, err := BuildWith("guarantee", sc, res, Params{Window: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.Title, "any 1s window") {
		t.Errorf("title %q does not name the 1s window", f.Title)
	}
}
