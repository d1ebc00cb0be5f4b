package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/clients"
	"github.com/ratelab/ratelab/headers"
)

// gaps lists the time between each decision and the one before.
func gaps(recs []Record) []time.Duration {
	var out []time.Duration
	for k := 1; k < len(recs); k++ {
		out = append(out, recs[k].At-recs[k-1].At)
	}
	return out
}

// A token bucket of 10/s refuses request 2 at 30ms with an exact wait of 70ms: retry-after
// comes back at 100ms, retry-after-header at the header's whole second (1.03s), capped by
// MaxDelay (430ms), and with jitter up to Delay later; without a hint (a concurrency
// limiter) it backs off from Delay.
func TestRetryAfterHeaderPolicyWaitsTheHeadersSeconds(t *testing.T) {
	bucket := "token-bucket:capacity=1,rate=10/1s"
	at := func(c Client) []time.Duration {
		sc := &Scenario{Horizon: 3 * sec, Client: c, Lanes: stacks(t, bucket), Sources: []Source{script(0, 30*ms)}}
		recs, _ := traced(t, sc, 0)
		return times(decisionsOf(recs, 2))
	}
	assert.Equal(t, []time.Duration{30 * ms, 100 * ms}, at(Client{Policy: PolicyRetryAfter, Delay: 50 * ms, MaxAttempts: 3}))
	assert.Equal(t, int64(1), headers.RetryAfterSeconds(70*ms), "what a server sends for the 70ms")
	assert.Equal(t, []time.Duration{30 * ms, 1030 * ms}, at(Client{Policy: PolicyRetryAfterHeader, Delay: 50 * ms, MaxAttempts: 3}))
	assert.Equal(t, []time.Duration{30 * ms, 430 * ms}, at(Client{Policy: PolicyRetryAfterHeader, Delay: 50 * ms, MaxDelay: 400 * ms, MaxAttempts: 3}))
	jittered := at(Client{Policy: PolicyRetryAfterHeader, Delay: 50 * ms, Jitter: true, MaxAttempts: 3})
	require.Len(t, jittered, 2)
	assert.GreaterOrEqual(t, jittered[1], 1030*ms)
	assert.LessOrEqual(t, jittered[1], 1080*ms)

	sc := &Scenario{Horizon: 5 * sec, Client: Client{Policy: PolicyRetryAfterHeader, Delay: 100 * ms, MaxDelay: 300 * ms, MaxAttempts: 5},
		Lanes: stacks(t, "concurrency:max=1"), Sources: []Source{script(0, 0)},
		Downstream: &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: 10 * sec}}}}}
	recs, _ := traced(t, sc, 0)
	assert.Equal(t, []time.Duration{100 * ms, 200 * ms, 300 * ms, 300 * ms}, gaps(decisionsOf(recs, 2)), "no header: backoff from Delay, capped")
}

// aws-standard against a bucket that admits one request in an hour: 60 requests, 59
// refused, each wanting 2 retries of 5 tokens. The 500-token quota pays for exactly 100
// retries, so 160 attempts in all; without a quota, 59·3 + 1 = 178. Each retry waits less
// than 1s after the first refusal and 2s after the second, and every refused request
// gives up (none is admitted).
func TestAWSStandardQuotaPaysFor100Retries(t *testing.T) {
	var arrivals []time.Duration
	for i := range 60 {
		arrivals = append(arrivals, time.Duration(i)*100*ms)
	}
	for _, tc := range []struct {
		quota    int
		attempts int64
	}{{0, 160}, {NoRetryQuota, 178}, {50, 70}} {
		sc := &Scenario{Horizon: time.Minute, Client: Client{Policy: PolicyAWSStandard, RetryQuota: tc.quota},
			Lanes: stacks(t, "token-bucket:capacity=1,rate=1/1h"), Sources: []Source{script(arrivals...)}}
		recs, lane := traced(t, sc, 0)
		assert.Equal(t, tc.attempts, lane.Totals.Attempts, "quota %d", tc.quota)
		assert.Equal(t, tc.attempts-60, lane.Totals.Retried)
		assert.Equal(t, int64(59), lane.Totals.GaveUp)
		for id := uint64(2); id <= 60; id++ {
			for k, g := range gaps(decisionsOf(recs, id)) {
				require.Less(t, g, time.Duration(1<<k)*sec, "request %d retry %d", id, k+1)
			}
		}
	}
}

