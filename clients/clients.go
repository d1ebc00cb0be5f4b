// Package clients holds the retry rules of real HTTP client libraries as pure functions of
// the attempt, the server's answer and a uniform draw, so that ratelab's simulated callers
// (engine's client policies) wait and give up exactly as the library would, on the virtual
// clock, with the lane's seeded random stream in place of the library's own.
//
// Each rule is read from the library's source at the version named, and a test drives the
// real library beside it (clients_test.go for go-retryablehttp and cenkalti/backoff; the
// AWS SDK in the crosscheck module, which keeps its dependencies out of this one):
//
//   - AWS SDK for Go v2 v1.48.0, aws/retry's standard retryer (Retry Behavior 2.1, its
//     default since that release): 3 attempts; a throttling error (an HTTP 429, or a
//     throttling error code) waits b·min(1s·2^(k−1), 20s) after failed attempt k, any other
//     retryable error b·min(50ms·2^(k−1), 20s), b uniform in [0, 1); a retry quota of 500
//     tokens per client, a throttled retry costing 5 and any other 14, a retry that cannot
//     get its tokens giving up at once; an operation that succeeds first time returns 1
//     token, one that succeeds on a retry refunds that retry's cost. (Releases before 2.1
//     cost 5 per retry and 10 per timeout, and waited b·2^k seconds.) The SDK reads only its
//     own x-amz-retry-after header, never Retry-After.
//   - hashicorp/go-retryablehttp v0.7.8: RetryMax 4 (5 attempts), RetryWaitMin 1s,
//     RetryWaitMax 30s. DefaultBackoff waits min·2^i after attempt i (from 0), capped at
//     max, unless a 429 or 503 carries Retry-After: then exactly its seconds, uncapped.
//     LinearJitterBackoff waits (min + u·(max−min))·(i+1), one draw u per wait, and ignores
//     Retry-After.
//   - cenkalti/backoff v5.0.3: ExponentialBackOff from 500ms, ×1.5 per retry, capped at
//     60s (the cap applies to the interval, before randomisation), each wait drawn in
//     [interval·(1−0.5), interval·(1+0.5)+1ns]; Retry gives up when the time since its
//     start plus the next wait would pass MaxElapsedTime, 15 minutes, and tries without
//     limit otherwise (MaxTries 0).
package clients

import (
	"math"
	"time"
)

// AWS SDK for Go v2 (v1.48.0) aws/retry standard retryer defaults.
const (
	AWSMaxAttempts     = 3                     // retry.DefaultMaxAttempts: attempts in all
	AWSMaxBackoff      = 20 * time.Second      // retry.DefaultMaxBackoff: the cap before jitter
	AWSThrottleBase    = time.Second           // the base delay of a throttling error, fixed
	AWSTransientBase   = 50 * time.Millisecond // StandardOptions.BaseDelay's default, other errors
	AWSQuotaTokens     = 500                   // retry.DefaultRetryRateTokens
	AWSThrottleCost    = 5                     // retry.DefaultThrottlingRetryCost
	AWSRetryCost       = 14                    // the cost of any other retry, timeouts included
	AWSNoRetryIncrease = 1                     // retry.DefaultNoRetryIncrement: a first-time success
)

// AWSBackoff is the standard retryer's wait after failed attempt (1 for the first) whose
// error has base delay base (AWSThrottleBase for a throttling error, else AWSTransientBase):
// b·min(base·2^(attempt−1), maxBackoff), with b its uniform draw in [0, 1), computed in
// float64 seconds and truncated to nanoseconds as the SDK does. With b = 0.5 the waits of a
// throttled operation are 0.5s, 1s, 2s, ..., 10s from the sixth on.
func AWSBackoff(attempt int, base, maxBackoff time.Duration, b float64) time.Duration {
	i := max(attempt-1, 0)
	seconds := float64(base) / float64(time.Second) * math.Pow(2, float64(i))
	if capSeconds := float64(maxBackoff) / float64(time.Second); seconds > capSeconds {
		seconds = capSeconds
	}
	return time.Duration(b * seconds * float64(time.Second))
}

// AWSQuota is the standard retryer's retry quota (ratelimit.TokenRateLimit over a
// ratelimit.TokenBucket): tokens shared by every operation of one SDK client, spent on
// retries and earned back by successes, never above the capacity it starts with. It makes a
// retry storm self-limiting: once 500 tokens are spent (100 throttled retries with no
// success between), every failure gives up at its first attempt until successes refill it.
type AWSQuota struct {
	capacity, remaining int
}

// NewAWSQuota is a full quota of tokens (AWSQuotaTokens by default).
func NewAWSQuota(tokens int) AWSQuota { return AWSQuota{capacity: tokens, remaining: tokens} }

// Retry takes the tokens for one retry (AWSThrottleCost after a throttling error, else
// AWSRetryCost). ok is false when fewer remain: the operation gives up, and nothing is taken.
func (q *AWSQuota) Retry(throttle bool) (cost int, ok bool) {
	cost = AWSRetryCost
	if throttle {
		cost = AWSThrottleCost
	}
	if cost > q.remaining {
		return 0, false
	}
	q.remaining -= cost
	return cost, true
}

// Succeeded credits an operation whose attempt attempt succeeded: AWSNoRetryIncrease for a
// first attempt, else the cost of the retry that made this attempt (lastCost, what Retry
// took for it; the retries before it, which failed, are not refunded). The quota never
// exceeds its capacity.
func (q *AWSQuota) Succeeded(attempt, lastCost int) {
	add := lastCost
	if attempt <= 1 {
		add = AWSNoRetryIncrease
	}
	q.remaining = min(q.remaining+add, q.capacity)
}

