package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/clients"
)

// octokit against a fixed window of 1 per second: request 2, refused at 300ms with 0
// remaining and X-RateLimit-Reset 1, waits ⌈(1000 − 300)/1000⌉ + 1 = 2s and is admitted at
// 2.3s; request 3, refused at 400ms, comes back at 2.4s into the same window, is refused
// again and gives up (the README's handler retries once).
func TestOctokitRetriesOnceAfterTheResetPlusASecond(t *testing.T) {
	sc := &Scenario{Horizon: 10 * sec, Client: Client{Policy: PolicyOctokit},
		Lanes: stacks(t, "fixed-window:limit=1,window=1s"), Sources: []Source{script(0, 300*ms, 400*ms)}}
	recs, lane := traced(t, sc, 0)
	assert.Equal(t, []time.Duration{300 * ms, 2300 * ms}, times(decisionsOf(recs, 2)))
	assert.Equal(t, []time.Duration{400 * ms, 2400 * ms}, times(decisionsOf(recs, 3)))
	assert.Equal(t, int64(2), lane.Totals.Admitted)
	assert.Equal(t, int64(1), lane.Totals.GaveUp)
	assert.Equal(t, int64(5), lane.Totals.Attempts)
	assert.Equal(t, 2*sec, lane.Loop.SuccessP99.Round(100*ms), "request 2: 300ms to 2.3s")

	// A refusal that leaves permits (a request for 3 of a window's 2) is no rate limit to the
	// plugin: thrown at once.
	sc = &Scenario{Horizon: 10 * sec, Client: Client{Policy: PolicyOctokit},
		Lanes: stacks(t, "fixed-window:limit=2,window=1s"), Sources: []Source{{Kind: SourceScript, Script: []Arrival{{At: 0, Permits: 1}, {At: ms, Permits: 2}}}}}
	_, lane = traced(t, sc, 0)
	assert.Equal(t, int64(1), lane.Totals.GaveUp)
	assert.Equal(t, int64(2), lane.Totals.Attempts)
}

// octokit's write group lets requests through 1s apart, retries included, in the order
// they ask: three writes at 0 go at 0, 1s and 2s; search 2s apart, notifications 3s.
func TestOctokitGroupSpacesAttempts(t *testing.T) {
	for group, gap := range map[string]time.Duration{"write": sec, "search": 2 * sec, "notifications": 3 * sec, "global": 0} {
		sc := &Scenario{Horizon: 20 * sec, Client: Client{Policy: PolicyOctokit, Group: group},
			Lanes: stacks(t, "fixed-window:limit=100,window=1s"), Sources: []Source{script(0, 0, 0)}}
		recs, lane := traced(t, sc, 0)
		var at []time.Duration
		for id := uint64(1); id <= 3; id++ {
			at = append(at, times(decisionsOf(recs, id))...)
		}
		assert.Equal(t, []time.Duration{0, gap, 2 * gap}, at, group)
		assert.Equal(t, int64(3), lane.Totals.Attempts, group)
		assert.Equal(t, 2*gap, lane.Wait.Max, "%s: the group's wait is the client's", group)
		assert.Zero(t, lane.Loop.SuccessP99, "%s: held before its first attempt, not after", group)
		assert.InDelta(t, float64(2*gap), float64(lane.Loop.LatencyP99), float64(2*gap)/16, "%s: end to end counts the hold", group)
	}
	bad := Client{Policy: PolicyOctokit, Group: "read"}
	assert.ErrorContains(t, bad.validate("client"), `client.group: unknown Bottleneck group "read" (global, write, search, notifications)`)
	bad = Client{Policy: PolicyRetry, Delay: sec, MaxAttempts: 2, Group: "write"}
	assert.ErrorContains(t, bad.validate("client"), "client.group: is for octokit, not retry")
	bad = Client{Policy: PolicyOctokit, Delay: sec}
	assert.ErrorContains(t, bad.validate("client"), "client.delay: octokit waits until the X-RateLimit-Reset")
}

// stripe never retries a rate limit's 429; stripe-lock-timeout retries twice, 500ms after
// the first refusal exactly (the jitter, under 125ms, is floored back to 500ms), then in
// (750ms, 1s].
func TestStripeRetriesOnlyLockTimeouts(t *testing.T) {
	sc := &Scenario{Horizon: 10 * sec, Client: Client{Policy: PolicyStripe},
		Lanes: stacks(t, "token-bucket:capacity=1,rate=1/1h"), Sources: []Source{script(0, ms, 2*ms)}}
	_, lane := traced(t, sc, 0)
	assert.Equal(t, int64(3), lane.Totals.Attempts)
	assert.Equal(t, int64(2), lane.Totals.GaveUp)

	for seed := uint64(1); seed <= 20; seed++ {
		sc = &Scenario{Seed: seed, Horizon: 10 * sec, Client: Client{Policy: PolicyStripeLock},
			Lanes: stacks(t, "token-bucket:capacity=1,rate=1/1h"), Sources: []Source{script(0, ms)}}
		recs, lane := traced(t, sc, 0)
		g := gaps(decisionsOf(recs, 2))
		require.Len(t, g, 2)
		assert.Equal(t, 500*ms, g[0])
		lo, hi := clients.StripeSleepBounds(1)
		assert.Equal(t, []time.Duration{750*ms + 1, sec}, []time.Duration{lo, hi})
		assert.True(t, g[1] >= lo && g[1] <= hi, "seed %d: %v", seed, g[1])
		assert.Equal(t, int64(1), lane.Totals.GaveUp)
	}
}

