// Package toykind is the kind that docs/ADDING-A-KIND.md builds: a whole kind outside package
// limiters, registered with limiters.Register and styled with present.Register, that
// ParseSpec, the registry and every part of the workbench then know as they know ratelab's
// own. It is small on purpose: a quota that admits its first Limit permits, ever, and refuses
// every request after them.
package toykind

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/present"
)

// KindCountdown is the kind's name, as a spec names it: "countdown:limit=3".
const KindCountdown limiters.Kind = "countdown"

// CountdownSpec is a countdown's configuration: Limit permits over the limiter's whole life.
type CountdownSpec struct {
	Limit int
}

// Fields binds the spec's fields for parsing and printing, in the order the spec prints them.
func (s *CountdownSpec) Fields() []limiters.Field {
	return []limiters.Field{
		limiters.IntField("limit", true, "permits over the limiter's whole life, e.g. 3", &s.Limit),
	}
}

// Kind is countdown.
func (s CountdownSpec) Kind() limiters.Kind { return KindCountdown }

// String is the spec as ParseSpec reads it: "countdown:limit=3".
func (s CountdownSpec) String() string { return limiters.FormatSpec(KindCountdown, s.Fields()) }

// Validate refuses a limit below 1, naming the field.
func (s CountdownSpec) Validate() error {
	if s.Limit < 1 {
		return limiters.NewConfigError(KindCountdown, "limit", fmt.Sprint(s.Limit), "must be at least 1")
	}
	return nil
}

// countdownRanges are what Validate accepts, field by field, with specs at and just past each
// edge: what docs/LIMITS.md would say of the kind, were it registered there.
var countdownRanges = []limiters.FieldRange{
	{Field: "limit", Accepted: "1 to 2^63−1", Why: "a count of permits, kept in an int64",
		Valid: []string{"countdown:limit=1", "countdown:limit=9223372036854775807"}, Invalid: []string{"countdown:limit=0", "countdown:limit=9223372036854775808"}},
}

// New builds a countdown; it has no time axis, so it ignores the clock.
func (s CountdownSpec) New(limiters.Clock) (limiters.Limiter, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	c := &Countdown{limit: int64(s.Limit)}
	return c, nil
}

// AdmissionBound is false: a countdown has no rate, so no bound per interval (it admits
// Limit in all, in whatever interval the traffic puts them).
func (s CountdownSpec) AdmissionBound(time.Duration) (int64, bool) { return 0, false }

// NaturalWindow is 0: no time axis.
func (s CountdownSpec) NaturalWindow() time.Duration { return 0 }

// NominalRate is false: no time axis.
func (s CountdownSpec) NominalRate() (limiters.Rate, bool) { return limiters.Rate{}, false }

// InitialPermits is Limit.
func (s CountdownSpec) InitialPermits() int { return s.Limit }

// Countdown admits its first limit permits and refuses the rest: one atomic load and one CAS
// per decision, no lock, no allocation. countdown:limit=3 admits 2 then 1, refuses the next 1.
type Countdown struct {
	limit int64
	taken atomic.Int64
}

// AcquireAt takes n permits if that many are left.
func (c *Countdown) AcquireAt(_ time.Duration, n int) limiters.Decision {
	if d := limiters.CheckN(n, int(c.limit)); d != limiters.Admitted {
		return d
	}
	for {
		taken := c.taken.Load()
		if taken+int64(n) > c.limit {
			return limiters.Rejected
		}
		if c.taken.CompareAndSwap(taken, taken+int64(n)) {
			return limiters.Admitted
		}
	}
}

// AvailableAt is what is left.
func (c *Countdown) AvailableAt(time.Duration) int { return int(c.limit - c.taken.Load()) }

// MaxPermits is the limit.
func (c *Countdown) MaxPermits() int { return int(c.limit) }

// Kind is countdown.
func (c *Countdown) Kind() limiters.Kind { return KindCountdown }

// String is the spec.
func (c *Countdown) String() string { return CountdownSpec{Limit: int(c.limit)}.String() }

// Snapshot is the level left of the limit, drawn as a level (limiters.ShapeLevel).
func (c *Countdown) Snapshot(now time.Duration) limiters.State {
	left := c.AvailableAt(now)
	return limiters.State{Kind: KindCountdown, At: now, Available: left, MaxPermits: int(c.limit),
		Level: float64(left), LevelMax: float64(c.limit), LevelName: "permits left", NextFree: now}
}

// countdownKind is the registry entry: what the CLI, the TUI, the charts and the golden
// catalogue read instead of switching on kinds.
var countdownKind = limiters.KindInfo{
	Kind: KindCountdown, Family: "toy", Shape: limiters.ShapeLevel,
	Summary: "a toy: the first limit permits, ever, then nothing (docs/ADDING-A-KIND.md)",
	Example: "countdown:limit=3",
	Fields:  limiters.FieldInfos[CountdownSpec](),
	Ranges:  countdownRanges,
	Parse:   limiters.SpecParser(CountdownSpec{}),
	Explain: func(s limiters.State, n int, d limiters.Decision) string {
		if d == limiters.Admitted {
			return fmt.Sprintf("%g of %g permits left; %d taken", s.Level, s.LevelMax, n)
		}
		return fmt.Sprintf("%g of %g permits left: %d more would pass the limit, now and forever", s.Level, s.LevelMax, n)
	},
}

// countdownStyle is how countdown looks in charts and legends: a colour no other kind has
// (present.Register refuses one that is taken) and, within its family, a glyph of its own.
var countdownStyle = present.Style{Color: "#44aa99", ColorName: "toy teal", Glyph: "cross"}

// Register adds countdown to the registry and its style to package present; call it once,
// from an init function or a test.
func Register() {
	limiters.Register(countdownKind)
	present.Register(string(KindCountdown), countdownStyle)
}
