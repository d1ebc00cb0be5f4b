package main

import (
	"cmp"
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/sweep"
)

// budgetFlags are --max-events and --max-memory: how much work and memory a run may take,
// checked against the scenario's estimate before the run starts (engine.Estimate). The
// defaults, engine.DefaultBudget, refuse what would run for hours or fill the machine; 0 is
// no limit.
type budgetFlags struct {
	events, memory string
}

func (b *budgetFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.events, "max-events", engine.SI(engine.DefaultBudget.MaxEvents),
		"the most simulation events a run may take, a `COUNT` such as 5e10 or 50G (k, M, G, T: 10^3…10^12); 0 for no limit")
	fs.StringVar(&b.memory, "max-memory", strings.ReplaceAll(engine.Bytes(engine.DefaultBudget.MaxMemory), " ", ""),
		"the most memory a run may keep, a `SIZE` such as 512MiB or 8GiB (KiB, MiB, GiB, TiB); 0 for no limit")
}

// apply reads the flags into e's budget.
func (b *budgetFlags) apply(e *env) error {
	events, err := parseCount(b.events)
	if err != nil {
		return usageErrorf("--max-events %s: %v", b.events, err)
	}
	memory, err := parseSize(b.memory)
	if err != nil {
		return usageErrorf("--max-memory %s: %v", b.memory, err)
	}
	e.budget = &engine.Budget{MaxEvents: events, MaxMemory: memory}
	return nil
}

// checkBudget refuses sc when its estimate is over e's budget, and announces a run long
// enough to wait for (over 10s at DefaultEventCost) on standard error: its estimate, before
// the bar.
func checkBudget(e *env, sc *engine.Scenario) error { return checkBudgetOf(e, sc, 1) }

// checkBudgetJSON is checkBudget for a run printed as JSON: its trace's text counts too, four
// times over, as writeJSON holds it: the encoder's buffer, its indented copy, and the larger
// arrays each grew through (200,000 records of a 10-slot sliding window: 320 MB of JSON, a
// peak of 1.78 to 2.08 GB resident, measured, against an estimate of 1.3 GiB: within 1.6×).
func checkBudgetJSON(e *env, sc *engine.Scenario) error {
	budget := e.budgetOrDefault()
	est := sc.Estimate()
	if est.TraceJSON > 0 {
		text := min(est.TraceJSON, math.MaxInt64/4) * 4
		est.Memory = min(est.Memory, math.MaxInt64-text) + text
		est.Parts = append(est.Parts, engine.MemoryPart{What: "the trace as JSON", Bytes: text})
		slices.SortStableFunc(est.Parts, func(a, b engine.MemoryPart) int { return cmp.Compare(b.Bytes, a.Bytes) })
	}
	return budget.Check(sc, est) // the run announces itself (checkBudget) when it starts
}

// budgetOrDefault is e's budget (--max-events, --max-memory), engine.DefaultBudget when
// none was given.
func (e *env) budgetOrDefault() engine.Budget {
	if e.budget != nil {
		return *e.budget
	}
	return engine.DefaultBudget
}

// checkBudgetOf is checkBudget for runs runs of sc (replications: each does the work and
// keeps its results).
func checkBudgetOf(e *env, sc *engine.Scenario, runs int) error {
	budget := e.budgetOrDefault()
	est := sc.Estimate().Times(runs)
	if err := budget.Check(sc, est); err != nil {
		return err
	}
	// Said on standard error whether or not it is a terminal: a long run in a script or a CI
	// log is announced too (it ran silently to the end before).
	if est.Runtime > 10*time.Second {
		fmt.Fprintf(e.stderr, "%s: about %s events and %s; about %s on one core\n", sc.Name, engine.SI(est.Events),
			engine.Bytes(est.Memory), roundedDuration(est.Runtime))
	}
	return nil
}

// checkSweepBudget refuses a sweep whose cells (this shard's, when sharded) add up to more
// events than e's budget, or whose largest cell alone needs more memory: each cell is one
// lane run alone over the scenario, and the cells run one after another on each core.
func checkSweepBudget(e *env, g *sweep.Grid, shard, shards int) error {
	budget := e.budgetOrDefault()
	cells := g.Cells
	if shards > 0 {
		cells = nil
		for _, i := range g.Shard(shard, shards) {
			cells = append(cells, g.Cells[i])
		}
	}
	// Each cell runs on its own (one lane), so the sweep's events are the sum of its cells'
	// and its memory the largest cell's: one estimate per cell, linear in the cells (an
	// estimate of one scenario holding every cell as a lane was quadratic: 1,000 × 1,000
	// cells never started).
	var total engine.Estimate
	for _, c := range cells {
		one := *g.Scenario
		one.Lanes = []engine.LaneSpec{c.Spec}
		est := one.Estimate()
		if err := (engine.Budget{MaxMemory: budget.MaxMemory}).Check(&one, est); err != nil {
			return err
		}
		total.Lanes++
		total.Requests = est.Requests
		total.Events = satAdd(total.Events, est.Events)
		total.Runtime = time.Duration(satAdd(int64(total.Runtime), int64(est.Runtime)))
		total.Memory = max(total.Memory, est.Memory)
	}
	all := *g.Scenario
	all.Name = g.Scenario.Name + " (a sweep of " + strconv.Itoa(len(cells)) + " cells)"
	return (engine.Budget{MaxEvents: budget.MaxEvents}).Check(&all, total)
}

// satAdd is a + b for non-negative counts, saturating at math.MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// parseCount reads 5e10, 50G, 1.5M, 1000000 or 0. Only 0 itself is no limit: a count that
// is not whole (0.5, 2.5, 1.0000005M) is refused rather than rounded, since 0.5 would
// round to 0 and so silently lift the limit.
func parseCount(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k', 'K':
			mult = 1e3
		case 'M':
			mult = 1e6
		case 'G':
			mult = 1e9
		case 'T':
			mult = 1e12
		}
		if mult != 1 {
			t = t[:n-1]
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || f < 0 || math.IsInf(f, 0) {
		return 0, fmt.Errorf("not a count (e.g. 5e10, 50G, or 0 for no limit)")
	}
	v := f * mult
	switch {
	case v > 0 && v < 1:
		return 0, fmt.Errorf("less than one event, which would round to 0, and 0 means no limit: give 1 or more, or 0 for no limit")
	case v >= math.MaxInt64:
		return math.MaxInt64, nil
	case v != math.Trunc(v):
		return 0, fmt.Errorf("not a whole number of events (e.g. %d or %d)", int64(v), int64(v)+1)
	}
	return int64(v), nil
}

// parseSize reads 512MiB, 8GiB, 1.5GiB, 4096 (bytes) or 0; a space before the unit is allowed.
// A fraction of a byte is dropped (1.1KiB is 1126 bytes), but a size under one byte (0.5,
// 0.0001KiB) is refused: it would round to 0, and only 0 itself is no limit.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || f < 0 || math.IsInf(f, 0) {
		return 0, fmt.Errorf("not a size (e.g. 512MiB, 8GiB, or 0 for no limit)")
	}
	v := f * mult
	switch {
	case v > 0 && v < 1:
		return 0, fmt.Errorf("less than one byte, which would round to 0, and 0 means no limit: give 1 or more (e.g. 512MiB), or 0 for no limit")
	case v >= math.MaxInt64:
		return math.MaxInt64, nil
	}
	return int64(v), nil
}