// aws-adaptive against a bucket of 10/s offered 100/s: after its first throttle the SDK's
// token bucket holds attempts back, so it is refused far less often than aws-standard,
// whose retries go whenever their backoff ends; with no throttle (a bucket of 1000/s) it
// never turns on and is aws-standard.
func TestAWSAdaptiveHoldsAttemptsAfterAThrottle(t *testing.T) {
	run := func(p Policy, spec string) LaneResult {
		sc := &Scenario{Seed: 3, Horizon: 20 * sec, Client: Client{Policy: p, RetryQuota: NoRetryQuota},
			Lanes: stacks(t, spec), Sources: []Source{{Kind: SourceConstant, Rate: 100}}}
		_, lane := traced(t, sc, 0)
		return lane
	}
	std, adaptive := run(PolicyAWSStandard, "token-bucket:capacity=10,rate=10/1s"), run(PolicyAWSAdaptive, "token-bucket:capacity=10,rate=10/1s")
	t.Logf("refused attempts: standard %d, adaptive %d; admitted %d, %d", std.Totals.RefusedAttempts, adaptive.Totals.RefusedAttempts,
		std.Totals.Admitted, adaptive.Totals.Admitted)
	assert.Less(t, adaptive.Totals.RefusedAttempts*3, std.Totals.RefusedAttempts)
	assert.Greater(t, adaptive.Loop.LatencyP99, std.Loop.LatencyP99, "held attempts wait on the client")
	free, freeStd := run(PolicyAWSAdaptive, "token-bucket:capacity=1000,rate=1000/1s"), run(PolicyAWSStandard, "token-bucket:capacity=1000,rate=1000/1s")
	assert.Equal(t, freeStd.Totals, free.Totals)
	assert.Zero(t, free.Totals.RefusedAttempts)
}

// header-paced against a fixed window of 10 per second offered 50/s: it reads remaining 0 on
// the tenth admission of each window and holds the rest to the reset, so it is never
// refused; retry-after-header, offered the same, is refused 40 times a second.
func TestHeaderPacedIsNeverRefused(t *testing.T) {
	run := func(p Policy) LaneResult {
		sc := &Scenario{Horizon: 10 * sec, Client: Client{Policy: p, Delay: 100 * ms, MaxAttempts: 100},
			Lanes: stacks(t, "fixed-window:limit=10,window=1s"), Sources: []Source{{Kind: SourceConstant, Rate: 50}}}
		_, lane := traced(t, sc, 0)
		return lane
	}
	paced, obeying := run(PolicyHeaderPaced), run(PolicyRetryAfterHeader)
	assert.Zero(t, paced.Totals.RefusedAttempts)
	assert.Equal(t, paced.Totals.Admitted, paced.Totals.Attempts, "every attempt admitted")
	assert.Equal(t, int64(100), paced.Totals.Admitted, "10 windows of 10")
	assert.Equal(t, int64(400), paced.Totals.Waiting, "the rest held by the client at the horizon")
	assert.Greater(t, obeying.Totals.RefusedAttempts, int64(300))
}

// header-paced is one client per key, each reading only its own answers' headers: behind a
// token bucket per key (10/s, a burst of 20), 100 quiet clients at ~4/s each are never held
// back, while the noisy neighbour (600/s) is paced by its own empty bucket. One pacing shared
// by the lane would hold every quiet client to the neighbour's reset: in this run it admitted
// 167 of the 9,946 requests, the quiet clients' ~3,950 among the held.
func TestHeaderPacedPacesEachKeyOnItsOwnHeaders(t *testing.T) {
	sc := &Scenario{Horizon: 10 * sec, Client: Client{Policy: PolicyHeaderPaced, Delay: sec, MaxAttempts: 5},
		Lanes: stacks(t, "keys(max=1000):token-bucket:capacity=20,rate=10/1s"),
		Sources: []Source{{Kind: SourcePoisson, Rate: 1000,
			Keys: &KeyPopulation{Kind: PopulationNoisy, Clients: 100, Share: 0.6}}}}
	res, err := Run(t.Context(), sc, nil)
	require.NoError(t, err)
	lane := res.Lanes[0]
	require.NotNil(t, lane.Keys)
	assert.Zero(t, lane.Totals.RefusedAttempts, "a paced client is never refused")
	quiet, noisy := 0, false
	for _, k := range lane.Keys.PerKey {
		if k.Key == "noisy-neighbour" {
			noisy = true
			assert.Less(t, k.Admitted, int64(300), "the neighbour: 20 a reset at most, 10s")
			assert.Greater(t, k.Offered-k.Admitted-k.NotAdmitted(), int64(5000), "the neighbour's own requests wait on its client")
			continue
		}
		quiet++
		assert.Equal(t, k.Offered, k.Admitted, "quiet client %s: its bucket never empties, so it is never held", k.Key)
	}
	assert.True(t, noisy)
	assert.Equal(t, 100, quiet)
}
