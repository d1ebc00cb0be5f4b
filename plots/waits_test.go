package plots

import (
	"math"
	"strings"
	"testing"
	"time"
)

// The wait chart agrees with the engine's numbers: the bars hold every admitted request that
// waited (their shares sum to 100% minus the share admitted at once), and the percentile
// curve read at 90, 99 and 99.9 gives the lane's P90, P99 and P999.
func TestWaitsChartAgreesWithTheLanesPercentiles(t *testing.T) {
	sc, res := runScenario(t, "diurnal", nil)
	fig, err := Build("waits", sc, res)
	if err != nil {
		t.Fatal(err)
	}
	if fig.Cols != 2 || len(fig.Panels) != 2*len(res.Lanes) {
		t.Fatalf("%d columns and %d panels, want 2 and %d", fig.Cols, len(fig.Panels), 2*len(res.Lanes))
	}
	for i, l := range res.Lanes {
		hist, curve := fig.Panels[2*i], fig.Panels[2*i+1]
		if !hist.LogX {
			t.Errorf("lane %d: the histogram's time axis is not logarithmic", i)
		}
		var n, zero uint64
		for _, b := range l.WaitHistogram {
			n += b.Count
			if b.To == 0 {
				zero += b.Count
			}
		}
		sum := 0.0
		bars := hist.Series[0]
		for k := 0; k+1 < len(bars.Y); k++ {
			sum += bars.Y[k]
		}
		if want := 100 * float64(n-zero) / float64(n); math.Abs(sum-want) > 1e-6 {
			t.Errorf("lane %d: bars sum to %.4f%%, want %.4f%% (all but the %d admitted at once)", i, sum, want, zero)
		}
		at := func(p float64) time.Duration { // the curve's value at percentile p
			s := curve.Series[0]
			x, v := ninesOf(p), math.NaN()
			for k := range s.X {
				if s.X[k] <= x+1e-12 {
					v = s.Y[k]
				}
			}
			return time.Duration(math.Round(v * float64(time.Millisecond)))
		}
		for _, c := range []struct {
			p    float64
			want time.Duration
		}{{0.9, l.Wait.P90}, {0.99, l.Wait.P99}, {0.999, l.Wait.P999}} {
			if got := at(c.p); got != c.want {
				t.Errorf("lane %d: curve at p%v reads %v, the lane's percentile is %v", i, 100*c.p, got, c.want)
			}
		}
	}
	// A dropping client never makes a request wait: no wait chart.
	sc, res = runScenario(t, "boundary-attack", nil)
	if _, err := Build("waits", sc, res); err == nil {
		t.Error("boundary-attack: nothing waits, want ErrNotApplicable")
	}
}

// peers' waits: only uber makes requests wait; the other seven lanes would be 14 empty
// panels. They are left out and named in the note.
func TestWaitsLeavesOutLanesThatNeverWaited(t *testing.T) {
	sc, res := runScenario(t, "peers", nil)
	f, err := Waits(sc, res, Params{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Panels) != 2 || !strings.HasPrefix(f.Panels[0].Title, "uber:") {
		t.Fatalf("%d panels, first %q: want uber's two", len(f.Panels), f.Panels[0].Title)
	}
	for _, l := range res.Lanes {
		if !strings.HasPrefix(l.Name, "uber:") && !strings.Contains(f.Note, l.Name) {
			t.Errorf("note %q does not name the left-out lane %s", f.Note, l.Name)
		}
	}
	if !strings.Contains(f.Note, "7 lanes") {
		t.Errorf("note %q does not count the 7 left-out lanes", f.Note)
	}
}
