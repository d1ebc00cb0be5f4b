package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// Chart is one kind of figure: a pure function from a scenario and its results to a Figure.
type Chart struct {
	Name    string
	Summary string
	// Applies reports whether the chart has something to show for this run.
	Applies func(sc *engine.Scenario, res *engine.Results) bool
	Build   func(sc *engine.Scenario, res *engine.Results) (*Figure, error)
}

// Charts is every chart, in the order a gallery shows them.
var Charts = []Chart{
	{"timeline", "every request of every lane as a mark: admitted, rejected, retried (small runs, needs the trace)", hasTimeline, Timeline},
	{"rate", "offered, admitted and rejected requests per second, one panel per lane", always, Rate},
	{"state", "each stage's available permits, requests in flight and the client queue over time", always, State},
	{"guarantee", "the most admitted in a rolling window against the limiter's documented bound", hasWindow, Guarantee},
	{"warmup", "a warm-up bucket's admitted rate against its documented curve and the token bucket", hasWarmUp, WarmUp},
	{"downstream", "requests in flight against the downstream's pool, and the requests the pool refused", hasDownstream, Downstream},
	{"fleet", "each fleet lane's admissions per bin, stacked by instance, against the global limit, with the fault timeline", hasFleet, Fleet},
	{"waits", "each lane's wait-time distribution: a histogram on a log axis and the percentile curve (runs where requests wait)", hasWaits, Waits},
}

// ChartNames lists the charts' names.
func ChartNames() []string {
	names := make([]string, len(Charts))
	for i, c := range Charts {
		names[i] = c.Name
	}
	return names
}

// ErrNotApplicable is returned by Build for a chart that has nothing to show for a run.
var ErrNotApplicable = errors.New("plots: chart does not apply to this scenario")

// Build makes the chart called name.
func Build(name string, sc *engine.Scenario, res *engine.Results) (*Figure, error) {
	for _, c := range Charts {
		if c.Name == name {
			if !c.Applies(sc, res) {
				// Say what the chart needs, which this run does not have: its summary says it.
				return nil, fmt.Errorf("%s: %w: it shows %s, and this run has nothing of the kind (charts that apply: %s)",
					name, ErrNotApplicable, c.Summary, strings.Join(Applicable(sc, res), ", "))
			}
			return c.Build(sc, res)
		}
	}
	return nil, fmt.Errorf("plots: no chart %q (charts: %s)", name, strings.Join(ChartNames(), ", "))
}

// Applicable lists the charts that have something to show for this run.
func Applicable(sc *engine.Scenario, res *engine.Results) []string {
	var names []string
	for _, c := range Charts {
		if c.Applies(sc, res) {
			names = append(names, c.Name)
		}
	}
	return names
}

// TimelineLimit is the most marks per lane the timeline draws: beyond it a mark per request
// is no longer a picture. Longer runs use the rate chart.
const TimelineLimit = 300

// TimelineFits reports whether a run with these results is small enough for the timeline
// (whether or not it was traced): a caller may then rerun it with Scenario.Trace set.
func TimelineFits(res *engine.Results) bool {
	for _, l := range res.Lanes {
		if l.Totals.Attempts+l.Totals.Failed > TimelineLimit {
			return false
		}
	}
	return len(res.Lanes) > 0
}

func always(*engine.Scenario, *engine.Results) bool { return true }

func hasTimeline(sc *engine.Scenario, res *engine.Results) bool {
	if !TimelineFits(res) {
		return false
	}
	for _, l := range res.Lanes {
		if l.Truncated || (len(l.Trace) == 0 && l.Totals.Attempts > 0) {
			return false
		}
	}
	return true
}

func hasWindow(sc *engine.Scenario, res *engine.Results) bool {
	_, ok := guaranteeWindow(sc)
	return ok
}

func hasWarmUp(sc *engine.Scenario, res *engine.Results) bool {
	i, _ := warmUpLane(sc)
	return i >= 0
}

func hasDownstream(sc *engine.Scenario, res *engine.Results) bool { return sc.Downstream != nil }

// --- shared pieces ---

// timeUnit is the time axis's unit: milliseconds for runs of 2s or less, else seconds.
func timeUnit(horizon time.Duration) (per time.Duration, name string) {
	if horizon <= 2*time.Second {
		return time.Millisecond, "ms"
	}
	return time.Second, "s"
}

func toUnit(d, per time.Duration) float64 { return float64(d) / float64(per) }

func laneColors(sc *engine.Scenario) []color.Color {
	var out []color.Color
	for _, l := range sc.Lanes {
		c := LaneColor(l)
		if !slices.ContainsFunc(out, func(o color.Color) bool { return sameColor(o, c) }) {
			out = append(out, c)
		}
	}
	return out
}

func sameColor(a, b color.Color) bool {
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}

func fmtDur(d time.Duration) string { return limiters.FormatDuration(d) }

