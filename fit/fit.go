package fit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// Options say which rates to fit and what to answer.
type Options struct {
	// Window is the rates' window, Permits per Window (default 1s): the grid's rates are whole
	// numbers of permits per Window, and it is the window kinds' window and the peak's.
	Window time.Duration
	// Steps is how many rates the grid has between the mean and twice the peak (default 24).
	Steps int
	// Rate, when set, is the rate to answer for instead of the knee (it joins the grid).
	Rate limiters.Rate
	// RefusePPM, when at least 0, asks for the smallest capacity at the recommended rate that
	// refuses at most this many parts per million of the permits (10000 is 1%).
	RefusePPM int64
	// MaxMemory is the most bytes the trace's columns may take (default DefaultMaxMemory, 12
	// bytes a row); a longer trace is read from src again for each pass.
	MaxMemory int64
}

// firstPass reads src into a table, computing its statistics on the way, and returns the
// table as the later passes; or, when the table would pass opt.MaxMemory, the statistics of
// a streamed read and src itself as the later passes.
func firstPass(ctx context.Context, src Source, opt Options, slots int) (Stats, passes, error) {
	maxMemory := opt.MaxMemory
	if maxMemory <= 0 {
		maxMemory = DefaultMaxMemory
	}
	acc := newStatsAccumulator(opt.Window, slots)
	t, err := loadStats(ctx, src, maxMemory, acc)
	if errors.Is(err, errTooLarge) {
		st, err := statistics(ctx, src, opt.Window, slots)
		return st, streamed{src}, err
	}
	if err != nil {
		return Stats{}, nil, err
	}
	st, err := acc.stats(t)
	return st, t, err
}

// Report is everything Fit found.
type Report struct {
	Source string  `json:"source"`
	Stats  Stats   `json:"stats"`
	Curve  []Point `json:"curve"` // by rate, ascending
	// Knee is the index in Curve of the knee: the point farthest below the chord from the
	// curve's first point that fits to its last, on axes scaled to [0, 1] each (Kneedle).
	Knee int `json:"knee"`
	// Chosen is the index in Curve of the recommended point: Options.Rate's, or the knee.
	Chosen int      `json:"chosen"`
	Specs  []Answer `json:"specs"`
	// Relaxed is the answer at the chosen rate when Options.RefusePPM was given.
	Relaxed *Relaxed `json:"relaxed,omitempty"`
}

// Recommended is the chosen point.
func (r *Report) Recommended() Point { return r.Curve[r.Chosen] }

// Answer is one limiter kind's spec for the recommended point, confirmed by replay.
type Answer struct {
	Kind    limiters.Kind `json:"kind"`
	Applies bool          `json:"applies"`
	Spec    string        `json:"spec,omitempty"` // parses with limiters.ParseSpec to itself
	Note    string        `json:"note,omitempty"`
	// Admitted and AdmittedPermits are what the replay through the spec's limiter admitted.
	Admitted        int64 `json:"admitted"`
	AdmittedPermits int64 `json:"admitted_permits"`
	// Below is, for the token bucket, the same spec with capacity σ − 1 (when σ > 1), and
	// BelowRefused the requests it refused in the replay: at least one, or σ was not the least.
	Below        string `json:"below,omitempty"`
	BelowRefused int64  `json:"below_refused,omitempty"`
}

