package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Results is one run of a scenario: a LaneResult per limiter stack, in the scenario's order.
type Results struct {
	Scenario    string        `json:"scenario"`
	Description string        `json:"description,omitempty"`
	Seed        uint64        `json:"seed"`
	Horizon     time.Duration `json:"horizon_ns"`
	BinWidth    time.Duration `json:"bin_width_ns"`
	Lanes       []LaneResult  `json:"lanes"`
}

// Progress reports how far a run has got; safe to read while the run goes on.
type Progress struct {
	horizon int64
	lanes   []atomic.Int64
}

// Fraction is the least virtual time any lane has reached over the horizon, in [0, 1].
func (p *Progress) Fraction() float64 {
	if p == nil || len(p.lanes) == 0 || p.horizon == 0 {
		return 0
	}
	least := p.lanes[0].Load()
	for i := range p.lanes {
		least = min(least, p.lanes[i].Load())
	}
	return float64(least) / float64(p.horizon)
}

// NewProgress makes a progress meter for sc, to pass to Run.
func NewProgress(sc *Scenario) *Progress {
	return &Progress{horizon: int64(sc.Horizon), lanes: make([]atomic.Int64, len(sc.Lanes))}
}

// Run validates sc and runs every lane to the horizon, each on its own goroutine. Lanes share
// nothing, so the results are identical whatever GOMAXPROCS or scheduling. progress may be nil.
// A cancelled ctx stops the run with ctx's error.
func Run(ctx context.Context, sc *Scenario, progress *Progress) (*Results, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	lanes, err := runLanes(ctx, sc, func(ctx context.Context, i int, l *Lane) error { return l.run(ctx, progress, i) })
	if err != nil {
		return nil, err
	}
	res := &Results{Scenario: sc.Name, Description: sc.Description, Seed: sc.Seed, Horizon: sc.Horizon}
	for _, l := range lanes {
		res.BinWidth = time.Duration(l.rec.binWidth)
		res.Lanes = append(res.Lanes, l.Result())
	}
	return res, nil
}

// run steps the lane to its horizon, checking ctx and publishing progress every 16384 events.
func (l *Lane) run(ctx context.Context, progress *Progress, i int) error {
	defer l.closeStreams()
	for {
		more, err := l.StepN(1 << 14)
		if err != nil {
			return err
		}
		if !more {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if progress != nil {
			progress.lanes[i].Store(l.now)
		}
	}
	if progress != nil {
		progress.lanes[i].Store(l.horizon)
	}
	return nil
}

// TraceWindow adds to res, the results of an untraced run of sc, the trace of the events in
// [from, to) (to 0: the horizon): it reruns every lane, each on its own goroutine, up to to,
// recording only that window. A chart of a window of a long run needs no more: not the whole
// run's trace (memory grows with it), nor the time after the window. The time before it is
// rerun untraced, because the state at the window's start depends on all that came before.
// Each lane's Trace, Truncated, TraceFrom and TraceTo are replaced; nothing else changes (the
// rerun is the same run: the trace only observes).
func TraceWindow(ctx context.Context, sc *Scenario, res *Results, from, to time.Duration) error {
	if to <= 0 || to > sc.Horizon {
		to = sc.Horizon
	}
	win := *sc
	win.Trace, win.TraceFrom, win.TraceTo = true, from, to
	if err := win.Validate(); err != nil {
		return err
	}
	if len(res.Lanes) != len(sc.Lanes) {
		return fmt.Errorf("engine: TraceWindow: %d lanes of results for a scenario of %d", len(res.Lanes), len(sc.Lanes))
	}
	lanes, err := runLanes(ctx, &win, func(ctx context.Context, _ int, l *Lane) error { return l.runUntil(ctx, int64(to)) })
	if err != nil {
		return err
	}
	for i, l := range lanes {
		lr := &res.Lanes[i]
		lr.Trace, lr.Truncated = l.rec.result.Trace, l.rec.result.Truncated
		lr.TraceFrom, lr.TraceTo = from, to
		if from == 0 && to == sc.Horizon {
			lr.TraceFrom, lr.TraceTo = 0, 0 // the whole run
		}
	}
	return nil
}

// runLanes makes every lane of sc and runs each with run, which must close the lane's
// streams, each lane on its own goroutine from its making on: a lane's setup (its bins, its
// limiters, its sources) was a serial part of every run. A lane runs as soon as it is made;
// if one cannot be made, the others are cancelled (run's ctx) and that error comes back, the
// first in lane order, as it did when lanes were made one by one before any ran. (A barrier
// before running, so that none would start, parked every lane's goroutine and woke them all
// at once: on a 2-core machine the second core then sometimes stayed idle for milliseconds.)
func runLanes(ctx context.Context, sc *Scenario, run func(ctx context.Context, i int, l *Lane) error) ([]*Lane, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lanes := make([]*Lane, len(sc.Lanes))
	made := make([]error, len(lanes))
	errs := make([]error, len(lanes))
	var wg sync.WaitGroup
	wg.Add(len(lanes))
	for i := range lanes {
		go func() {
			defer wg.Done()
			l, err := NewLane(sc, i)
			if err != nil {
				made[i] = err
				cancel()
				return
			}
			lanes[i] = l
			errs[i] = run(ctx, i, l)
		}()
	}
	wg.Wait()
	for _, err := range made {
		if err != nil {
			return nil, err
		}
	}
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("lane %d (%s): %w", i+1, lanes[i].spec.Label(), err)
		}
	}
	return lanes, nil
}

// runUntil steps the lane through its events before to (untraced before the trace's window,
// the window traced), checking ctx every 16384 events, and closes its streams.
func (l *Lane) runUntil(ctx context.Context, to int64) error {
	defer l.closeStreams()
	for {
		if ran, err := l.steps(to, 1<<14); err != nil || ran < 1<<14 {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