// clientText describes what a refused client does.
func clientText(c engine.Client) string {
	switch c.Policy {
	case engine.PolicyRetry:
		return fmt.Sprintf("retry every %s, %d attempts", fmtDur(c.Delay), c.MaxAttempts)
	case engine.PolicyBackoff:
		s := fmt.Sprintf("backoff from %s", fmtDur(c.Delay))
		if c.MaxDelay > 0 {
			s += " to " + fmtDur(c.MaxDelay)
		}
		if c.Jitter {
			s += " with jitter"
		}
		return fmt.Sprintf("%s, %d attempts", s, c.MaxAttempts)
	case engine.PolicyRetryAfter:
		return fmt.Sprintf("retry at the Retry-After hint, %d attempts", c.MaxAttempts)
	case engine.PolicyRetryAfterHeader:
		s := "retry at the Retry-After header's seconds"
		if c.MaxDelay > 0 {
			s += " up to " + fmtDur(c.MaxDelay)
		}
		if c.Jitter {
			s += " plus jitter to " + fmtDur(c.Delay)
		}
		return fmt.Sprintf("%s, %d attempts", s, c.MaxAttempts)
	case engine.PolicyAWSStandard, engine.PolicyRetryableHTTP, engine.PolicyRetryableLin:
		d := c.WithDefaults()
		s := fmt.Sprintf("%s from %s to %s, %d attempts", c.Policy, fmtDur(d.Delay), fmtDur(d.MaxDelay), d.MaxAttempts)
		switch {
		case c.Policy != engine.PolicyAWSStandard:
		case d.RetryQuota == engine.NoRetryQuota:
			s += ", no retry quota"
		default:
			s += fmt.Sprintf(", retry quota %d", d.RetryQuota)
		}
		return s
	case engine.PolicyCenkalti:
		d := c.WithDefaults()
		s := fmt.Sprintf("cenkalti-backoff from %s to %s, up to %s", fmtDur(d.Delay), fmtDur(d.MaxDelay), fmtDur(d.MaxElapsed))
		if d.MaxAttempts > 0 {
			s += fmt.Sprintf(", %d attempts", d.MaxAttempts)
		}
		return s
	case engine.PolicyQueue:
		return fmt.Sprintf("queue of %d, timeout %s", c.QueueSize, fmtDur(c.Timeout))
	}
	return "refused requests are dropped"
}

// runText is the subtitle's common part: seed, virtual time, offered traffic, client.
func runText(sc *engine.Scenario, res *engine.Results) string {
	var offered int64
	if len(res.Lanes) > 0 {
		offered = res.Lanes[0].Totals.Offered
	}
	own := 0
	for _, l := range sc.Lanes {
		if l.Client != nil {
			own++
		}
	}
	client := clientText(sc.Client)
	switch {
	case own == len(sc.Lanes) && own > 0:
		client = "each lane has its own client"
	case own > 0:
		client += "; some lanes have their own client"
	}
	return fmt.Sprintf("seed %d · %s of virtual time · %d requests offered to every lane · %s",
		res.Seed, fmtDur(res.Horizon), offered, client)
}

// laneTitle is lane i's name, with its client when it has its own.
func laneTitle(sc *engine.Scenario, res *engine.Results, i int) string {
	if c := sc.Lanes[i].Client; c != nil {
		return res.Lanes[i].Name + " · " + clientText(*c)
	}
	return res.Lanes[i].Name
}

// span is a display bin: [start, start+dur) and the sums (or maxima) of the engine bins in it.
type span struct {
	start, dur                                  time.Duration
	offered, attempts, admitted, rejected, fail int64
	maxInFlight, maxQueue                       int
}

// group merges every g consecutive engine bins; the last may be shorter (the horizon).
func group(bins []engine.Bin, width, horizon time.Duration, g int) []span {
	var out []span
	for i := 0; i < len(bins); i += g {
		s := span{start: bins[i].Start}
		end := min(bins[i].Start+time.Duration(g)*width, horizon)
		s.dur = end - s.start
		for _, b := range bins[i:min(i+g, len(bins))] {
			s.offered += b.Offered
			s.attempts += b.Attempts
			s.admitted += b.Admitted
			s.rejected += b.RefusedAttempts
			s.fail += b.Failed
			s.maxInFlight = max(s.maxInFlight, b.MaxInFlight)
			s.maxQueue = max(s.maxQueue, b.MaxQueue)
		}
		out = append(out, s)
	}
	return out
}

// stepSeries makes a post-step series over spans: one point at each span's start and a last
// one at the end, so that the last value is drawn to the horizon.
func stepSeries(label string, role Role, c color.Color, spans []span, per time.Duration, value func(span) float64) Series {
	s := Series{Label: label, Role: role, Color: c, Step: true}
	for _, sp := range spans {
		s.X = append(s.X, toUnit(sp.start, per))
		s.Y = append(s.Y, value(sp))
	}
	if n := len(spans); n > 0 {
		last := spans[n-1]
		s.X = append(s.X, toUnit(last.start+last.dur, per))
		s.Y = append(s.Y, value(last))
	}
	return s
}

func perSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// --- 1. timeline ---

// Timeline draws every request of every lane as a mark on a shared time axis, one row per
// lane: admitted ●, admitted on a retry ▲, rejected ✕, a retry rejected +, refused by the
// downstream's pool □. Marks in the same column of time stack upward in arrival order; thin
// lines in a lane's kind colour mark its window or slot boundaries (limiters.Grid). It needs
// the trace (Scenario.Trace) and a small run (TimelineLimit). A run whose requests all fall in
// a short stretch of it is zoomed to them.
func Timeline(sc *engine.Scenario, res *engine.Results) (*Figure, error) {
	return TimelineView(sc, res, View{})
}

