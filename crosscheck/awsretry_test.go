package crosscheck

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
	smithymiddle "github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/clients"
	"github.com/ratelab/ratelab/engine"
)

// What an attempt of an operation meets, as the SDK sees it.
type awsOutcome int

const (
	awsOK        awsOutcome = iota
	awsThrottled            // a rate limiter's 429 with no modeled error: a throttling error
	awsTimeout              // RequestTimeout: retryable, not a throttle
	awsUnavail              // a 503: retryable, not a throttle
)

func (o awsOutcome) err() error {
	status := func(code int) error {
		return &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}},
			Err: fmt.Errorf("HTTP %d", code)}
	}
	switch o {
	case awsThrottled:
		return status(http.StatusTooManyRequests)
	case awsTimeout:
		return &smithy.GenericAPIError{Code: "RequestTimeout", Message: "timed out"}
	case awsUnavail:
		return status(http.StatusServiceUnavailable)
	}
	return nil
}

// awsModel runs one operation through clients.AWSQuota as the engine does: attempts made,
// and whether it succeeded, ran out of attempts or was refused its retry tokens.
func awsModel(q *clients.AWSQuota, attempts []awsOutcome, maxAttempts int) (made int, end string) {
	lastCost := 0
	for k, o := range attempts {
		made = k + 1
		if o == awsOK {
			q.Succeeded(made, lastCost)
			return made, "ok"
		}
		if made >= maxAttempts {
			return made, "max attempts"
		}
		cost, ok := q.Retry(o == awsThrottled)
		if !ok {
			return made, "quota"
		}
		lastCost = cost
	}
	panic("script too short")
}

// The AWS SDK's own retry loop (retry.Attempt, the middleware every service client runs,
// with the standard retryer and a TokenRateLimit of 500 or 60 tokens) over 400 scripted
// operations — random runs of throttles (5 tokens a retry), timeouts and 503s (14), some
// ending in success (+1, or the last retry's cost back) — against clients.AWSQuota: the
// same attempts, the same ending (success, attempts spent, quota exceeded) and the same
// tokens left, operation by operation. Only the backoff is replaced, by a wait of 0, so that
// no real time passes; the quota does not depend on it.
func TestAWSRetryQuotaIsTheSDKs(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 1))
	for _, tokens := range []int{clients.AWSQuotaTokens, 60} {
		limit := ratelimit.NewTokenRateLimit(uint(tokens))
		retryer := retry.NewStandard(func(o *retry.StandardOptions) {
			o.RateLimiter = limit
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		})
		mw := retry.NewAttemptMiddleware(retryer, func(r interface{}) interface{} { return r })
		model := clients.NewAWSQuota(tokens)
		ends := map[string]int{}
		for op := range 400 {
			script := make([]awsOutcome, clients.AWSMaxAttempts)
			for k := range script {
				switch x := rng.IntN(10); {
				case x < 5 && op%50 < 40: // 40 operations in 50 are throttled half the time
					script[k] = awsThrottled
				case x < 6:
					script[k] = awsTimeout
				case x < 7:
					script[k] = awsUnavail
				default:
					script[k] = awsOK
				}
			}
			calls := 0
			next := smithymiddle.FinalizeHandlerFunc(func(ctx context.Context, in smithymiddle.FinalizeInput) (smithymiddle.FinalizeOutput, smithymiddle.Metadata, error) {
				o := script[calls]
				calls++
				return smithymiddle.FinalizeOutput{}, smithymiddle.Metadata{}, o.err()
			})
			_, _, err := mw.HandleFinalize(context.Background(), smithymiddle.FinalizeInput{Request: struct{}{}}, next)
			libEnd := "ok"
			var quota ratelimit.QuotaExceededError
			var maxed *retry.MaxAttemptsError
			switch {
			case errors.As(err, &quota):
				libEnd = "quota"
			case errors.As(err, &maxed):
				libEnd = "max attempts"
			case err != nil:
				t.Fatalf("operation %d: unexpected %v", op, err)
			}
			made, end := awsModel(&model, script, clients.AWSMaxAttempts)
			require.Equal(t, calls, made, "operation %d %v: attempts", op, script)
			require.Equal(t, libEnd, end, "operation %d %v", op, script)
			require.Equal(t, int(limit.Remaining()), model.Remaining(), "operation %d %v: tokens left", op, script)
			ends[end]++
		}
		t.Logf("%d tokens: %v", tokens, ends)
		assert.Greater(t, ends["quota"], 20, "the outages drain the quota")
		assert.Greater(t, ends["ok"], 100)
		assert.Greater(t, ends["max attempts"], 2)
	}
}

