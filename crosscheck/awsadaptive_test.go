package crosscheck

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"
	_ "unsafe" // go:linkname: the SDK's clock and sleep

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/clients"
)

// The SDK's adaptive mode reads the wall clock and sleeps through two variables of its
// internal/sdk package, which no other package may import. They are reached by name here,
// pinned to the version the model follows: another version is refused by name below rather
// than read through a variable that may have moved.
//
//go:linkname sdkNowTime github.com/aws/aws-sdk-go-v2/internal/sdk.NowTime
var sdkNowTime func() time.Time

//go:linkname sdkSleepWithContext github.com/aws/aws-sdk-go-v2/internal/sdk.SleepWithContext
var sdkSleepWithContext func(context.Context, time.Duration) error

const awsSDKVersion = "1.48.0"

func requireSDKVersion(t *testing.T) {
	t.Helper()
	require.Equal(t, awsSDKVersion, aws.SDKVersion, "the adaptive cross-check reaches internal/sdk.NowTime and SleepWithContext of v%s by name; "+
		"read the new version's aws/retry/adaptive*.go and internal/sdk/time.go before moving the pin", awsSDKVersion)
}

// The SDK's own AdaptiveMode (NewAdaptiveMode, its defaults), its clock at the Unix epoch
// plus virtual time and its sleeps advancing that time, against clients.AWSAdaptive: 3000
// attempts in random rhythms (gaps of 0 to 400ms, bursts of gaps of 0), some phases
// throttled half the time, others never. Each attempt's GetAttemptToken sleeps exactly what
// the model's Acquire says, sleep by sleep, and the attempt's release (a 429 or a success)
// updates both. The bucket has no randomness: the sleeps are compared exactly.
func TestAWSAdaptiveIsTheSDKs(t *testing.T) {
	requireSDKVersion(t)
	var now int64 // virtual nanoseconds
	oldNow, oldSleep := sdkNowTime, sdkSleepWithContext
	t.Cleanup(func() { sdkNowTime, sdkSleepWithContext = oldNow, oldSleep })
	var slept []time.Duration
	sdkNowTime = func() time.Time { return time.Unix(0, now) }
	sdkSleepWithContext = func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		now += max(int64(d), 1) // a wall clock read after a sleep has moved, if only by 1ns
		return nil
	}
	for _, start := range []int64{0, int64(1234567 * time.Microsecond)} {
		now = start
		sdk := retry.NewAdaptiveMode()
		model := clients.NewAWSAdaptive(now)
		rng := rand.New(rand.NewPCG(uint64(start), 22))
		throttle429 := &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: http.StatusTooManyRequests}},
			Err: fmt.Errorf("HTTP 429")}
		var waits, holds int
		for k := range 3000 {
			switch phase := (k / 250) % 3; {
			case rng.IntN(8) == 0: // a burst: no gap
			case phase == 2:
				now += rng.Int64N(int64(400 * time.Millisecond))
			default:
				now += rng.Int64N(int64(40 * time.Millisecond))
			}
			throttled := (k/250)%3 == 0 && rng.IntN(2) == 0
			from := now
			slept = slept[:0]
			// The model first, bounded: a loop that never admits fails here, not in the SDK.
			var want []time.Duration
			mnow := from
			for len(want) < 1000 {
				ok, wait := model.Acquire(mnow)
				if ok {
					break
				}
				want = append(want, wait)
				mnow += max(int64(wait), 1)
			}
			require.Less(t, len(want), 1000, "attempt %d at %v: the model sleeps without end", k, time.Duration(from))
			release, err := sdk.GetAttemptToken(context.Background())
			require.NoError(t, err)
			require.Equal(t, want, append([]time.Duration(nil), slept...), "attempt %d at %v: the sleeps", k, time.Duration(from))
			require.Equal(t, now, mnow)
			if len(want) > 0 {
				holds++
				waits += len(want)
			}
			var opErr error
			if throttled {
				opErr = throttle429
			}
			require.NoError(t, release(opErr))
			model.Update(now, throttled)
		}
		t.Logf("start %v: %d attempts held, %d sleeps; fill rate %.3f/s, measured %.3f/s", time.Duration(start), holds, waits,
			model.FillRate(), model.MeasuredRate())
		assert.Greater(t, holds, 300, "the bucket held attempts back")
		assert.True(t, model.Enabled())
	}
}