// TimelineView is the timeline of the stretch v of the run (the zero View: the whole run, or
// where its requests are).
func TimelineView(sc *engine.Scenario, res *engine.Results, v View) (*Figure, error) {
	if !hasTimeline(sc, res) {
		return nil, fmt.Errorf("timeline: %w (it needs a traced run of at most %d attempts per lane)", ErrNotApplicable, TimelineLimit)
	}
	type mark struct {
		at   time.Duration
		kind Mark
	}
	marks := make([][]mark, len(res.Lanes))
	first, last := time.Duration(math.MaxInt64), time.Duration(-1)
	for i, l := range res.Lanes {
		for _, r := range l.Trace {
			var m Mark
			switch r.Outcome {
			case engine.OutcomeAdmitted:
				m = MarkAdmitted
				if r.Attempt > 1 {
					m = MarkAdmittedRetry
				}
			case engine.OutcomeRejected, engine.OutcomeNever:
				m = MarkRejected
				if r.Attempt > 1 {
					m = MarkRejectedRetry
				}
			case engine.OutcomeFailed:
				m = MarkFailed
			default:
				continue
			}
			marks[i] = append(marks[i], mark{r.At, m})
			first, last = min(first, r.At), max(last, r.At)
		}
	}
	ax := newAxis(res, v)
	zoomed := false
	if v.Whole() && last >= 0 && (last-first) < res.Horizon/4 {
		pad := max((last-first)/8, time.Millisecond)
		q := roundTo(last - first)
		lo, hi := max((first-pad)/q*q, 0), min((last+pad+q-1)/q*q, res.Horizon)
		ax = newAxis(res, View{From: lo, To: hi})
		zoomed = true
	}
	lo, hi, per := ax.lo, ax.hi, ax.per
	for i := range marks { // only the marks on the axis
		marks[i] = slices.DeleteFunc(marks[i], func(m mark) bool { return m.at < lo || m.at > hi })
	}
	xmin, xmax := ax.xmin(), ax.xmax()
	const columns = 110
	colOf := func(t time.Duration) int { return int(float64(t-lo) / float64(hi-lo) * columns) }
	maxStack := 1
	for _, ms := range marks {
		counts := map[int]int{}
		for _, m := range ms {
			counts[colOf(m.at)]++
			maxStack = max(maxStack, counts[colOf(m.at)])
		}
	}
	// Marks fill [base−0.36, base+0.12]; the lane's name sits above. Stacks of up to
	// tallStack marks share one spacing; a taller one is squeezed into the same height and
	// labelled with its count.
	const tallStack = 8
	step := 0.14
	if maxStack > 1 {
		step = min(step, 0.48/float64(min(maxStack, tallStack)-1))
	}
	n := len(res.Lanes)
	pn := &Panel{XMin: xmin, XMax: xmax, YMin: -0.5, YMax: float64(n) - 0.45, HideYTicks: true}
	present := map[Mark]bool{}
	tall := false
	var bounds boundarySet
	for i, ms := range marks {
		base := float64(n - 1 - i)
		c := LaneColor(sc.Lanes[i])
		pn.Labels = append(pn.Labels, Label{X: xmin, Y: base + 0.17, Text: laneTitle(sc, res, i)})
		if b, what, ok := boundaries(sc.Lanes[i], ax); ok { // under the marks, across the lane's row only
			b.Lo = make([]float64, len(b.X))
			for k := range b.X {
				b.Lo[k], b.Y[k] = base-0.45, base+0.45
			}
			pn.Series = append(pn.Series, b)
			bounds.add(what, b.Color)
		} else {
			bounds.skip(what)
		}
		byKind := map[Mark]*Series{}
		height := map[int]int{}
		for _, m := range ms {
			height[colOf(m.at)]++
		}
		counts := map[int]int{}
		for _, m := range ms {
			col := colOf(m.at)
			st := step
			if h := height[col]; h > tallStack {
				st = 0.48 / float64(h-1)
				if counts[col] == 0 {
					pn.Labels = append(pn.Labels, Label{X: toUnit(m.at, per), Y: base - 0.12, Text: fmt.Sprintf("×%d", h), Small: true})
					tall = true
				}
			}
			y := base - 0.36 + float64(counts[col])*st
			counts[col]++
			s := byKind[m.kind]
			if s == nil {
				s = &Series{Label: fmt.Sprintf("%s: %s", res.Lanes[i].Name, m.kind), Role: RoleMarks, Mark: m.kind, Color: c}
				byKind[m.kind] = s
			}
			s.X = append(s.X, toUnit(m.at, per))
			s.Y = append(s.Y, y)
			present[m.kind] = true
		}
		for _, k := range markOrder {
			if s := byKind[k]; s != nil {
				pn.Series = append(pn.Series, *s)
			}
		}
	}
	f := &Figure{
		Name:        "timeline",
		Title:       res.Scenario + ": every request, lane by lane",
		Subtitle:    runText(sc, res),
		XLabel:      ax.label(),
		Panels:      []*Panel{pn},
		PanelHeight: 40 + 75*n,
		Note:        fmt.Sprintf("Marks less than %s apart stack upward in arrival order.", shortDur((hi-lo)/columns)),
		TimeAxis:    true,
		TimeUnit:    per,
	}
	if tall {
		f.Note += " A number beside a stack counts its marks."
	}
	switch {
	case zoomed:
		f.Note = fmt.Sprintf("Zoomed to %s–%s, where the requests are (the run is %s). ", shortDur(lo), shortDur(hi), fmtDur(res.Horizon)) + f.Note
	case ax.zoomed():
		f.Note = ax.note() + " " + f.Note
	}
	lanes := laneColors(sc)
	for _, k := range markOrder {
		if present[k] {
			e := LegendEntry{Label: string(k), Role: RoleMarks, Mark: k}
			if k == MarkAdmitted || k == MarkAdmittedRetry {
				e.Colors = lanes
				if len(lanes) > 1 {
					e.Label += " (lane colour)"
				}
			} else {
				e.Colors = []color.Color{black}
			}
			f.Legend = append(f.Legend, e)
		}
	}
	bounds.legend(f)
	return f, nil
}

