package engine

import (
	"fmt"
	"io"
	"time"

	"github.com/ratelab/ratelab/trace"
)

// Arrivals streams a scenario's offered traffic: every source's arrivals merged in time order,
// exactly as each lane meets them (same times, same permits, same order at equal times), up to
// the horizon. They are the sources' requests only: the retries a client policy adds depend on
// what a limiter refused, so they are not part of the traffic. Memory does not depend on how
// many arrivals there are; a trace source is read as it goes.
type Arrivals struct {
	streams []stream
	pending []arrival
	events  eventQueue
	horizon int64
	count   int
}

// NewArrivals validates sc and opens its sources. Close it when done (a trace source holds a
// file open); every call starts again from the first arrival, identically.
func NewArrivals(sc *Scenario) (*Arrivals, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	a := &Arrivals{horizon: int64(sc.Horizon)}
	// The same pulls in the same order as NewLane and Lane.Step, so the heap's sequence
	// numbers, and with them the order of arrivals at equal times, are the lane's.
	for k, src := range sc.Sources {
		st, err := newStream(src, k, sc.Seed, sc.Horizon)
		if err != nil {
			a.Close()
			return nil, err
		}
		a.streams = append(a.streams, st)
		a.pending = append(a.pending, arrival{})
		next, ok, err := st.next()
		if err != nil {
			a.Close()
			return nil, err
		}
		if ok {
			a.pending[k] = next
			a.events.push(event{at: next.at, kind: evArrival, src: int32(k)})
		}
	}
	return a, nil
}

// Next returns the next arrival as a trace row (Line counts arrivals from 1), or io.EOF after
// the last one before the horizon.
func (a *Arrivals) Next() (trace.Row, error) {
	if a.events.len() == 0 || a.events.peek().at >= a.horizon {
		return trace.Row{}, io.EOF
	}
	src := a.events.peek().src
	cur := a.pending[src]
	next, ok, err := a.streams[src].next()
	if err != nil {
		return trace.Row{}, fmt.Errorf("sources[%d]: %w", src, err)
	}
	if ok {
		a.pending[src] = next
		a.events.replaceTop(event{at: next.at, kind: evArrival, src: src})
	} else {
		a.events.pop()
	}
	a.count++
	return trace.Row{Line: a.count, At: time.Duration(cur.at), Permits: cur.permits, Key: cur.key}, nil
}

// Close releases the sources (a trace source's file). Closing twice is harmless.
func (a *Arrivals) Close() error {
	var first error
	for _, s := range a.streams {
		if err := s.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
