package golden

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// The checkers compute their bounds from the parameters; limiters.AdmissionBound (which the
// engine's meters and the run table use) must state the same numbers.
func TestAdmissionBoundAgreesWithCheckers(t *testing.T) {
	lengths := []time.Duration{ns, 2 * ns, msec - ns, msec, msec + ns, 10 * msec, 99 * msec, 100 * msec, 100*msec + ns,
		900 * msec, 900*msec + ns, 900*msec + 2*ns, sec - ns, sec, sec + ns, 1900 * msec, 2 * sec, 10 * sec, hour}
	for _, text := range []string{"token-bucket:capacity=3,rate=100/1s", "token-bucket:capacity=3,rate=3/1s",
		"leaky-bucket:rate=100/1s", "leaky-bucket:rate=7/1s", "warm-up:capacity=10,rate=100/1s,warmup=10s",
		"sliding-window:limit=100,window=1s,slots=10", "sliding-window:limit=5,window=1s,slots=1000",
		"sliding-window:limit=100,window=1s,slots=1", "fixed-window:limit=100,window=1s"} {
		s := mustSpec(text)
		for _, L := range lengths {
			got, ok := limiters.AdmissionBound(s, L)
			require.True(t, ok)
			var want int64
			switch s := s.(type) {
			case limiters.TokenBucketSpec:
				want = tokenBucketBound(s.Capacity, emissionInterval(s.Rate.Permits, s.Rate.Window), L)
			case limiters.WarmUpSpec:
				want = tokenBucketBound(s.Capacity, emissionInterval(s.Rate.Permits, s.Rate.Window), L)
			case limiters.LeakyBucketSpec:
				want = ceilDiv(int64(L), int64(emissionInterval(s.Rate.Permits, s.Rate.Window)))
			case limiters.SlidingWindowSpec:
				want = slidingBound(s.Limit, s.Slots, s.Window, L)
			case limiters.FixedWindowSpec:
				want = int64(s.Limit) * (ceilDiv(int64(L)-1, int64(s.Window)) + 1)
			default:
				t.Fatalf("%s: no independent bound to cross-check", s)
			}
			assert.Equal(t, want, got, "%s, L=%s", s, ms(L))
		}
	}
}

// Every traced decision agrees with the state it is explained by: a request for n permits is
// admitted exactly when the pre-decision state had n available, and the sentence says so.
func TestDecisionsAgreeWithTheirState(t *testing.T) {
	var lanes []engine.LaneSpec
	for _, text := range append(append([]string{}, rateSpecs...), "warm-up:capacity=7,rate=100/1s,warmup=2s", "concurrency:max=5") {
		stack, err := engine.ParseStack(text)
		require.NoError(t, err)
		lanes = append(lanes, engine.LaneSpec{Stack: stack})
	}
	sc := &engine.Scenario{Name: "consistency", Seed: 7, Horizon: 5 * sec, Bins: 1, Trace: true,
		Client: engine.Client{Policy: engine.PolicyDrop}, Lanes: lanes, Sources: mixed(150),
		Downstream: &engine.Downstream{Phases: []engine.Phase{{Service: engine.Distribution{Kind: engine.DistExponential, Mean: 30 * msec}}}}}
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	for _, lane := range res.Lanes {
		decisions := 0
		for _, rec := range lane.Trace {
			if rec.State == nil || (rec.Outcome != engine.OutcomeAdmitted && rec.Outcome != engine.OutcomeRejected) {
				continue
			}
			decisions++
			admitted := rec.Outcome == engine.OutcomeAdmitted
			if !assert.Equal(t, admitted, rec.State.Available >= rec.Permits,
				"%s at %s: %s %d with %d available before: %s", lane.Name, ms(rec.At), rec.Outcome, rec.Permits, rec.State.Available, rec.Reason) {
				break
			}
			word := "fit"
			if rec.State.Kind == limiters.KindTokenBucket || rec.State.Kind == limiters.KindLeakyBucket || rec.State.Kind == limiters.KindWarmUpTokenBucket {
				word = "within"
			}
			if !assert.Equal(t, admitted, strings.Contains(rec.Reason, word), "%s at %s: %s: %q", lane.Name, ms(rec.At), rec.Outcome, rec.Reason) {
				break
			}
		}
		assert.Greater(t, decisions, 500, lane.Name)
	}
}

// A refused request asked again exactly when RetryAfterAt says is admitted, and 1ns earlier
// is refused: the hint is exact, as a Retry-After header needs it to be.
func TestRetryAfterIsExact(t *testing.T) {
	for _, text := range append(append([]string{}, rateSpecs...), "warm-up:capacity=7,rate=100/1s,warmup=2s",
		"token-bucket:capacity=5,rate=3/1s", "sliding-window:limit=10,window=1s,slots=8") {
		s := mustSpec(text)
		rng := rand.New(rand.NewPCG(1, 2))
		checked := 0
		for trial := 0; trial < 300; trial++ {
			l, err := s.New(fixedClock(0))
			require.NoError(t, err)
			rl := l.(limiters.RateLimiter)
			now := time.Duration(0)
			for step := 0; step < 50; step++ {
				now += time.Duration(rng.Int64N(int64(30 * msec)))
				n := 1 + rng.IntN(min(l.MaxPermits(), 3))
				if l.AcquireAt(now, n) == limiters.Admitted {
					continue
				}
				wait, ok := rl.RetryAfterAt(now, n)
				require.True(t, ok)
				require.Positive(t, wait, "%s refused %d at %s but hints no wait", s, n, ms(now))
				early := l.AvailableAt(now+wait-ns) >= n
				late := l.AvailableAt(now+wait) >= n
				if !assert.False(t, early, "%s: refused %d at %s, hint %s, but %d were available 1ns before the hint", s, n, ms(now), ms(wait), l.AvailableAt(now+wait-ns)) ||
					!assert.True(t, late, "%s: refused %d at %s, hint %s, but only %d available at the hint", s, n, ms(now), ms(wait), l.AvailableAt(now+wait)) {
					return
				}
				checked++
			}
		}
		t.Logf("%s: %d hints checked", s, checked)
	}
}
