package lessons

import (
	"context"
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/gate"
)

// Goal is a target the learner reaches by choosing one lane's limiter: the step's scenario is
// run with lane Lane's stack replaced by the learner's spec (its name kept, so the checks
// find it), and every check (the --assert language, package gate) must hold.
type Goal struct {
	Text     string       // the goal in words: "keep p99 under 200ms while admitting at least 95%"
	Lane     string       // the lane the learner sets: a named lane of the step's scenario
	Start    string       // the spec the learner starts from, which must not meet the goal
	Solution string       // a spec known to meet it (shown with --answers; checked on load)
	Checks   []gate.Check // all must hold
}

// CheckResult is one check's verdict on the learner's lane (or the lanes it selects).
type CheckResult struct {
	Check string // as written
	Line  string // "yours.p99 = 12ms (≤ 200ms) ✓", one per selected lane, joined with "; "
	Held  bool
}

// Verdict is the outcome of a try: Met when every check held.
type Verdict struct {
	Spec   string
	Met    bool
	Checks []CheckResult
}

// String is the verdict as a few lines: each check's value against its bound.
func (v *Verdict) String() string {
	var b strings.Builder
	for _, c := range v.Checks {
		mark := "✓"
		if !c.Held {
			mark = "✗"
		}
		fmt.Fprintf(&b, "%s %s: %s\n", mark, c.Check, c.Line)
	}
	if v.Met {
		b.WriteString("goal met with " + v.Spec + "\n")
	} else {
		b.WriteString("not yet: " + v.Spec + " misses the goal\n")
	}
	return b.String()
}

// Try runs sc with the goal's lane set to spec (a stack of specs joined with +) and checks
// the goal. A spec that does not parse, or that the scenario refuses (a shaping lane's
// stage that cannot reserve), is an error saying so.
func (g *Goal) Try(ctx context.Context, sc *engine.Scenario, spec string) (*Verdict, error) {
	spec = strings.TrimSpace(spec)
	stack, err := engine.ParseStack(spec)
	if err != nil {
		return nil, err
	}
	sc = cloneScenario(sc)
	sc.Trace = false
	i := laneIndex(sc, g.Lane)
	if i < 0 {
		return nil, fmt.Errorf("no lane %s in %s", g.Lane, sc.Name)
	}
	sc.Lanes[i].Stack = stack
	sc.Lanes[i].Build = nil
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	res, err := engine.Run(ctx, sc, nil)
	if err != nil {
		return nil, err
	}
	v := &Verdict{Spec: spec, Met: true}
	for _, c := range g.Checks {
		outcomes, err := c.Measure(sc, res)
		if err != nil {
			return nil, err
		}
		r := CheckResult{Check: c.Text, Held: true}
		var parts []string
		for _, o := range outcomes {
			part := fmt.Sprintf("%s has %s %s", o.Name, c.Metric.Name, c.Metric.Format(o.Value))
			parts = append(parts, part)
			r.Held = r.Held && o.Held
		}
		r.Line = strings.Join(parts, "; ")
		v.Met = v.Met && r.Held
		v.Checks = append(v.Checks, r)
	}
	return v, nil
}