// The quota is earned back: with 5 tokens, request 2 (refused at 0 by a bucket of one permit
// per ms) retries within its 1s, is admitted and refunds its 5, so request 4, refused at 2s,
// can retry too. With 4 tokens neither can.
func TestAWSStandardSuccessfulRetryRefundsItsTokens(t *testing.T) {
	run := func(quota int) ([]Record, LaneResult) {
		sc := &Scenario{Horizon: 5 * sec, Client: Client{Policy: PolicyAWSStandard, RetryQuota: quota},
			Lanes: stacks(t, "token-bucket:capacity=1,rate=1000/1s"), Sources: []Source{script(0, 0, 2*sec, 2*sec)}}
		return traced(t, sc, 0)
	}
	recs, lane := run(5)
	d := decisionsOf(recs, 2)
	require.Len(t, d, 2)
	assert.Greater(t, d[1].At, ms, "the seed's draw waits past the next permit")
	assert.Equal(t, OutcomeAdmitted, d[1].Outcome)
	assert.Equal(t, OutcomeAdmitted, decisionsOf(recs, 4)[1].Outcome, "the refund paid for request 4's retry")
	assert.Equal(t, int64(4), lane.Totals.Admitted)
	_, lane = run(4)
	assert.Equal(t, int64(2), lane.Totals.Admitted)
	assert.Equal(t, int64(2), lane.Totals.GaveUp)
	assert.Equal(t, int64(4), lane.Totals.Attempts)
}

// One refused request's retries, drawn from the lane's client stream in order, are the
// library rules' waits exactly: aws-standard's b·min(1s·2^(k−1), 20s) for its 3 attempts,
// retryablehttp-linear's (1s + u·29s)·k for its 5, cenkalti-backoff's randomised intervals
// until the next would pass MaxElapsed (10s here).
func TestLibraryPoliciesDrawTheirWaitsFromTheLaneStream(t *testing.T) {
	never := "concurrency:max=1" // no hint; its one slot is held for the whole run
	hold := &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: time.Hour}}}}
	decide := func(c Client) ([]time.Duration, LaneResult) {
		sc := &Scenario{Seed: 42, Horizon: 10 * time.Minute, Client: c, Lanes: stacks(t, never), Sources: []Source{script(0, 0)}, Downstream: hold}
		recs, lane := traced(t, sc, 0)
		return gaps(decisionsOf(recs, 2)), lane
	}

	rng := newRand(42, 0xc11e47)
	var want []time.Duration
	for k := 1; k < clients.AWSMaxAttempts; k++ {
		want = append(want, clients.AWSBackoff(k, time.Second, 20*sec, rng.Float64()))
	}
	got, lane := decide(Client{Policy: PolicyAWSStandard})
	assert.Equal(t, want, got)
	assert.Equal(t, int64(1), lane.Totals.GaveUp)

	rng = newRand(42, 0xc11e47)
	want = nil
	for k := 1; k < clients.RetryableMaxAttempts; k++ {
		want = append(want, clients.RetryableLinearJitterBackoff(sec, 30*sec, k-1, rng.Float64()))
	}
	got, _ = decide(Client{Policy: PolicyRetryableLin})
	assert.Equal(t, want, got)

	got, _ = decide(Client{Policy: PolicyRetryableHTTP})
	assert.Equal(t, []time.Duration{sec, 2 * sec, 4 * sec, 8 * sec}, got, "no Retry-After: DefaultBackoff's doubling")

	rng = newRand(42, 0xc11e47)
	want = nil
	var elapsed time.Duration
	for k := 1; ; k++ {
		d := clients.CenkaltiDefaults.Randomized(clients.CenkaltiDefaults.Interval(k), rng.Float64())
		if elapsed+d > 10*sec {
			break
		}
		elapsed += d
		want = append(want, d)
	}
	got, lane = decide(Client{Policy: PolicyCenkalti, MaxElapsed: 10 * sec})
	assert.Equal(t, want, got)
	assert.GreaterOrEqual(t, len(got), 5)
	assert.Equal(t, int64(1), lane.Totals.GaveUp)
	got, _ = decide(Client{Policy: PolicyCenkalti, MaxAttempts: 3})
	assert.Len(t, got, 2, "MaxTries 3")
}

