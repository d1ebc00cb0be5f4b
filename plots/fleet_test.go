package plots

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

func seriesOf(pn *Panel, role Role) []Series {
	var out []Series
	for _, s := range pn.Series {
		if s.Role == role {
			out = append(out, s)
		}
	}
	return out
}

// checkStacks asserts that every fleet panel of f stacks, per display bin of g engine bins
// from bin lo, each instance's admissions from the results on the ones below, and that the
// stack's top is the lane's own admissions in those bins.
func checkStacks(t *testing.T, f *Figure, sc *engine.Scenario, res *engine.Results, lo, g int) {
	t.Helper()
	lanes := fleetLanes(sc, res)
	if len(f.Panels) != len(lanes) {
		t.Fatalf("%d panels for %d fleet lanes", len(f.Panels), len(lanes))
	}
	for p, i := range lanes {
		lane := res.Lanes[i]
		stacks := seriesOf(f.Panels[p], RoleStacked)
		layers := instanceLayers(sc.Fleet.Instances)
		if len(stacks) != len(layers) {
			t.Fatalf("%s: %d layers, want %d", lane.Name, len(stacks), len(layers))
		}
		for k := range len(stacks[0].X) - 1 { // the last point holds the last bin to its end
			b0, b1 := lo+k*g, min(lo+(k+1)*g, len(lane.Bins))
			var laneSum int64
			for _, b := range lane.Bins[b0:b1] {
				laneSum += b.Admitted
			}
			below := 0.0
			for j, s := range stacks {
				var n int64
				for _, in := range lane.Fleet.Instances[layers[j].from:layers[j].to] {
					for _, c := range in.Bins[b0:b1] {
						n += c
					}
				}
				if s.Lo[k] != below || s.Y[k]-s.Lo[k] != float64(n) {
					t.Fatalf("%s, bin %d, %s: [%v, %v], want [%v, %v]", lane.Name, k, s.Label, s.Lo[k], s.Y[k], below, below+float64(n))
				}
				below = s.Y[k]
			}
			if below != float64(laneSum) {
				t.Fatalf("%s, bin %d: the stack reaches %v, the lane admitted %d", lane.Name, k, below, laneSum)
			}
		}
	}
}

// The built-in fleet scenario: a panel per fleet lane (not the one-process baseline), each
// stacking its three instances' admissions per 100ms to the lane's, the limit at 150/s ×
// 100ms = 15, the store outage shaded from 4s to 6s, and the model and the overshoot the
// engine measured in the title.
func TestFleetChartStacksEachInstancesAdmissions(t *testing.T) {
	sc, res := runScenario(t, "fleet", nil)
	f, err := Build("fleet", sc, res)
	if err != nil {
		t.Fatal(err)
	}
	if res.BinWidth != 10*time.Millisecond {
		t.Fatalf("bins of %v: the test assumes 10ms", res.BinWidth)
	}
	checkStacks(t, f, sc, res, 0, 10)
	if got := f.Panels[0].YLabel; got != "per 100ms" {
		t.Errorf("y label %q, want the bin in it", got)
	}
	wantTitles := []string{
		"local · the full limit on each instance · overshoot 1.68 (300 in 1s, one limiter 179)",
		"split · the limit divided by 3, each instance token-bucket:capacity=10,rate=50/1s · overshoot 0.99 (177 in 1s, one limiter 179)",
		"central fail-open · one store, fail-open when it does not answer in 20ms · overshoot 1.68 (300 in 1s, one limiter 179)",
		"central fail-closed · one store, fail-closed when it does not answer in 20ms · overshoot 1.00 (179 in 1s, one limiter 179)",
		"async · local decisions synced every 100ms via instance 0 · overshoot 1.68 (300 in 1s, one limiter 179)",
	}
	for p, pn := range f.Panels {
		if pn.Title != wantTitles[p] {
			t.Errorf("panel %d: title %q, want %q", p, pn.Title, wantTitles[p])
		}
		if over := res.Lanes[p+1].Fleet.Overshoot; !strings.Contains(pn.Title, fmt.Sprintf("overshoot %.2f", over)) {
			t.Errorf("panel %d: the title does not give the engine's overshoot %v", p, over)
		}
		lim := seriesOf(pn, RoleLimit)
		if len(lim) != 1 || lim[0].Y[0] != 15 || lim[0].Y[1] != 15 || lim[0].X[0] != 0 || lim[0].X[1] != 10 {
			t.Errorf("panel %d: limit %+v, want 15 across 0–10s", p, lim)
		}
		// local and split keep no store: the outage is not theirs to shade.
		faults := seriesOf(pn, RoleFault)
		if p < 2 {
			if len(faults) != 0 || slices.ContainsFunc(pn.Labels, func(l Label) bool { return strings.Contains(l.Text, "store") }) {
				t.Errorf("panel %d (%s): the store outage is shaded or labelled on a lane without a store: %+v %+v", p, pn.Title, faults, pn.Labels)
			}
		} else if len(faults) != 1 || !slices.Equal(faults[0].X, []float64{4, 6}) || faults[0].Label != "store outage" {
			t.Errorf("panel %d: faults %+v, want the outage [4, 6)", p, faults)
		}
		if pn.YMin != 0 || pn.YMax != f.Panels[0].YMax || pn.YMax < 30 {
			t.Errorf("panel %d: y range [%v, %v]: one range for all, above local's 30", p, pn.YMin, pn.YMax)
		}
	}
	var legend []string
	for _, e := range f.Legend {
		legend = append(legend, e.Label)
	}
	want := []string{"instance 0", "instance 1", "instance 2", "global limit: 15 per 100ms (150/s)", "store outage"}
	if !slices.Equal(legend, want) {
		t.Errorf("legend %q, want %q", legend, want)
	}
}

