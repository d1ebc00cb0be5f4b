package plots

import (
	"math"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/scenarios"
)

// peers' 2,500 req/s spike for 80 ms is 12.5× the median rate: the axis is cut at 500/s, so
// that the 100–200/s lines of the first two seconds fill a fifth of each panel or more, and
// every cut says its true value.
func TestASpikeIsCutAndLabelled(t *testing.T) {
	sc, err := scenarios.Get("peers")
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, sc)
	f, err := Rate(sc, res, Params{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.Note, "Axis cut at 500/s") || !strings.Contains(f.Note, "2500/s") {
		t.Fatalf("note %q does not say where the axis is cut and how high the spike goes", f.Note)
	}
	ranges := f.yRanges()
	for i, pn := range f.Panels {
		lo, hi := ranges[i][0], ranges[i][1]
		if hi > 600 || lo < -600 {
			t.Errorf("%s: y range [%g, %g], want within ±600 (cut at 500)", pn.Title, lo, hi)
		}
		for _, s := range pn.Series {
			for _, v := range s.Y {
				if v > hi || v < lo {
					t.Errorf("%s: %s has %g outside [%g, %g]", pn.Title, s.Label, v, lo, hi)
				}
			}
		}
		var up bool
		for _, l := range pn.Labels {
			up = up || strings.HasPrefix(l.Text, "2500/s") && strings.HasSuffix(l.Text, "↑")
		}
		if !up {
			t.Errorf("%s: no label says the offered spike reaches 2500/s: %+v", pn.Title, pn.Labels)
		}
	}
	// The first lane's admitted rate between 1 s and 2 s (100–200/s) is at least a fifth of
	// the axis above zero.
	tb := f.Panels[0]
	for _, s := range tb.Series {
		if s.Role != RoleAdmitted {
			continue
		}
		peak := 0.0
		for k, x := range s.X {
			if x >= 1 && x < 2 {
				peak = math.Max(peak, s.Y[k])
			}
		}
		if peak < ranges[0][1]/5 {
			t.Errorf("token bucket's admitted rate peaks at %g in [1s, 2s) on an axis up to %g: flattened", peak, ranges[0][1])
		}
	}
}

// A chart without a lone spike is drawn whole: poisson's rates are never cut.
func TestNoSpikeNoCut(t *testing.T) {
	sc, err := scenarios.Get("poisson")
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, sc)
	f, err := Rate(sc, res, Params{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(f.Note, "cut") {
		t.Errorf("poisson's rate chart was cut: %q", f.Note)
	}
	for _, pn := range f.Panels {
		if len(pn.Labels) > 0 {
			t.Errorf("%s: labels %+v on an uncut chart", pn.Title, pn.Labels)
		}
	}
}
