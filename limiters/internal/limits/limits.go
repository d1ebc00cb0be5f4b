// Package limits holds the phrases that the field ranges of several kinds share (a time's
// ceiling, a window added to a time, the clock's resolution), so that docs/LIMITS.md says
// them the same way for ratelab's kinds and for the peers'. Each kind's ranges are in its own
// file beside its Validate (limiters.KindInfo.Ranges).
package limits

const (
	// Span is the ceiling of a time or a duration: 2^62 ns, about 146 years.
	Span = "at most 2^62 ns"
	// Window is why a window or a tolerance is capped at Span.
	Window = "a window (and a tolerance) is added to times up to 2^62 ns: the sum must not overflow int64"
	// PerNS is why a rate's interval is at least 1ns.
	PerNS = "one permit per nanosecond is the clock's resolution"
	// Limit32 is a count kept in 32 bits.
	Limit32 = "1 to 2^32−1"
)