// The checker of testdata/fleet-fleet.golden: in 500ms bins the stacks are the instances'
// admissions, and the top of each is what its first line says.
func TestFleetGoldenSays(t *testing.T) {
	sc, res := runScenario(t, "fleet", bins(20))
	f, err := Build("fleet", sc, res)
	if err != nil {
		t.Fatal(err)
	}
	checkStacks(t, f, sc, res, 0, 1)
	top := func(p, bin int) float64 { s := seriesOf(f.Panels[p], RoleStacked); return s[len(s)-1].Y[bin] }
	for bin := range 20 {
		outage := bin >= 8 && bin < 12
		want := map[int]float64{0: 150, 1: 75, 2: 75, 3: 75, 4: 145} // local, split, central ×2, async
		if outage {
			want[2], want[3], want[4] = 150, 0, 150
		}
		for p, w := range want {
			if bin == 0 && p != 0 || bin == 12 && (p == 2 || p == 3) || bin == 12 && p == 4 {
				continue // the first burst; the store's bucket full again after the outage; async's resync
			}
			if got := top(p, bin); got != w {
				t.Errorf("%s, bin %d: %v admitted, want %v", res.Lanes[p+1].Name, bin, got, w)
			}
		}
	}
	if lim := seriesOf(f.Panels[0], RoleLimit)[0].Y[0]; lim != 75 {
		t.Errorf("limit %v per 500ms, want 75", lim)
	}
}