// roundTo is the power of ten a tenth of span rounds the zoomed axis to (at least 1µs).
func roundTo(span time.Duration) time.Duration {
	q := time.Microsecond
	for q*100 <= span {
		q *= 10
	}
	return q
}

// shortDur is d with at most three significant digits: "0.23ms", "987ms", "1.5s".
func shortDur(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatFloat(float64(d)/1e6, 'g', 3, 64) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'g', 4, 64) + "s"
}

// --- 2. rate ---

// rateBins is how many display bins the rate charts aim for at most.
const rateBins = 150

// Rate shows offered, admitted and refused requests per second in each bin, one panel per
// lane on shared axes, with the lane's configured limit (its stages' least nominal rate) as a
// dotted reference line. Refused attempts are drawn downward, below zero, so that they never
// hide under the admitted line when the two are equal (a sliding window admitting half of a
// burst). Engine bins are grouped (×1, 2, 5, 10, …) to at most 150 over the axis, so that a
// rate is a count over a span long enough to mean something; the bin width is in the subtitle.
func Rate(sc *engine.Scenario, res *engine.Results) (*Figure, error) {
	return RateView(sc, res, View{})
}

// RateView is the rate chart of the stretch v of the run, its bins grouped for v.
func RateView(sc *engine.Scenario, res *engine.Results, v View) (*Figure, error) {
	if len(res.Lanes) == 0 {
		return nil, fmt.Errorf("rate: %w: no lanes", ErrNotApplicable)
	}
	ax := newAxis(res, v)
	g := niceGroup(len(ax.bins(res.Lanes[0].Bins, res.BinWidth)), rateBins)
	per := ax.per
	retries, refusals := false, false
	for _, l := range res.Lanes {
		retries = retries || l.Totals.Retried > 0
		refusals = refusals || l.Totals.RefusedAttempts > 0
	}
	f := &Figure{
		Name:     "rate",
		Title:    res.Scenario + ": requests per second, offered, admitted and refused",
		Subtitle: fmt.Sprintf("%s · bins of %s", runText(sc, res), fmtDur(time.Duration(g)*res.BinWidth)),
		XLabel:   ax.label(),
		Note:     ax.note(),
		ShareY:   true,
		TimeAxis: true,
		TimeUnit: per,
	}
	limits := false
	for i, l := range res.Lanes {
		spans := group(ax.bins(l.Bins, res.BinWidth), res.BinWidth, res.Horizon, g)
		c := LaneColor(sc.Lanes[i])
		pn := ax.panel(laneTitle(sc, res, i))
		pn.TitleColor, pn.YLabel, pn.AbsYTicks = c, "req/s", refusals
		pn.Series = append(pn.Series, stepSeries("offered", RoleOffered, nil, spans, per,
			func(s span) float64 { return perSecond(s.offered, s.dur) }))
		if lim, ok := limitSeries(sc.Lanes[i], pn.XMin, pn.XMax); ok {
			pn.Series = append(pn.Series, lim)
			limits = true
		}
		if retries {
			pn.Series = append(pn.Series, stepSeries("attempts", RoleAttempts, nil, spans, per,
				func(s span) float64 { return perSecond(s.attempts, s.dur) }))
		}
		pn.Series = append(pn.Series,
			stepSeries("admitted", RoleAdmitted, c, spans, per, func(s span) float64 { return perSecond(s.admitted, s.dur) }))
		if refusals {
			pn.Series = append(pn.Series,
				stepSeries("refused attempts (downward)", RoleRejected, nil, spans, per, func(s span) float64 { return 0 - perSecond(s.rejected, s.dur) }))
		}
		f.Panels = append(f.Panels, pn)
	}
	f.PanelHeight = panelHeight(len(f.Panels))
	f.Legend = []LegendEntry{{Label: "offered", Role: RoleOffered}}
	if retries {
		f.Legend = append(f.Legend, LegendEntry{Label: "attempts (first tries and retries)", Role: RoleAttempts})
	}
	f.Legend = append(f.Legend, LegendEntry{Label: "admitted (lane colour)", Role: RoleAdmitted, Colors: laneColors(sc)})
	if refusals {
		f.Legend = append(f.Legend, LegendEntry{Label: "refused attempts, drawn below 0", Role: RoleRejected})
	}
	if limits {
		f.Legend = append(f.Legend, LegendEntry{Label: "configured limit (nominal rate)", Role: RoleNominal})
	}
	return f, nil
}

// limitSeries is the lane's configured limit in permits per second — the least nominal rate
// of its timed stages (token-bucket rate=100/1s: 100/s; fixed-window limit=100,window=1s:
// 100/s) — as a horizontal line; false for a lane with no timed stage (a concurrency limit).
func limitSeries(lane engine.LaneSpec, xmin, xmax float64) (Series, bool) {
	best, ok := math.Inf(1), false
	for _, s := range lane.Stack {
		if rate, timed := s.NominalRate(); timed && rate.Window > 0 {
			best, ok = min(best, float64(rate.Permits)/rate.Window.Seconds()), true
		}
	}
	if !ok {
		return Series{}, false
	}
	return Series{Label: fmt.Sprintf("limit %s/s", g(best)), Role: RoleNominal, X: []float64{xmin, xmax}, Y: []float64{best, best}}, true
}

