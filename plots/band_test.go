package plots

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/internal/goldenfile"
	"github.com/ratelab/ratelab/replicate"
	"github.com/ratelab/ratelab/scenarios"
)

// replicatedDiurnal is K replications of the diurnal scenario (Poisson arrivals on a sine),
// shortened to 12s in 24 bins, with two of its lanes: the token bucket and the fixed window.
func replicatedDiurnal(t testing.TB, k int) (*engine.Scenario, *replicate.Set) {
	t.Helper()
	sc, err := scenarios.Get("diurnal")
	if err != nil {
		t.Fatal(err)
	}
	sc.Horizon, sc.Bins = 12*time.Second, 24
	sc.Lanes = []engine.LaneSpec{sc.Lanes[0], sc.Lanes[3]}
	set, err := replicate.Run(context.Background(), sc, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sc, set
}

// band splits an interval series into its upper edge and its lower edge, both left to right.
func bandEdges(s Series) (hi, lo []float64) {
	n := len(s.Y) / 2
	hi = s.Y[:n]
	for i := len(s.Y) - 1; i >= n; i-- {
		lo = append(lo, s.Y[i])
	}
	return hi, lo
}

// TestRateIntervalBandHoldsTheMean: in every panel the band is drawn under the mean admitted
// line, holds it in every bin, is wider than nothing where the traffic is random, and
// narrows as K grows (its half-width goes as t(0.975, K−1)·s/√K: from 4 seeds to 16 about
// 2.8× in expectation; a few bins' bimodal counts, the fixed window's 0 or 200, make the
// sample's ratio vary, so at least 1.5× is required).
// The plotted data is pinned in a golden file, whose first line says what it shows.
func TestRateIntervalBandHoldsTheMean(t *testing.T) {
	width := map[int]float64{}
	for _, k := range []int{4, 16} {
		sc, set := replicatedDiurnal(t, k)
		fig, err := RateInterval(sc, set)
		if err != nil {
			t.Fatal(err)
		}
		for _, pn := range fig.Panels {
			var band, mean *Series
			for i := range pn.Series {
				switch pn.Series[i].Role {
				case RoleInterval:
					band = &pn.Series[i]
					if mean != nil {
						t.Fatalf("%s: the band is drawn over the mean line", pn.Title)
					}
				case RoleAdmitted:
					mean = &pn.Series[i]
				}
			}
			if band == nil || mean == nil {
				t.Fatalf("%s: band %v, mean %v", pn.Title, band != nil, mean != nil)
			}
			hi, lo := bandEdges(*band)
			for b := range len(mean.Y) - 1 {
				if !(lo[2*b] <= mean.Y[b] && mean.Y[b] <= hi[2*b]) {
					t.Fatalf("%s bin %d: mean %g outside [%g, %g]", pn.Title, b, mean.Y[b], lo[2*b], hi[2*b])
				}
				width[k] += hi[2*b] - lo[2*b]
			}
		}
		if k == 4 {
			var buf bytes.Buffer
			buf.WriteString("# the diurnal scenario over 4 seeds: each lane's mean admitted rate inside its 95% band, which is widest where the sine peaks above the limit and arrivals are most random\n")
			if err := fig.Dump(&buf); err != nil {
				t.Fatal(err)
			}
			goldenfile.Compare(t, filepath.Join("testdata", "diurnal-rate-interval.golden"), buf.Bytes(), goldenFiles)
		}
	}
	if !(width[16] > 0 && width[16] < width[4]/1.5) {
		t.Fatalf("total band width: K=4 %g, K=16 %g: the band should narrow at least 1.5×", width[4], width[16])
	}
}

// TestRateIntervalWithOneReplicationHasNoBand: one seed, no interval to draw.
func TestRateIntervalWithOneReplicationHasNoBand(t *testing.T) {
	sc, set := replicatedDiurnal(t, 1)
	fig, err := RateInterval(sc, set)
	if err != nil {
		t.Fatal(err)
	}
	for _, pn := range fig.Panels {
		for _, s := range pn.Series {
			if s.Role == RoleInterval {
				t.Fatalf("%s: a band from one replication", pn.Title)
			}
		}
	}
	for _, e := range fig.Legend {
		if e.Role == RoleInterval {
			t.Fatal("the legend names a band that is not drawn")
		}
	}
}

// TestRateIntervalImage renders the band chart and compares it, with a tolerance, with the
// committed picture.
func TestRateIntervalImage(t *testing.T) {
	sc, set := replicatedDiurnal(t, 4)
	fig, err := RateInterval(sc, set)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := fig.Write(&buf, "png", 0, 0); err != nil {
		t.Fatal(err)
	}
	goldenfile.Compare(t, filepath.Join("testdata", "diurnal-rate-interval.png"), buf.Bytes(), goldenImages)
}
