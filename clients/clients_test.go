package clients

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"
	"time"

	backoff "github.com/cenkalti/backoff/v5"
	retryablehttp "github.com/hashicorp/go-retryablehttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The real go-retryablehttp's DefaultBackoff, called with the answers a rate limiter gives
// (429 with and without Retry-After, 503 with it) and with none, at every attempt up to where
// min·2^i overflows, gives exactly RetryableDefaultBackoff's waits.
func TestRetryableDefaultBackoffIsTheLibrarys(t *testing.T) {
	answer := func(status int, retryAfter string) *http.Response {
		h := http.Header{}
		if retryAfter != "" {
			h.Set("Retry-After", retryAfter)
		}
		return &http.Response{StatusCode: status, Header: h}
	}
	n := 0
	for _, bounds := range [][2]time.Duration{{RetryableWaitMin, RetryableWaitMax}, {time.Nanosecond, time.Hour},
		{7 * time.Millisecond, 100 * time.Millisecond}, {3 * time.Second, time.Second}, {time.Second, math.MaxInt64}} {
		lo, hi := bounds[0], bounds[1]
		for i := 0; i <= 70; i++ {
			for _, seconds := range []int64{-1, 0, 1, 7, 3600, 86400 * 365} {
				resp := answer(http.StatusTooManyRequests, "")
				if seconds >= 0 {
					resp = answer(http.StatusTooManyRequests, strconv.FormatInt(seconds, 10))
				}
				want := retryablehttp.DefaultBackoff(lo, hi, i, resp)
				require.Equal(t, want, RetryableDefaultBackoff(lo, hi, i, seconds), "min %v max %v attempt %d Retry-After %d", lo, hi, i, seconds)
				if seconds >= 0 {
					assert.Equal(t, want, retryablehttp.DefaultBackoff(lo, hi, i, answer(http.StatusServiceUnavailable, strconv.FormatInt(seconds, 10))), "503 as 429")
				}
				n++
			}
			assert.Equal(t, retryablehttp.DefaultBackoff(lo, hi, i, nil), RetryableDefaultBackoff(lo, hi, i, -1), "no answer")
		}
	}
	// The defaults' waits, and a Retry-After past RetryWaitMax honoured uncapped.
	var waits []time.Duration
	for i := range RetryableMaxAttempts - 1 {
		waits = append(waits, RetryableDefaultBackoff(RetryableWaitMin, RetryableWaitMax, i, -1))
	}
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}, waits)
	assert.Equal(t, 90*time.Second, retryablehttp.DefaultBackoff(RetryableWaitMin, RetryableWaitMax, 0, answer(429, "90")))
	assert.Equal(t, 90*time.Second, RetryableDefaultBackoff(RetryableWaitMin, RetryableWaitMax, 0, 90))
	assert.Equal(t, 2130, n)
}

// go-retryablehttp's LinearJitterBackoff draws from math/rand seeded with the wall clock's
// nanoseconds, so it is compared by what every draw must be: with max ≤ min exactly
// min·(i+1); otherwise (min + j)·(i+1) for one jitter j in [0, max−min), and over 2,000
// calls j reaches both ends' 5%. RetryableLinearJitterBackoff gives the same at u = 0 and
// just below 1, and the same multiple of (i+1) in between.
func TestRetryableLinearJitterBackoffHasTheLibrarysBounds(t *testing.T) {
	for i := range 10 {
		assert.Equal(t, retryablehttp.LinearJitterBackoff(time.Second, time.Second, i, nil), RetryableLinearJitterBackoff(time.Second, time.Second, i, 0.7))
		assert.Equal(t, retryablehttp.LinearJitterBackoff(3*time.Second, time.Second, i, nil), RetryableLinearJitterBackoff(3*time.Second, time.Second, i, 0.2))
	}
	lo, hi := RetryableWaitMin, RetryableWaitMax
	span := hi - lo
	for i := range 5 {
		mult := time.Duration(i + 1)
		least, most := time.Duration(math.MaxInt64), time.Duration(0)
		for range 2000 {
			d := retryablehttp.LinearJitterBackoff(lo, hi, i, nil)
			require.Zero(t, d%mult, "a whole multiple of attempt %d", i+1)
			j := d/mult - lo
			require.GreaterOrEqual(t, j, time.Duration(0))
			require.Less(t, j, span)
			least, most = min(least, j), max(most, j)
		}
		assert.Less(t, least, span/20)
		assert.Greater(t, most, span-span/20)

		assert.Equal(t, lo*mult, RetryableLinearJitterBackoff(lo, hi, i, 0))
		top := RetryableLinearJitterBackoff(lo, hi, i, math.Nextafter(1, 0))
		assert.Equal(t, (hi-1)*mult, top, "the largest jitter is max−min−1ns")
		rng := rand.New(rand.NewPCG(1, uint64(i)))
		for range 1000 {
			d := RetryableLinearJitterBackoff(lo, hi, i, rng.Float64())
			require.Zero(t, d%mult)
			require.GreaterOrEqual(t, d/mult-lo, time.Duration(0))
			require.Less(t, d/mult-lo, span)
		}
	}
	assert.Equal(t, time.Duration(math.MaxInt64), RetryableLinearJitterBackoff(time.Hour, math.MaxInt64/2, 3, 0.9), "saturates where the product would wrap")
}

