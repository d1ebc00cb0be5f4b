package plots

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

var guaranteeChart = Chart{
	Name:    "guarantee",
	Summary: "the most admitted in a rolling window against the limiter's documented bound",
	Applies: hasWindow,
	Build:   Guarantee,
	Zooms:   true,
}

// hasWindow: a window was given (p.Window), or some lane's limiters have one of their own.
func hasWindow(sc *engine.Scenario, _ *engine.Results, p Params) bool {
	if p.Window > 0 {
		return true
	}
	_, ok := guaranteeWindow(sc)
	return ok
}

// guaranteeWindow is the rolling window the guarantee chart uses: the natural window most
// lanes' first timed stage share (the longest on a tie).
func guaranteeWindow(sc *engine.Scenario) (time.Duration, bool) {
	count := map[time.Duration]int{}
	for _, l := range sc.Lanes {
		for _, s := range l.Stack {
			if w := s.NaturalWindow(); w > 0 {
				count[w]++
				break
			}
		}
	}
	var best time.Duration
	for w, n := range count {
		if n > count[best] || (n == count[best] && w > best) {
			best = w
		}
	}
	return best, best > 0
}

// nominal is what the stack's rate promises over L: permits per window scaled to L, the
// least over its timed stages; false when none has a rate.
func nominal(stack []limiters.Spec, L time.Duration) (float64, bool) {
	best, ok := math.Inf(1), false
	for _, s := range stack {
		rate, timed := s.NominalRate()
		if !timed {
			continue
		}
		best, ok = min(best, float64(rate.Permits)*float64(L)/float64(rate.Window)), true
	}
	return best, ok
}

// defaultWindow is the guarantee chart's window L: the lanes' natural window, or, in a run
// shorter than two of them, the shortest emission interval.
func defaultWindow(sc *engine.Scenario, res *engine.Results) (time.Duration, error) {
	L, ok := guaranteeWindow(sc)
	if !ok {
		return 0, fmt.Errorf("guarantee: %w: no lane has a time window", ErrNotApplicable)
	}
	if L > res.Horizon/2 {
		// A window longer than half the run says little (burst-after-idle runs 250ms against
		// limits per 1s): use the shortest emission interval instead, which shows the burst
		// each limiter allows — its capacity.
		if T, ok := shortestInterval(sc); ok {
			L = T
		}
	}
	return L, nil
}

// shortestInterval is the least time between two permits at the steady rate over every
// lane's timed stages: the emission interval of each stage's nominal rate.
func shortestInterval(sc *engine.Scenario) (time.Duration, bool) {
	var best time.Duration
	for _, l := range sc.Lanes {
		for _, s := range l.Stack {
			rate, _ := s.NominalRate()
			if T := rate.Interval(); T > 0 && (best == 0 || T < best) {
				best = T
			}
		}
	}
	return best, best > 0
}