// Remaining is the tokens left.
func (q *AWSQuota) Remaining() int { return q.remaining }

// go-retryablehttp v0.7.8 client defaults.
const (
	RetryableWaitMin     = time.Second      // defaultRetryWaitMin
	RetryableWaitMax     = 30 * time.Second // defaultRetryWaitMax
	RetryableMaxAttempts = 5                // defaultRetryMax 4 retries, plus the first attempt
)

// RetryableDefaultBackoff is go-retryablehttp's DefaultBackoff after attempt i (from 0) was
// answered 429 or 503: the Retry-After header's seconds when the answer carried one
// (retryAfterSeconds ≥ 0), uncapped; otherwise min·2^i, or max when that is above max or
// overflows. With the defaults: 1s, 2s, 4s, 8s.
func RetryableDefaultBackoff(min, max time.Duration, i int, retryAfterSeconds int64) time.Duration {
	if retryAfterSeconds >= 0 {
		return time.Second * time.Duration(retryAfterSeconds)
	}
	mult := math.Pow(2, float64(i)) * float64(min)
	sleep := time.Duration(mult)
	if float64(sleep) != mult || sleep > max {
		sleep = max
	}
	return sleep
}

// RetryableLinearJitterBackoff is go-retryablehttp's LinearJitterBackoff after attempt i
// (from 0), with u its uniform draw in [0, 1): (min + u·(max−min), truncated to a whole
// nanosecond)·(i+1); min·(i+1) when max ≤ min. With 1s and 30s the i-th wait lies in
// [(i+1)s, 30·(i+1)s].
func RetryableLinearJitterBackoff(min, max time.Duration, i int, u float64) time.Duration {
	attempt := time.Duration(i + 1)
	if max <= min {
		return min * attempt
	}
	jitter := u * float64(max-min)
	per := time.Duration(int64(jitter) + int64(min))
	if per > math.MaxInt64/attempt {
		return math.MaxInt64 // where the library's product would wrap round
	}
	return per * attempt
}

// cenkalti/backoff v5.0.3 ExponentialBackOff and Retry defaults.
const (
	CenkaltiInitialInterval     = 500 * time.Millisecond // DefaultInitialInterval
	CenkaltiMultiplier          = 1.5                    // DefaultMultiplier
	CenkaltiRandomizationFactor = 0.5                    // DefaultRandomizationFactor
	CenkaltiMaxInterval         = 60 * time.Second       // DefaultMaxInterval
	CenkaltiMaxElapsedTime      = 15 * time.Minute       // DefaultMaxElapsedTime of Retry
)

// Exponential is cenkalti/backoff's ExponentialBackOff: the k-th wait's interval is
// Initial·Multiplier^(k−1), each step truncated to a whole nanosecond, and Max from the step
// whose interval is at least Max/Multiplier on; the wait is drawn around it by Randomized.
// The defaults' intervals: 500ms, 750ms, 1.125s, 1.6875s, ... 60s from the 13th on.
type Exponential struct {
	Initial, Max  time.Duration
	Multiplier    float64
	Randomization float64
}

// CenkaltiDefaults is NewExponentialBackOff's configuration.
var CenkaltiDefaults = Exponential{Initial: CenkaltiInitialInterval, Max: CenkaltiMaxInterval,
	Multiplier: CenkaltiMultiplier, Randomization: CenkaltiRandomizationFactor}

// Interval is the interval of the k-th wait (k from 1): the library's currentInterval at its
// k-th NextBackOff after Reset.
func (e Exponential) Interval(k int) time.Duration {
	cur := e.Initial
	for step := 1; step < k; step++ {
		next := e.next(cur)
		if next == cur { // at Max, or an interval too short to grow (1ns·1.5 is 1ns)
			break
		}
		cur = next
	}
	return cur
}

// next is incrementCurrentInterval.
func (e Exponential) next(cur time.Duration) time.Duration {
	if float64(cur) >= float64(e.Max)/e.Multiplier {
		return e.Max
	}
	return time.Duration(float64(cur) * e.Multiplier)
}

// MostWaits is how many waits fit in within at their shortest, interval·(1−Randomization)
// each (at least 1ns): an upper bound on the retries of Retry with MaxElapsedTime within.
// With the defaults and 15 minutes: 39 (12 growing, then 30s each).
func (e Exponential) MostWaits(within time.Duration) float64 {
	shortest := func(interval time.Duration) float64 {
		return max(math.Floor(float64(interval)*(1-e.Randomization)), 1)
	}
	var n, spent float64
	cur := e.Initial
	for {
		w := shortest(cur)
		next := e.next(cur)
		if next == cur { // every later wait is w: the rest fit at once
			return n + max(math.Floor((float64(within)-spent)/w), 0)
		}
		if spent+w > float64(within) {
			return n
		}
		n++
		spent += w
		cur = next
	}
}

// Randomized is the wait drawn around interval with u uniform in [0, 1):
// interval·(1−R) + u·(2·R·interval + 1), truncated to a whole nanosecond; the interval
// itself when the randomization factor R is 0.
func (e Exponential) Randomized(interval time.Duration, u float64) time.Duration {
	if e.Randomization == 0 {
		return interval
	}
	delta := e.Randomization * float64(interval)
	lo := float64(interval) - delta
	hi := float64(interval) + delta
	return time.Duration(lo + u*(hi-lo+1))
}
