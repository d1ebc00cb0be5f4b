// Package gate is the metric language that turns a run into a pass/fail gate: a check
// LANES.METRIC OP VALUE holds or is broken by each lane it selects. `ratelab run --assert`
// reads it, and a lesson's goal (package lessons) is written in it:
//
//	token-bucket.refused% < 1      every lane with a token-bucket stage refuses under 1%
//	all.overshoot <= 1             no lane admits more in its window than its bound
//	cap10.p99 <= 50ms              the lane named cap10 waits at most 50ms at p99
//
// LANES is all, a lane's name (its NAME= or its spec), or a kind (every lane with a stage of
// that kind). METRIC is one of Metrics(); OP one of < <= > >= == !=. A count or ratio
// compares with a number, a percentage with a number (a trailing % is allowed), a wait with a
// duration. Verify says which selected lane broke which check, and by how much.
package gate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/internal/wording"
	"github.com/ratelab/ratelab/limiters"
)

// Check is one parsed LANES.METRIC OP VALUE.
type Check struct {
	Text     string // as written
	Selector string // LANES: all, a lane's label, or a kind
	Metric   Metric
	Op       string
	Value    float64 // a duration in ns for a wait
}

// Error is a check that cannot be read, or that selects no lane of the scenario: a mistake in
// how it is written, as opposed to a check the run broke. It reads as the command line says
// it, `--assert "all.p99 < 5": p99 is a wait: …`; a lesson file words it with its own place
// (Reason alone).
type Error struct {
	Text   string // the check as written
	Reason string
}

func (e *Error) Error() string { return "--assert " + quoteArg(e.Text) + ": " + e.Reason }

// quoteArg quotes s as the command line would need it: when it is empty or holds a space, a
// quote or a backslash.
func quoteArg(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"'\\") {
		return strconv.Quote(s)
	}
	return s
}

// ops are the comparisons, two-character operators first so that <= is not read as <.
var ops = []string{"<=", ">=", "==", "!=", "<", ">"}

// Parse reads LANES.METRIC OP VALUE. The metric is what follows the last "." before the
// operator, so a lane's spec may hold dots (token-bucket:capacity=2,rate=0.5/1s.admitted>=1).
// A mistake is an *Error saying what is wrong.
func Parse(text string) (Check, error) {
	c := Check{Text: text}
	bad := func(format string, args ...any) error {
		return &Error{Text: text, Reason: fmt.Sprintf(format, args...)}
	}
	at, opLen := -1, 0
	for _, op := range ops {
		if i := strings.Index(text, op); i >= 0 && (at < 0 || i < at) {
			at, opLen = i, len(op)
		}
	}
	if at < 0 {
		return c, bad("no comparison; write LANES.METRIC OP VALUE, e.g. 'all.refused%% < 1' (OP: < <= > >= == !=)")
	}
	left, right := strings.TrimSpace(text[:at]), strings.TrimSpace(text[at+opLen:])
	c.Op = text[at : at+opLen]
	dot := strings.LastIndex(left, ".")
	if dot <= 0 || dot == len(left)-1 {
		return c, bad("%q is not LANES.METRIC (LANES: all, a lane's name or a kind)", left)
	}
	c.Selector, left = strings.TrimSpace(left[:dot]), strings.TrimSpace(left[dot+1:])
	m, ok := Lookup(left)
	if cm, labelled, err := lookupClass(left); labelled {
		if err != nil {
			return c, bad("%v", err)
		}
		m, ok = cm, true
	}
	if !ok {
		names := Names()
		return c, bad("unknown metric %s%s; metrics: %s", left, wording.DidYouMeanTypo(left, names), strings.Join(names, ", "))
	}
	c.Metric = m
	if right == "" {
		return c, bad("no value after %s", c.Op)
	}
	switch m.Kind {
	case Wait:
		d, err := time.ParseDuration(right)
		if err != nil {
			return c, bad("%s is a wait: compare it with a duration such as 50ms, not %q", m.Name, right)
		}
		c.Value = float64(d)
	default:
		number := right
		if m.Kind == Percent {
			number = strings.TrimSuffix(number, "%")
		}
		v, err := strconv.ParseFloat(number, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return c, bad("%s compares with a number, not %q", m.Name, right)
		}
		c.Value = v
	}
	return c, nil
}

