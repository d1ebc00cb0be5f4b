package limiters

import (
	"fmt"
	"math/bits"
	"time"
)

// Clock reports monotonic time as a duration since an origin fixed when the clock was made.
// The simulator passes a *virtualclock.Clock; a production service passes NewMonotonicClock().
// Wall-clock time is never used: an NTP step or a manual clock change cannot grant a burst or
// stall a limiter.
type Clock interface {
	Now() time.Duration
}

// MonotonicClock is the real clock: time.Since of a fixed start, which Go measures on the
// operating system's monotonic clock, never on wall time.
type MonotonicClock struct{ start time.Time }

// NewMonotonicClock returns a real monotonic clock whose origin is now.
func NewMonotonicClock() *MonotonicClock { return &MonotonicClock{start: time.Now()} }

// Now returns the time elapsed since the clock was made.
func (c *MonotonicClock) Now() time.Duration { return time.Since(c.start) }

// Decision is the outcome of an acquire.
type Decision uint8

const (
	// Rejected: not now. The same request can succeed later.
	Rejected Decision = iota
	// Admitted: the permits were taken.
	Admitted
	// Never: the request asks for more permits than the limiter can ever grant at once
	// (n > MaxPermits()); retrying cannot help.
	Never
	// Invalid: n was zero or negative. Nothing was taken.
	Invalid
)

func (d Decision) String() string {
	switch d {
	case Rejected:
		return "rejected"
	case Admitted:
		return "admitted"
	case Never:
		return "never"
	case Invalid:
		return "invalid"
	}
	return fmt.Sprintf("Decision(%d)", uint8(d))
}

// Limiter is the core every kind implements: decide n permits at time t, and say what it is.
// What only some kinds can do (say when to retry, make a caller wait, release, refund, take
// feedback) is a capability: a small interface of its own beside this one (capability.go),
// discovered by CapabilitiesOf.
//
// All methods are safe for concurrent use, take no lock and allocate nothing (Snapshot and
// String excepted). Time is explicit, in the style of x/time/rate's AllowN(t, n): it is the
// fast path the simulator calls and the seam every test uses; the kinds that hold a clock
// also offer the plain forms (Clocked).
//
// Times passed to the At forms should not run backwards by more than the limiter's window.
// A late caller is never allowed to reset state that newer callers built: GCRA kinds judge it
// at its own time against the newer schedule (which can only make it stricter), the fixed
// window counts it against the newest window, and the sliding window refuses it once a newer
// caller has moved any slot past its own. Times are correct from 0 to 2^62 ns (146 years); a time before
// 0 is taken as 0 by the sliding window.
type Limiter interface {
	// AcquireAt tries to take n permits at time now and says what happened.
	AcquireAt(now time.Duration, n int) Decision
	// AvailableAt is how many permits a request at time now could take.
	AvailableAt(now time.Duration) int
	// MaxPermits is the largest n that can ever be granted at once. A request for more is
	// answered Never.
	MaxPermits() int
	// Kind names the algorithm.
	Kind() Kind
	// String is the limiter's spec, e.g. "token-bucket:capacity=3,rate=100/1s"; ParseSpec
	// reads it back.
	String() string
	// Snapshot is a read-only copy of the state that explains the next decision.
	Snapshot(now time.Duration) State
}

// Clocked is a limiter that reads its own clock: the plain forms a production caller uses.
// Every ratelab kind is Clocked.
type Clocked interface {
	Limiter
	// TryAcquire reports whether n permits were taken now, by the limiter's clock.
	TryAcquire(n int) bool
	// Available is AvailableAt at the clock's current time.
	Available() int
}

// RateLimiter is a Limiter on a time axis that can say when a refused request would pass:
// the core with the retry-after capability.
type RateLimiter interface {
	Limiter
	RetryAfter
}

// Rate is Permits per Window, e.g. Rate{100, time.Second} for 100/s.
type Rate struct {
	Permits int
	Window  time.Duration
}

// PerSecond returns Rate{n, time.Second}.
func PerSecond(n int) Rate { return Rate{Permits: n, Window: time.Second} }

// String formats the rate as in a spec: "100/1s", "7/100ms".
func (r Rate) String() string { return fmt.Sprintf("%d/%s", r.Permits, FormatDuration(r.Window)) }

// Interval is the emission interval T = Window / Permits, rounded up to a whole nanosecond.
// It is 0 for a rate that validation refuses (no permits or a non-positive window).
//
// Rounding up keeps every limiter at or below its configured rate forever: 3 per second
// gives T = 333,333,334ns, which over an hour of saturating demand admits 10,799 permits after
// the initial burst instead of 10,800 — one fewer, never one more. Rounding down (as a plain
// integer division would) would admit more than the rate and drift further every hour. The
// relative error is below 1ns/T: under 10⁻⁶ for any rate up to a million per second, and
// exactly 0 when Window is a whole multiple of Permits nanoseconds (100/1s, 7/7ms).
func (r Rate) Interval() time.Duration {
	w, p := int64(r.Window), int64(r.Permits)
	if w <= 0 || p <= 0 {
		return 0
	}
	// ⌈w/p⌉ without forming w+p−1, which overflows for windows near 292 years.
	return time.Duration((w-1)/p + 1)
}

