package sweep

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/internal/wording"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// MaxCells is the most cells one grid may have (a shard runs a part of them).
const MaxCells = 1_000_000

// Grid is every cell of a sweep, in order, before any has run.
//
// The templates are the scenario's lanes that every dimension applies to, in the scenario's
// order. A cell is one template with each dimension's field set to one of its values; cells
// are numbered template by template, then by the first dimension's value, then by the
// second's:
//
//	cell = (template·n₁ + i₁)·n₂ + i₂
//
// The replay scenario, --vary token-bucket.capacity=1..100 --vary token-bucket.rate=50/1s..200/1s
// (10 steps each): one template (its token-bucket lane), 100 cells; cell 0 is
// token-bucket:capacity=1,rate=50/1s, cell 1 capacity=1,rate=67/1s, cell 10 capacity=12,rate=50/1s,
// cell 99 capacity=100,rate=200/1s. Every cell runs alone, on the scenario's seed: each sees the
// same offered traffic, so two cells differ only by their parameters (common random numbers).
type Grid struct {
	Scenario *engine.Scenario
	Dims     []Dimension
	Lanes    []engine.LaneSpec // the templates
	Cells    []Cell
	// ID names the grid: a hash of the scenario's name, seed, horizon and bins and of every
	// cell's lane and spec. Every shard of one sweep computes the same ID, and merge refuses
	// to join rows of different ones.
	ID string
}

// Cell is one point of the grid.
type Cell struct {
	Index int
	Lane  int   // the template: an index in Grid.Lanes
	At    []int // each dimension's value: an index in its Values
	Spec  engine.LaneSpec
}