func panelHeight(n int) int {
	switch {
	case n <= 1:
		return 380
	case n <= 3:
		return 190
	}
	return 150
}

// --- 3. state ---

// stateBins is how many points a full-width state line has at most before it is drawn as a
// band; a row of n panels allows stateBins/n.
const stateBins = 150

// State shows each lane's limiter state over time, one row per lane and one panel per
// quantity, each on its own axis: every stage's available permits at the end of each bin (in
// the stage kind's colour), the most requests in flight at the downstream during each bin,
// and the longest client queue during each bin. In-flight and queue panels share their axis
// down the column, so lanes compare; permits do not (a window of 100 and a bucket of 3).
//
// A run of more than 150 bins on the axis is grouped to at most 150 spans: each quantity is
// then drawn as the range of its per-bin values in each span (a translucent band) with their
// mean as a line. That is the picture a fixed window's sawtooth really makes at this scale —
// drawn per bin, a 1s sawtooth in 120ms bins is a hatch of vertical strokes — and the legend
// and subtitle say so.
func State(sc *engine.Scenario, res *engine.Results) (*Figure, error) {
	return StateView(sc, res, View{})
}

// StateView is the state chart of the stretch v of the run.
func StateView(sc *engine.Scenario, res *engine.Results, v View) (*Figure, error) {
	ax := newAxis(res, v)
	per := ax.per
	inFlight := sc.Downstream != nil
	queue := sc.Client.Policy == engine.PolicyQueue
	for _, l := range sc.Lanes {
		for _, s := range l.Stack {
			_, timed := s.NominalRate()
			inFlight = inFlight || !timed
		}
		queue = queue || (l.Client != nil && l.Client.Policy == engine.PolicyQueue)
	}
	nbins := 0
	if len(res.Lanes) > 0 {
		nbins = len(ax.bins(res.Lanes[0].Bins, res.BinWidth))
	}
	cols := 1
	if inFlight {
		cols++
	}
	if queue {
		cols++
	}
	// Narrower panels, fewer spans: about one per 4 pixels of a panel.
	g := niceGroup(nbins, stateBins/cols)
	banded := g > 1
	f := &Figure{
		Name:     "state",
		Title:    res.Scenario + ": limiter state over time",
		Subtitle: fmt.Sprintf("%s · sampled per %s bin", runText(sc, res), fmtDur(res.BinWidth)),
		XLabel:   ax.label(),
		Note:     ax.note(),
		Cols:     cols,
		TimeAxis: true,
		TimeUnit: per,
	}
	spanText := fmtDur(time.Duration(g) * res.BinWidth)
	if banded {
		f.Subtitle += fmt.Sprintf(", in %s spans", spanText)
	}
	kinds := map[limiters.Kind]bool{}
	var kindOrder []limiters.Kind
	for i, l := range res.Lanes {
		bins := ax.bins(l.Bins, res.BinWidth)
		lane := ax.panel(laneTitle(sc, res, i))
		lane.TitleColor, lane.YLabel, lane.IntY, lane.TitleSpan = LaneColor(sc.Lanes[i]), "permits", true, cols
		for k, spec := range stackOf(sc.Lanes[i], l) {
			label := fmt.Sprintf("available permits: stage %d (%s)", k+1, spec.Kind())
			c := KindColor(spec.Kind())
			sample := func(b engine.Bin) (float64, bool) {
				if k < len(b.Available) {
					return float64(b.Available[k]), true
				}
				return 0, false
			}
			if banded {
				lane.Series = append(lane.Series, bandSeries(label, RoleAvailable, c, bins, res.BinWidth, res.Horizon, g, per, sample)...)
			} else {
				s := Series{Label: label, Role: RoleAvailable, Color: c, Step: true}
				if len(bins) > 0 && bins[0].Start == 0 {
					s.X = append(s.X, 0)
					s.Y = append(s.Y, float64(spec.InitialPermits()))
				}
				for _, b := range bins {
					if v, ok := sample(b); ok {
						s.X = append(s.X, toUnit(min(b.Start+res.BinWidth, res.Horizon), per))
						s.Y = append(s.Y, v)
					}
				}
				lane.Series = append(lane.Series, s)
			}
			if !kinds[spec.Kind()] {
				kinds[spec.Kind()] = true
				kindOrder = append(kindOrder, spec.Kind())
			}
		}
		f.Panels = append(f.Panels, lane)
		perBin := func(label, ylabel, yGroup string, role Role, value func(engine.Bin) int) {
			pn := ax.panel("")
			pn.YLabel, pn.IntY, pn.YGroup = ylabel, true, yGroup
			sample := func(b engine.Bin) (float64, bool) { return float64(value(b)), true }
			if banded {
				pn.Series = bandSeries(label, role, darkGrey, bins, res.BinWidth, res.Horizon, g, per, sample)
			} else {
				spans := group(bins, res.BinWidth, res.Horizon, 1)
				pn.Series = []Series{stepSeries(label, role, nil, spans, per, func(s span) float64 {
					if role == RoleQueue {
						return float64(s.maxQueue)
					}
					return float64(s.maxInFlight)
				})}
			}
			f.Panels = append(f.Panels, pn)
		}
		if inFlight {
			perBin("most in flight", "in flight", "in flight", RoleInFlight, func(b engine.Bin) int { return b.MaxInFlight })
		}
		if queue {
			perBin("longest queue", "queue", "queue", RoleQueue, func(b engine.Bin) int { return b.MaxQueue })
		}
	}
	f.PanelHeight = panelHeight(len(res.Lanes))
	if cols > 1 {
		f.PanelHeight = min(f.PanelHeight, 150)
	}
	for _, k := range kindOrder {
		f.Legend = append(f.Legend, LegendEntry{Label: "available permits: " + string(k), Role: RoleAvailable, Colors: []color.Color{KindColor(k)}, Band: banded})
	}
	if inFlight {
		f.Legend = append(f.Legend, LegendEntry{Label: "in flight (most per bin)", Role: RoleInFlight, Band: banded})
	}
	if queue {
		f.Legend = append(f.Legend, LegendEntry{Label: "client queue (longest per bin)", Role: RoleQueue, Band: banded})
	}
	if banded {
		f.Legend = append(f.Legend, LegendEntry{Label: fmt.Sprintf("band: lowest to highest per-bin value in each %s; line: their mean", spanText),
			Role: RoleBand, Band: true, Colors: []color.Color{midGrey}})
	}
	return f, nil
}

