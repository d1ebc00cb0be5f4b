package replicate

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratelab/ratelab/engine"
)

// MaxReplications bounds K: each replication keeps its lanes' metrics and three counters per
// time bin (1000 bins, 4 lanes, K = 10 000: under 1 GB).
const MaxReplications = 10_000

// Seeds are the seeds of k replications from base: base, base+1, …, base+k−1 (wrapping
// past 2⁶⁴−1, which only matters to a base within k of it).
func Seeds(base uint64, k int) []uint64 {
	out := make([]uint64, k)
	for i := range out {
		out[i] = base + uint64(i)
	}
	return out
}

// Set is K replications of one scenario, reduced to what summaries and charts need.
type Set struct {
	Scenario *engine.Scenario // the scenario; its Seed is the first replication's
	Seeds    []uint64
	First    *engine.Results // the first replication in full: the single run of the same seed
	Lanes    []LaneRuns
}

// K is the number of replications.
func (s *Set) K() int { return len(s.Seeds) }

// LaneRuns is one lane over the replications.
type LaneRuns struct {
	Name  string
	Stack []string
	// Values[m][i] is Metrics[m] in replication i, NaN where the lane had nothing to
	// measure (a service metric without a downstream).
	Values [][]float64
	// Offered, Admitted and RefusedAttempts per time bin: [i][bin], replication i.
	Offered, Admitted, RefusedAttempts [][]int64
}

// Estimate is metric m's interval over the replications that measured it.
func (l LaneRuns) Estimate(m int) Interval {
	var values []float64
	for _, v := range l.Values[m] {
		if !math.IsNaN(v) {
			values = append(values, v)
		}
	}
	return Estimate(values)
}

// Progress counts finished replications; safe to read while Run goes on.
type Progress struct {
	done atomic.Int64
	k    int64
}

// NewProgress is a progress meter for k replications.
func NewProgress(k int) *Progress { return &Progress{k: int64(k)} }

// Fraction is the replications finished over K, in [0, 1].
func (p *Progress) Fraction() float64 {
	if p == nil || p.k == 0 {
		return 0
	}
	return float64(p.done.Load()) / float64(p.k)
}

// Run runs k replications of sc (seeds Seeds(sc.Seed, k)), as many at once as GOMAXPROCS
// allows, and reduces each as it finishes. Every replication writes only its own slot and
// nothing is summed until all are in, so the Set is identical whatever GOMAXPROCS or the
// order they finish in. progress may be nil. A cancelled ctx stops the run with its error;
// the first failing replication's error (by seed order) is returned.
func Run(ctx context.Context, sc *engine.Scenario, k int, progress *Progress) (*Set, error) {
	if k < 1 || k > MaxReplications {
		return nil, fmt.Errorf("replicate: %d replications: must be 1 to %d", k, MaxReplications)
	}
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	seeds := Seeds(sc.Seed, k)
	results := make([]*engine.Results, k)
	reduced := make([][]laneRun, k)
	errs := make([]error, k)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(k, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= k {
					return
				}
				one := *sc
				one.Seed, one.Trace = seeds[i], false
				res, err := engine.Run(ctx, &one, nil)
				if err != nil {
					errs[i] = fmt.Errorf("replication %d (seed %d): %w", i+1, seeds[i], err)
					continue
				}
				reduced[i] = reduce(sc, res)
				if i == 0 {
					results[0] = res // the rest are dropped once reduced
				}
				if progress != nil {
					progress.done.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	set := &Set{Scenario: sc, Seeds: seeds, First: results[0]}
	for j, lr := range results[0].Lanes {
		lane := LaneRuns{Name: lr.Name, Stack: lr.Stack, Values: make([][]float64, len(Metrics))}
		for m := range Metrics {
			lane.Values[m] = make([]float64, k)
			for i := range k {
				lane.Values[m][i] = reduced[i][j].values[m]
			}
		}
		for i := range k {
			r := reduced[i][j]
			lane.Offered = append(lane.Offered, r.offered)
			lane.Admitted = append(lane.Admitted, r.admitted)
			lane.RefusedAttempts = append(lane.RefusedAttempts, r.refused)
		}
		set.Lanes = append(set.Lanes, lane)
	}
	return set, nil
}

// laneRun is one lane of one replication, reduced.
type laneRun struct {
	values                     []float64
	offered, admitted, refused []int64
}

func reduce(sc *engine.Scenario, res *engine.Results) []laneRun {
	out := make([]laneRun, len(res.Lanes))
	for j, lr := range res.Lanes {
		r := laneRun{values: make([]float64, len(Metrics))}
		for m, metric := range Metrics {
			v, ok := metric.Value(sc.Lanes[j], lr)
			if !ok {
				v = math.NaN()
			}
			r.values[m] = v
		}
		r.offered, r.admitted, r.refused = make([]int64, len(lr.Bins)), make([]int64, len(lr.Bins)), make([]int64, len(lr.Bins))
		for b, bin := range lr.Bins {
			r.offered[b], r.admitted[b], r.refused[b] = bin.Offered, bin.Admitted, bin.RefusedAttempts
		}
		out[j] = r
	}
	return out
}

// Horizon and BinWidth are the runs' (every replication has the same).
func (s *Set) Horizon() time.Duration  { return s.First.Horizon }
func (s *Set) BinWidth() time.Duration { return s.First.BinWidth }
