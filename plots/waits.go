package plots

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"

	"gonum.org/v1/plot"

	"github.com/ratelab/ratelab/engine"
)

// waitsChart has no time axis (its x axis is a wait's length): it takes no View.
var waitsChart = Chart{
	Name:    "waits",
	Summary: "each lane's wait-time distribution: a histogram on a log axis and the percentile curve (runs where requests wait)",
	Applies: hasWaits,
	Build:   Waits,
}

// hasWaits: some lane admitted a request after a wait.
func hasWaits(_ *engine.Scenario, res *engine.Results, _ Params) bool {
	for _, l := range res.Lanes {
		if l.Wait.Max > 0 && len(l.WaitHistogram) > 0 {
			return true
		}
	}
	return false
}

// barsPerOctave is how many histogram bars share a power of two: the engine keeps 16 buckets
// per octave (6.25% wide), which at a figure's width are slivers; four bars per octave are
// 19% wide on average and still show a distribution's shape.
const barsPerOctave = 4

// Waits shows each lane's wait-time distribution — the time from a request's arrival to its
// admission, over admitted requests, retries and queueing included — from the engine's
// log-linear histogram (LaneResult.WaitHistogram): on the left a histogram on a log time axis
// (the share of admitted requests in each bar, four bars per power of two), on the right the
// percentile curve, wait against percentile on a "nines" axis (90, 99, 99.9, … evenly
// spaced: x = −log₁₀(1 − p)), where a tail reads as clearly as a median. Requests admitted at
// once (wait 0) have no place on a log axis: their share is in the lane's title. A lane in
// which every admitted request passed at once (or nothing was admitted) would be two empty
// panels: it is left out, and the note names it (peers: 7 of its 8 lanes).
func Waits(sc *engine.Scenario, res *engine.Results, p Params) (*Figure, error) {
	if !hasWaits(sc, res, p) {
		return nil, fmt.Errorf("waits: %w: no lane admitted a request after a wait", ErrNotApplicable)
	}
	// One x range for every histogram: from the least positive wait to the longest.
	least, most := time.Duration(math.MaxInt64), time.Duration(0)
	var total uint64
	for _, l := range res.Lanes {
		for _, b := range l.WaitHistogram {
			if b.To > 0 {
				least = min(least, max(b.From, 1))
			}
			total = max(total, sumCounts(l.WaitHistogram))
		}
		most = max(most, l.Wait.Max)
	}
	per, unit := waitUnit(most)
	xlo := math.Pow(10, math.Floor(math.Log10(toUnit(least, per))))
	xhi := math.Pow(10, math.Ceil(math.Log10(toUnit(most, per)*1.0001)))
	nines := math.Min(math.Max(math.Ceil(math.Log10(float64(total))), 2), 5)
	f := &Figure{
		Name:     "waits",
		Title:    res.Scenario + ": how long admitted requests waited",
		Subtitle: runText(sc, res) + " · wait: arrival to admission, retries and queueing included",
		Cols:     2,
	}
	var still []string // lanes where no admitted request waited: panels left out
	shown := 0
	for i, l := range res.Lanes {
		c := LaneColor(sc.Lanes[i])
		n := sumCounts(l.WaitHistogram)
		var zero uint64
		for _, b := range l.WaitHistogram {
			if b.To == 0 {
				zero += b.Count
			}
		}
		if zero == n {
			still = append(still, res.Lanes[i].Name)
			continue
		}
		shown++
		w := l.Wait
		title := laneTitle(sc, res, i)
		if n > 0 {
			title += fmt.Sprintf(" — p50 %s · p90 %s · p99 %s · p99.9 %s · max %s", shortDur(w.P50), shortDur(w.P90), shortDur(w.P99), shortDur(w.P999), shortDur(w.Max))
			if zero > 0 {
				title += fmt.Sprintf(" · %.0f%% at once", 100*float64(zero)/float64(n))
			}
		} else {
			title += " — nothing admitted"
		}
		hist := &Panel{Title: title, TitleColor: c, TitleSpan: 2, YLabel: "% of admitted", XMin: xlo, XMax: xhi, LogX: true,
			XTicks: logDurationTicks(xlo, xhi, per), XLabel: "wait (log scale)", YGroup: "histogram"}
		if bars, ok := histogramSeries(l.WaitHistogram, n, per); ok {
			bars.Color = c
			hist.Series = append(hist.Series, bars)
		}
		curve := &Panel{YLabel: "wait (" + unit + ")", XMin: 0, XMax: nines, XTicks: ninesTicks(int(nines)),
			XLabel: "percentile (nines scale)", YGroup: "percentile"}
		if n > 0 {
			s := percentileSeries(l.WaitHistogram, n, w.Max, per, nines)
			s.Color = c
			curve.Series = append(curve.Series, s)
		}
		f.Panels = append(f.Panels, hist, curve)
	}
	f.PanelHeight = panelHeight(shown)
	f.Legend = []LegendEntry{
		{Label: fmt.Sprintf("share of admitted requests per bar (%d bars per power of two)", barsPerOctave), Role: RoleHistogram, Colors: laneColors(sc), Band: true},
		{Label: "wait at each percentile (lane colour)", Role: RolePercentile, Colors: laneColors(sc)},
	}
	f.Note = "Waits come from a log-linear histogram: 16 buckets per power of two, so a percentile is within 6.25% of the exact wait, never above the maximum."
	switch len(still) {
	case 0:
	case 1:
		f.Note += " Left out, as no request it admitted waited: " + still[0] + "."
	default:
		f.Note += fmt.Sprintf(" Left out, as no request they admitted waited (%d lanes): %s.", len(still), strings.Join(still, "; "))
	}
	return f, nil
}

