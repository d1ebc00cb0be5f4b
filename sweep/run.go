package sweep

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/ratelab/ratelab/engine"
)

// Row is one cell's result: where it lies in its grid and what it measured. It is one line of
// the sweep's CSV, and holds nothing that line does not.
type Row struct {
	Sweep    string // the grid's ID
	Scenario string
	Seed     uint64
	Horizon  time.Duration
	Cell     int // the cell's index in the grid
	Cells    int // the cells in the whole grid
	Lane     string
	// Fields are the dimensions' names ("token-bucket.capacity") and Values the cell's value
	// of each; "" past the last dimension.
	Fields [MaxDims]string
	Values [MaxDims]string
	Spec   string // the cell's stack: "token-bucket:capacity=12,rate=67/1s"
	// Invalid is why the cell did not run, "" when it did: the scenario refused the lane its
	// parameters make ("fleet.model: stage 1: split: token-bucket:capacity=5,rate=150/1s:
	// capacity=5 is not a multiple of 3 instances: …"). An invalid cell measured nothing: its
	// Metrics are zero and mean nothing.
	Invalid string
	Metrics
}

// Options say which cells to run and how.
type Options struct {
	// Workers is how many cells run at once; 0 means GOMAXPROCS. Results do not depend on it.
	Workers int
	// Shard and Shards run only the cells of Grid.Shard(Shard, Shards); Shards 0 means all.
	Shard, Shards int
	// Progress, when set, counts the cells done.
	Progress *Progress
}

// Progress counts a sweep's cells as they finish; safe to read while it runs.
type Progress struct {
	total atomic.Int64
	done  atomic.Int64
}

// Done is the cells finished and the cells to run.
func (p *Progress) Done() (done, total int64) { return p.done.Load(), p.total.Load() }

// Fraction is the share of the cells finished, in [0, 1].
func (p *Progress) Fraction() float64 {
	done, total := p.Done()
	if total == 0 {
		return 0
	}
	return float64(done) / float64(total)
}

// Run runs the grid's cells (a shard's, with opt.Shards) on opt.Workers goroutines and returns
// their rows in cell order. Each cell is a scenario of one lane, independent of every other, so
// the rows are the same whatever the number of workers or the order they finish in. A cancelled
// ctx stops every cell promptly with ctx's error. A cell whose lane the scenario refuses (a
// split fleet's capacity of 5 over 3 instances) is an invalid cell: its row says why
// (Row.Invalid) and the sweep goes on. A cell that fails as it runs (a budget passed, a trace
// unreadable) stops the sweep with the error of the first failing cell in grid order.
func Run(ctx context.Context, g *Grid, opt Options) ([]Row, error) {
	indices := make([]int, len(g.Cells))
	for i := range indices {
		indices[i] = i
	}
	if opt.Shards > 0 {
		if opt.Shard < 0 || opt.Shard >= opt.Shards {
			return nil, fmt.Errorf("sweep: shard %d of %d: the index is 0 to %d", opt.Shard, opt.Shards, opt.Shards-1)
		}
		indices = g.Shard(opt.Shard, opt.Shards)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(indices)))
	if opt.Progress != nil {
		opt.Progress.total.Store(int64(len(indices)))
	}
	rows := make([]Row, len(indices))
	errs := make([]error, len(indices))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= len(indices) || ctx.Err() != nil {
					return
				}
				rows[k], errs[k] = g.run(ctx, indices[k])
				if errs[k] != nil {
					next.Store(int64(len(indices))) // stop the others after their cell
				}
				if opt.Progress != nil {
					opt.Progress.done.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// run runs cell i alone: the scenario with the cell as its one lane.
func (g *Grid) run(ctx context.Context, i int) (Row, error) {
	c := g.Cells[i]
	sc := *g.Scenario
	sc.Lanes = []engine.LaneSpec{c.Spec}
	sc.Trace = false
	sc.Bins = 1 // a row keeps no time series: one bin spares a thousand (the totals, waits and meters do not depend on bins)
	// The scenario itself was valid with its own lanes: what it refuses now is this cell's.
	if err := sc.Validate(); err != nil {
		r := g.row(c, Metrics{})
		r.Invalid = invalidReason(err)
		return r, nil
	}
	res, err := engine.Run(ctx, &sc, nil)
	if err != nil {
		if ctx.Err() != nil {
			return Row{}, ctx.Err()
		}
		return Row{}, fmt.Errorf("sweep: cell %d (%s): %w", i, engine.StackString(c.Spec.Stack), err)
	}
	return g.row(c, measure(c.Spec, res.Lanes[0])), nil
}

func (g *Grid) row(c Cell, m Metrics) Row {
	r := Row{Sweep: g.ID, Scenario: g.Scenario.Name, Seed: g.Scenario.Seed, Horizon: g.Scenario.Horizon,
		Cell: c.Index, Cells: len(g.Cells), Lane: g.Lanes[c.Lane].Label(), Spec: engine.StackString(c.Spec.Stack), Metrics: m}
	for k, d := range g.Dims {
		r.Fields[k], r.Values[k] = d.Name(), d.Values[c.At[k]].Text
	}
	return r
}

// invalidReason is a cell's validation error as its row gives it: on one line, without the
// "limiters[0]." the cell's one-lane scenario puts before it (the lane is the row's own).
func invalidReason(err error) string {
	text := strings.TrimPrefix(err.Error(), "limiters[0].")
	text = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, text)
	if text == "" {
		text = "refused by the scenario"
	}
	return text
}

// InvalidCells is the rows of rows that are invalid cells, in their order.
func InvalidCells(rows []Row) []Row {
	var out []Row
	for _, r := range rows {
		if r.Invalid != "" {
			out = append(out, r)
		}
	}
	return out
}

// ShortReason is why r is invalid, for a table or a legend: Invalid from past the last stage
// spec of the cell's that it names, "capacity=5 is not a multiple of 3 instances: each share
// would round and change the global limit"; all of it when it names none.
func (r Row) ShortReason() string {
	text := r.Invalid
	if stack, err := engine.ParseStack(r.Spec); err == nil {
		for _, s := range stack {
			if i := strings.LastIndex(text, s.String()+": "); i >= 0 {
				text = text[i+len(s.String())+2:]
			}
		}
	}
	return text
}

// Parameters is the cell's values, "token-bucket.capacity=5, token-bucket.rate=50/1s".
func (r Row) Parameters() string {
	var p []string
	for k := range MaxDims {
		if r.Fields[k] != "" {
			p = append(p, r.Fields[k]+"="+r.Values[k])
		}
	}
	return strings.Join(p, ", ")
}
