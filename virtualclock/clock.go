// Package virtualclock provides the monotonic virtual clock that the simulator advances.
//
// A Clock starts at 0 and reports time as a time.Duration since that origin. It only moves
// when told to, and only forward: Advance(-1ns) or AdvanceTo(an earlier time) is an error,
// never a silent clamp, so a simulation bug that would run time backwards surfaces at once.
// Reads are a single atomic load and safe from any number of goroutines.
//
// Freeze makes every later Advance fail until Thaw, which lets a concurrency test state
// "16 goroutines racing at t=5ms for a limit of 20 get exactly 20" without any goroutine
// being able to move time underneath the others.
package virtualclock

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// ErrFrozen is returned by Advance and AdvanceTo while the clock is frozen.
var ErrFrozen = errors.New("virtualclock: clock is frozen")

// Clock is a monotonic virtual clock. The zero value is a clock at time 0, ready to use.
type Clock struct {
	now    atomic.Int64 // nanoseconds since the origin
	frozen atomic.Bool
}

// New returns a clock at time 0.
func New() *Clock { return &Clock{} }

// NewAt returns a clock whose current time is start (which must not be negative).
func NewAt(start time.Duration) (*Clock, error) {
	if start < 0 {
		return nil, fmt.Errorf("virtualclock: start %v is before the origin", start)
	}
	c := &Clock{}
	c.now.Store(int64(start))
	return c, nil
}

// Now returns the current virtual time since the origin. Cost: one atomic load.
func (c *Clock) Now() time.Duration { return time.Duration(c.now.Load()) }

// Advance moves the clock forward by d. A negative d is an error and leaves the clock
// unchanged; so is an advance that would overflow the int64 nanosecond range (292 years).
func (c *Clock) Advance(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("virtualclock: Advance(%v): a monotonic clock cannot move backwards", d)
	}
	for {
		if c.frozen.Load() {
			return ErrFrozen
		}
		cur := c.now.Load()
		next := cur + int64(d)
		if next < cur {
			return fmt.Errorf("virtualclock: Advance(%v) from %v overflows the clock's range", d, time.Duration(cur))
		}
		if c.now.CompareAndSwap(cur, next) {
			return nil
		}
	}
}

// AdvanceTo moves the clock to t. Moving to the current time is allowed (a no-op); moving
// to an earlier time is an error and leaves the clock unchanged.
func (c *Clock) AdvanceTo(t time.Duration) error {
	for {
		if c.frozen.Load() {
			return ErrFrozen
		}
		cur := c.now.Load()
		if int64(t) < cur {
			return fmt.Errorf("virtualclock: AdvanceTo(%v): the clock is already at %v and cannot move backwards", t, time.Duration(cur))
		}
		if c.now.CompareAndSwap(cur, int64(t)) {
			return nil
		}
	}
}

// Freeze stops the clock: Advance and AdvanceTo return ErrFrozen until Thaw.
func (c *Clock) Freeze() { c.frozen.Store(true) }

// Thaw undoes Freeze.
func (c *Clock) Thaw() { c.frozen.Store(false) }

// Frozen reports whether the clock is frozen.
func (c *Clock) Frozen() bool { return c.frozen.Load() }