// Fit reads src once into a table (table.go; a trace too large for Options.MaxMemory is read
// again for each pass instead) and answers opt: the trace's statistics, σ on a grid of rates,
// the knee, each kind's spec there, and the relaxed capacity, all replayed to confirm them.
func Fit(ctx context.Context, src Source, opt Options) (*Report, error) {
	if opt.Window <= 0 {
		opt.Window = time.Second
	}
	if opt.Steps <= 0 {
		opt.Steps = 24
	}
	slots := limiters.DefaultSlots
	if int64(opt.Window)%int64(slots) != 0 {
		slots = 1
	}
	st, read, err := firstPass(ctx, src, opt, slots)
	if err != nil {
		return nil, err
	}
	rates, err := withAsked(Grid(st, opt.Window, opt.Steps), opt.Rate)
	if err != nil {
		return nil, err
	}
	var curve []Point
	if t, ok := read.(*table); ok {
		curve, err = t.gridCurve(ctx, rates)
	} else {
		curve, err = read.curve(ctx, rates)
	}
	if err != nil {
		return nil, err
	}
	rep := &Report{Source: src.Name(), Stats: st, Curve: curve}
	rep.Knee = knee(rep.Curve)
	refine := func(rates []limiters.Rate) ([]Point, error) { return read.curve(ctx, rates) }
	if t, ok := read.(*table); ok {
		refine = t.refiner(ctx, rep.Curve)
	}
	rep.Curve, rep.Knee, err = withRefinedKnee(rep.Curve, rep.Knee, func(p Point) limiters.Rate { return p.Rate }, pointXY, refine)
	if err != nil {
		return nil, err
	}
	rep.Chosen = rep.Knee
	if opt.Rate.Permits > 0 {
		rep.Chosen = slices.IndexFunc(rep.Curve, func(p Point) bool { return p.Rate == opt.Rate })
	}
	chosen := rep.Recommended()
	if !chosen.Fits() {
		return rep, fmt.Errorf("%s: no token bucket at %s admits the trace: its tolerance would pass 2^62ns (146 years); the trace's mean is %.4g/s", src.Name(), chosen.RateText, st.MeanPerSec)
	}
	if opt.RefusePPM >= 0 {
		r, err := relax(ctx, read, chosen, st.Permits, opt.RefusePPM)
		if err != nil {
			return nil, err
		}
		rep.Relaxed = &r
	}
	rep.Specs = answers(st, chosen, opt.Window)
	if err := confirm(ctx, read, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// withAsked is rates with asked among them (when set: it must be a rate a token bucket
// takes), in ascending rate: descending T, equal T (1/1s and 2/2s) by the text.
func withAsked(rates []limiters.Rate, asked limiters.Rate) ([]limiters.Rate, error) {
	if asked.Permits > 0 {
		if err := (limiters.TokenBucketSpec{Capacity: 1, Rate: asked}).Validate(); err != nil {
			return nil, err
		}
		if !slices.Contains(rates, asked) {
			rates = append(rates, asked)
		}
	}
	slices.SortFunc(rates, func(a, b limiters.Rate) int {
		if ta, tb := a.Interval(), b.Interval(); ta != tb {
			return int(tb - ta)
		}
		return compareStrings(a.String(), b.String())
	})
	return rates, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Grid is steps rates, whole permits per window, spread evenly on a log scale from the
// trace's mean (at least 1 per window) to twice its peak, duplicates dropped: below the mean
// σ grows with the trace's length, and beyond twice the peak it has all but flattened to the
// trace's tightest bursts.
func Grid(st Stats, window time.Duration, steps int) []limiters.Rate {
	lo := max(1, int64(math.Ceil(st.MeanPerSec*window.Seconds())))
	hi := max(lo+1, 2*st.Peak)
	hi = min(hi, int64(window)) // T ≥ 1ns
	lo = min(lo, hi)
	var rates []limiters.Rate
	last := int64(0)
	for i := range steps {
		f := 0.0
		if steps > 1 {
			f = float64(i) / float64(steps-1)
		}
		p := int64(math.Round(float64(lo) * math.Pow(float64(hi)/float64(lo), f)))
		p = min(max(p, lo), hi)
		if p > last {
			rates = append(rates, limiters.Rate{Permits: int(p), Window: window})
			last = p
		}
	}
	return rates
}

// knee is the index of the point farthest below the chord of the fitting part of the curve,
// on axes scaled to [0, 1]: for a falling convex curve from (0, 1) to (1, 0), the largest
// 1 − x − y. The first such point (the lowest rate) on a tie; the lowest fitting rate when
// the curve is flat.
//
// The curve's y is σ*(ρ), the real-valued excess (Point.Burst), not its ceiling σ: σ* is a
// maximum of lines in the rate 1e9/T (each busy period's A − (t − s)·ρ), so it is exactly
// convex and the distance below the chord has one peak, which refineKnee finds whatever the
// grid; σ's ceilings would add ties and dents of up to one permit.
func knee(curve []Point) int {
	return kneeOf(len(curve), kneeXY(curve))
}

func kneeXY(curve []Point) func(i int) (float64, float64, bool) {
	return func(i int) (float64, float64, bool) { return pointXY(curve[i]) }
}

func pointXY(p Point) (float64, float64, bool) { return p.PerSec, p.Burst, p.Fits() }

// kneeOf is knee over n points given as (x, y, fits) by at, x ascending.
func kneeOf(n int, at func(i int) (x, y float64, fits bool)) int {
	first := -1
	for i := range n {
		if _, _, ok := at(i); ok {
			first = i
			break
		}
	}
	if first < 0 {
		return 0
	}
	x0, y0, _ := at(first)
	x1, y1, _ := at(n - 1)
	if x1 <= x0 || y0 <= y1 {
		return first
	}
	best, bestD := first, 0.0
	for i := first; i < n; i++ {
		xi, yi, _ := at(i)
		x := (xi - x0) / (x1 - x0)
		y := (yi - y1) / (y0 - y1)
		if d := 1 - x - y; d > bestD+1e-12 {
			best, bestD = i, d
		}
	}
	return best
}

// answers is each kind's spec for the trace at the chosen point: the token bucket's σ, the
// window kinds' smallest limits, the leaky bucket's rate when one exists.
func answers(st Stats, p Point, window time.Duration) []Answer {
	tb, _ := p.Spec()
	out := []Answer{{Kind: limiters.KindTokenBucket, Applies: true, Spec: tb.String(),
		Note: fmt.Sprintf("the worst burst: %d permits from %s to %s, %.2f above the rate", p.Permits,
			limiters.FormatDuration(p.From.Round(time.Microsecond)), limiters.FormatDuration(p.To.Round(time.Microsecond)), p.Burst)}}
	sw := limiters.SlidingWindowSpec{Limit: int(st.SlidingLimit), Window: window, Slots: st.Slots}
	fw := limiters.FixedWindowSpec{Limit: int(st.FixedLimit), Window: window}
	out = append(out, windowAnswer(sw, sw.Validate(), fmt.Sprintf("the most in %d consecutive slots of %s: %d, ending at %s; counts span between %s and %s",
		st.Slots, limiters.FormatDuration(window/time.Duration(st.Slots)), st.SlidingLimit, limiters.FormatDuration(st.SlidingAt.Round(time.Microsecond)),
		limiters.FormatDuration(window-window/time.Duration(st.Slots)+1), limiters.FormatDuration(window))))
	out = append(out, windowAnswer(fw, fw.Validate(), fmt.Sprintf("the most in one aligned window: %d, in the one ending at %s; warning: across a boundary a fixed window admits up to 2 × %d = %d within %s",
		st.FixedLimit, limiters.FormatDuration((st.FixedAt/window+1)*window), st.FixedLimit, 2*st.FixedLimit, limiters.FormatDuration(window))))
	leaky := Answer{Kind: limiters.KindLeakyBucket}
	switch {
	case st.MaxRequest > 1:
		leaky.Note = fmt.Sprintf("does not apply: a request asks for %d permits, and a leaky bucket grants one at a time", st.MaxRequest)
	case st.MinGap == 0:
		leaky.Note = fmt.Sprintf("does not apply: %d requests arrive at %s, and a leaky bucket admits one per T", st.MaxInstant, limiters.FormatDuration(st.MaxInstantAt))
	case st.MinGap < 0:
		lb := limiters.LeakyBucketSpec{Rate: limiters.Rate{Permits: 1, Window: time.Second}}
		leaky.Applies, leaky.Spec, leaky.Note = true, lb.String(), "one request: any rate admits it"
	case 1e9/float64(st.MinGap) > 10*p.PerSec:
		// A spec no person would write (1/62ns): say why instead.
		leaky.Note = fmt.Sprintf("does not apply: the closest two requests are %s apart, so a leaky bucket that admits them all "+
			"drains at %.4g/s, %.3g× the recommended rate: it would not limit anything else",
			limiters.FormatDuration(st.MinGap), 1e9/float64(st.MinGap), 1e9/float64(st.MinGap)/p.PerSec)
	default:
		lb := limiters.LeakyBucketSpec{Rate: limiters.Rate{Permits: 1, Window: st.MinGap}}
		leaky.Applies, leaky.Spec = true, lb.String()
		leaky.Note = fmt.Sprintf("T = %s, the closest two requests; %.4g/s, %.3g× the recommended rate",
			limiters.FormatDuration(st.MinGap), 1e9/float64(st.MinGap), 1e9/float64(st.MinGap)/p.PerSec)
	}
	return append(out, leaky)
}

func windowAnswer(spec limiters.Spec, invalid error, note string) Answer {
	a := Answer{Kind: spec.Kind(), Applies: invalid == nil, Note: note}
	if invalid != nil {
		a.Note = "does not apply: " + invalid.Error()
		return a
	}
	a.Spec = spec.String()
	return a
}

// withRefinedKnee is the grid's curve with the refined knee (refineKnee) in its place among
// the grid's points, and its index: the curve a person reads is the grid's, plus the knee.
func withRefinedKnee[P any](grid []P, k int, rate func(P) limiters.Rate, xy func(P) (float64, float64, bool),
	eval func([]limiters.Rate) ([]P, error)) ([]P, int, error) {
	pts, best, err := refineKnee(grid, k, rate, xy, eval)
	if err != nil || len(pts) == len(grid) {
		return pts, best, err
	}
	knee := pts[best]
	r := rate(knee)
	at := slices.IndexFunc(grid, func(p P) bool { return rate(p).Interval() <= r.Interval() })
	if at < 0 {
		at = len(grid)
	}
	if at < len(grid) && rate(grid[at]) == r {
		return grid, at, nil
	}
	return slices.Insert(slices.Clone(grid), at, knee), at, nil
}

// refineKnee makes the knee a property of the curve rather than of the grid: the knee found
// on the grid (at k) lies between its two grid neighbours, and the curve is evaluated (eval,
// a pass over the trace per call) at up to 15 whole-permit rates between them, then between
// the new best's neighbours, until the best has both whole-permit neighbours evaluated. The
// axes stay scaled by the grid's first fitting point and its last, which do not depend on
// the number of steps (the grid always runs from the mean to twice the peak), so
// `--steps 12` and `--steps 24` arrive at the same rate wherever the distance below the chord
// is unimodal, as it is for the convex σ(ρ). The points evaluated join the curve, in order.
func refineKnee[P any](pts []P, k int, rate func(P) limiters.Rate, xy func(P) (float64, float64, bool),
	eval func([]limiters.Rate) ([]P, error)) ([]P, int, error) {
	first := slices.IndexFunc(pts, func(p P) bool { _, _, ok := xy(p); return ok })
	if first < 0 || k < first {
		return pts, k, nil
	}
	x0, y0, _ := xy(pts[first])
	x1, y1, _ := xy(pts[len(pts)-1])
	if x1 <= x0 || y0 <= y1 {
		return pts, k, nil
	}
	window := rate(pts[k]).Window
	dist := func(p P) (float64, bool) {
		x, y, ok := xy(p)
		if !ok || rate(p).Window != window {
			return 0, false
		}
		return 1 - (x-x0)/(x1-x0) - (y-y1)/(y0-y1), true
	}
	for range 64 { // each round narrows the bracket at least 8-fold; 64 is a guard
		lo, hi := max(k-1, first), min(k+1, len(pts)-1)
		a, b := rate(pts[lo]), rate(pts[hi])
		if a.Window != window || b.Window != window {
			break
		}
		var cands []limiters.Rate
		gap := b.Permits - a.Permits - 1
		for i := 1; i <= min(gap, 15); i++ {
			p := a.Permits + int(int64(i)*int64(gap+1)/int64(min(gap, 15)+1))
			r := limiters.Rate{Permits: p, Window: window}
			known := slices.ContainsFunc(pts[lo:hi+1], func(q P) bool { return rate(q) == r })
			if p > a.Permits && p < b.Permits && !known && !slices.Contains(cands, r) {
				cands = append(cands, r)
			}
		}
		if len(cands) == 0 {
			break
		}
		got, err := eval(cands)
		if err != nil {
			return nil, 0, err
		}
		// The bracket's points and the new ones, in ascending rate (one window: by permits).
		bracket := append(slices.Clone(pts[lo:hi+1]), got...)
		slices.SortStableFunc(bracket, func(p, q P) int { return rate(p).Permits - rate(q).Permits })
		merged := append(slices.Clone(pts[:lo]), bracket...)
		pts = append(merged, pts[hi+1:]...)
		// The best of the bracket, now with its new points; the lowest rate on a tie.
		best, bestD := -1, 0.0
		for i := lo; i <= hi+len(got); i++ {
			if d, ok := dist(pts[i]); ok && (best < 0 || d > bestD+1e-12) {
				best, bestD = i, d
			}
		}
		if best < 0 {
			break
		}
		k = best
	}
	return pts, k, nil
}