// Zoomed (--from, --to), the chart groups the bins in view (400 of 10ms: by 5) and cuts the
// outage to the view.
func TestFleetChartView(t *testing.T) {
	sc, res := runScenario(t, "fleet", nil)
	f, err := BuildWith("fleet", sc, res, Params{View: View{From: 5 * time.Second, To: 9 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	checkStacks(t, f, sc, res, 500, 5)
	for p, pn := range f.Panels {
		if pn.XMin != 5 || pn.XMax != 9 {
			t.Errorf("panel %d: x [%v, %v], want [5, 9]", p, pn.XMin, pn.XMax)
		}
		if s := seriesOf(pn, RoleStacked)[0]; s.X[0] != 5 || s.X[len(s.X)-1] != 9 || len(s.X) != 81 {
			t.Errorf("panel %d: stack from %v to %v in %d points, want 5 to 9 in 80 bins of 50ms", p, s.X[0], s.X[len(s.X)-1], len(s.X))
		}
		if lim := seriesOf(pn, RoleLimit); lim[0].Y[0] != 7.5 {
			t.Errorf("panel %d: limit %v per 50ms, want 7.5", p, lim[0].Y[0])
		}
		if faults := seriesOf(pn, RoleFault); p >= 2 && (len(faults) != 1 || !slices.Equal(faults[0].X, []float64{5, 6})) {
			t.Errorf("panel %d: faults %+v, want the outage cut to [5, 6)", p, faults)
		}
	}
	if !strings.Contains(f.Note, "Shown: 5s to 9s of a 10s run.") {
		t.Errorf("note %q does not say what is shown", f.Note)
	}
	f, err = BuildWith("fleet", sc, res, Params{View: View{From: 7 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if faults := seriesOf(f.Panels[0], RoleFault); len(faults) != 0 {
		t.Errorf("an outage out of view is shaded: %+v", faults)
	}
}

// A partition, added latency, a join and a leave, and more instances than colours: the
// shading and its legend name each fault, joins and leaves are lines, and the instances past
// the palette are summed in one grey layer that still stacks to the lane's admissions.
func TestFleetChartFaultsAndManyInstances(t *testing.T) {
	stack, err := engine.ParseStack("token-bucket:capacity=20,rate=100/1s")
	if err != nil {
		t.Fatal(err)
	}
	sec := time.Second
	sc := &engine.Scenario{Name: "faults", Seed: 3, Horizon: 4 * sec, Bins: 40,
		Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 400}},
		Fleet:   &engine.Fleet{Instances: 8, Balancer: engine.BalanceRandom},
		Faults: []engine.Fault{{Kind: engine.FaultOutage, From: sec, Until: 2 * sec, Instances: []int{1, 2}},
			{Kind: engine.FaultLatency, From: 2500 * time.Millisecond, Until: 3 * sec, Add: 30 * time.Millisecond},
			{Kind: engine.FaultLeave, Instance: 7, At: 3 * sec}, {Kind: engine.FaultJoin, Instance: 6, At: 500 * time.Millisecond},
			{Kind: engine.FaultClock, Instance: 3, Offset: 40 * time.Millisecond}},
		Lanes: []engine.LaneSpec{{Name: "alone", Stack: stack},
			{Name: "central", Stack: stack, Fleet: &engine.LaneFleet{Model: engine.CoordCentral, OnFailure: limiters.FailLocal,
				Timeout: 20 * time.Millisecond, Latency: engine.Distribution{Kind: engine.DistConstant, Mean: time.Millisecond}}}},
	}
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(t.Context(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Build("fleet", sc, res)
	if err != nil {
		t.Fatal(err)
	}
	checkStacks(t, f, sc, res, 0, 1)
	pn := f.Panels[0]
	stacks := seriesOf(pn, RoleStacked)
	if len(stacks) != len(instanceColors) || stacks[5].Label != "instances 5–7" || stacks[5].Color != color.Color(midGrey) {
		t.Errorf("layers %d, the last %q in %v: want 6, the last instances 5–7 in grey", len(stacks), stacks[len(stacks)-1].Label, stacks[len(stacks)-1].Color)
	}
	faults := seriesOf(pn, RoleFault)
	if len(faults) != 2 ||
		faults[0].Label != "partition: instances 1, 2 cut off from the store" || !slices.Equal(faults[0].X, []float64{1, 2}) ||
		faults[1].Label != "store latency +30ms" || !slices.Equal(faults[1].X, []float64{2.5, 3}) {
		t.Errorf("faults %+v", faults)
	}
	if m := seriesOf(pn, RoleMarker); len(m) != 1 || !slices.Equal(m[0].X, []float64{3, 0.5}) {
		t.Errorf("joins and leaves %+v, want lines at 3s and 0.5s", m)
	}
	var texts []string
	for _, l := range pn.Labels {
		texts = append(texts, l.Text)
	}
	if want := []string{"partition: instances 1, 2", "+30ms", "7 leaves", "6 joins"}; !slices.Equal(texts, want) {
		t.Errorf("labels %q, want %q", texts, want)
	}
	if !strings.Contains(f.Subtitle, "instance 3's clock 40ms ahead") || !strings.Contains(f.Subtitle, "8 instances behind a random balancer") {
		t.Errorf("subtitle %q", f.Subtitle)
	}
	roles := map[Role]int{}
	for _, e := range f.Legend {
		roles[e.Role]++
	}
	if roles[RoleStacked] != 6 || roles[RoleFault] != 2 || roles[RoleMarker] != 1 || roles[RoleLimit] != 1 {
		t.Errorf("legend roles %v", roles)
	}
}

// The chart applies to a run with a fleet lane, and only to one.
func TestFleetChartApplies(t *testing.T) {
	sc, res := runScenario(t, "fleet", nil)
	if !slices.Contains(Applicable(sc, res), "fleet") {
		t.Errorf("fleet: charts %q lack the fleet chart", Applicable(sc, res))
	}
	sc, res = runScenario(t, "boundary-attack", nil)
	if slices.Contains(Applicable(sc, res), "fleet") {
		t.Error("boundary-attack has no fleet, yet the fleet chart applies")
	}
	if _, err := Build("fleet", sc, res); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("fleet chart of boundary-attack: %v, want ErrNotApplicable", err)
	}
	// A fleet whose lanes all run as one process has nothing to stack.
	sc, res = runScenario(t, "fleet", func(sc *engine.Scenario) { sc.Lanes = sc.Lanes[:1] })
	if hasFleet(sc, res, Params{}) {
		t.Error("a fleet block without fleet lanes: the chart applies")
	}
}

// Same run, same bytes, in every format; the instance colours and their fills are exact
// entries of the GIF palette, so an animation keeps them.
func TestFleetChartDeterministic(t *testing.T) {
	sc, res := runScenario(t, "fleet", nil)
	formats := []string{"png", "svg"}
	if !raceDetector {
		formats = append(formats, "gif")
	}
	for _, format := range formats {
		var a, b bytes.Buffer
		for _, buf := range []*bytes.Buffer{&a, &b} {
			f, err := Build("fleet", sc, res)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Write(buf, format, 0, 0); err != nil {
				t.Fatal(err)
			}
		}
		if a.Len() == 0 || !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two renderings differ (or are empty)", format)
		}
	}
	pal := gifPalette()
	for k, c := range instanceColors {
		for _, want := range []color.Color{c, tint(c, stackedTint)} {
			if !slices.ContainsFunc(pal, func(p color.Color) bool { return sameColor(p, want) }) {
				t.Errorf("instance %d: %v is not in the GIF palette", k, want)
			}
		}
	}
}