// bandSeries groups bins by g and makes, for each span, the range of value over its bins (a
// band series) and their mean (a step line), both in colour c. A span starts at its first
// bin's start; value reads a bin's sample (false: none). Cost: O(len(bins)).
func bandSeries(label string, role Role, c color.Color, bins []engine.Bin, width, horizon time.Duration, g int, per time.Duration,
	value func(engine.Bin) (float64, bool)) []Series {
	rng := Series{Label: label + ": range", Role: RoleBand, Color: c, Step: true}
	mean := Series{Label: label + ": mean", Role: role, Color: c, Step: true}
	if role == RoleInFlight || role == RoleQueue {
		mean.Color = nil
	}
	for i := 0; i < len(bins); i += g {
		lo, hi, sum, n := math.Inf(1), math.Inf(-1), 0.0, 0
		for _, b := range bins[i:min(i+g, len(bins))] {
			if v, ok := value(b); ok {
				lo, hi, sum, n = min(lo, v), max(hi, v), sum+v, n+1
			}
		}
		if n == 0 {
			continue
		}
		x := toUnit(bins[i].Start, per)
		rng.X, rng.Lo, rng.Y = append(rng.X, x), append(rng.Lo, lo), append(rng.Y, hi)
		mean.X, mean.Y = append(mean.X, x), append(mean.Y, sum/float64(n))
	}
	if n := len(rng.X); n > 0 { // the last span holds to its end
		end := toUnit(min(bins[len(bins)-1].Start+width, horizon), per)
		rng.X, rng.Lo, rng.Y = append(rng.X, end), append(rng.Lo, rng.Lo[n-1]), append(rng.Y, rng.Y[n-1])
		mean.X, mean.Y = append(mean.X, end), append(mean.Y, mean.Y[n-1])
	}
	return []Series{rng, mean}
}

// stackOf is the lane's specs (one per stage).
func stackOf(spec engine.LaneSpec, r engine.LaneResult) []limiters.Spec {
	if len(r.Bins) > 0 && len(r.Bins[0].Available) != len(spec.Stack) {
		return spec.Stack[:min(len(spec.Stack), len(r.Bins[0].Available))]
	}
	return spec.Stack
}

// --- 4. guarantee ---

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

