package sweep

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// Result is a whole sweep laid out as its grid: what tables and figures read. It is made from
// rows alone (Assemble), so a sweep run on one machine and one merged from shards give the
// same Result.
type Result struct {
	Sweep    string
	Scenario string
	Seed     uint64
	Horizon  time.Duration
	Dims     []Dimension // Target, Kind, Field and Values (Text is TARGET.FIELD)
	Lanes    []string    // the templates' names
	Rows     []Row       // every cell: Rows[k].Cell == k
}

// Assemble lays out a whole sweep's rows (every cell, in any order) as its grid. It refuses
// rows that are not every cell of one grid, numbered as New numbers them.
func Assemble(rows []Row) (*Result, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("sweep: no cells")
	}
	first := rows[0]
	sorted := make([]Row, first.Cells)
	seen := make([]bool, first.Cells)
	for _, r := range rows {
		if r.Sweep != first.Sweep || r.Cells != first.Cells || r.Cell < 0 || r.Cell >= first.Cells {
			return nil, fmt.Errorf("sweep: cell %d is not of sweep %s's %d cells", r.Cell, first.Sweep, first.Cells)
		}
		if seen[r.Cell] {
			return nil, fmt.Errorf("sweep: cell %d given twice", r.Cell)
		}
		seen[r.Cell], sorted[r.Cell] = true, r
	}
	if len(rows) != first.Cells {
		return nil, fmt.Errorf("sweep: %d of %d cells: a figure or table needs them all (merge the shards first)", len(rows), first.Cells)
	}
	res := &Result{Sweep: first.Sweep, Scenario: first.Scenario, Seed: first.Seed, Horizon: first.Horizon, Rows: sorted}
	dims := 1
	if first.Fields[1] != "" {
		dims = 2
	}
	// Cells run template by template, then by the first value, then by the second: the
	// second dimension's size is the length of the first run of one first value.
	for _, r := range sorted {
		if len(res.Lanes) == 0 || res.Lanes[len(res.Lanes)-1] != r.Lane {
			res.Lanes = append(res.Lanes, r.Lane)
		}
	}
	if first.Cells%len(res.Lanes) != 0 {
		return nil, fmt.Errorf("sweep: %d cells do not split into %d lanes", first.Cells, len(res.Lanes))
	}
	perLane := first.Cells / len(res.Lanes)
	inner := 1
	if dims == 2 {
		for inner < perLane && sorted[inner].Values[0] == first.Values[0] {
			inner++
		}
	}
	sizes := []int{perLane / inner, inner}[:dims]
	if sizes[0]*inner != perLane {
		return nil, fmt.Errorf("sweep: the cells of lane %s are not a grid", first.Lane)
	}
	for k := range dims {
		d := dimensionOf(first.Fields[k])
		stride := []int{inner, 1}[k]
		for i := range sizes[k] {
			text := sorted[i*stride].Values[k]
			d.Values = append(d.Values, Value{Text: text, Num: number(text)})
		}
		res.Dims = append(res.Dims, d)
	}
	for _, r := range sorted {
		lane, at := r.Cell/perLane, r.Cell%perLane
		idx := []int{at / inner, at % inner}
		ok := r.Lane == res.Lanes[lane]
		for k := range MaxDims {
			if k < dims {
				ok = ok && r.Fields[k] == res.Dims[k].Name() && r.Values[k] == res.Dims[k].Values[idx[k]].Text
			} else {
				ok = ok && r.Fields[k] == "" && r.Values[k] == ""
			}
		}
		if !ok {
			return nil, fmt.Errorf("sweep: cell %d (%s, %s=%s) is out of its grid's order", r.Cell, r.Lane, r.Fields[0], r.Values[0])
		}
	}
	return res, nil
}

// dimensionOf is the dimension called TARGET.FIELD, without its values.
func dimensionOf(name string) Dimension {
	dot := strings.LastIndex(name, ".")
	d := Dimension{Text: name, Target: name, Field: ""}
	if dot >= 0 {
		d.Target, d.Field = name[:dot], name[dot+1:]
	}
	if info, ok := limiters.Lookup(limiters.Kind(d.Target)); ok {
		d.Kind = info.Kind
	}
	return d
}

// At is the cell of template lane at the dimensions' value indices at.
func (r *Result) At(lane int, at ...int) *Row {
	k := lane
	for i, d := range r.Dims {
		k = k*len(d.Values) + at[i]
	}
	return &r.Rows[k]
}

// Cells is the number of cells.
func (r *Result) Cells() int { return len(r.Rows) }

// InvalidGroup is the invalid cells of a sweep that one reason refuses.
type InvalidGroup struct {
	// Reason is the cells' ShortReason with each value the cell varies put back as the field's
	// name ("capacity=5 is not a multiple of 3 instances" reads "capacity is not a multiple of
	// 3 instances"), so that the cells one rule refuses share it.
	Reason string
	Lanes  []string // the lanes of the cells, in grid order
	Cells  []int    // the cells, in grid order
	// Values is, per dimension, the values of it the cells have, in grid order; nil when
	// they have every value of it.
	Values [][]string
}

// InvalidGroups is the sweep's invalid cells grouped by reason, in the order of each reason's
// first cell; none when every cell ran. The fleet scenario swept over capacity 5..30 (6 values)
// and rate 60/1s..300/1s (5) is one group: split's 20 cells at capacity 5, 10, 20 and 25, any
// rate, "capacity is not a multiple of 3 instances: each share would round and change the
// global limit".
func (r *Result) InvalidGroups() []InvalidGroup {
	var out []InvalidGroup
	for _, row := range r.Rows {
		if row.Invalid == "" {
			continue
		}
		reason := row.ShortReason()
		for k, d := range r.Dims {
			reason = strings.ReplaceAll(reason, d.Field+"="+row.Values[k], d.Field)
		}
		i := slices.IndexFunc(out, func(g InvalidGroup) bool { return g.Reason == reason })
		if i < 0 {
			out = append(out, InvalidGroup{Reason: reason, Values: make([][]string, len(r.Dims))})
			i = len(out) - 1
		}
		g := &out[i]
		g.Cells = append(g.Cells, row.Cell)
		if !slices.Contains(g.Lanes, row.Lane) {
			g.Lanes = append(g.Lanes, row.Lane)
		}
		for k := range r.Dims {
			if !slices.Contains(g.Values[k], row.Values[k]) {
				g.Values[k] = append(g.Values[k], row.Values[k])
			}
		}
	}
	for i := range out {
		for k, d := range r.Dims {
			if len(out[i].Values[k]) == len(d.Values) {
				out[i].Values[k] = nil
			} else {
				slices.SortFunc(out[i].Values[k], func(a, b string) int {
					return slices.IndexFunc(d.Values, func(v Value) bool { return v.Text == a }) -
						slices.IndexFunc(d.Values, func(v Value) bool { return v.Text == b })
				})
			}
		}
	}
	return out
}

// Where is where in the grid g's cells lie, "capacity 5, 10, 20, 25; any rate", by the
// dimensions' fields.
func (g InvalidGroup) Where(dims []Dimension) string {
	var parts []string
	for k, d := range dims {
		if g.Values[k] == nil {
			parts = append(parts, "any "+d.Field)
		} else {
			parts = append(parts, d.Field+" "+strings.Join(g.Values[k], ", "))
		}
	}
	return strings.Join(parts, "; ")
}
