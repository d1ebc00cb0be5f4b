package clients

import (
	"math"
	"time"
)

// AWS SDK for Go v2 v1.48.0, aws/retry's adaptive mode (adaptive.go, adaptive_ratelimit.go,
// adaptive_token_bucket.go): the standard retryer (its backoff and retry quota, unchanged)
// behind a client-side rate limiter that every attempt, retries included, must take a token
// from — a token bucket whose rate follows CUBIC congestion control:
//
//   - Off until the first throttling error: until then every attempt goes at once.
//   - After each attempt, Update(throttled) first counts the attempt in its half-second bucket
//     ⌊2t⌋/2 (t the wall clock in Unix seconds, as float64); on the first attempt of a later
//     bucket the measured send rate becomes 0.8·(count/(bucket − last bucket)) + 0.2·itself.
//   - A throttled attempt (a 429, or a throttling error code) sets lastMaxRate to the measured
//     rate (the lower of it and the fill rate once on), the time window W = ∛(lastMaxRate·(1 −
//     0.7)/0.4), the last throttle to now, the calculated rate to 0.7·lastMaxRate, and turns
//     the bucket on. A success sets the calculated rate to 0.4·(dt − W)³ + lastMaxRate, dt the
//     seconds since the last throttle: below lastMaxRate until W has passed, above it after.
//   - Either way the bucket is refilled at its old rate, then its fill rate becomes
//     max(rate, 0.5) and its capacity max(rate, 1) tokens (what it holds cut to fit), where
//     rate = min(calculated, 2·measured).
//   - An attempt takes 1 token (RequestCost), refilling first at the fill rate for the time
//     since the last refill; short of it, it sleeps (1 − held)/fill rate and asks again
//     (FailOnNoAttemptTokens is false). The bucket starts empty, with capacity 0.
//
// Its clock is the wall clock, t = UnixNano/1e9 as float64; here t is the lane's virtual
// time from 0, which is the SDK's arithmetic with its clock at the Unix epoch (a whole-second
// epoch shifts no half-second bucket; only float64 rounding at 1.7e9 seconds differs).
const (
	AWSAdaptiveSmooth      = 0.8 // smooth
	AWSAdaptiveBeta        = 0.7 // beta
	AWSAdaptiveScale       = 0.4 // scaleConstant
	AWSAdaptiveMinFillRate = 0.5 // minFillRate, tokens per second
	AWSAdaptiveMinCapacity = 1.0 // the token bucket's minCapacity
	AWSAdaptiveRequestCost = 1.0 // DefaultRequestCost
)

// The constants as float64 variables, as the SDK holds them (struct fields): 1 − 0.8 is then
// float64 arithmetic, 0.19999999999999996, not the exact constant 0.2 Go would fold it to,
// and the measured rate agrees with the SDK's to the last bit.
var (
	awsSmooth, awsBeta, awsScale = AWSAdaptiveSmooth, AWSAdaptiveBeta, AWSAdaptiveScale
	awsMinFillRate, awsMinCap    = AWSAdaptiveMinFillRate, AWSAdaptiveMinCapacity
)

// AWSAdaptive is the adaptive mode's rate limiter (adaptiveRateLimit and its
// adaptiveTokenBucket) at virtual time: now is nanoseconds from 0 at every call, never
// going back.
type AWSAdaptive struct {
	enabled          bool
	fillRate         float64
	calculatedRate   float64
	lastRefilled     int64
	refilled         bool // lastRefilled is set (the SDK's !IsZero)
	measuredTxRate   float64
	lastTxRateBucket float64
	requestCount     int64
	lastMaxRate      float64
	lastThrottle     int64
	timeWindow       float64
	tokens, capacity float64
}

// NewAWSAdaptive is newAdaptiveRateLimit at now: off, its rate bucket ⌊now⌋ seconds, its
// last throttle now, an empty bucket of capacity 0.
func NewAWSAdaptive(now int64) AWSAdaptive {
	return AWSAdaptive{lastTxRateBucket: math.Floor(seconds(now)), lastThrottle: now}
}

func seconds(t int64) float64 { return float64(t) / float64(time.Second) }

// Acquire is AcquireToken(1) at now: ok, or how long to sleep before asking again.
func (a *AWSAdaptive) Acquire(now int64) (ok bool, wait time.Duration) {
	if !a.enabled {
		return true, 0
	}
	a.refill(now)
	if AWSAdaptiveRequestCost > a.tokens {
		return false, time.Duration((AWSAdaptiveRequestCost - a.tokens) / a.fillRate * float64(time.Second))
	}
	a.tokens -= AWSAdaptiveRequestCost
	return true, 0
}

// Update is told at now how an attempt ended: throttled, or not.
func (a *AWSAdaptive) Update(now int64, throttled bool) {
	bucket := math.Floor(seconds(now)*2.) / 2.
	a.requestCount++
	if bucket > a.lastTxRateBucket {
		current := float64(a.requestCount) / (bucket - a.lastTxRateBucket)
		a.measuredTxRate = (current * awsSmooth) + (a.measuredTxRate * (1. - awsSmooth))
		a.requestCount = 0
		a.lastTxRateBucket = bucket
	}
	if throttled {
		rate := a.measuredTxRate
		if a.enabled {
			rate = math.Min(a.measuredTxRate, a.fillRate)
		}
		a.lastMaxRate = rate
		a.window()
		a.lastThrottle = now
		a.calculatedRate = rate * awsBeta
		a.enabled = true
	} else {
		a.window()
		dt := seconds(now - a.lastThrottle)
		a.calculatedRate = (awsScale * math.Pow(dt-a.timeWindow, 3)) + a.lastMaxRate
	}
	rate := math.Min(a.calculatedRate, 2*a.measuredTxRate)
	a.refill(now)
	a.fillRate = math.Max(rate, awsMinFillRate)
	a.capacity = math.Max(rate, awsMinCap)
	a.tokens = math.Min(a.tokens, a.capacity)
}

// window is calculateTimeWindow: ∛(lastMaxRate·(1 − beta)/scale).
func (a *AWSAdaptive) window() {
	a.timeWindow = math.Pow((a.lastMaxRate*(1.-awsBeta))/awsScale, 1./3.)
}

// refill is tokenBucketRefill: the first call only notes the time.
func (a *AWSAdaptive) refill(now int64) {
	if !a.refilled {
		a.lastRefilled, a.refilled = now, true
		return
	}
	a.tokens = math.Min(a.tokens+seconds(now-a.lastRefilled)*a.fillRate, a.capacity)
	a.lastRefilled = now
}

// Enabled reports whether the bucket is on (a throttle has been seen).
func (a *AWSAdaptive) Enabled() bool { return a.enabled }

// FillRate is the bucket's fill rate in tokens per second (0 before the first update).
func (a *AWSAdaptive) FillRate() float64 { return a.fillRate }

// MeasuredRate is the smoothed send rate in attempts per second.
func (a *AWSAdaptive) MeasuredRate() float64 { return a.measuredTxRate }
