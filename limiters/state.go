package limiters

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// State is a read-only copy of a limiter's state at one instant, taken by Snapshot. It holds
// what explains the limiter's next decision, in the algorithm's own terms; fields that do not
// apply to a kind are zero. The TUI draws it, the teaching log explains decisions with it
// (Explain), and charts plot Available over time. Which fields a kind fills is its Shape; JSON
// carries exactly those (MarshalJSON), zeros included.
type State struct {
	Kind       Kind          `json:"kind"`
	At         time.Duration `json:"at_ns"`       // the instant of the snapshot
	Available  int           `json:"available"`   // permits a request at At could take
	MaxPermits int           `json:"max_permits"` // the largest request that can ever pass

	// GCRA kinds (token bucket, leaky bucket, warm-up).
	Arrival        time.Duration `json:"arrival_ns"`         // theoretical arrival time: when the next permit is due
	Interval       time.Duration `json:"interval_ns"`        // emission interval T at At (warm-up: the ramped interval)
	Tolerance      time.Duration `json:"tolerance_ns"`       // τ at At
	SteadyInterval time.Duration `json:"steady_interval_ns"` // warm-up: T once warm
	Age            time.Duration `json:"age_ns"`             // warm-up: time since the limiter was made
	WarmUp         time.Duration `json:"warm_up_ns"`         // warm-up: the warm-up period

	// Window kinds (fixed and sliding window).
	Limit       int           `json:"limit"`
	Count       int           `json:"count"`           // permits counted in the current (fixed) or live (sliding) window
	Window      time.Duration `json:"window_ns"`       // the window length
	WindowStart time.Duration `json:"window_start_ns"` // fixed: the aligned window's start; sliding: the oldest live slot's start
	WindowEnd   time.Duration `json:"window_end_ns"`   // fixed: the next boundary; sliding: the current slot's end
	SlotLength  time.Duration `json:"slot_length_ns"`  // sliding: window / slots
	Slots       []Slot        `json:"slots"`           // sliding: every slot, oldest first, the current one last

	// Concurrency (and adaptive: Max is the limit now).
	InFlight int `json:"in_flight"`
	Max      int `json:"max"`

	// Adaptive kinds: the RTT the rule last heard, the no-load RTT it compares with (0: none,
	// AIMD), and the no-load probes so far.
	RTT       time.Duration `json:"rtt_ns"`
	RTTNoLoad time.Duration `json:"rtt_noload_ns"`
	Probes    int           `json:"probes"`

	// Level kinds (peers that count tokens): Level of LevelMax, what the level is, and when
	// the next request can pass (At when it can now).
	Level     float64       `json:"level"`
	LevelMax  float64       `json:"level_max"`
	LevelName string        `json:"level_name"`
	NextFree  time.Duration `json:"next_free_ns"`
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
		return info.Explain(s, n, d)
	}
	return fmt.Sprintf("%s (%s)", d, s.Kind)
}

// MarshalJSON writes the state's shape's fields, zeros included, and leaves out the fields of
// other shapes: a fresh bucket's arrival time 0 and an idle bulkhead's 0 in flight are
// meaningful and kept; a token bucket carries no window fields. A kind outside the registry
// (no shape) writes its non-zero fields. Fields come in the struct's order.
func (s State) MarshalJSON() ([]byte, error) {
	shape := s.Shape()
	in := func(shapes ...Shape) bool { return slices.Contains(shapes, shape) }
	schedule := in(ShapeSchedule, ShapeRamp)
	ramp := in(ShapeRamp)
	window := in(ShapeWindow, ShapeSlots)
	slots := in(ShapeSlots)
	adaptive := in(ShapeAdaptive)
	bulkhead := in(ShapeBulkhead, ShapeAdaptive)
	b := make([]byte, 0, 256)
	b = append(b, `{"kind":`...)
	b = strconv.AppendQuote(b, string(s.Kind))
	num := func(name string, v int64, want bool) {
		if want || (shape == "" && v != 0) {
			b = append(b, `,"`...)
			b = append(b, name...)
			b = append(b, `":`...)
			b = strconv.AppendInt(b, v, 10)
		}
	}
	num("at_ns", int64(s.At), true)
	num("available", int64(s.Available), true)
	num("max_permits", int64(s.MaxPermits), true)
	num("arrival_ns", int64(s.Arrival), schedule)
	num("interval_ns", int64(s.Interval), schedule)
	num("tolerance_ns", int64(s.Tolerance), schedule)
	num("steady_interval_ns", int64(s.SteadyInterval), ramp)
	num("age_ns", int64(s.Age), ramp)
	num("warm_up_ns", int64(s.WarmUp), ramp)
	num("limit", int64(s.Limit), window)
	num("count", int64(s.Count), window)
	num("window_ns", int64(s.Window), window)
	num("window_start_ns", int64(s.WindowStart), window)
	num("window_end_ns", int64(s.WindowEnd), window)
	num("slot_length_ns", int64(s.SlotLength), slots)
	if slots || (shape == "" && len(s.Slots) > 0) {
		list, err := json.Marshal(s.Slots)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"slots":`...)
		b = append(b, list...)
	}
	num("in_flight", int64(s.InFlight), bulkhead)
	num("max", int64(s.Max), bulkhead)
	num("rtt_ns", int64(s.RTT), adaptive)
	num("rtt_noload_ns", int64(s.RTTNoLoad), adaptive)
	num("probes", int64(s.Probes), adaptive)
	if level := in(ShapeLevel); level || (shape == "" && s.LevelName != "") {
		b = append(b, `,"level":`...)
		b = strconv.AppendFloat(b, s.Level, 'g', -1, 64)
		b = append(b, `,"level_max":`...)
		b = strconv.AppendFloat(b, s.LevelMax, 'g', -1, 64)
		b = append(b, `,"level_name":`...)
		b = strconv.AppendQuote(b, s.LevelName)
		num("next_free_ns", int64(s.NextFree), true)
	}
	return append(b, '}'), nil
}