// cenkalti/backoff v5's ExponentialBackOff reads math/rand/v2's global generator, which
// cannot be seeded: without randomisation its waits are its intervals, compared exactly
// call by call with Exponential's for 60 calls of four configurations (the defaults; an
// interval that stops growing at 1ns; a first interval above the cap, which the cap only
// reaches at the second; a 7ms start ×2.5); with the default ±50%, every one of 60 draws
// lies in [interval/2, 1.5·interval + 1ns] of the same interval.
func TestCenkaltiExponentialIsTheLibrarys(t *testing.T) {
	configs := []Exponential{CenkaltiDefaults,
		{Initial: time.Nanosecond, Max: time.Second, Multiplier: 1.5},
		{Initial: 2 * time.Minute, Max: 60 * time.Second, Multiplier: 1.5},
		{Initial: 7 * time.Millisecond, Max: 10 * time.Second, Multiplier: 2.5}}
	for _, e := range configs {
		lib := &backoff.ExponentialBackOff{InitialInterval: e.Initial, MaxInterval: e.Max, Multiplier: e.Multiplier}
		lib.Reset()
		for k := 1; k <= 60; k++ {
			require.Equal(t, lib.NextBackOff(), e.Interval(k), "%+v, wait %d", e, k)
		}
		e.Randomization = CenkaltiRandomizationFactor
		lib = &backoff.ExponentialBackOff{InitialInterval: e.Initial, MaxInterval: e.Max, Multiplier: e.Multiplier,
			RandomizationFactor: CenkaltiRandomizationFactor}
		lib.Reset()
		for k := 1; k <= 60; k++ {
			interval := e.Interval(k)
			d := lib.NextBackOff()
			lo, hi := e.Randomized(interval, 0), e.Randomized(interval, math.Nextafter(1, 0))
			require.GreaterOrEqual(t, d, lo, "wait %d", k)
			require.LessOrEqual(t, d, hi, "wait %d", k)
		}
	}
	d := CenkaltiDefaults
	assert.Equal(t, []time.Duration{500 * time.Millisecond, 750 * time.Millisecond, 1125 * time.Millisecond, 1687500 * time.Microsecond},
		[]time.Duration{d.Interval(1), d.Interval(2), d.Interval(3), d.Interval(4)})
	assert.Equal(t, 60*time.Second, d.Interval(13))
	assert.Less(t, d.Interval(12), 60*time.Second)
	assert.Equal(t, 250*time.Millisecond, d.Randomized(500*time.Millisecond, 0))
	assert.Equal(t, 750*time.Millisecond+1, d.Randomized(500*time.Millisecond, math.Nextafter(1, 0)), "the library's +1")
}

// MostWaits bounds the retries of cenkalti's Retry within MaxElapsedTime: 39 of the
// defaults' shortest waits (12 growing, then 30s each) fit in 15 minutes and 40 do not; an interval stuck at 1ns fits
// one wait per nanosecond.
func TestCenkaltiMostWaits(t *testing.T) {
	d := CenkaltiDefaults
	var spent time.Duration
	k := 0
	for ; spent+d.Randomized(d.Interval(k+1), 0) <= CenkaltiMaxElapsedTime; k++ {
		spent += d.Randomized(d.Interval(k+1), 0)
	}
	assert.Equal(t, 39, k)
	assert.Equal(t, 39.0, d.MostWaits(CenkaltiMaxElapsedTime))
	stuck := Exponential{Initial: time.Nanosecond, Max: time.Second, Multiplier: 1.5, Randomization: 0.5}
	assert.Equal(t, 1000.0, stuck.MostWaits(time.Microsecond))
	assert.Equal(t, 0.0, d.MostWaits(time.Millisecond))
}

// AWSBackoff's waits: b·min(base·2^(attempt−1), max) — a throttled operation's caps 1s, 2s,
// 4s, 8s, 16s, 20s, 20s; b scales them; a transient error's start at 50ms.
func TestAWSBackoff(t *testing.T) {
	var caps []time.Duration
	for attempt := 1; attempt <= 7; attempt++ {
		caps = append(caps, AWSBackoff(attempt, AWSThrottleBase, AWSMaxBackoff, 1))
	}
	s := time.Second
	assert.Equal(t, []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 20 * s, 20 * s}, caps)
	assert.Equal(t, 500*time.Millisecond, AWSBackoff(1, AWSThrottleBase, AWSMaxBackoff, 0.5))
	assert.Equal(t, 100*time.Millisecond, AWSBackoff(2, AWSTransientBase, AWSMaxBackoff, 1))
	assert.Equal(t, time.Duration(0), AWSBackoff(3, AWSThrottleBase, AWSMaxBackoff, 0))
}

// The quota's arithmetic on its own: 100 throttled retries (5 each) spend 500 tokens, the
// 101st gives up and takes nothing; a first-time success earns 1, a successful retry refunds
// its 5, never above 500; a transient retry costs 14.
func TestAWSQuota(t *testing.T) {
	q := NewAWSQuota(AWSQuotaTokens)
	for range 100 {
		_, ok := q.Retry(true)
		require.True(t, ok)
	}
	_, ok := q.Retry(true)
	assert.False(t, ok)
	assert.Equal(t, 0, q.Remaining())
	q.Succeeded(1, 0)
	q.Succeeded(3, AWSThrottleCost)
	assert.Equal(t, 6, q.Remaining())
	cost, ok := q.Retry(true)
	assert.True(t, ok)
	assert.Equal(t, 5, cost)
	_, ok = q.Retry(false)
	assert.False(t, ok, "14 > 1")
	full := NewAWSQuota(AWSQuotaTokens)
	full.Succeeded(2, AWSRetryCost)
	assert.Equal(t, 500, full.Remaining())
}
