package main

import (
	"errors"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/gate"
)

// An assertion turns a run into a pass/fail gate: `--assert 'LANES.METRIC OP VALUE'`, e.g.
// 'token-bucket.refused% < 1'. The language is package gate's (a lesson's goal is written in
// it too); this file only makes its mistakes usage errors (exit 2), while a broken assertion
// is a failure (exit 1) naming the lane and its value.
type assertion = gate.Check

// assertMetric is one quantity a check compares, written here as a file of this package
// writes it (unkeyed); registerMetrics adds such metrics to the language from an init
// (adaptive_section.go).
type assertMetric struct {
	name    string
	meaning string
	kind    gate.Kind
	value   func(lane engine.LaneSpec, r engine.LaneResult) (v float64, ok bool)
}

// registerMetrics adds ms to gate's metrics, after those there are (gate.Register).
func registerMetrics(ms ...assertMetric) {
	for _, m := range ms {
		gate.Register(gate.Metric{Name: m.name, Meaning: m.meaning, Kind: m.kind, Value: m.value})
	}
}

// The kinds of metric, as gate names them.
const (
	metricCount   = gate.Count
	metricPercent = gate.Percent
	metricRatio   = gate.Ratio
	metricWait    = gate.Wait
)

// parseAssertion reads LANES.METRIC OP VALUE (gate.Parse); a mistake is a usage error.
func parseAssertion(text string) (assertion, error) {
	a, err := gate.Parse(text)
	return a, usageOf(err)
}

// checkAssertions returns nil when every assertion holds for every lane it selects, else an
// error naming each broken one, with the lane and its value (gate.Verify).
func checkAssertions(asserts []assertion, sc *engine.Scenario, res *engine.Results) error {
	return usageOf(gate.Verify(asserts, sc, res))
}

// usageOf makes a check written wrong (a *gate.Error) a usage error, and leaves other errors
// as they are.
func usageOf(err error) error {
	var ge *gate.Error
	if errors.As(err, &ge) {
		return usageErrorf("%s", ge.Error())
	}
	return err
}

// selectLanes is the lanes of sc a names (gate.Check.Select); none is a usage error.
func selectLanes(a assertion, sc *engine.Scenario) ([]int, error) {
	lanes, err := a.Select(sc)
	return lanes, usageOf(err)
}
