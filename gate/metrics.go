package gate

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// Metric is one quantity of a lane's result a check can compare.
type Metric struct {
	Name    string
	Meaning string
	Kind    Kind
	// Value is the lane's quantity; ok is false when the lane has none (an overshoot without
	// a bound).
	Value func(lane engine.LaneSpec, r engine.LaneResult) (v float64, ok bool)
}

// Kind is what a metric's number is, which decides what it compares with and how it reads.
type Kind int

// The kinds of metric.
const (
	Count   Kind = iota // requests: compared with a number, written 200
	Percent             // a share of the offered requests: a number, 1 or 1%, written 14.82%
	Ratio               // a ratio: a number, written 2 or 0.9375
	Wait                // a wait in ns: a duration, written 50ms (an infinite one: never)
)

// registry is every metric, in the order the error listing them shows.
var registry = append(append([]Metric(nil), builtin...), keyMetrics...)

// Register adds metrics to the language, after those there are: a package that computes more
// of a result (cmd/ratelab's adaptive lanes) registers its metrics from an init. A name that
// is already taken panics, at start-up: two meanings for one name is a bug.
func Register(ms ...Metric) {
	for _, m := range ms {
		if _, ok := Lookup(m.Name); ok {
			panic(fmt.Sprintf("gate: metric %s registered twice", m.Name))
		}
		if m.Value == nil {
			panic(fmt.Sprintf("gate: metric %s has no Value", m.Name))
		}
		registry = append(registry, m)
	}
}

// Metrics is every metric, in the order they were registered (a copy).
func Metrics() []Metric { return append([]Metric(nil), registry...) }

// Format writes v as the metric's unit reads: 50ms, 14.82%, 2, 200.
func (m Metric) Format(v float64) string {
	switch m.Kind {
	case Wait:
		if math.IsInf(v, 1) {
			return "never" // converge: a limit that never came near the reference
		}
		return limiters.FormatDuration(time.Duration(v))
	case Percent:
		return strconv.FormatFloat(v, 'g', 4, 64) + "%"
	case Ratio:
		return strconv.FormatFloat(v, 'g', 4, 64)
	default:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
}

func count(f func(t engine.Totals) int64) func(engine.LaneSpec, engine.LaneResult) (float64, bool) {
	return func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) { return float64(f(r.Totals)), true }
}

// percent is f's share of the requests offered, in percent (0 when none were).
func percent(f func(t engine.Totals) int64) func(engine.LaneSpec, engine.LaneResult) (float64, bool) {
	return func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) {
		if r.Totals.Offered == 0 {
			return 0, true
		}
		return 100 * float64(f(r.Totals)) / float64(r.Totals.Offered), true
	}
}

func wait(f func(w engine.Wait) time.Duration) func(engine.LaneSpec, engine.LaneResult) (float64, bool) {
	return func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) { return float64(f(r.Wait)), true }
}

// loop reads a duration of the lane's Loop measures.
func loop(f func(l engine.Loop) time.Duration) func(engine.LaneSpec, engine.LaneResult) (float64, bool) {
	return func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) { return float64(f(r.Loop)), true }
}