// New lays out the grid of sc's lanes over dims (at most MaxDims, each its own field). A
// dimension that applies to no lane, a lane's name that is not one, a field no stage of the
// lane has, or a value a spec refuses are *VaryError naming the dimension.
func New(sc *engine.Scenario, dims []Dimension) (*Grid, error) {
	if len(dims) == 0 {
		return nil, fmt.Errorf("sweep: nothing to vary; give a --vary TARGET.FIELD=VALUES, e.g. token-bucket.capacity=1..100")
	}
	if len(dims) > MaxDims {
		return nil, &VaryError{Text: dims[MaxDims].Text, Reason: fmt.Sprintf("a sweep varies at most %d fields (a heatmap's two axes); sweep again for each value of a third", MaxDims)}
	}
	for i, d := range dims {
		for _, e := range dims[:i] {
			if e.Target == d.Target && e.Field == d.Field {
				return nil, &VaryError{Text: d.Text, Reason: fmt.Sprintf("%s is already varied by %s", d.Name(), e.Text)}
			}
		}
	}
	if err := checkTargets(sc, dims); err != nil {
		return nil, err
	}
	g := &Grid{Scenario: sc, Dims: dims}
	var stages [][]int // per template, per dimension: the stage it sets
	for _, lane := range sc.Lanes {
		at := make([]int, len(dims))
		applies := true
		for k, d := range dims {
			stage, ok, err := stageOf(lane, d)
			if err != nil {
				return nil, err
			}
			applies = applies && ok
			at[k] = stage
		}
		if !applies {
			continue
		}
		for k := range dims {
			for j := range k {
				if at[j] == at[k] && dims[j].Field == dims[k].Field {
					return nil, &VaryError{Text: dims[k].Text, Reason: fmt.Sprintf("sets the same field of lane %s as %s", lane.Label(), dims[j].Text)}
				}
			}
		}
		if lane.Build != nil {
			return nil, &VaryError{Text: dims[0].Text, Reason: fmt.Sprintf("lane %s is built in code, not from its specs: it cannot be varied", lane.Label())}
		}
		g.Lanes = append(g.Lanes, lane)
		stages = append(stages, at)
	}
	if len(g.Lanes) == 0 {
		var what []string
		for _, d := range dims {
			what = append(what, d.Target)
		}
		return nil, fmt.Errorf("sweep: no lane of %s has a stage for every --vary (%s); lanes: %s",
			sc.Name, strings.Join(what, " and "), laneNames(sc))
	}
	total := len(g.Lanes)
	for _, d := range dims {
		total *= len(d.Values)
		if total > MaxCells {
			return nil, fmt.Errorf("sweep: more than %d cells; take fewer --steps (or fewer lanes, with --limiter)", MaxCells)
		}
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00%d\x00", sc.Name, sc.Seed, sc.Horizon, sc.Bins)
	for t, lane := range g.Lanes {
		for _, at := range combinations(dims) {
			spec := lane
			spec.Name = lane.Label()
			spec.Stack = slices.Clone(lane.Stack)
			for k, d := range dims {
				stage := stages[t][k]
				v := d.Values[at[k]]
				s, err := setField(spec.Stack[stage], d.Field, v.Text)
				if err != nil {
					return nil, &VaryError{Text: d.Text, Reason: fmt.Sprintf("%s=%s in lane %s: %v", d.Field, v.Text, lane.Label(), err)}
				}
				spec.Stack[stage] = s
			}
			c := Cell{Index: len(g.Cells), Lane: t, At: at, Spec: spec}
			fmt.Fprintf(h, "%s\x00%s\x00", spec.Name, engine.StackString(spec.Stack))
			g.Cells = append(g.Cells, c)
		}
	}
	g.ID = fmt.Sprintf("%016x", h.Sum64())
	return g, nil
}

// combinations is every choice of one value per dimension, the last dimension fastest.
func combinations(dims []Dimension) [][]int {
	out := [][]int{{}}
	for _, d := range dims {
		var next [][]int
		for _, prefix := range out {
			for i := range d.Values {
				next = append(next, append(slices.Clone(prefix), i))
			}
		}
		out = next
	}
	return out
}

// checkTargets refuses a dimension whose target is neither a kind nor a lane's name, and a
// kind that no lane has.
func checkTargets(sc *engine.Scenario, dims []Dimension) error {
	for _, d := range dims {
		found := false
		for _, lane := range sc.Lanes {
			if d.Kind != "" {
				found = found || slices.ContainsFunc(lane.Stack, func(s limiters.Spec) bool { return s.Kind() == d.Kind })
			} else {
				found = found || lane.Label() == d.Target
			}
		}
		if found {
			continue
		}
		if d.Kind != "" {
			return &VaryError{Text: d.Text, Reason: fmt.Sprintf("no lane of %s has a %s stage (lanes: %s); give one with --limiter", sc.Name, d.Kind, laneNames(sc))}
		}
		known := strings.Split(limiters.KindNames(), ", ")
		for _, lane := range sc.Lanes {
			known = append(known, lane.Label())
		}
		return &VaryError{Text: d.Text, Reason: fmt.Sprintf("%q is neither a limiter kind nor a lane of %s%s (kinds: %s; lanes: %s)",
			d.Target, sc.Name, wording.DidYouMean(d.Target, known), limiters.KindNames(), laneNames(sc))}
	}
	return nil
}

func laneNames(sc *engine.Scenario) string {
	names := make([]string, len(sc.Lanes))
	for i, l := range sc.Lanes {
		names[i] = l.Label()
	}
	return strings.Join(names, "; ")
}

// stageOf is the stage of lane that d sets; ok is false when d does not apply to the lane.
func stageOf(lane engine.LaneSpec, d Dimension) (stage int, ok bool, err error) {
	var matches []int
	if d.Kind != "" {
		for i, s := range lane.Stack {
			if s.Kind() == d.Kind {
				matches = append(matches, i)
			}
		}
		if len(matches) > 1 {
			return 0, false, &VaryError{Text: d.Text, Reason: fmt.Sprintf("lane %s has %d %s stages: name the lane (NAME=SPEC) and vary NAME.%s, or give a lane of one with --limiter",
				lane.Label(), len(matches), d.Kind, d.Field)}
		}
	} else {
		if lane.Label() != d.Target {
			return 0, false, nil
		}
		var fields []string
		for i, s := range lane.Stack {
			info, _ := limiters.Lookup(s.Kind())
			names := fieldNames(info)
			fields = append(fields, names...)
			if slices.Contains(names, d.Field) {
				matches = append(matches, i)
			}
		}
		switch {
		case len(matches) == 0:
			slices.Sort(fields)
			fields = slices.Compact(fields)
			return 0, false, &VaryError{Text: d.Text, Reason: fmt.Sprintf("no stage of lane %s has a field %q%s (fields: %s)",
				lane.Label(), d.Field, wording.DidYouMean(d.Field, fields), strings.Join(fields, ", "))}
		case len(matches) > 1:
			return 0, false, &VaryError{Text: d.Text, Reason: fmt.Sprintf("%d stages of lane %s have a field %s: vary KIND.%s, or give a lane of one with --limiter",
				len(matches), lane.Label(), d.Field, d.Field)}
		}
	}
	if len(matches) == 0 {
		return 0, false, nil
	}
	return matches[0], true, nil
}

// setField is spec with field set to value, read back by limiters.ParseSpec and validated:
// the spec's own syntax, so that every kind, and every field of it, can be varied without a
// line of code of its own. A keyed stage (keys(…):spec) has the field set in each key's spec,
// and keeps its table.
func setField(spec limiters.Spec, field, value string) (limiters.Spec, error) {
	if keyed, ok := spec.(limiters.KeyedSpec); ok {
		inner, err := setField(keyed.Spec, field, value)
		if err != nil {
			return nil, err
		}
		keyed.Spec = inner
		return keyed, keyed.Validate()
	}
	kind, params, _ := strings.Cut(spec.String(), ":")
	var parts []string
	set := false
	for _, p := range strings.Split(params, ",") {
		if p == "" {
			continue
		}
		if name, _, _ := strings.Cut(p, "="); name == field {
			p, set = field+"="+value, true
		}
		parts = append(parts, p)
	}
	if !set {
		parts = append(parts, field+"="+value) // an optional field the spec left at its default
	}
	out, err := limiters.ParseSpec(kind + ":" + strings.Join(parts, ","))
	if err != nil {
		return nil, err
	}
	if err := out.Validate(); err != nil {
		return nil, err
	}
	return out, nil
}

// Shard is the indices of the cells of shard i of n (0 ≤ i < n): every n-th cell from the
// i-th, so that each shard gets its share of every part of the grid (cheap cells and dear ones
// alike) and the shards together are every cell once.
func (g *Grid) Shard(i, n int) []int {
	var out []int
	for k := i; k < len(g.Cells); k += n {
		out = append(out, k)
	}
	return out
}