func sumCounts(bs []engine.WaitBucket) uint64 {
	var n uint64
	for _, b := range bs {
		n += b.Count
	}
	return n
}

// waitUnit is the unit of the percentile axis: µs when every wait is under 1ms, ms under
// 10s, else s.
func waitUnit(most time.Duration) (time.Duration, string) {
	switch {
	case most < time.Millisecond:
		return time.Microsecond, "µs"
	case most < 10*time.Second:
		return time.Millisecond, "ms"
	}
	return time.Second, "s"
}

// histogramSeries is the positive waits as bars of barsPerOctave per power of two, in % of
// n: a post-step line from each bar's left edge, closed at the last bar's right edge. The
// engine's buckets nest in the bars (a bar is 16/barsPerOctave whole buckets; waits under
// 32ns, a bucket each, share one bar).
func histogramSeries(bs []engine.WaitBucket, n uint64, per time.Duration) (Series, bool) {
	s := Series{Label: "share of admitted requests", Role: RoleHistogram, Step: true}
	type bar struct {
		from, to time.Duration
		count    uint64
	}
	var bars []bar
	key := func(d time.Duration) int64 {
		if d < 32 {
			return -1
		}
		exp := int64(63 - bits.LeadingZeros64(uint64(d))) // d in [2^exp, 2^(exp+1))
		mant := int64(d) >> (exp - 4)                     // 16..31: the engine's sub-bucket
		return exp*barsPerOctave + (mant-16)/(16/barsPerOctave)
	}
	for _, b := range bs {
		if b.To == 0 {
			continue
		}
		k := key(b.From)
		if m := len(bars); m > 0 && key(bars[m-1].from) == k {
			bars[m-1].to, bars[m-1].count = b.To, bars[m-1].count+b.Count
			continue
		}
		bars = append(bars, bar{from: max(b.From, 1), to: b.To, count: b.Count})
	}
	if len(bars) == 0 || n == 0 {
		return s, false
	}
	for i, b := range bars {
		if i > 0 && bars[i-1].to+1 < b.from { // an empty stretch between bars
			s.X, s.Y = append(s.X, toUnit(bars[i-1].to+1, per)), append(s.Y, 0)
		}
		s.X, s.Y = append(s.X, toUnit(b.from, per)), append(s.Y, 100*float64(b.count)/float64(n))
	}
	last := bars[len(bars)-1]
	s.X, s.Y = append(s.X, toUnit(last.to+1, per)), append(s.Y, 0)
	return s, true
}

// percentileSeries is the wait at each percentile as a post-step line on the nines axis: from
// the cumulative share before a bucket to the share after it, the wait is the bucket's top
// (capped at the maximum, as the engine's quantiles are). The last bucket holds to xmax.
func percentileSeries(bs []engine.WaitBucket, n uint64, most time.Duration, per time.Duration, xmax float64) Series {
	s := Series{Label: "wait at percentile", Role: RolePercentile, Step: true}
	var seen uint64
	for _, b := range bs {
		x := ninesOf(float64(seen) / float64(n))
		if x >= xmax {
			break
		}
		s.X, s.Y = append(s.X, x), append(s.Y, toUnit(min(b.To, most), per))
		seen += b.Count
	}
	if k := len(s.Y); k > 0 {
		s.X, s.Y = append(s.X, xmax), append(s.Y, s.Y[k-1])
	}
	return s
}

// ninesOf is the nines-axis position of the share p: −log₁₀(1 − p), so 0.9 → 1, 0.99 → 2.
func ninesOf(p float64) float64 {
	if p >= 1 {
		return math.Inf(1)
	}
	return -math.Log10(1 - p)
}

// ninesTicks are the nines axis's ticks up to n nines: 0, 50, 90, 99, 99.9, …
func ninesTicks(n int) []plot.Tick {
	ticks := []plot.Tick{{Value: 0, Label: "0"}, {Value: ninesOf(0.5), Label: "50"}}
	for k := 1; k <= n; k++ {
		label := "90"
		switch {
		case k == 2:
			label = "99"
		case k > 2:
			label = "99." + strings.Repeat("9", k-2)
		}
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: label})
	}
	return ticks
}

// logDurationTicks are a log axis's ticks in units of per: a labelled tick at each power of
// ten, unlabelled ones at 2× and 5×.
func logDurationTicks(lo, hi float64, per time.Duration) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		base := math.Pow(10, e)
		for _, m := range []float64{1, 2, 5} {
			v := base * m
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 {
				t.Label = fmtDur(time.Duration(math.Round(v * float64(per))))
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
