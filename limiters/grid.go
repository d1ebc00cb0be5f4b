package limiters

import "time"

// Grid is the instants at which a limiter's counts step, whatever the traffic: the period
// Period is cut in Parts parts (the last takes the remainder), and the cuts repeat from
// Phase, 0 ≤ Phase < Period —
//
//	Phase + k·Period + j·⌊Period/Parts⌋   for every integer k and 0 ≤ j < Parts.
//
// A fixed window of 1s: Period 1s, Parts 1, boundaries at 0, 1s, 2s, … — where the count
// starts again from 0 and the boundary burst happens. A sliding window of 1s in 10 slots:
// Parts 10, a cut every 100ms, where the oldest slot's count leaves the window. Charts
// draw these instants so that a reader sees why requests pass or fail where they do.
type Grid struct {
	Period time.Duration
	Parts  int           // at least 1
	Phase  time.Duration // the first cut at or after 0
	What   string        // what a cut starts: "window", "slot", "bucket"
}

// Gridded is implemented by specs whose counts step on a Grid. ok is false when this
// configuration of the kind has none (sentinel's throttling paces, it does not count).
type Gridded interface {
	Grid() (g Grid, ok bool)
}

// GridOf is spec's grid, if it has one.
func GridOf(spec Spec) (Grid, bool) {
	if g, ok := spec.(Gridded); ok {
		return g.Grid()
	}
	return Grid{}, false
}

// Cuts lists the grid's instants in [from, to], in order, at most limit of them (a grid too
// fine to draw returns nil and false).
func (g Grid) Cuts(from, to time.Duration, limit int) ([]time.Duration, bool) {
	if g.Period <= 0 || g.Parts < 1 || to < from {
		return nil, false
	}
	part := g.Period / time.Duration(g.Parts)
	if part <= 0 || (to-from)/part > time.Duration(limit) {
		return nil, false
	}
	var out []time.Duration
	// The period holding from: k = ⌊(from − Phase)/Period⌋, rounded toward −∞.
	k := (from - g.Phase) / g.Period
	if from-g.Phase < 0 && (from-g.Phase)%g.Period != 0 {
		k--
	}
	for start := g.Phase + k*g.Period; start <= to; start += g.Period {
		for j := range g.Parts {
			if t := start + time.Duration(j)*part; t >= from && t <= to {
				out = append(out, t)
			}
		}
	}
	return out, true
}

// Grid is the windows: Window, aligned to the clock's origin.
func (s FixedWindowSpec) Grid() (Grid, bool) {
	return Grid{Period: s.Window, Parts: 1, What: "window"}, true
}

// Grid is the slots: Slots cuts per window, the window aligned to the clock's origin.
func (s SlidingWindowSpec) Grid() (Grid, bool) {
	slots := s.Slots
	if slots == 0 {
		slots = DefaultSlots
	}
	return Grid{Period: s.Window, Parts: slots, What: "slot"}, true
}

// Grid is the keyed limiter's: every key's limiter runs on the same clock.
func (s KeyedSpec) Grid() (Grid, bool) { return GridOf(s.Spec) }
