package limiters

import (
	"fmt"
	"time"
)

// State is a read-only copy of a limiter's state at one instant, taken by Snapshot. It holds
// what explains the limiter's next decision, in the algorithm's own terms; fields that do not
// apply to a kind are zero. The TUI draws it, the teaching log explains decisions with it
// (Explain), and charts plot Available over time.
type State struct {
	Kind       Kind          `json:"kind"`
	At         time.Duration `json:"at_ns"`       // the instant of the snapshot
	Available  int           `json:"available"`   // permits a request at At could take
	MaxPermits int           `json:"max_permits"` // the largest request that can ever pass

	// GCRA kinds (token bucket, leaky bucket, warm-up).
	Arrival        time.Duration `json:"arrival_ns,omitempty"`         // theoretical arrival time: when the next permit is due
	Interval       time.Duration `json:"interval_ns,omitempty"`        // emission interval T at At (warm-up: the ramped interval)
	Tolerance      time.Duration `json:"tolerance_ns,omitempty"`       // τ at At
	SteadyInterval time.Duration `json:"steady_interval_ns,omitempty"` // warm-up: T once warm
	Age            time.Duration `json:"age_ns,omitempty"`             // warm-up: time since the limiter was made
	WarmUp         time.Duration `json:"warm_up_ns,omitempty"`         // warm-up: the warm-up period

	// Window kinds (fixed and sliding window).
	Limit       int           `json:"limit,omitempty"`
	Count       int           `json:"count,omitempty"`           // permits counted in the current (fixed) or live (sliding) window
	Window      time.Duration `json:"window_ns,omitempty"`       // the window length
	WindowStart time.Duration `json:"window_start_ns,omitempty"` // fixed: the aligned window's start; sliding: the oldest live slot's start
	WindowEnd   time.Duration `json:"window_end_ns,omitempty"`   // fixed: the next boundary; sliding: the current slot's end
	SlotLength  time.Duration `json:"slot_length_ns,omitempty"`  // sliding: window / slots
	Slots       []Slot        `json:"slots,omitempty"`           // sliding: every slot, oldest first, the current one last

	// Concurrency.
	InFlight int `json:"in_flight,omitempty"`
	Max      int `json:"max,omitempty"`
}

// Slot is one bucket of a sliding window as seen from a snapshot.
type Slot struct {
	Start      time.Duration `json:"start_ns"`                 // start of the slot-index this position stands for now
	Count      int           `json:"count"`                    // permits counted, if Live
	Live       bool          `json:"live"`                     // the bucket holds this slot-index's generation
	StaleCount int           `json:"stale_count,omitempty"`    // a count left from an older generation, ignored by reads
	StaleStart time.Duration `json:"stale_start_ns,omitempty"` // the start of that older generation's slot
}

// Shape is how the state is drawn: its kind's registry entry's Shape, "" for a kind outside
// the registry.
func (s State) Shape() Shape {
	if info := lookup(s.Kind); info != nil {
		return info.Shape
	}
	return ""
}

// Backlog is how far the GCRA schedule runs ahead of At: max(Arrival − At, 0).
func (s State) Backlog() time.Duration { return max(s.Arrival-s.At, 0) }

// Explain says in one sentence why a request for n permits got decision d, from the state
// the limiter was in just before deciding (a Snapshot taken at the request's time). It
// reads the numbers the algorithm compares, so the sentence can never disagree with it:
//
//	"next permit due at 40ms, 20ms ahead; 1 more (T=10ms) would put it 30ms ahead, over the 20ms tolerance"
func (s State) Explain(n int, d Decision) string {
	switch d {
	case Invalid:
		return fmt.Sprintf("asks for %d permits; a request must ask for at least 1", n)
	case Never:
		return fmt.Sprintf("asks for %d permits, more than the %d this %s can ever grant at once", n, s.MaxPermits, s.Kind)
	}
	if info := lookup(s.Kind); info != nil {
		return info.explain(s, n, d)
	}
	return fmt.Sprintf("%s (%s)", d, s.Kind)
}
