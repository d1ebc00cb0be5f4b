package limiters

import "fmt"

// reusesLimiters reports whether a keyed table of spec may reset an evicted key's limiter and
// give it to the next new key (resetForReuse) instead of calling spec.New: only for this
// package's specs of the kinds resetForReuse knows, whose New makes a limiter of its own on
// every call. Another Spec's New may return a limiter it shares or watches (a test's factory
// does: one limiter for every key), which a reset would wipe under its other holders.
func reusesLimiters(spec Spec) bool {
	switch spec := spec.(type) {
	case TokenBucketSpec, LeakyBucketSpec, FixedWindowSpec, ConcurrencySpec:
		return true
	case ReusableSpec:
		return spec.ReusesLimiters()
	}
	return false
}

// ReusableSpec is a spec of another package whose New makes a limiter of its own on every
// call, and whose limiters are Reusable: a keyed table of it resets an evicted key's limiter
// for the next new key instead of building one (no allocation once the table is full).
type ReusableSpec interface {
	Spec
	ReusesLimiters() bool
}

// Reusable is a limiter that can put itself back, in place, in the state its spec's New
// makes; what New sets besides the state (the rate, the clock) stays as it is.
type Reusable interface {
	Limiter
	ResetState()
}

// resetForReuse puts an evicted key's limiter back in the state its spec's New makes and
// reports whether it could: for the kinds named here, matched by exact type. What New sets
// besides the state (the rate, the clock) is the same for every key of a table, which builds
// them all from one spec on one clock. TestKeyedResetIsNew holds each reset limiter against a
// new one field by field, after a run that moved every field.
func resetForReuse(l Limiter) bool {
	switch l := l.(type) {
	case *TokenBucket:
		l.arrival.Store(0)
	case *LeakyBucket:
		l.arrival.Store(0)
	case *FixedWindow:
		l.state.Store(0)
	case *Concurrency:
		l.inFlight.Store(0)
	case Reusable:
		l.ResetState()
	default:
		return false
	}
	return true
}

// compactKind reports whether l's whole state is one word, which a keyed table can keep in a
// key's slot instead of a limiter of its own (80 bytes for a token bucket): the token and
// leaky buckets' TAT, the fixed window's index and count. New leaves it 0.
func compactKind(l Limiter) bool {
	switch l.(type) {
	case *TokenBucket, *LeakyBucket, *FixedWindow:
		return true
	}
	return false
}

// compactWord is a compact kind's state word.
func compactWord(l Limiter) uint64 {
	switch l := l.(type) {
	case *TokenBucket:
		return uint64(l.arrival.Load())
	case *LeakyBucket:
		return uint64(l.arrival.Load())
	case *FixedWindow:
		return l.state.Load()
	}
	panic(fmt.Sprintf("limiters: %T has no compact state", l))
}

// setCompactWord puts a state word in a compact kind's limiter.
func setCompactWord(l Limiter, w uint64) {
	switch l := l.(type) {
	case *TokenBucket:
		l.arrival.Store(int64(w))
	case *LeakyBucket:
		l.arrival.Store(int64(w))
	case *FixedWindow:
		l.state.Store(w)
	default:
		panic(fmt.Sprintf("limiters: %T has no compact state", l))
	}
}
