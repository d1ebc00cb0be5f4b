package limiters

import (
	"math"
	"math/bits"
	"time"
)

// QuotaUnit is what a quota counts, as HTTP's RateLimit-Policy field names it (its qu
// parameter).
type QuotaUnit string

// The quota units ratelab's kinds count.
const (
	UnitRequests           QuotaUnit = "requests"            // permits per window: every kind with a time axis
	UnitConcurrentRequests QuotaUnit = "concurrent-requests" // permits held at once: a bulkhead
)

// QuotaPolicy is a spec's quota in the terms a server advertises it (the RateLimit-Policy
// field of draft-ietf-httpapi-ratelimit-headers, and X-RateLimit-Limit): Quota units per
// Window, the window a whole number of seconds, as the field requires.
//
// It is the spec's nominal rate (NominalRate) over the smallest whole number of seconds, at
// least 1, in which that rate's quota covers the spec's largest burst (InitialPermits), so
// that a client pacing itself at Quota/Window keeps the limiter's steady rate and the
// remaining count a server sends never exceeds Quota:
//
//	token-bucket:capacity=10,rate=100/1s   100 per 1s
//	token-bucket:capacity=200,rate=100/1s  200 per 2s (100/s; a burst of 200 fits in 2s)
//	fixed-window:limit=5,window=100ms      50 per 1s (5 per 100ms, over a whole second)
//	leaky-bucket:rate=1/1m                 1 per 60s
//	token-bucket:capacity=3,rate=1/1m      3 per 180s
//	concurrency:max=20                     20 concurrent-requests, no window
//
// Full is what Remaining counts up to: the burst the limiter holds when rested
// (InitialPermits), which the reset time (QuotaAt) is measured to.
type QuotaPolicy struct {
	Quota  int64         // q: units per Window (saturating at math.MaxInt64)
	Window time.Duration // w: a whole number of seconds, at least 1s; 0 when the unit has no window
	Unit   QuotaUnit     // qu
	Full   int           // the rested limiter's available permits
}

// maxQuotaWindow bounds a policy's window: 2³¹ seconds (68 years).
const maxQuotaWindow = 1 << 31

// PolicyOf is spec's quota policy (QuotaPolicy).
func PolicyOf(spec Spec) QuotaPolicy {
	full := max(spec.InitialPermits(), 1)
	rate, ok := spec.NominalRate()
	if !ok || rate.Permits <= 0 || rate.Window <= 0 {
		return QuotaPolicy{Quota: int64(full), Unit: UnitConcurrentRequests, Full: full}
	}
	p, w := uint64(rate.Permits), uint64(rate.Window)
	// The smallest whole s ≥ 1 with ⌊p·s·10⁹/w⌋ ≥ full: s = ⌈full·w / (p·10⁹)⌉, then one more
	// if the floor falls short.
	hi, lo := bits.Mul64(uint64(full), w)
	den := p * uint64(time.Second)
	var s uint64 = maxQuotaWindow
	if hi < den {
		q, r := bits.Div64(hi, lo, den)
		if r != 0 {
			q++
		}
		s = min(max(q, 1), maxQuotaWindow)
	}
	quota := quotaIn(p, w, s)
	for quota < uint64(full) && s < maxQuotaWindow {
		s++
		quota = quotaIn(p, w, s)
	}
	return QuotaPolicy{Quota: int64(min(quota, math.MaxInt64)), Window: time.Duration(s) * time.Second,
		Unit: UnitRequests, Full: full}
}

// quotaIn is ⌊p·s·10⁹/w⌋, p permits per w ns over s seconds, saturating.
func quotaIn(p, w, s uint64) uint64 {
	hi, lo := bits.Mul64(p, s*uint64(time.Second))
	if hi >= w {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, w)
	return q
}

// Quota is a limiter's quota at one instant, in the terms a server sends it (the RateLimit
// field's r and t, X-RateLimit-Remaining and -Reset).
type Quota struct {
	Remaining int           // r: the permits a request could take now (AvailableAt)
	Reset     time.Duration // t: how long until the limiter holds its policy's Full permits again
	ResetOK   bool          // false when the kind cannot say (no RetryAfter capability)
}

// QuotaAt is l's quota at now under policy: Remaining is AvailableAt(now), and Reset is how
// long a request for all of policy.Full permits would wait (RetryAfterAt), which is 0 for a
// rested limiter. A token bucket of capacity 10 at 100/s that has just given out 4 permits
// at once has 6 remaining and resets in 40ms; a fixed window of 5 per second with 2 counted
// at 300ms resets at its boundary, 700ms later.
func QuotaAt(l Limiter, now time.Duration, policy QuotaPolicy) Quota {
	q := Quota{Remaining: l.AvailableAt(now)}
	if ra, ok := l.(RetryAfter); ok && policy.Unit == UnitRequests {
		full := min(policy.Full, l.MaxPermits())
		if full >= 1 {
			q.Reset, q.ResetOK = ra.RetryAfterAt(now, full)
		}
	}
	return q
}
