package limiters

// reusesLimiters reports whether a keyed table of spec may reset an evicted key's limiter and
// give it to the next new key (resetForReuse) instead of calling spec.New: only for this
// package's specs of the kinds resetForReuse knows, whose New makes a limiter of its own on
// every call. Another Spec's New may return a limiter it shares or watches (a test's factory
// does: one limiter for every key), which a reset would wipe under its other holders.
func reusesLimiters(spec Spec) bool {
	switch spec.(type) {
	case TokenBucketSpec, LeakyBucketSpec, FixedWindowSpec, NginxSpec, ConcurrencySpec:
		return true
	}
	return false
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
	case *Nginx:
		l.mu.Lock()
		l.node, l.undo = nginxNode{}, nginxUndo{}
		l.mu.Unlock()
	case *Concurrency:
		l.inFlight.Store(0)
	default:
		return false
	}
	return true
}