// Guarantee shows, per lane, the most permits admitted in a rolling window of length L
// ending in each bin, against the documented worst-case bound for L (limiters.AdmissionBound)
// and the nominal rate × L. From a trace the rolling count is exact; without one it is summed
// from whole bins (an approximation to within one bin, said in the note). Each panel's title
// gives the exact maximum from the engine's streaming meter.
func Guarantee(sc *engine.Scenario, res *engine.Results) (*Figure, error) {
	return GuaranteeWindowView(sc, res, 0, View{})
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

// GuaranteeWindow is the guarantee chart for a rolling window of length L.
func GuaranteeWindow(sc *engine.Scenario, res *engine.Results, L time.Duration) (*Figure, error) {
	if L <= 0 {
		return nil, fmt.Errorf("guarantee: the window must be positive, got %v", L)
	}
	return GuaranteeWindowView(sc, res, L, View{})
}

// GuaranteeWindowView is the guarantee chart for a rolling window of length L (0: the
// default, see Guarantee) over the stretch v of the run. Thin lines in a lane's kind colour
// mark its window or slot boundaries, where the most admitted in a window can jump.
func GuaranteeWindowView(sc *engine.Scenario, res *engine.Results, L time.Duration, v View) (*Figure, error) {
	if L < 0 {
		return nil, fmt.Errorf("guarantee: the window must be positive, got %v", L)
	}
	if L == 0 {
		var err error
		if L, err = defaultWindow(sc, res); err != nil {
			return nil, err
		}
	}
	ax := newAxis(res, v)
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
			for _, spec := range sc.Lanes[i].Stack {
				if b, ok := limiters.AdmissionBound(spec, L); ok && (bound < 0 || b < bound) {
					bound = b
				}
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

// --- 5. warm-up ---

// warmUpLane is the first lane whose first stage is a warm-up bucket, and its spec.
func warmUpLane(sc *engine.Scenario) (int, limiters.WarmUpSpec) {
	for i, l := range sc.Lanes {
		if len(l.Stack) > 0 {
			if spec, ok := l.Stack[0].(limiters.WarmUpSpec); ok {
				return i, spec
			}
		}
	}
	return -1, limiters.WarmUpSpec{}
}

// WarmUp plots the warm-up lane's admitted rate against the limiter's age (the run starts
// with the limiter), with the documented curve rate·T/I(a) and, for comparison, the token
// bucket lane of the same rate (or, without one, the token bucket's flat rate).
func WarmUp(sc *engine.Scenario, res *engine.Results) (*Figure, error) {
	return WarmUpView(sc, res, View{})
}

// WarmUpView is the warm-up chart of the stretch v of the run (the zero View: its first
// twice the warm-up period).
func WarmUpView(sc *engine.Scenario, res *engine.Results, v View) (*Figure, error) {
	wi, spec := warmUpLane(sc)
	if wi < 0 {
		return nil, fmt.Errorf("warmup: %w: no warm-up lane", ErrNotApplicable)
	}
	wl := res.Lanes[wi]
	// The chart is about the warm-up: it shows the first 2P of a longer run.
	start, end := time.Duration(0), res.Horizon
	first, nb := 0, len(wl.Bins)
	if !v.Whole() {
		ax := newAxis(res, v)
		start, end = ax.lo, ax.hi
		first = min(int(start/res.BinWidth), nb)
		nb = min(int((end+res.BinWidth-1)/res.BinWidth), nb)
	} else if 2*spec.WarmUp < end { // whole bins only, so that the last rate is over a whole bin
		nb = min(int((2*spec.WarmUp+res.BinWidth-1)/res.BinWidth), nb)
		end = min(time.Duration(nb)*res.BinWidth, res.Horizon)
	}
	g := niceGroup(nb-first, 100)
	spans := group(wl.Bins[first:nb], res.BinWidth, res.Horizon, g)
	per, unit := timeUnit(end - start)
	rate := float64(spec.Rate.Permits) / spec.Rate.Window.Seconds()
	pn := &Panel{XMin: toUnit(start, per), XMax: toUnit(end, per), YLabel: "req/s"}
	pn.Series = append(pn.Series,
		stepSeries("offered", RoleOffered, nil, spans, per, func(s span) float64 { return perSecond(s.offered, s.dur) }))
	curve := Series{Label: "documented curve", Role: RoleCurve}
	const samples = 200
	for k := 0; k <= samples; k++ {
		t := start + (end-start)*time.Duration(k)/samples
		curve.X = append(curve.X, toUnit(t, per))
		curve.Y = append(curve.Y, spec.RateAt(t))
	}
	warmAdmitted := func(l engine.LaneResult) int64 {
		var n int64
		for _, b := range l.Bins {
			if b.Start+res.BinWidth <= spec.WarmUp {
				n += b.Admitted
			}
		}
		return n
	}
	tb := -1
	for i, l := range sc.Lanes {
		if len(l.Stack) == 1 {
			if b, ok := l.Stack[0].(limiters.TokenBucketSpec); ok && b.Rate == spec.Rate {
				tb = i
				break
			}
		}
	}
	legend := []LegendEntry{{Label: "offered", Role: RoleOffered}}
	if tb >= 0 {
		tspans := group(res.Lanes[tb].Bins[first:nb], res.BinWidth, res.Horizon, g)
		pn.Series = append(pn.Series, stepSeries("token bucket admitted", RoleAdmitted, KindColor(limiters.KindTokenBucket), tspans, per,
			func(s span) float64 { return perSecond(s.admitted, s.dur) }))
		legend = append(legend, LegendEntry{Label: "token bucket, admitted", Role: RoleAdmitted, Colors: []color.Color{KindColor(limiters.KindTokenBucket)}})
	} else {
		pn.Series = append(pn.Series, Series{Label: "token bucket rate", Role: RoleNominal,
			X: []float64{pn.XMin, pn.XMax}, Y: []float64{rate, rate}})
		legend = append(legend, LegendEntry{Label: "a token bucket's rate", Role: RoleNominal})
	}
	pn.Series = append(pn.Series,
		stepSeries("warm-up admitted", RoleAdmitted, KindColor(limiters.KindWarmUpTokenBucket), spans, per,
			func(s span) float64 { return perSecond(s.admitted, s.dur) }),
		curve,
		Series{Label: "end of warm-up", Role: RoleMarker, X: []float64{toUnit(spec.WarmUp, per)}, Y: []float64{0}})
	legend = append(legend,
		LegendEntry{Label: "warm-up bucket, admitted", Role: RoleAdmitted, Colors: []color.Color{KindColor(limiters.KindWarmUpTokenBucket)}},
		LegendEntry{Label: "documented: rate·T/I(a), I(a) = T(3 − 2a/P)", Role: RoleCurve},
		LegendEntry{Label: fmt.Sprintf("P = %s", fmtDur(spec.WarmUp)), Role: RoleMarker})
	f := &Figure{
		Name:  "warmup",
		Title: fmt.Sprintf("%s: warm-up bucket's admitted rate vs its age", res.Scenario),
		Subtitle: fmt.Sprintf("%s · %s · bins of %s", runText(sc, res), sc.Lanes[wi].Label(),
			fmtDur(time.Duration(g)*res.BinWidth)),
		XLabel:      fmt.Sprintf("limiter age (%s)", unit),
		Panels:      []*Panel{pn},
		Legend:      legend,
		PanelHeight: 380,
		TimeAxis:    true,
		TimeUnit:    per,
	}
	if !v.Whole() {
		f.Subtitle += fmt.Sprintf(" · shown: %s to %s", fmtDur(start), fmtDur(end))
	} else if end < res.Horizon {
		f.Subtitle += fmt.Sprintf(" · its first %s (twice the warm-up period)", fmtDur(2*spec.WarmUp))
	}
	if spec.WarmUp <= res.Horizon {
		f.Note = fmt.Sprintf("Admitted during the %s warm-up: %d by the warm-up bucket", fmtDur(spec.WarmUp), warmAdmitted(wl))
		if tb >= 0 {
			f.Note += fmt.Sprintf(", %d by the token bucket", warmAdmitted(res.Lanes[tb]))
		}
		f.Note += fmt.Sprintf("; under saturating demand the curve predicts (ln 3 / 2)·rate·P ≈ %.0f plus the cold burst of %d.",
			math.Log(3)/2*rate*spec.WarmUp.Seconds(), spec.InitialPermits())
	}
	return f, nil
}

// --- 6. downstream ---

// Downstream shows, per lane, the requests in flight at the downstream against its pool
// size (left) and the admitted requests the pool refused, per second (right; only when the
// pool is limited). Dotted vertical lines mark where the service time changes.
func Downstream(sc *engine.Scenario, res *engine.Results) (*Figure, error) {
	return DownstreamView(sc, res, View{})
}

// DownstreamView is the downstream chart of the stretch v of the run.
func DownstreamView(sc *engine.Scenario, res *engine.Results, v View) (*Figure, error) {
	ds := sc.Downstream
	if ds == nil {
		return nil, fmt.Errorf("downstream: %w: the scenario has no downstream", ErrNotApplicable)
	}
	ax := newAxis(res, v)
	per := ax.per
	g := niceGroup(len(ax.bins(res.Lanes[0].Bins, res.BinWidth)), rateBins)
	var phases []float64
	var phaseText []string
	for i, p := range ds.Phases {
		if i > 0 && p.From >= ax.lo && p.From <= ax.hi {
			phases = append(phases, toUnit(p.From, per))
		}
		phaseText = append(phaseText, distText(p.Service)+untilText(ds.Phases, i))
	}
	poolText := "no pool limit"
	if ds.Pool > 0 {
		poolText = fmt.Sprintf("pool of %d", ds.Pool)
	}
	f := &Figure{
		Name:     "downstream",
		Title:    res.Scenario + ": requests in flight at the downstream, and what its pool refused",
		Subtitle: fmt.Sprintf("%s · %s · service time %s", runText(sc, res), poolText, strings.Join(phaseText, ", then ")),
		XLabel:   ax.label(),
		Note:     ax.note(),
		Cols:     2,
		ShareY:   true,
		TimeAxis: true,
		TimeUnit: per,
	}
	if ds.Pool == 0 { // nothing can be refused: in flight alone
		f.Cols = 1
		f.Title = res.Scenario + ": requests in flight at the downstream"
	}
	for i, l := range res.Lanes {
		c := LaneColor(sc.Lanes[i])
		left := ax.panel(laneTitle(sc, res, i))
		left.TitleColor, left.YLabel, left.IntY = c, "in flight", true
		if ds.Pool > 0 {
			left.Series = append(left.Series, Series{Label: "pool", Role: RoleBound,
				X: []float64{left.XMin, left.XMax}, Y: []float64{float64(ds.Pool), float64(ds.Pool)}})
		}
		fspans := group(ax.bins(l.Bins, res.BinWidth), res.BinWidth, res.Horizon, g)
		left.Series = append(left.Series, stepSeries("in flight", RoleLaneInFlow, c, fspans, per,
			func(s span) float64 { return float64(s.maxInFlight) }))
		right := ax.panel(fmt.Sprintf("refused by the pool: %d", l.Totals.Failed))
		right.YLabel = "req/s"
		right.Series = append(right.Series, stepSeries("refused by the pool", RoleFailed, nil, fspans, per,
			func(s span) float64 { return perSecond(s.fail, s.dur) }))
		if len(phases) > 0 {
			m := Series{Label: "service time changes", Role: RoleMarker, X: phases, Y: make([]float64, len(phases))}
			left.Series = append(left.Series, m)
			right.Series = append(right.Series, m)
		}
		f.Panels = append(f.Panels, left)
		if ds.Pool > 0 {
			f.Panels = append(f.Panels, right)
		}
	}
	f.PanelHeight = panelHeight(len(res.Lanes))
	f.Legend = []LegendEntry{{Label: fmt.Sprintf("in flight, most per %s bin (lane colour)", fmtDur(time.Duration(g)*res.BinWidth)), Role: RoleLaneInFlow, Colors: laneColors(sc)}}
	if ds.Pool > 0 {
		f.Legend = append(f.Legend, LegendEntry{Label: "pool size", Role: RoleBound})
	}
	if ds.Pool > 0 {
		f.Legend = append(f.Legend, LegendEntry{Label: fmt.Sprintf("refused by the pool (per %s bin)", fmtDur(time.Duration(g)*res.BinWidth)), Role: RoleFailed})
	}
	if len(phases) > 0 {
		f.Legend = append(f.Legend, LegendEntry{Label: "service time changes", Role: RoleMarker})
	}
	return f, nil
}

func distText(d engine.Distribution) string {
	switch d.Kind {
	case engine.DistUniform:
		return fmt.Sprintf("uniform %s–%s", fmtDur(d.Min), fmtDur(d.Max))
	case engine.DistExponential:
		return fmt.Sprintf("exponential, mean %s", fmtDur(d.Mean))
	case engine.DistLogNormal:
		return fmt.Sprintf("lognormal, median %s", fmtDur(d.Mean))
	}
	return fmtDur(d.Mean)
}

func untilText(ps []engine.Phase, i int) string {
	if i+1 < len(ps) {
		return " until " + fmtDur(ps[i+1].From)
	}
	return ""
}