// retryablehttp honours Retry-After uncapped: a fixed window of 1 per minute refuses request
// 2 at 0 with Retry-After: 60, past RetryWaitMax (30s), and it comes back at 60s and is
// admitted. retryablehttp-linear ignores the header: its first retry comes within [1s, 30s),
// too early.
func TestRetryableHTTPHonoursRetryAfterUncapped(t *testing.T) {
	decide := func(p Policy) []Record {
		sc := &Scenario{Horizon: 2 * time.Minute, Client: Client{Policy: p}, Lanes: stacks(t, "fixed-window:limit=1,window=1m"),
			Sources: []Source{script(0, 0)}}
		recs, _ := traced(t, sc, 0)
		return decisionsOf(recs, 2)
	}
	d := decide(PolicyRetryableHTTP)
	require.Len(t, d, 2)
	assert.Equal(t, time.Minute, d[1].At)
	assert.Equal(t, OutcomeAdmitted, d[1].Outcome)
	d = decide(PolicyRetryableLin)
	require.Greater(t, len(d), 2)
	assert.GreaterOrEqual(t, d[1].At, sec)
	assert.Less(t, d[1].At, 30*sec)
	assert.Equal(t, OutcomeRejected, d[1].Outcome)
}

func TestLibraryPolicyDefaultsAndValidation(t *testing.T) {
	aws := Client{Policy: PolicyAWSStandard}.WithDefaults()
	assert.Equal(t, Client{Policy: PolicyAWSStandard, Delay: sec, MaxDelay: 20 * sec, MaxAttempts: 3, RetryQuota: 500}, aws)
	assert.Equal(t, Client{Policy: PolicyRetryableHTTP, Delay: sec, MaxDelay: 30 * sec, MaxAttempts: 5}, Client{Policy: PolicyRetryableHTTP}.WithDefaults())
	assert.Equal(t, Client{Policy: PolicyCenkalti, Delay: 500 * ms, MaxDelay: time.Minute, MaxElapsed: 15 * time.Minute}, Client{Policy: PolicyCenkalti}.WithDefaults())
	assert.Equal(t, Client{Policy: PolicyRetryableLin, Delay: 2 * sec, MaxDelay: 30 * sec, MaxAttempts: 2},
		Client{Policy: PolicyRetryableLin, Delay: 2 * sec, MaxAttempts: 2}.WithDefaults(), "what is given stays")
	assert.Equal(t, 39.0, Client{Policy: PolicyCenkalti}.WithDefaults().mostRetries())
	assert.Equal(t, 2.0, aws.mostRetries())

	for _, tc := range []struct {
		c     Client
		field string
		says  string
	}{
		{Client{Policy: "retry-later"}, "client.policy", "(drop, retry, backoff, retry-after, retry-after-header, aws-standard, aws-adaptive, retryablehttp, retryablehttp-linear, cenkalti-backoff, octokit, stripe, stripe-lock-timeout, header-paced, queue)"},
		{Client{Policy: PolicyAWSStandard, Jitter: true}, "client.jitter", "draws its own jitter"},
		{Client{Policy: PolicyRetry, Delay: ms, MaxAttempts: 2, RetryQuota: 10}, "client.retry_quota", "is for aws-standard and aws-adaptive, not retry"},
		{Client{Policy: PolicyAWSStandard, MaxElapsed: sec}, "client.max_elapsed", "is for cenkalti-backoff"},
		{Client{Policy: PolicyAWSStandard, RetryQuota: -2}, "client.retry_quota", "at least 1 token, or none"},
		{Client{Policy: PolicyCenkalti, MaxElapsed: -sec}, "client.max_elapsed", "must be positive"},
		{Client{Policy: PolicyRetryableHTTP, MaxAttempts: -1}, "client.max_attempts", "the library's default"},
		{Client{Policy: PolicyRetryableHTTP, Delay: -sec}, "client.delay", "must be positive"},
		{Client{Policy: PolicyCenkalti, MaxDelay: MaxTime}, "client.max_delay", ""},
		{Client{Policy: PolicyRetryAfterHeader, MaxAttempts: 2}, "client.delay", "must be positive for retry-after-header"},
	} {
		err := tc.c.validate("client")
		var fe *FieldError
		require.ErrorAs(t, err, &fe, "%+v", tc.c)
		assert.Equal(t, tc.field, fe.Field)
		assert.True(t, strings.Contains(fe.Reason, tc.says), "%q lacks %q", fe.Reason, tc.says)
	}
	for _, c := range []Client{{Policy: PolicyAWSStandard}, {Policy: PolicyAWSStandard, RetryQuota: NoRetryQuota},
		{Policy: PolicyCenkalti, MaxElapsed: time.Hour}, {Policy: PolicyRetryableLin, Delay: 3 * sec, MaxDelay: sec},
		{Policy: PolicyRetryAfterHeader, Delay: sec, MaxAttempts: 4, Jitter: true}} {
		assert.NoError(t, c.validate("client"), "%+v", c)
	}
}