// A lane of aws-standard, its trace read back in time order through the SDK's own
// retryer: each first attempt takes the retryer's attempt token (GetAttemptToken), each
// refusal asks for a retry token (GetRetryToken, with a 429), and each attempt's result
// releases the tokens as the retry middleware does. Operations interleave here, as a
// client's concurrent callers do; the engine must give up exactly where the SDK refuses the
// token, and retry wherever it grants one, call by call.
func TestAWSStandardLaneGivesUpWhereTheSDKDoes(t *testing.T) {
	stack, err := engine.ParseStack("token-bucket:capacity=5,rate=20/1s")
	require.NoError(t, err)
	sc := &engine.Scenario{Seed: 3, Horizon: 20 * time.Second, Trace: true,
		Client: engine.Client{Policy: engine.PolicyAWSStandard, RetryQuota: 200},
		Lanes:  []engine.LaneSpec{{Stack: stack}},
		Sources: []engine.Source{{Kind: engine.SourceOnOff, Rate: 80, On: 2 * time.Second, Off: 2 * time.Second},
			{Kind: engine.SourcePoisson, Rate: 10}}}
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	lane := res.Lanes[0]
	require.False(t, lane.Truncated)

	limit := ratelimit.NewTokenRateLimit(200)
	retryer := retry.NewStandard(func(o *retry.StandardOptions) { o.RateLimiter = limit })
	ctx := context.Background()
	release := map[uint64]func(error) error{} // each pending operation's retry token
	var pendingRetry = map[uint64]bool{}      // a retry token was granted; the next decision must be its retry
	granted, refused := 0, 0
	for i, r := range lane.Trace {
		switch r.Outcome {
		case engine.OutcomeAdmitted, engine.OutcomeRejected:
			var err error
			if r.Outcome == engine.OutcomeRejected {
				err = awsThrottled.err()
			}
			if r.Attempt == 1 {
				require.False(t, pendingRetry[r.Request])
				rel, tokErr := retryer.GetAttemptToken(ctx)
				require.NoError(t, tokErr)
				require.NoError(t, rel(err))
			} else {
				require.True(t, pendingRetry[r.Request], "record %d: request %d retried without a token", i, r.Request)
				require.NoError(t, release[r.Request](err))
				delete(pendingRetry, r.Request)
			}
			if r.Outcome == engine.OutcomeAdmitted || r.Attempt >= clients.AWSMaxAttempts {
				continue
			}
			rel, tokErr := retryer.GetRetryToken(ctx, err)
			if tokErr != nil {
				refused++
				require.Less(t, i+1, len(lane.Trace))
				next := lane.Trace[i+1]
				require.Equal(t, engine.OutcomeGaveUp, next.Outcome, "record %d: the SDK refuses request %d a retry token at %v", i, r.Request, r.At)
				require.Equal(t, r.Request, next.Request)
				continue
			}
			granted++
			release[r.Request], pendingRetry[r.Request] = rel, true
		case engine.OutcomeGaveUp:
			require.False(t, pendingRetry[r.Request], "record %d: request %d gave up holding a retry token", i, r.Request)
		}
	}
	t.Logf("%d decisions: %d retry tokens granted, %d refused; %d tokens left", len(lane.Trace), granted, refused, limit.Remaining())
	assert.Greater(t, granted, 100)
	assert.Greater(t, refused, 100)
}

// The SDK's backoff draws from crypto/rand, so it is compared by bounds: 2,000 waits after
// each of attempts 1 to 7, for a throttle (1s base) and a timeout (50ms base), each lie in
// [0, clients.AWSBackoff's wait at b → 1), and reach above 99% of it; the caps double from
// 1s and 50ms and stop at 20s.
func TestAWSBackoffHasTheSDKsBounds(t *testing.T) {
	retryer := retry.NewStandard()
	for _, tc := range []struct {
		o    awsOutcome
		base time.Duration
	}{{awsThrottled, clients.AWSThrottleBase}, {awsTimeout, clients.AWSTransientBase}} {
		for attempt := 1; attempt <= 7; attempt++ {
			ceiling := clients.AWSBackoff(attempt, tc.base, clients.AWSMaxBackoff, 1)
			assert.Equal(t, min(tc.base<<(attempt-1), clients.AWSMaxBackoff), ceiling)
			most := time.Duration(0)
			for range 2000 {
				d, err := retryer.RetryDelay(attempt, tc.o.err())
				require.NoError(t, err)
				require.GreaterOrEqual(t, d, time.Duration(0))
				require.Less(t, d, ceiling, "attempt %d", attempt)
				most = max(most, d)
			}
			assert.Greater(t, most, ceiling*99/100, "attempt %d of %v", attempt, tc.o)
		}
	}
}