// Validate refuses, as kind's field rate, a rate with no permits, a non-positive window or an
// emission interval below 1ns (more permits than nanoseconds in the window).
func (r Rate) Validate(kind Kind) error {
	if r.Permits <= 0 {
		return NewConfigError(kind, "rate", r.String(), "permits per window must be at least 1")
	}
	if r.Window <= 0 {
		return NewConfigError(kind, "rate", r.String(), "window must be positive")
	}
	if int64(r.Window) < int64(r.Permits) {
		return NewConfigError(kind, "rate", r.String(),
			"emission interval "+FormatDuration(r.Window)+"/"+fmt.Sprint(r.Permits)+" is below 1ns")
	}
	return nil
}

// ConfigError is a configuration refused at construction. It names the field and its value.
type ConfigError struct {
	Kind   Kind
	Field  string
	Value  string
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("limiters: %s: %s=%s: %s", e.Kind, e.Field, e.Value, e.Reason)
}

// NewConfigError is a *ConfigError: kind's field=value refused for reason, the error every
// Validate and New returns, in this package and in a kind of another package.
func NewConfigError(kind Kind, field, value, reason string) error {
	return &ConfigError{Kind: kind, Field: field, Value: value, Reason: reason}
}

// MaxSpan bounds every configured duration product (tolerance, window) so that
// now + span never overflows int64 for any now up to 146 years.
const MaxSpan = int64(1) << 62

// minWindow is the shortest window a fixed or sliding window of the given limit accepts:
// 2^(bits.Len(limit)−1) ns, at most the limit in nanoseconds. Both pack a window number and a
// count of bits.Len(limit) bits into one uint64, leaving 64 − bits.Len(limit) bits for the
// window number, compared as a signed difference. With windows at least this long every
// window number below 2^62 ns (146 years) differs from every other by less than half that
// range, so no idle, however long, can make an old window look current or newer. Shorter
// windows are only needed above about one permit per nanosecond.
func minWindow(limit uint64) int64 {
	return int64(1) << (bits.Len64(limit) - 1)
}

func checkWindow(kind Kind, limit uint64, window time.Duration) error {
	if min := minWindow(limit); int64(window) < min {
		return NewConfigError(kind, "window", FormatDuration(window), fmt.Sprintf(
			"too short for limit=%d: a window must be at least 2^%d ns = %s for that limit (above about one permit per ns)",
			limit, bits.Len64(limit)-1, FormatDuration(time.Duration(min))))
	}
	return nil
}

// RequireClock refuses a nil clock for kind, naming the field clock and the fix.
func RequireClock(kind Kind, c Clock) error {
	if c == nil {
		return NewConfigError(kind, "clock", "nil", "a clock is required (NewMonotonicClock() for real time)")
	}
	return nil
}

// CheckN classifies a request size before any state is read.
func CheckN(n, max int) Decision {
	if n <= 0 {
		return Invalid
	}
	if n > max {
		return Never
	}
	return Admitted
}

// FormatDuration prints a duration the way specs write it: "1s", "100ms", "1m", "1h30m",
// "333.333334ms". It differs from time.Duration.String only in dropping zero units
// ("1m" rather than "1m0s").
func FormatDuration(d time.Duration) string {
	s := d.String()
	if n := len(s); n > 3 && s[n-3:] == "m0s" && s[n-4] >= '0' && s[n-4] <= '9' {
		s = s[:n-2] // "1m0s" → "1m"
	}
	if n := len(s); n > 3 && s[n-3:] == "h0m" {
		s = s[:n-2] // "1h0m" → "1h"
	}
	return s
}

// ShortDuration prints a duration for the screen, rounded to about four significant digits
// (1.0105263s → 1.011s, 57.51234ms → 57.5ms, 250.4µs → 250µs; 12.345678s → 12.35s): what the
// workbench's state lines and log show, in the terminal and on the page.
func ShortDuration(d time.Duration) string {
	neg := d < 0
	if neg {
		d = -d
	}
	var r time.Duration
	switch {
	case d >= 10*time.Second:
		r = d.Round(10 * time.Millisecond)
	case d >= time.Second:
		r = d.Round(time.Millisecond)
	case d >= 10*time.Millisecond:
		r = d.Round(100 * time.Microsecond)
	case d >= time.Millisecond:
		r = d.Round(10 * time.Microsecond)
	default:
		r = d.Round(time.Microsecond)
	}
	s := FormatDuration(r)
	if neg {
		s = "-" + s
	}
	return s
}

// ReadClock is c.Now(), or 0 for the zero value of a limiter type, which has no clock.
func ReadClock(c Clock) time.Duration {
	if c == nil {
		return 0
	}
	return c.Now()
}

// FirstInstant is the least d ≥ 0 at which passes(d) holds, for a passes that never goes
// from true back to false as d grows (a limiter's availability, nothing else arriving):
// doubling, then halving, about 2·log2(d) calls. ok is false when it does not hold within
// MaxSpan.
func FirstInstant(passes func(d time.Duration) bool) (time.Duration, bool) {
	if passes(0) {
		return 0, true
	}
	hi := time.Duration(1)
	for !passes(hi) {
		if hi > time.Duration(MaxSpan)/2 {
			return 0, false
		}
		hi *= 2
	}
	lo := hi / 2 // passes(lo) is false: lo is 0 or the last doubling's miss
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if passes(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}
