package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// An assertion turns a run into a pass/fail gate: `--assert 'LANES.METRIC OP VALUE'`, e.g.
//
//	--assert 'token-bucket.refused% < 1'      every lane with a token-bucket stage refuses under 1%
//	--assert 'all.overshoot <= 1'             no lane admits more in its window than its bound
//	--assert 'cap10.p99 <= 50ms'              the lane named cap10 waits at most 50ms at p99
//
// LANES is all, a lane's name (its NAME= or its spec), or a kind (every lane with a stage of
// that kind). METRIC is one of assertMetrics; OP one of < <= > >= == !=. A count or ratio
// compares with a number, a percentage with a number (a trailing % is allowed), a wait with a
// duration. The run fails (exit 1) when any selected lane breaks any assertion, saying which
// and by how much.
type assertion struct {
	text   string
	lanes  string
	metric assertMetric
	op     string
	value  float64 // a duration in ns for a wait
}

// assertMetric is one quantity of a lane's result an assertion can compare.
type assertMetric struct {
	name    string
	meaning string
	kind    metricKind
	// value is the lane's quantity; ok is false when the lane has none (an overshoot without
	// a bound).
	value func(lane engine.LaneSpec, r engine.LaneResult) (v float64, ok bool)
}

type metricKind int

const (
	metricCount metricKind = iota
	metricPercent
	metricRatio
	metricWait
)

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

var assertMetrics = []assertMetric{
	{"offered", "requests offered", metricCount, count(func(t engine.Totals) int64 { return t.Offered })},
	{"admitted", "requests admitted", metricCount, count(func(t engine.Totals) int64 { return t.Admitted })},
	{"refused", "requests refused (not retried)", metricCount, count(func(t engine.Totals) int64 { return t.Refused })},
	{"timed_out", "requests timed out in the queue", metricCount, count(func(t engine.Totals) int64 { return t.TimedOut })},
	{"gave_up", "requests given up after retries", metricCount, count(func(t engine.Totals) int64 { return t.GaveUp })},
	{"waiting", "requests still waiting at the horizon", metricCount, count(func(t engine.Totals) int64 { return t.Waiting })},
	{"admitted%", "admitted, % of offered", metricPercent, percent(func(t engine.Totals) int64 { return t.Admitted })},
	{"refused%", "refused, % of offered", metricPercent, percent(func(t engine.Totals) int64 { return t.Refused })},
	{"timed_out%", "timed out, % of offered", metricPercent, percent(func(t engine.Totals) int64 { return t.TimedOut })},
	{"gave_up%", "gave up, % of offered", metricPercent, percent(func(t engine.Totals) int64 { return t.GaveUp })},
	{"not_admitted%", "refused, timed out or gave up, % of offered", metricPercent,
		percent(func(t engine.Totals) int64 { return t.Refused + t.TimedOut + t.GaveUp })},
	{"attempts", "first tries and retries", metricCount, count(func(t engine.Totals) int64 { return t.Attempts })},
	{"refused_attempts", "attempts refused", metricCount, count(func(t engine.Totals) int64 { return t.RefusedAttempts })},
	{"failed", "admitted requests the downstream's pool refused", metricCount, count(func(t engine.Totals) int64 { return t.Failed })},
	{"max_in_flight", "most requests at the downstream at once", metricCount, count(func(t engine.Totals) int64 { return int64(t.MaxInFlight) })},
	{"max_queue", "longest client queue", metricCount, count(func(t engine.Totals) int64 { return int64(t.MaxQueue) })},
	{"max_in_window", "most admitted in the lane's window (the table's)", metricCount,
		func(lane engine.LaneSpec, r engine.LaneResult) (float64, bool) {
			m, ok := engine.PrimaryWindow(lane, r)
			return float64(m.MaxAdmitted), ok
		}},
	{"overshoot", "most admitted in the lane's window over its bound (above 1: the bound was broken)", metricRatio,
		func(lane engine.LaneSpec, r engine.LaneResult) (float64, bool) {
			m, ok := engine.PrimaryWindow(lane, r)
			if !ok || m.Bound <= 0 {
				return 0, false
			}
			return float64(m.MaxAdmitted) / float64(m.Bound), true
		}},
	{"rate_overshoot", "most admitted in the lane's window over its nominal rate × the window (a fixed window's boundary: up to 2)", metricRatio,
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
	{"goodput", "admitted requests per second of the horizon", metricRatio,
		func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) { return r.Loop.GoodputPerSec, true }},
	{"amplification", "attempts per offered request (1: nothing retried)", metricRatio,
		func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) {
			return r.Loop.Amplification, r.Totals.Offered > 0
		}},
	{"herd_peak", "most retries in one 10ms bin", metricCount,
		func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) { return float64(r.Loop.HerdPeak), true }},
	{"herd_synchrony", "most retries in one 10ms bin over the mean per 10ms (1: spread evenly)", metricRatio,
		func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) {
			return r.Loop.HerdSynchrony, r.Totals.Retried > 0
		}},
	{"p50", "median wait of admitted requests", metricWait, wait(func(w engine.Wait) time.Duration { return w.P50 })},
	{"p90", "90th percentile wait", metricWait, wait(func(w engine.Wait) time.Duration { return w.P90 })},
	{"p99", "99th percentile wait", metricWait, wait(func(w engine.Wait) time.Duration { return w.P99 })},
	{"p999", "99.9th percentile wait", metricWait, wait(func(w engine.Wait) time.Duration { return w.P999 })},
	{"max_wait", "longest wait", metricWait, wait(func(w engine.Wait) time.Duration { return w.Max })},
	{"mean_wait", "mean wait", metricWait, wait(func(w engine.Wait) time.Duration { return w.Mean })},
}