// Guarantee shows, per lane, the most permits admitted in a rolling window of length L
// ending in each bin, against the documented worst-case bound for L (limiters.AdmissionBound)
// and the nominal rate × L. From a trace the rolling count is exact; without one it is summed
// from whole bins (an approximation to within one bin, said in the note). Each panel's title
// gives the exact maximum from the engine's streaming meter. Thin lines in a lane's kind
// colour mark its window or slot boundaries, where the most admitted in a window can jump.
//
// L is p.Window, or when it is 0 the lanes' natural window (see defaultWindow); p.View is the
// stretch shown.
func Guarantee(sc *engine.Scenario, res *engine.Results, p Params) (*Figure, error) {
	L := p.Window
	if L < 0 {
		return nil, fmt.Errorf("guarantee: the window must be positive, got %v", L)
	}
	if L == 0 {
		var err error
		if L, err = defaultWindow(sc, res); err != nil {
			return nil, err
		}
	}
	ax := newAxis(res, p.View)
	per := ax.per
	traced := true
	for _, l := range res.Lanes {
		// A trace of a window only (TraceFrom, TraceTo) cannot count every bin's windows.
		traced = traced && !l.Truncated && (len(l.Trace) > 0 || l.Totals.Admitted == 0) && l.TraceFrom == 0 && l.TraceTo == 0
	}
	f := &Figure{
		Name:     "guarantee",
		Title:    fmt.Sprintf("%s: most admitted in any %s window vs the bound", res.Scenario, fmtDur(L)),
		XLabel:   ax.label(),
		ShareY:   true,
		TimeAxis: true,
		TimeUnit: per,
	}
	how := "exact, from the trace"
	if !traced {
		how = fmt.Sprintf("summed from %s bins, so within one bin of exact", fmtDur(res.BinWidth))
	}
	f.Subtitle = fmt.Sprintf("%s · window L = %s", runText(sc, res), fmtDur(L))
	f.Note = fmt.Sprintf("The line at time t is the most permits admitted in any %s interval ending in the bin at t (%s). "+
		"Bound: the most the algorithm allows in any interval of %s (its worst case); nominal: the rate × %s.",
		fmtDur(L), how, fmtDur(L), fmtDur(L))
	if ax.zoomed() {
		f.Note = ax.note() + " " + f.Note
	}
	hasNominal, hasBound := false, false
	var bounds boundarySet
	for i, l := range res.Lanes {
		c := LaneColor(sc.Lanes[i])
		var counts []float64
		if traced {
			counts = rollingFromTrace(l, res.BinWidth, res.Horizon, L)
		} else {
			counts = rollingFromBins(l, res.BinWidth, L)
		}
		s := Series{Label: fmt.Sprintf("admitted in %s", fmtDur(L)), Role: RoleRolling, Color: c, Step: true}
		for b, v := range counts {
			s.X = append(s.X, toUnit(l.Bins[b].Start, per))
			s.Y = append(s.Y, v)
		}
		if n := len(counts); n > 0 {
			s.X = append(s.X, toUnit(res.Horizon, per))
			s.Y = append(s.Y, counts[n-1])
		}
		title := laneTitle(sc, res, i)
		pn := ax.panel("")
		pn.TitleColor, pn.YLabel = c, "admitted"
		s = cutSeries(s, pn.XMin, pn.XMax)
		if b, what, ok := boundaries(sc.Lanes[i], ax); ok {
			pn.Series = append(pn.Series, b)
			bounds.add(what, b.Color)
		} else {
			bounds.skip(what)
		}
		xs := []float64{pn.XMin, pn.XMax}
		scale := 1.0 // the largest of the data and the nominal line: what the panel is about
		if v, ok := nominal(sc.Lanes[i].Stack, L); ok {
			pn.Series = append(pn.Series, Series{Label: "nominal", Role: RoleNominal, X: xs, Y: []float64{v, v}})
			hasNominal = true
			scale = max(scale, v)
		}
		bound, most, approx := int64(-1), int64(-1), false
		metered := false
		for _, m := range l.Windows {
			if m.Length == L {
				bound, most, metered = m.Bound, m.MaxAdmitted, true
			}
		}
		if !metered { // a window the engine did not meter: the bound from the specs, the most from the line
			if b, ok := limiters.StackBound(sc.Lanes[i].Stack, L); ok {
				bound = b
			}
			for _, v := range counts {
				most = max(most, int64(v))
			}
			approx = !traced
		}
		for _, v := range counts {
			scale = max(scale, v)
		}
		// A bound more than ten times what the panel shows (Guava's, which a single request of
		// any size can reach) would flatten the data to the axis: it is named in the title
		// instead of drawn.
		offScale := float64(bound) > 10*scale
		if bound >= 0 && !offScale {
			pn.Series = append(pn.Series, Series{Label: "bound", Role: RoleBound, X: xs, Y: []float64{float64(bound), float64(bound)}})
			hasBound = true
		}
		pn.Series = append(pn.Series, s)
		if most >= 0 {
			sign := ""
			if approx {
				sign = "≈"
			}
			title += fmt.Sprintf(" — most in any %s: %s%d", fmtDur(L), sign, most)
			switch {
			case bound >= math.MaxInt32:
				// Past what any request can ask (Guava's: its largest request is 2³¹ − 1
				// permits, prepaid), the number means nothing in permits: say so in words.
				title += ", no bound in permits (a single request of any size can pass)"
			case bound >= 0:
				title += fmt.Sprintf(", bound %d", bound)
				if offScale {
					title += " (off this scale)"
				}
				if most > bound && !approx {
					title += " (EXCEEDED)"
				}
			}
		}
		pn.Title = title
		f.Panels = append(f.Panels, pn)
	}
	f.PanelHeight = panelHeight(len(f.Panels))
	f.Legend = []LegendEntry{{Label: fmt.Sprintf("admitted in the %s window (lane colour)", fmtDur(L)), Role: RoleRolling, Colors: laneColors(sc)}}
	if hasBound {
		f.Legend = append(f.Legend, LegendEntry{Label: "worst-case bound", Role: RoleBound})
	}
	if hasNominal {
		f.Legend = append(f.Legend, LegendEntry{Label: fmt.Sprintf("nominal: rate × %s", fmtDur(L)), Role: RoleNominal})
	}
	bounds.legend(f)
	return f, nil
}

// rollingFromTrace is, for each bin, the most permits admitted in any (t−L, t] with t in the
// bin: the count can only peak at an admission or carry over from the bin's start, so those
// are the points checked. O((admissions + bins)·log admissions).
func rollingFromTrace(l engine.LaneResult, width, horizon, L time.Duration) []float64 {
	var times []time.Duration
	prefix := []int64{0}
	for _, r := range l.Trace {
		if r.Outcome == engine.OutcomeAdmitted {
			times = append(times, r.At)
			prefix = append(prefix, prefix[len(prefix)-1]+int64(r.Permits))
		}
	}
	upto := func(t time.Duration) int { return sort.Search(len(times), func(i int) bool { return times[i] > t }) }
	inWindow := func(t time.Duration) int64 { return prefix[upto(t)] - prefix[upto(t-L)] }
	out := make([]float64, len(l.Bins))
	j := 0
	for b, bin := range l.Bins {
		end := min(bin.Start+width, horizon)
		best := inWindow(bin.Start)
		for j < len(times) && times[j] < end {
			if times[j] >= bin.Start {
				best = max(best, inWindow(times[j]))
			}
			j++
		}
		out[b] = float64(best)
	}
	return out
}

// rollingFromBins approximates the rolling count by the admissions of the k = L/width whole
// bins ending with each bin.
func rollingFromBins(l engine.LaneResult, width, L time.Duration) []float64 {
	k := max(int((L+width/2)/width), 1)
	out := make([]float64, len(l.Bins))
	var sum int64
	for b, bin := range l.Bins {
		sum += bin.Admitted
		if b >= k {
			sum -= l.Bins[b-k].Admitted
		}
		out[b] = float64(sum)
	}
	return out
}
