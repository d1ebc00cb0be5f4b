package sweep

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// Metrics is what one cell measured: whole numbers, and Fairness, which the CSV writes in the
// shortest form that reads back to the same float: a metric computed from a run and from its
// CSV is the same float, bit for bit.
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
	// Keys is the distinct keys the lane's requests came from (engine.KeyResults.Distinct),
	// 0 when the run kept no per-key results (every request of one key, no stage keyed);
	// Fairness then is 0, else Jain's index of the permits each key was admitted
	// (engine.KeyResults.Fairness), from 1/Keys (one key got everything) to 1 (all alike).
	Keys     int
	Fairness float64
}

// measure reads a cell's metrics from its lane's result.
func measure(lane engine.LaneSpec, r engine.LaneResult) Metrics {
	t := r.Totals
	m := Metrics{Offered: t.Offered, Admitted: t.Admitted, Refused: t.Refused, TimedOut: t.TimedOut, GaveUp: t.GaveUp,
		Waiting: t.Waiting, Failed: t.Failed, WaitP50: r.Wait.P50, WaitP99: r.Wait.P99, Bound: -1}
	if w, ok := engine.PrimaryWindow(lane, r); ok {
		m.Window, m.MaxInWindow, m.Bound = w.Length, w.MaxAdmitted, w.Bound
	}
	if len(lane.Stack) > 0 {
		if rate, ok := lane.Stack[0].NominalRate(); ok {
			m.Nominal = rate
		}
	}
	if r.Keys != nil {
		m.Keys, m.Fairness = r.Keys.Distinct, r.Keys.Fairness
	}
	return m
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

// FairnessIndex is Jain's index over the keys; false when the cell has no per-key results.
func (m Metrics) FairnessIndex() (float64, bool) { return m.Fairness, m.Keys > 0 }

// MetricKind is how a metric's values read: the figures' colour bar and labels use it.
type MetricKind string

// The kinds of metric.
const (
	Percent MetricKind = "percent" // 0 to 100, "%"
	Ratio   MetricKind = "ratio"   // a ratio: "× the bound", "× the nominal rate"
	Count   MetricKind = "count"   // requests
	Wait    MetricKind = "wait"    // a duration, in ns
	Index   MetricKind = "index"   // Jain's fairness index, in (0, 1]
)

// Metric is one quantity a sweep charts, named as ratelab run --assert names it.
type Metric struct {
	Name    string // "refused%"
	Title   string // for a chart: "refused"
	Meaning string
	Kind    MetricKind
	// PerKey says the metric needs per-key results: a scenario whose requests all carry one
	// key and whose lanes key no stage has none to give (Grid.Check, Result.Check).
	PerKey bool
	// Value is the cell's value (a wait in ns); false when the cell has none.
	Value func(m Metrics) (float64, bool)
}

// Unit is what the colour bar says its numbers are.
func (m Metric) Unit() string {
	switch m.Kind {
	case Percent:
		return "% of offered"
	case Ratio:
		// A bare "×" says nothing on a colour bar: say what the ratio is of.
		switch m.Name {
		case "rate_overshoot":
			return "× the nominal rate"
		case "overshoot":
			return "× the bound"
		}
		return "ratio"
	case Wait:
		return "ms"
	case Index:
		return "Jain index, 1 = fair"
	}
	return "requests"
}

func always(f func(m Metrics) float64) func(Metrics) (float64, bool) {
	return func(m Metrics) (float64, bool) { return f(m), true }
}

// MetricList is every metric a sweep can chart, in the order help lists them.
var MetricList = []Metric{
	{"refused%", "refused %", "requests refused (not retried), % of offered", Percent, false, always(func(m Metrics) float64 { return m.Share(m.Refused) })},
	{"not_admitted%", "not admitted %", "requests refused, timed out or given up, % of offered", Percent, false,
		always(func(m Metrics) float64 { return m.Share(m.Refused + m.TimedOut + m.GaveUp) })},
	{"admitted%", "admitted %", "requests admitted, % of offered", Percent, false, always(func(m Metrics) float64 { return m.Share(m.Admitted) })},
	{"p50", "median wait", "median wait of admitted requests", Wait, false, always(func(m Metrics) float64 { return float64(m.WaitP50) })},
	{"p99", "99th percentile wait", "99th percentile wait of admitted requests", Wait, false, always(func(m Metrics) float64 { return float64(m.WaitP99) })},
	{"rate_overshoot", "admitted over the nominal rate", "most admitted in the first stage's window over its nominal rate × the window (1: exactly the rate; a fixed window's boundary: up to 2)", Ratio, false, Metrics.RateOvershoot},
	{"overshoot", "admitted over the bound", "most admitted in the window over the stages' bound (above 1: the bound was broken)", Ratio, false, Metrics.Overshoot},
	{"fairness", "per-key fairness", "Jain's index of the permits each key was admitted, (Σx)²/(n·Σx²) over the n keys: 1 every key alike, 1/n one key got everything", Index, true, Metrics.FairnessIndex},
	{"failed", "downstream failures", "admitted requests the downstream's pool refused", Count, false, always(func(m Metrics) float64 { return float64(m.Failed) })},
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

// Check refuses a metric the grid cannot have before any cell runs: a per-key metric over a
// scenario whose requests all carry one key and whose templates key no stage (the engine
// then keeps no per-key results). A trace's keys are only known once it is read: a trace
// source passes here, and Result.Check judges the cells.
func (g *Grid) Check(m Metric) error {
	if !m.PerKey || g.mayHaveKeys() {
		return nil
	}
	return noKeys(m, g.Scenario.Name)
}

// Check refuses a metric none of the sweep's cells has: a per-key metric when no cell kept
// per-key results.
func (r *Result) Check(m Metric) error {
	if !m.PerKey {
		return nil
	}
	for _, row := range r.Rows {
		if row.Keys > 0 {
			return nil
		}
	}
	return noKeys(m, r.Scenario)
}

func noKeys(m Metric, scenario string) error {
	return fmt.Errorf("sweep: %s: scenario %s has no keys: its requests all carry one key and no stage is keyed, so there is no %s to measure (sweep a scenario whose sources draw keys, such as noisy-neighbour)",
		m.Name, scenario, m.Title)
}

// mayHaveKeys is whether some template's requests may come from more than one key: a source
// draws keys from a population, sources or scripted arrivals name different keys, a source
// is a trace (whose rows may name keys), or a template keys a stage.
func (g *Grid) mayHaveKeys() bool {
	for _, lane := range g.Lanes {
		for _, s := range lane.Stack {
			if _, keyed := s.(limiters.KeyedSpec); keyed {
				return true
			}
		}
	}
	keys := map[string]bool{}
	for _, s := range g.Scenario.Sources {
		if s.Keys != nil || s.Kind == engine.SourceTrace {
			return true
		}
		keys[s.Key] = true
		for _, a := range s.Script {
			if a.Key != "" {
				keys[a.Key] = true
			} else {
				keys[s.Key] = true
			}
		}
	}
	return len(keys) > 1
}
