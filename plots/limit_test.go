package plots

import (
	"bytes"
	"slices"
	"testing"

	"github.com/ratelab/ratelab/engine"
)

// TestLimitChart: server-slowdown's limit chart has a row per adaptive lane (four), the
// reference steps 32 → 20 → 32 at the phases, the limit line is the bins' limits, and the RTT
// heard in the slow phase is above the first phase's.
func TestLimitChart(t *testing.T) {
	sc, res := runScenario(t, "server-slowdown", func(sc *engine.Scenario) { sc.Trace = false; sc.Bins = 60 })
	if !slices.Contains(Applicable(sc, res), "limit") {
		t.Fatalf("limit should apply to server-slowdown: %v", Applicable(sc, res))
	}
	fig, err := Build("limit", sc, res)
	if err != nil {
		t.Fatal(err)
	}
	// The bulkhead (lane 0) has no adaptive limit: a row for each of the four others.
	if got := len(fig.Panels); got != 2*4 {
		t.Fatalf("%d panels, want 2 per adaptive lane (8)", got)
	}
	for i, l := range res.Lanes[1:] {
		left, right := fig.Panels[2*i], fig.Panels[2*i+1]
		byLabel := map[string]Series{}
		for _, s := range append(left.Series, right.Series...) {
			byLabel[s.Label] = s
		}
		ref := byLabel["reference"]
		if !slices.Equal(ref.Y, []float64{32, 20, 32, 32}) || !slices.Equal(ref.X, []float64{0, 20, 40, 60}) {
			t.Errorf("%s: reference %v at %v, want 32, 20, 32 from 0, 20s, 40s", l.Name, ref.Y, ref.X)
		}
		lim := byLabel["limit"]
		if len(lim.Y) != len(l.Bins)+1 {
			t.Fatalf("%s: %d limit points for %d bins", l.Name, len(lim.Y), len(l.Bins))
		}
		for k, b := range l.Bins {
			if lim.Y[k] != float64(b.Limit) {
				t.Fatalf("%s bin %d: limit %v, the bin says %d", l.Name, k, lim.Y[k], b.Limit)
			}
		}
		rtt := byLabel["mean RTT"]
		var before, slow float64
		for k, x := range rtt.X[:len(rtt.X)-1] {
			switch {
			case x < 20:
				before = max(before, rtt.Y[k])
			case x >= 25 && x < 40:
				slow = max(slow, rtt.Y[k])
			}
		}
		if i > 0 && slow <= before { // AIMD's standing queue is long in both phases
			t.Errorf("%s: the RTT heard while the server is 4× slower (max %.0fms) is not above before (max %.0fms)", l.Name, slow, before)
		}
	}
	var buf bytes.Buffer
	if err := fig.Write(&buf, "png", 0, 0); err != nil || buf.Len() == 0 {
		t.Fatalf("render: %v", err)
	}
	sc, res = runScenario(t, "slow-downstream", nil)
	if _, err := Build("limit", sc, res); err == nil {
		t.Error("slow-downstream has no adaptive lane: want ErrNotApplicable")
	}
}

// TestLimitChartMarksProbes: probe-cost's RTT panels carry a triangle under each bin in which
// the lane probed for its no-load RTT, and under no other: the marks are the bins' probes.
func TestLimitChartMarksProbes(t *testing.T) {
	sc, res := runScenario(t, "probe-cost", func(sc *engine.Scenario) { sc.Trace = false })
	fig, err := Build("limit", sc, res)
	if err != nil {
		t.Fatal(err)
	}
	marked, row := 0, 0
	for _, l := range res.Lanes {
		if l.Adaptive == nil {
			continue
		}
		right := fig.Panels[2*row+1]
		row++
		var want []float64 // the chart's bins are groups of g of the run's
		g := niceGroup(len(l.Bins), rateBins)
		for k := 0; k < len(l.Bins); k += g {
			grp := l.Bins[k:min(k+g, len(l.Bins))]
			probed := 0
			for _, b := range grp {
				probed += b.Probes
			}
			if probed > 0 {
				want = append(want, (float64(grp[0].Start)+float64(len(grp))*float64(res.BinWidth)/2)/1e9)
			}
		}
		var got []float64
		for _, s := range right.Series {
			if s.Label == "probes" {
				got = s.X
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: probe marks at %v, the bins probed at %v", l.Name, got, want)
		}
		marked += len(got)
	}
	if marked == 0 {
		t.Fatal("probe-cost's lanes probe (Gradient ~100 times a minute): no mark was drawn")
	}
}
