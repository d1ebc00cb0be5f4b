package clients

import "time"

// @octokit/plugin-throttling v9.6.1 (src/index.ts, src/wrap-request.ts), with the handler
// its README gives as the example, which retries a primary rate limit once and never a
// secondary one:
//
//   - A 403 or 429 whose X-RateLimit-Remaining is "0" is a primary rate limit. The plugin
//     computes retryAfter = max(⌈(X-RateLimit-Reset·1000 − Date.now())/1000⌉ + 1, 0) seconds
//     — the reset is an epoch second, Date.now() the wall clock in whole milliseconds; the
//     +1 is GitHub's advice to come back after the reset, not at it — and calls
//     onRateLimit(retryAfter, options, octokit, retryCount). The example returns true while
//     retryCount < 1: one retry, retryAfter·1000 ms later. A reset 2.3s away at
//     Date.now() = …000.700 is X-RateLimit-Reset …003, so retryAfter = ⌈2.3⌉ + 1 = 4s.
//   - A response without the reset header reads as epoch 0: retryAfter is 0, the retry
//     immediate.
//   - A 403/429 whose remaining is not "0" and whose message does not say "secondary rate" is
//     no rate limit to the plugin: it is thrown, not retried. A secondary limit (GitHub says
//     so in the message, not a header) waits Retry-After, or fallbackSecondaryRateRetryAfter
//     60s without one, if onSecondaryRateLimit returns true; the example's never does.
//   - Before every attempt, retries included, a request passes Bottleneck groups, one per
//     client id: writes (any method but GET and HEAD) one at a time and at least 1000 ms
//     apart (minTime), writes that trigger notifications also 3000 ms apart, searches 2000 ms
//     apart; every request then at most 10 at once (global maxConcurrent 10, no minTime).
//     A retry is scheduled with priority 0 (ahead of first attempts) and weight 0.
const (
	OctokitRetries              = 1 // the README example's onRateLimit: retryCount < 1
	OctokitMaxAttempts          = OctokitRetries + 1
	OctokitSecondaryFallback    = 60 * time.Second // fallbackSecondaryRateRetryAfter
	OctokitWriteMinTime         = 1000 * time.Millisecond
	OctokitSearchMinTime        = 2000 * time.Millisecond
	OctokitNotificationsMinTime = 3000 * time.Millisecond
	OctokitGlobalMaxConcurrent  = 10
	OctokitRetryAfterBase       = 1000 * time.Millisecond // retryAfterBaseValue: the wait is retryAfter × 1000 ms
)

// OctokitGroups are the Bottleneck groups a request passes, by name, and the least spacing
// each keeps between the requests it lets through (0: global, concurrency only).
var OctokitGroups = map[string]time.Duration{
	"global": 0, "write": OctokitWriteMinTime, "search": OctokitSearchMinTime, "notifications": OctokitNotificationsMinTime,
}

// OctokitGroupNames lists OctokitGroups' names in the order errors name them.
var OctokitGroupNames = []string{"global", "write", "search", "notifications"}

// OctokitRateLimitWait is how long the plugin waits before retrying a primary rate limit
// answered when Date.now() was nowMillis, with X-RateLimit-Reset resetEpoch (0 when the
// header is missing): max(⌈(resetEpoch·1000 − nowMillis)/1000⌉ + 1, 0) seconds, as whole
// milliseconds.
func OctokitRateLimitWait(nowMillis, resetEpoch int64) time.Duration {
	diff := resetEpoch*1000 - nowMillis
	seconds := diff / 1000
	if diff%1000 > 0 { // Math.ceil of the quotient: up for a positive remainder only
		seconds++
	}
	seconds = max(seconds+1, 0)
	return time.Duration(seconds) * OctokitRetryAfterBase
}

// OctokitPrimary reports whether an answer is a primary rate limit to the plugin: its
// X-RateLimit-Remaining is "0" (a server writes a negative remaining as 0).
func OctokitPrimary(remaining int) bool { return remaining <= 0 }