// Select is the indices of sc's lanes c names: all, a lane's label, or (when no label
// matches) every lane with a stage of that kind. None is an *Error listing what there is.
func (c Check) Select(sc *engine.Scenario) ([]int, error) {
	var picked, byKind []int
	var known []string
	for i, lane := range sc.Lanes {
		known = append(known, lane.Label())
		if c.Selector == "all" || lane.Label() == c.Selector {
			picked = append(picked, i)
		}
		for _, s := range lane.Stack {
			if string(s.Kind()) == c.Selector {
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
		return nil, &Error{Text: c.Text, Reason: fmt.Sprintf("no lane of %s is %s; LANES is all, a lane's name, or a kind of one of its stages%s",
			sc.Name, c.Selector, wording.DidYouMeanTypo(c.Selector, append([]string{"all"}, known...)))}
	}
	return picked, nil
}

// Holds compares v with the check's value.
func (c Check) Holds(v float64) bool {
	switch c.Op {
	case "<":
		return v < c.Value
	case "<=":
		return v <= c.Value
	case ">":
		return v > c.Value
	case ">=":
		return v >= c.Value
	case "==":
		return v == c.Value
	default:
		return v != c.Value
	}
}

// Outcome is one selected lane's value for a check.
type Outcome struct {
	Lane  int    // the lane's index in the scenario
	Name  string // the lane's name in the results
	Value float64
	Held  bool
}

// Measure is c's value in every lane it selects that has one (an overshoot needs a bound),
// in lane order. A check that selects no lane is an *Error; one whose selected lanes have no
// value for its metric is a plain error (the run cannot answer it: a failure, not a pass).
func (c Check) Measure(sc *engine.Scenario, res *engine.Results) ([]Outcome, error) {
	lanes, err := c.Select(sc)
	if err != nil {
		return nil, err
	}
	var out []Outcome
	for _, i := range lanes {
		v, ok := c.Metric.Value(sc.Lanes[i], res.Lanes[i])
		if !ok {
			continue
		}
		out = append(out, Outcome{Lane: i, Name: res.Lanes[i].Name, Value: v, Held: c.Holds(v)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("assert %s: no selected lane has a value for %s (%s)", c.Text, c.Metric.Name, c.Metric.Meaning)
	}
	return out, nil
}

// Verify returns nil when every check holds for every lane it selects, else an error naming
// each broken one with the lane and its value:
//
//	assertion failed: all.admitted < 150: fixed-window:limit=100,window=1s has admitted 200
//
// A check that cannot be answered is returned as Measure says, before any verdict.
func Verify(checks []Check, sc *engine.Scenario, res *engine.Results) error {
	var broken []string
	for _, c := range checks {
		outcomes, err := c.Measure(sc, res)
		if err != nil {
			return err
		}
		for _, o := range outcomes {
			if !o.Held {
				broken = append(broken, fmt.Sprintf("%s: %s has %s %s", c.Text, o.Name, c.Metric.Name, c.Metric.Format(o.Value)))
			}
		}
	}
	if len(broken) > 0 {
		return fmt.Errorf("assertion failed: %s", strings.Join(broken, "; "))
	}
	return nil
}

// Names is every metric's name, in the order they were registered.
func Names() []string {
	names := make([]string, len(registry))
	for i, m := range registry {
		names[i] = m.Name
	}
	return names
}

// Lookup finds the metric called name, case-insensitive.
func Lookup(name string) (Metric, bool) {
	i := slices.IndexFunc(registry, func(m Metric) bool { return strings.EqualFold(m.Name, name) })
	if i < 0 {
		return Metric{}, false
	}
	return registry[i], true
}