var builtin = []Metric{
	{"offered", "requests offered", Count, count(func(t engine.Totals) int64 { return t.Offered })},
	{"admitted", "requests admitted", Count, count(func(t engine.Totals) int64 { return t.Admitted })},
	{"refused", "requests refused (not retried)", Count, count(func(t engine.Totals) int64 { return t.Refused })},
	{"timed_out", "requests timed out in the queue", Count, count(func(t engine.Totals) int64 { return t.TimedOut })},
	{"gave_up", "requests given up after retries", Count, count(func(t engine.Totals) int64 { return t.GaveUp })},
	{"waiting", "requests still waiting at the horizon", Count, count(func(t engine.Totals) int64 { return t.Waiting })},
	{"admitted%", "admitted, % of offered", Percent, percent(func(t engine.Totals) int64 { return t.Admitted })},
	{"refused%", "refused, % of offered", Percent, percent(func(t engine.Totals) int64 { return t.Refused })},
	{"timed_out%", "timed out, % of offered", Percent, percent(func(t engine.Totals) int64 { return t.TimedOut })},
	{"gave_up%", "gave up, % of offered", Percent, percent(func(t engine.Totals) int64 { return t.GaveUp })},
	{"not_admitted%", "refused, timed out or gave up, % of offered", Percent,
		percent(func(t engine.Totals) int64 { return t.Refused + t.TimedOut + t.GaveUp })},
	{"attempts", "first tries and retries", Count, count(func(t engine.Totals) int64 { return t.Attempts })},
	{"refused_attempts", "attempts refused", Count, count(func(t engine.Totals) int64 { return t.RefusedAttempts })},
	{"failed", "admitted requests the downstream's pool refused", Count, count(func(t engine.Totals) int64 { return t.Failed })},
	{"max_in_flight", "most requests at the downstream at once", Count, count(func(t engine.Totals) int64 { return int64(t.MaxInFlight) })},
	{"max_queue", "longest client queue", Count, count(func(t engine.Totals) int64 { return int64(t.MaxQueue) })},
	{"max_in_window", "most admitted in the lane's window (the table's)", Count,
		func(lane engine.LaneSpec, r engine.LaneResult) (float64, bool) {
			m, ok := engine.PrimaryWindow(lane, r)
			return float64(m.MaxAdmitted), ok
		}},
	{"overshoot", "most admitted in the lane's window over its bound (above 1: the bound was broken)", Ratio,
		func(lane engine.LaneSpec, r engine.LaneResult) (float64, bool) {
			m, ok := engine.PrimaryWindow(lane, r)
			if !ok || m.Bound <= 0 {
				return 0, false
			}
			return float64(m.MaxAdmitted) / float64(m.Bound), true
		}},
	{"rate_overshoot", "most admitted in the lane's window over its nominal rate × the window (a fixed window's boundary: up to 2)", Ratio,
		func(lane engine.LaneSpec, r engine.LaneResult) (float64, bool) {
			m, ok := engine.PrimaryWindow(lane, r)
			if !ok || len(lane.Stack) == 0 {
				return 0, false
			}
			rate, ok := lane.Stack[0].NominalRate()
			if !ok || rate.Permits <= 0 || rate.Window <= 0 {
				return 0, false
			}
			nominal := float64(rate.Permits) * float64(m.Length) / float64(rate.Window)
			return float64(m.MaxAdmitted) / nominal, true
		}},
	{"goodput", "admitted requests per second of the horizon", Ratio,
		func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) { return r.Loop.GoodputPerSec, true }},
	{"amplification", "attempts per offered request (1: nothing retried)", Ratio,
		func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) {
			return r.Loop.Amplification, r.Totals.Offered > 0
		}},
	{"herd_peak", "most retries in one 10ms bin", Count,
		func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) { return float64(r.Loop.HerdPeak), true }},
	{"herd_synchrony", "most retries in one 10ms bin over the mean per 10ms (1: spread evenly)", Ratio,
		func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) {
			return r.Loop.HerdSynchrony, r.Totals.Retried > 0
		}},
	{"success_p50", "median time to success: first attempt to admission, every refusal and backoff between", Wait,
		loop(func(l engine.Loop) time.Duration { return l.SuccessP50 })},
	{"success_p99", "99th percentile time to success", Wait, loop(func(l engine.Loop) time.Duration { return l.SuccessP99 })},
	{"latency_p50", "median end-to-end latency: arrival to answer, every client wait and the service included", Wait,
		loop(func(l engine.Loop) time.Duration { return l.LatencyP50 })},
	{"latency_p99", "99th percentile end-to-end latency", Wait, loop(func(l engine.Loop) time.Duration { return l.LatencyP99 })},
	{"p50", "median wait of admitted requests", Wait, wait(func(w engine.Wait) time.Duration { return w.P50 })},
	{"p90", "90th percentile wait", Wait, wait(func(w engine.Wait) time.Duration { return w.P90 })},
	{"p99", "99th percentile wait", Wait, wait(func(w engine.Wait) time.Duration { return w.P99 })},
	{"p999", "99.9th percentile wait", Wait, wait(func(w engine.Wait) time.Duration { return w.P999 })},
	{"max_wait", "longest wait", Wait, wait(func(w engine.Wait) time.Duration { return w.Max })},
	{"mean_wait", "mean wait", Wait, wait(func(w engine.Wait) time.Duration { return w.Mean })},
}