var assertOps = []string{"<=", ">=", "==", "!=", "<", ">"} // two-character operators first

// parseAssertion reads LANES.METRIC OP VALUE. The metric is what follows the last "." before
// the operator, so a lane's spec may hold dots (rate=0.5/1s).
func parseAssertion(text string) (assertion, error) {
	a := assertion{text: text}
	bad := func(format string, args ...any) error {
		return usageErrorf("--assert %s: %s", quoteArg(text), fmt.Sprintf(format, args...))
	}
	at, opLen := -1, 0
	for _, op := range assertOps {
		if i := strings.Index(text, op); i >= 0 && (at < 0 || i < at) {
			at, opLen = i, len(op)
		}
	}
	if at < 0 {
		return a, bad("no comparison; write LANES.METRIC OP VALUE, e.g. 'all.refused%% < 1' (OP: < <= > >= == !=)")
	}
	left, right := strings.TrimSpace(text[:at]), strings.TrimSpace(text[at+opLen:])
	a.op = text[at : at+opLen]
	dot := strings.LastIndex(left, ".")
	if dot <= 0 || dot == len(left)-1 {
		return a, bad("%q is not LANES.METRIC (LANES: all, a lane's name or a kind)", left)
	}
	a.lanes, left = strings.TrimSpace(left[:dot]), strings.TrimSpace(left[dot+1:])
	i := slices.IndexFunc(assertMetrics, func(m assertMetric) bool { return strings.EqualFold(m.name, left) })
	if i < 0 {
		var names []string
		for _, m := range assertMetrics {
			names = append(names, m.name)
		}
		return a, bad("unknown metric %s%s; metrics: %s", left, didYouMean(left, names, nil), strings.Join(names, ", "))
	}
	a.metric = assertMetrics[i]
	if right == "" {
		return a, bad("no value after %s", a.op)
	}
	switch a.metric.kind {
	case metricWait:
		d, err := time.ParseDuration(right)
		if err != nil {
			return a, bad("%s is a wait: compare it with a duration such as 50ms, not %q", a.metric.name, right)
		}
		a.value = float64(d)
	default:
		number := right
		if a.metric.kind == metricPercent {
			number = strings.TrimSuffix(number, "%")
		}
		v, err := strconv.ParseFloat(number, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return a, bad("%s compares with a number, not %q", a.metric.name, right)
		}
		a.value = v
	}
	return a, nil
}

// selectLanes is the indices of the lanes a names: all, a lane's label, or a kind.
func (a assertion) selectLanes(sc *engine.Scenario) ([]int, error) {
	var picked, byKind []int
	var known []string
	for i, lane := range sc.Lanes {
		known = append(known, lane.Label())
		if a.lanes == "all" || lane.Label() == a.lanes {
			picked = append(picked, i)
		}
		for _, s := range lane.Stack {
			if string(s.Kind()) == a.lanes {
				byKind = append(byKind, i)
				break
			}
		}
	}
	if len(picked) == 0 {
		picked = byKind
	}
	if len(picked) == 0 {
		for _, k := range limiters.Kinds() {
			known = append(known, string(k.Kind))
		}
		return nil, usageErrorf("--assert %s: no lane of %s is %s; LANES is all, a lane's name, or a kind of one of its stages%s",
			quoteArg(a.text), sc.Name, a.lanes, didYouMean(a.lanes, append([]string{"all"}, known...), nil))
	}
	return picked, nil
}

// holds compares v with the assertion's value.
func (a assertion) holds(v float64) bool {
	switch a.op {
	case "<":
		return v < a.value
	case "<=":
		return v <= a.value
	case ">":
		return v > a.value
	case ">=":
		return v >= a.value
	case "==":
		return v == a.value
	default:
		return v != a.value
	}
}

// format writes v as the metric's unit reads.
func (m assertMetric) format(v float64) string {
	switch m.kind {
	case metricWait:
		if math.IsInf(v, 1) {
			return "never" // converge: a limit that never came near the reference
		}
		return limiters.FormatDuration(time.Duration(v))
	case metricPercent:
		return strconv.FormatFloat(v, 'g', 4, 64) + "%"
	case metricRatio:
		return strconv.FormatFloat(v, 'g', 4, 64)
	default:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
}

// checkAssertions returns nil when every assertion holds for every lane it selects, else an
// error naming each broken one, with the lane and its value.
func checkAssertions(asserts []assertion, sc *engine.Scenario, res *engine.Results) error {
	var broken []string
	for _, a := range asserts {
		lanes, err := a.selectLanes(sc)
		if err != nil {
			return err
		}
		measured := 0
		for _, i := range lanes {
			v, ok := a.metric.value(sc.Lanes[i], res.Lanes[i])
			if !ok {
				continue
			}
			measured++
			if !a.holds(v) {
				broken = append(broken, fmt.Sprintf("%s: %s has %s %s", a.text, res.Lanes[i].Name, a.metric.name, a.metric.format(v)))
			}
		}
		if measured == 0 {
			return fmt.Errorf("assert %s: no selected lane has a value for %s (%s)", a.text, a.metric.name, a.metric.meaning)
		}
	}
	if len(broken) > 0 {
		return fmt.Errorf("assertion failed: %s", strings.Join(broken, "; "))
	}
	return nil
}
