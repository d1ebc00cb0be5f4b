package sweep

import (
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// Metrics is what one cell measured: whole numbers only, so that a metric computed from a
// run and from its CSV is the same float, bit for bit.
//
// The request counts add up as engine.Totals's do:
//
//	Offered = Admitted + Refused + TimedOut + GaveUp + Waiting
type Metrics struct {
	Offered, Admitted, Refused, TimedOut, GaveUp, Waiting int64
	// Failed is the admitted requests the downstream's pool refused.
	Failed int64
	// WaitP50 and WaitP99 are the waits of admitted requests (engine.Wait).
	WaitP50, WaitP99 time.Duration
	// Window is the meter the metrics judge by: the first stage's natural window (as ratelab
	// run's table and --assert do), 0 when the lane has none; MaxInWindow the most admitted in
	// any interval of that length, Bound the least bound of the stages for it (-1: none).
	Window      time.Duration
	MaxInWindow int64
	Bound       int64
	// Nominal is the first stage's nominal rate (limiters.Spec.NominalRate); zero when it
	// has none.
	Nominal limiters.Rate
}

// measure reads a cell's metrics from its lane's result.
func measure(lane engine.LaneSpec, r engine.LaneResult) Metrics {
	t := r.Totals
	m := Metrics{Offered: t.Offered, Admitted: t.Admitted, Refused: t.Refused, TimedOut: t.TimedOut, GaveUp: t.GaveUp,
		Waiting: t.Waiting, Failed: t.Failed, WaitP50: r.Wait.P50, WaitP99: r.Wait.P99, Bound: -1}
	if w, ok := primaryWindow(lane, r); ok {
		m.Window, m.MaxInWindow, m.Bound = w.Length, w.MaxAdmitted, w.Bound
	}
	if len(lane.Stack) > 0 {
		if rate, ok := lane.Stack[0].NominalRate(); ok {
			m.Nominal = rate
		}
	}
	return m
}

// primaryWindow is the meter of the lane's first stage's natural window, else its first:
// the window ratelab run's table shows.
func primaryWindow(lane engine.LaneSpec, r engine.LaneResult) (engine.WindowMeter, bool) {
	for _, s := range lane.Stack {
		if w := s.NaturalWindow(); w > 0 {
			for _, m := range r.Windows {
				if m.Length == w {
					return m, true
				}
			}
		}
	}
	if len(r.Windows) > 0 {
		return r.Windows[0], true
	}
	return engine.WindowMeter{}, false
}

// Share is part's share of the offered requests, in percent; 0 when none were offered.
func (m Metrics) Share(part int64) float64 {
	if m.Offered == 0 {
		return 0
	}
	return 100 * float64(part) / float64(m.Offered)
}

// RateOvershoot is MaxInWindow over what the nominal rate allows in the window,
// permits·Window/window: 1 admits exactly the rate, a fixed window's boundary up to 2. False
// without a window or a nominal rate.
func (m Metrics) RateOvershoot() (float64, bool) {
	if m.Window <= 0 || m.Nominal.Permits <= 0 || m.Nominal.Window <= 0 {
		return 0, false
	}
	nominal := float64(m.Nominal.Permits) * float64(m.Window) / float64(m.Nominal.Window)
	return float64(m.MaxInWindow) / nominal, true
}

// Overshoot is MaxInWindow over Bound: above 1 the stated bound was broken. False without a
// positive bound.
func (m Metrics) Overshoot() (float64, bool) {
	if m.Window <= 0 || m.Bound <= 0 {
		return 0, false
	}
	return float64(m.MaxInWindow) / float64(m.Bound), true
}

// MetricKind is how a metric's values read: the figures' colour bar and labels use it.
type MetricKind string

// The kinds of metric.
const (
	Percent MetricKind = "percent" // 0 to 100, "%"
	Ratio   MetricKind = "ratio"   // a plain ratio, "×"
	Count   MetricKind = "count"   // requests
	Wait    MetricKind = "wait"    // a duration, in ns
)

// Metric is one quantity a sweep charts, named as ratelab run --assert names it.
type Metric struct {
	Name    string // "refused%"
	Title   string // for a chart: "refused"
	Meaning string
	Kind    MetricKind
	// Value is the cell's value (a wait in ns); false when the cell has none.
	Value func(m Metrics) (float64, bool)
}

// Unit is what the colour bar says its numbers are.
func (m Metric) Unit() string {
	switch m.Kind {
	case Percent:
		return "% of offered"
	case Ratio:
		return "×"
	case Wait:
		return "ms"
	}
	return "requests"
}

func always(f func(m Metrics) float64) func(Metrics) (float64, bool) {
	return func(m Metrics) (float64, bool) { return f(m), true }
}

// MetricList is every metric a sweep can chart, in the order help lists them.
var MetricList = []Metric{
	{"refused%", "refused %", "requests refused (not retried), % of offered", Percent, always(func(m Metrics) float64 { return m.Share(m.Refused) })},
	{"not_admitted%", "not admitted %", "requests refused, timed out or given up, % of offered", Percent,
		always(func(m Metrics) float64 { return m.Share(m.Refused + m.TimedOut + m.GaveUp) })},
	{"admitted%", "admitted %", "requests admitted, % of offered", Percent, always(func(m Metrics) float64 { return m.Share(m.Admitted) })},
	{"p50", "median wait", "median wait of admitted requests", Wait, always(func(m Metrics) float64 { return float64(m.WaitP50) })},
	{"p99", "99th percentile wait", "99th percentile wait of admitted requests", Wait, always(func(m Metrics) float64 { return float64(m.WaitP99) })},
	{"rate_overshoot", "admitted over the nominal rate", "most admitted in the first stage's window over its nominal rate × the window (1: exactly the rate; a fixed window's boundary: up to 2)", Ratio, Metrics.RateOvershoot},
	{"overshoot", "admitted over the bound", "most admitted in the window over the stages' bound (above 1: the bound was broken)", Ratio, Metrics.Overshoot},
	{"failed", "downstream failures", "admitted requests the downstream's pool refused", Count, always(func(m Metrics) float64 { return float64(m.Failed) })},
}

// MetricNames is every metric's name.
func MetricNames() []string {
	names := make([]string, len(MetricList))
	for i, m := range MetricList {
		names[i] = m.Name
	}
	return names
}

// LookupMetric is the metric called name.
func LookupMetric(name string) (Metric, bool) {
	for _, m := range MetricList {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}
