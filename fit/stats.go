package fit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ratelab/ratelab/trace"
)

// Stats describes a trace: how much it asks for, how fast on average and at its peak, and the
// counts that decide the window kinds and the leaky bucket.
type Stats struct {
	Requests int64         `json:"requests"`
	Permits  int64         `json:"permits"`
	First    time.Duration `json:"first_ns"`
	Last     time.Duration `json:"last_ns"`
	// MeanPerSec is Permits over the span from the first request to the last (0 when they
	// are at one instant).
	MeanPerSec float64 `json:"mean_per_s"`
	// Peak is the most permits in any window of length Window (half-open, sliding: (t − W, t]
	// for every request's t), ending at PeakAt; PeakPerSec is Peak per Window in seconds.
	Window     time.Duration `json:"window_ns"`
	Peak       int64         `json:"peak"`
	PeakAt     time.Duration `json:"peak_at_ns"`
	PeakPerSec float64       `json:"peak_per_s"`
	// MaxRequest is the largest request; MaxInstant the most permits at one instant, at
	// MaxInstantAt.
	MaxRequest   int           `json:"max_request"`
	MaxInstant   int64         `json:"max_instant"`
	MaxInstantAt time.Duration `json:"max_instant_at_ns"`
	// MinGap is the smallest time between two consecutive requests (-1 with fewer than two).
	MinGap time.Duration `json:"min_gap_ns"`
	// FixedLimit is the most permits in one clock-aligned window [kW, (k+1)W), ending at
	// FixedAt: the smallest fixed-window limit that admits everything.
	FixedLimit int64         `json:"fixed_limit"`
	FixedAt    time.Duration `json:"fixed_at_ns"`
	// SlidingLimit is the most permits in Slots consecutive slots of W/Slots (a sliding
	// window's count, which spans between W − W/Slots + 1ns and W), ending at SlidingAt: the
	// smallest sliding-window limit that admits everything.
	Slots        int           `json:"slots"`
	SlidingLimit int64         `json:"sliding_limit"`
	SlidingAt    time.Duration `json:"sliding_at_ns"`
}

// Span is the time from the first request to the last.
func (s Stats) Span() time.Duration { return s.Last - s.First }

// slotCounter counts permits in the last slots slots of slotLength: what a sliding window
// (and, with one slot of the window's length, a fixed window) counts when it refuses nothing.
// Memory: slots words.
type slotCounter struct {
	slotLength int64
	ring       []int64
	cur        int64 // the slot-index of the last request; -1 before the first
	curEnd     int64 // where slot cur ends: a request before it is in it (times only grow)
	curAt      int   // cur's place in ring
	total      int64
	max        int64
	maxAt      int64
	// aligned is the permits in the clock-aligned window of all the slots, [kW, (k+1)W),
	// that the last request is in: what a fixed window of the same length counts, its most
	// alignedMax, first at alignedMaxAt.
	aligned, alignedMax, alignedMaxAt int64
}

func newSlotCounter(window time.Duration, slots int) *slotCounter {
	return &slotCounter{slotLength: int64(window) / int64(slots), ring: make([]int64, slots), cur: -1}
}

// add is n permits at now. Only a request in a new slot divides (most share the last one's).
func (c *slotCounter) add(now, n int64) {
	if c.cur < 0 || now >= c.curEnd {
		g := now / c.slotLength
		s := int64(len(c.ring))
		if c.cur < 0 || g/s != c.cur/s { // a new aligned window (slot indices are never negative)
			c.aligned = 0
		}
		if c.cur < 0 || g-c.cur >= s {
			clear(c.ring)
			c.total = 0
		} else {
			for i := c.cur + 1; i <= g; i++ { // the slots that expire as the window moves on
				c.total -= c.ring[i%s]
				c.ring[i%s] = 0
			}
		}
		c.cur, c.curEnd, c.curAt = g, (g+1)*c.slotLength, int(g%s)
	}
	c.ring[c.curAt] += n
	c.total += n
	if c.total > c.max {
		c.max, c.maxAt = c.total, now
	}
	c.aligned += n
	if c.aligned > c.alignedMax {
		c.alignedMax, c.alignedMaxAt = c.aligned, now
	}
}

// statistics reads src once (and once more, a window behind, for the sliding peak: two
// readers rather than a buffer of the window's requests, so memory stays flat).
func statistics(ctx context.Context, src Source, window time.Duration, slots int) (Stats, error) {
	st := Stats{Window: window, Slots: slots, MinGap: -1}
	fixed := newSlotCounter(window, 1)
	sliding := newSlotCounter(window, slots)
	trail, closer, err := src.Open()
	if err != nil {
		return st, err
	}
	defer closer.Close()
	var behind trace.Row
	haveBehind := false
	inWindow := int64(0)
	instant := int64(0)
	last := time.Duration(-1)
	err = each(ctx, src, func(row *trace.Row) error {
		n := int64(row.Permits)
		if st.Requests == 0 {
			st.First = row.At
		} else if gap := row.At - last; st.MinGap < 0 || gap < st.MinGap {
			st.MinGap = gap
		}
		if row.At != last {
			instant = 0
		}
		instant += n
		if instant > st.MaxInstant {
			st.MaxInstant, st.MaxInstantAt = instant, row.At
		}
		last = row.At
		st.Requests++
		st.Permits += n
		st.MaxRequest = max(st.MaxRequest, row.Permits)
		fixed.add(int64(row.At), n)
		sliding.add(int64(row.At), n)
		// The peak window is (row.At − W, row.At]: the trailing reader drops what is older.
		inWindow += n
		for {
			if !haveBehind {
				b, err := trail.Next()
				if errors.Is(err, io.EOF) {
					return fmt.Errorf("%s: changed while it was read", src.Name())
				}
				if err != nil {
					return fmt.Errorf("%s: %w", src.Name(), err)
				}
				behind, haveBehind = b, true
			}
			if behind.At > row.At-window {
				break
			}
			inWindow -= int64(behind.Permits)
			haveBehind = false
		}
		if inWindow > st.Peak {
			st.Peak, st.PeakAt = inWindow, row.At
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	st.Last = last
	if st.Requests == 0 {
		return st, fmt.Errorf("%s: no requests: there is nothing to fit", src.Name())
	}
	if span := st.Span(); span > 0 {
		st.MeanPerSec = float64(st.Permits) / span.Seconds()
	}
	st.PeakPerSec = float64(st.Peak) / window.Seconds()
	st.FixedLimit, st.FixedAt = fixed.max, time.Duration(fixed.maxAt)
	st.SlidingLimit, st.SlidingAt = sliding.max, time.Duration(sliding.maxAt)
	return st, nil
}
