package tui

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/engine"
)

// logCapacity is how many records each lane's event log keeps (the newest ones).
const logCapacity = 256

// sim runs every lane of a scenario in lockstep on one virtual time axis: each move is a
// RunUntil of the same time in every lane, so the lanes always read as of the same instant.
// It is deterministic: how the moves are chunked (frames, steps) does not change what any
// lane decides.
type sim struct {
	sc     *engine.Scenario
	lanes  []*engine.Lane
	now    time.Duration
	slice  time.Duration // the chart's time slice: one column
	charts [][]sliceCount
	logs   []recordRing
	events uint64 // decisions and other records seen, all lanes
}

// sliceCount is what one lane decided in one time slice.
type sliceCount struct{ admitted, rejected int }

// newSim prepares every lane of sc at time 0. sc must be valid.
func newSim(sc *engine.Scenario) (*sim, error) {
	sc.Trace = false // the log listens to OnEvent; the lanes need not keep a trace too
	s := &sim{sc: sc, slice: sliceFor(sc.Horizon)}
	slices := int((sc.Horizon+s.slice-1)/s.slice) + 1
	for i := range sc.Lanes {
		lane, err := engine.NewLane(sc, i)
		if err != nil {
			s.close()
			return nil, err
		}
		s.lanes = append(s.lanes, lane)
		s.charts = append(s.charts, make([]sliceCount, slices))
		s.logs = append(s.logs, recordRing{})
		lane.OnEvent = s.observer(i)
	}
	return s, nil
}

// close releases every lane's open sources; the sim is not used afterwards.
func (s *sim) close() {
	for _, lane := range s.lanes {
		lane.Close()
	}
}

// observer counts lane i's decisions into its chart and keeps them for its log.
func (s *sim) observer(i int) func(engine.Record) {
	client := s.sc.Client
	if c := s.sc.Lanes[i].Client; c != nil {
		client = *c
	}
	dropping := client.Policy == engine.PolicyDrop || client.Policy == ""
	return func(r engine.Record) {
		s.events++
		// The log keeps what teaches: decisions and what the client and the downstream did
		// about them. A completion is routine, and a dropping client's refusal only repeats
		// the rejection before it.
		if r.Outcome != engine.OutcomeCompleted && (r.Outcome != engine.OutcomeRefused || !dropping) {
			s.logs[i].push(r)
		}
		k := int(r.At / s.slice)
		if k >= len(s.charts[i]) {
			return
		}
		switch r.Outcome {
		case engine.OutcomeAdmitted:
			s.charts[i][k].admitted++
		case engine.OutcomeRejected, engine.OutcomeNever:
			s.charts[i][k].rejected++
		}
	}
}

// niceDurations are the steps of the chart's slice and of the speed control.
var niceDurations = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 20 * time.Second,
	30 * time.Second, time.Minute,
}

// sliceFor picks the chart's column width: the smallest nice duration that cuts the
// horizon into at most 400 slices (250ms → 1ms, 60s → 200ms).
func sliceFor(horizon time.Duration) time.Duration {
	for _, d := range niceDurations {
		if horizon/d <= 400 {
			return d
		}
	}
	return (horizon + 399) / 400
}

// done reports whether every lane has reached the horizon.
func (s *sim) done() bool { return s.now >= s.sc.Horizon }

// advanceTo moves every lane to t (at most the horizon): each runs its events before t.
func (s *sim) advanceTo(t time.Duration) error {
	t = min(t, s.sc.Horizon)
	if t <= s.now {
		return nil
	}
	for _, lane := range s.lanes {
		if err := lane.RunUntil(t); err != nil {
			return fmt.Errorf("lane %s: %w", lane.Spec.Label(), err)
		}
	}
	s.now = t
	return nil
}

// nextEventAt is the earliest next event across the lanes (the horizon when none is left).
func (s *sim) nextEventAt() time.Duration {
	next := s.sc.Horizon
	for _, lane := range s.lanes {
		next = min(next, lane.NextEventAt())
	}
	return next
}

// step runs one event: it moves every lane to the earliest next event across the lanes,
// and every lane whose next event is at that instant runs it. The same arrival is one
// event in every lane, so a step shows one request meeting every limiter.
func (s *sim) step() error {
	t := s.nextEventAt()
	if t >= s.sc.Horizon {
		return s.advanceTo(s.sc.Horizon)
	}
	for _, lane := range s.lanes {
		if err := lane.RunUntil(t); err != nil {
			return fmt.Errorf("lane %s: %w", lane.Spec.Label(), err)
		}
		if lane.NextEventAt() == t {
			if _, err := lane.Step(); err != nil {
				return fmt.Errorf("lane %s: %w", lane.Spec.Label(), err)
			}
		}
	}
	s.now = t
	return nil
}

// recordRing keeps the newest logCapacity records.
type recordRing struct {
	buf   [logCapacity]engine.Record
	next  int
	count int
}

func (r *recordRing) push(rec engine.Record) {
	r.buf[r.next] = rec
	r.next = (r.next + 1) % logCapacity
	r.count = min(r.count+1, logCapacity)
}

// last returns up to n records, oldest first.
func (r *recordRing) last(n int) []engine.Record {
	n = min(n, r.count)
	out := make([]engine.Record, 0, n)
	for k := n; k > 0; k-- {
		out = append(out, r.buf[(r.next-k+logCapacity)%logCapacity])
	}
	return out
}
