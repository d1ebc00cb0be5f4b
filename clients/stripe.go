package clients

import (
	"math"
	"time"
)

// stripe-go v84.4.1 (stripe.go: BackendImplementation.requestWithRetriesAndTelemetry,
// shouldRetry, sleepTime; error.go: Error.canRetry). The same rules hold at v86.2.0.
//
//   - MaxNetworkRetries defaults to 2: 3 attempts in all.
//   - shouldRetry asks, in this order: retries spent → no; the request's context done → no;
//     an API error (every non-2xx answer becomes one) → its canRetry, which is true only for
//     a 429 whose error code is lock_timeout. A 429 rate_limit is never retried ("that'd
//     likely contribute to more contention problems"), whatever Stripe-Should-Retry says:
//     the header, 409 and ≥ 500 are consulted only when there is no API error, so a 409 or
//     a 500 with an error body is not retried either (crosscheck/stripe_test.go).
//   - sleepTime(n) before retry n+1: d = 500ms + 500ms·n², capped at 5s, minus a draw
//     rand.Int63n(d/4) from math/rand's global source, floored at 500ms: 500ms exactly, then
//     (750ms, 1s], (1.875s, 2.5s], (3.75s, 5s] from the fourth on.
//   - Retry-After is not read.
const (
	StripeMaxNetworkRetries = 2 // DefaultMaxNetworkRetries
	StripeMaxAttempts       = StripeMaxNetworkRetries + 1
	StripeMinRetryDelay     = 500 * time.Millisecond  // minNetworkRetriesDelay
	StripeMaxRetryDelay     = 5000 * time.Millisecond // maxNetworkRetriesDelay
)

// StripeRetries reports whether stripe-go retries a 429 of error code code: only
// lock_timeout.
func StripeRetries(code string) bool { return code == "lock_timeout" }

// StripeDelay is sleepTime's delay after numRetries retries (0 before the first) before its
// jitter, with the library's constants as lo and hi (500ms, 5s): lo·(1 + numRetries²), capped
// at hi.
func StripeDelay(lo, hi time.Duration, numRetries int) time.Duration {
	n := time.Duration(numRetries)
	if n > 0 && (n > math.MaxInt32 || lo > math.MaxInt64/(n*n+1)) {
		return hi // where the library's product wraps round; its cap is what it means
	}
	return min(lo+lo*n*n, hi)
}

// StripeSleep is sleepTime(numRetries) with jitter the library's draw, in [0, delay/4):
// delay − jitter, at least lo.
func StripeSleep(lo, hi time.Duration, numRetries int, jitter int64) time.Duration {
	return max(StripeDelay(lo, hi, numRetries)-time.Duration(jitter), lo)
}

// StripeSleepBounds are the least and the most sleepTime(numRetries) can be with the
// library's constants: the delay less its largest jitter (delay/4 − 1ns), floored at 500ms,
// and the delay.
func StripeSleepBounds(numRetries int) (least, most time.Duration) {
	d := StripeDelay(StripeMinRetryDelay, StripeMaxRetryDelay, numRetries)
	return StripeSleep(StripeMinRetryDelay, StripeMaxRetryDelay, numRetries, max(int64(d/4)-1, 0)), d
}
