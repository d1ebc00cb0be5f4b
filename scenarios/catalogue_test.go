package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
)

func TestEveryBuiltInValidatesAndRuns(t *testing.T) {
	names := Names()
	require.Contains(t, names, Default)
	seen := map[string]bool{}
	for _, sc := range All() {
		t.Run(sc.Name, func(t *testing.T) {
			assert.False(t, seen[sc.Name], "names are unique")
			seen[sc.Name] = true
			assert.NotEmpty(t, sc.Description)
			require.NoError(t, sc.Validate())
			res, err := engine.Run(context.Background(), sc, nil)
			require.NoError(t, err)
			require.Len(t, res.Lanes, len(sc.Lanes))
			for _, lane := range res.Lanes {
				assert.Greater(t, lane.Totals.Offered, int64(0), lane.Name)
				assert.Greater(t, lane.Totals.Admitted, int64(0), lane.Name)
				assert.False(t, lane.Truncated, lane.Name)
			}
		})
	}
	assert.Len(t, seen, len(names))
}

func TestGetReturnsAFreshCopy(t *testing.T) {
	a, err := Get("poisson")
	require.NoError(t, err)
	a.Lanes = a.Lanes[:1]
	a.Sources[0].Rate = 1
	b, err := Get("poisson")
	require.NoError(t, err)
	assert.Len(t, b.Lanes, 6)
	assert.Equal(t, 95.0, b.Sources[0].Rate)
}

// The numbers the catalogue's descriptions promise.
func TestCatalogueTeachesWhatItSays(t *testing.T) {
	run := func(name string) *engine.Results {
		sc, err := Get(name)
		require.NoError(t, err)
		res, err := engine.Run(context.Background(), sc, nil)
		require.NoError(t, err)
		return res
	}
	res := run("burst-after-idle")
	assert.Equal(t, int64(3+1), firstBurst(res.Lanes[0]), "the token bucket admits 3 of the first burst at 50ms and 1 at 80ms")
	assert.Equal(t, int64(1+1), firstBurst(res.Lanes[1]), "the leaky bucket admits 1 of it")

	res = run("boundary-attack")
	assert.Equal(t, int64(200), res.Lanes[0].Totals.Admitted, "fixed window: all 200")
	assert.Equal(t, int64(100), res.Lanes[1].Totals.Admitted, "sliding window: the first 100")
	assert.Equal(t, int64(101), res.Lanes[2].Totals.Admitted, "token bucket: 100 + the 1 refilled by 1s (the 2nd is due at 1.01s, after the last request at 1.0099s)")

	res = run("slot-edge")
	assert.Equal(t, int64(200), res.Lanes[0].Windows[0].MaxAdmitted, "10 slots: 200 within 901ms")
	assert.Equal(t, int64(100), res.Lanes[1].Windows[0].MaxAdmitted, "1000 slots: 100")

	res = run("steady")
	for _, lane := range res.Lanes[:4] {
		assert.Equal(t, lane.Totals.Offered, lane.Totals.Admitted, lane.Name)
	}
	assert.Less(t, res.Lanes[4].Totals.Admitted, res.Lanes[4].Totals.Offered, "the cold warm-up bucket refuses some")
	assert.Equal(t, res.Lanes[5].Totals.Offered, res.Lanes[5].Totals.Admitted)

	res = run("retry-storm")
	imm, backoff, hint := res.Lanes[0].Totals, res.Lanes[1].Totals, res.Lanes[2].Totals
	assert.Greater(t, imm.Retried, imm.Offered, "immediate retries: most attempts are retries")
	assert.Less(t, backoff.Attempts, imm.Attempts, "backoff makes the fewest attempts")
	assert.Less(t, backoff.Attempts, hint.Attempts, "backoff makes the fewest attempts")
	assert.Greater(t, hint.RefusedAttempts, hint.Offered, "retrying at the hint synchronises the retriers: refused again")

	res = run("cold-start")
	var warm, bucket int64
	for _, b := range res.Lanes[0].Bins {
		if b.Start < 10*s {
			warm += b.Admitted
		}
	}
	for _, b := range res.Lanes[1].Bins {
		if b.Start < 10*s {
			bucket += b.Admitted
		}
	}
	assert.InDelta(t, 549, warm, 5, "about 549 during the warm-up")
	assert.InDelta(t, 1000, bucket, 10, "instead of 1000")

	res = run("slow-downstream")
	var admitted, failed int64
	for _, b := range res.Lanes[0].Bins {
		if b.Start >= 10*s {
			admitted += b.Admitted
			failed += b.Failed
		}
	}
	assert.InDelta(t, 1.0/3, float64(failed)/float64(admitted), 0.05, "once slow, the pool refuses about a third")

	res = run("nginx-burst")
	for i, want := range []struct {
		admitted, delayed int64
		maxWait           time.Duration
	}{
		{30, 0, 0},         // burst=5 nodelay: 6 of each 10
		{30, 15, 300 * ms}, // delay=2: 3 at once, 3 held 100/200/300ms
		{30, 25, 500 * ms}, // burst=5: 1 at once, 5 held 100ms to 500ms
		{5, 0, 0},          // no burst: 1 of each 10
		{30, 0, 0},         // token-bucket capacity=6: as nodelay
	} {
		lane := res.Lanes[i]
		assert.Equal(t, int64(50), lane.Totals.Offered, lane.Name)
		assert.Equal(t, want.admitted, lane.Totals.Admitted, lane.Name)
		assert.Equal(t, want.delayed, lane.Totals.Delayed, lane.Name)
		assert.Equal(t, 50-want.admitted, lane.Totals.RefusedAttempts, lane.Name)
		assert.Equal(t, want.maxWait, lane.Wait.Max, lane.Name)
	}
	sc, err := Get("peers")
	require.NoError(t, err)
	sc.Trace = true
	res, err = engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	// Per lane, admitted: of the 30 at 0, the 200 from 1s, the 30 at 5s, the 100 at 6.999s,
	// the 100 at 7s; and the longest wait.
	type peerPhases struct {
		first, steady, afterIdle, before, boundary int
		maxWait                                    time.Duration
	}
	tokens := peerPhases{20, 119, 20, 20, 0, 0}
	window := peerPhases{30, 100, 30, 100, 100, 0}
	for i, want := range []peerPhases{
		tokens, tokens, tokens, // token bucket, x/time/rate, nginx
		{30, 200, 30, 100, 20, 999 * ms}, // uber: every Take waits (the last 80 wait past the horizon)
		{1, 199, 30, 100, 1, 0},          // guava: starts empty
		window, window,                   // fixed-window, flash5-fixed
		{30, 100, 30, 100, 0, 0}, // sliding window
	} {
		lane := res.Lanes[i]
		var got peerPhases
		arrived := map[uint64]time.Duration{}
		for _, r := range lane.Trace {
			if _, ok := arrived[r.Request]; !ok {
				arrived[r.Request] = r.At
			}
			if r.Outcome != engine.OutcomeAdmitted {
				continue
			}
			at := arrived[r.Request]
			got.maxWait = max(got.maxWait, r.At-at)
			switch {
			case at == 0:
				got.first++
			case at < 3*s:
				got.steady++
			case at == 5*s:
				got.afterIdle++
			case at < 7*s:
				got.before++
			default:
				got.boundary++
			}
		}
		assert.Equal(t, want, got, lane.Name)
	}

	res = run("leaky-queue")
	for i, want := range []struct {
		admitted, delayed int64
		maxWait           time.Duration
	}{{3, 0, 0}, {18, 15, 500 * ms}, {24, 21, 700 * ms}, {24, 0, 0}} {
		lane := res.Lanes[i]
		assert.Equal(t, int64(24), lane.Totals.Offered, lane.Name)
		assert.Equal(t, want.admitted, lane.Totals.Admitted, lane.Name)
		assert.Equal(t, want.delayed, lane.Totals.Delayed, lane.Name)
		assert.Equal(t, 24-want.admitted, lane.Totals.Refused, lane.Name)
		assert.Equal(t, want.maxWait, lane.Wait.Max, lane.Name)
	}
	assert.Equal(t, int64(8), res.Lanes[2].Windows[0].MaxAdmitted, "the queue never passes more than a burst in a second")

	res = run("guava-prepay")
	type phase struct{ batch, before1s, from1s, at5s int64 }
	for i, want := range []struct {
		phase
		maxWait time.Duration
		waits   []time.Duration // at 5s, the waits of the 15 in order
	}{
		{phase{10, 0, 21, 11}, 0, nil},
		{phase{10, 9, 21, 15}, 900 * ms, []time.Duration{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100 * ms, 200 * ms, 300 * ms, 400 * ms}},
		{phase{10, 9, 21, 10}, 0, nil},
	} {
		lane := res.Lanes[i]
		var got phase
		var waits []time.Duration
		arrived := map[uint64]time.Duration{} // a request's first record is at its arrival
		for _, r := range lane.Trace {
			if _, ok := arrived[r.Request]; !ok {
				arrived[r.Request] = r.At
			}
			if r.Outcome != engine.OutcomeAdmitted {
				continue
			}
			switch at, wait := arrived[r.Request], r.At-arrived[r.Request]; {
			case r.Permits == 10:
				got.batch += int64(r.Permits)
			case at >= 5*s:
				got.at5s++
				waits = append(waits, wait)
			case at < s:
				got.before1s++
				if i == 1 {
					assert.Equal(t, 900*ms, wait, "%s: the request of %s waits for the batch's cost", lane.Name, at)
				}
			default:
				got.from1s++
			}
		}
		assert.Equal(t, want.phase, got, lane.Name)
		assert.Equal(t, want.maxWait, lane.Wait.Max, lane.Name)
		if want.waits != nil {
			assert.Equal(t, want.waits, waits, lane.Name)
		}
	}
}

// firstBurst counts admissions before 100ms.
func firstBurst(l engine.LaneResult) int64 {
	var n int64
	for _, r := range l.Trace {
		if r.Outcome == engine.OutcomeAdmitted && r.At < 100*ms {
			n++
		}
	}
	return n
}

// Counts add up: in every lane of every built-in scenario, each request offered ended as
// exactly one of admitted, refused, timed out and gave up, or is still waiting — at the
// horizon, and at every point a stepped lane stops on the way (what the TUI shows).
func TestEveryRequestEndsOnce(t *testing.T) {
	for _, name := range Names() {
		sc, err := Get(name)
		require.NoError(t, err)
		if sc.Horizon > 2*time.Minute {
			sc.Horizon = 2 * time.Minute
		}
		res, err := engine.Run(context.Background(), sc, nil)
		require.NoError(t, err)
		for _, lane := range res.Lanes {
			tot := lane.Totals
			require.Equal(t, tot.Offered, tot.Admitted+tot.Refused+tot.TimedOut+tot.GaveUp+tot.Waiting,
				"%s / %s: %+v", name, lane.Name, tot)
			require.Equal(t, tot.Attempts, tot.Offered+tot.Retried, "%s / %s: attempts are first tries and retries", name, lane.Name)
		}
		for i := range sc.Lanes {
			lane, err := engine.NewLane(sc, i)
			require.NoError(t, err)
			for step := range 7 {
				require.NoError(t, lane.RunUntil(sc.Horizon*time.Duration(step+1)/8))
				tot := lane.Result().Totals
				require.Equal(t, tot.Offered, tot.Ended()+tot.Waiting, "%s / %s after %d/8: %+v", name, lane.Result().Name, step+1, tot)
			}
		}
	}
}

// retry-herd and aws-quota-drain say what they measure.
func TestRetryHerdAndAWSQuotaDrain(t *testing.T) {
	sc, err := Get("retry-herd")
	require.NoError(t, err)
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	peak := func(l engine.LaneResult) (n int64, at time.Duration) {
		for _, b := range l.Bins {
			if b.Retried > n {
				n, at = b.Retried, b.Start
			}
		}
		return n, at
	}
	obeyed, jittered := res.Lanes[0], res.Lanes[1]
	for _, l := range res.Lanes {
		assert.Equal(t, int64(500), l.Totals.Offered)
		assert.Equal(t, int64(500), l.Totals.Admitted, l.Name)
		assert.Equal(t, int64(1000), l.Totals.Retried, l.Name)
		perWindow := make([]int64, 5)
		for _, b := range l.Bins {
			perWindow[b.Start/(10*s)] += b.Admitted
		}
		assert.Equal(t, []int64{100, 100, 100, 100, 100}, perWindow, "%s: 100 per window", l.Name)
	}
	require.Equal(t, 10*ms, obeyed.Bins[1].Start-obeyed.Bins[0].Start)
	for k, want := range []int64{400, 300, 200, 100} {
		at := time.Duration(k+1)*10*s + 500*ms
		assert.Equal(t, want, obeyed.Bins[at/(10*ms)].Retried, "retries at %v", at)
	}
	n, at := peak(obeyed)
	assert.Equal(t, []any{int64(400), 10*s + 500*ms}, []any{n, at})
	n, _ = peak(jittered)
	assert.Equal(t, int64(4), n)
	// The engine's own Loop measures say the same, at 10ms whatever the bins: the herd at
	// 10.5s, 2000× the mean retries per 10ms, against 20× with jitter; 3 attempts per
	// request and 10 admitted per second either way. A hundred requests succeed at once and a
	// hundred more at each window's reset, so the median time to success is 20s (the top of
	// its histogram bucket, 20.40s) and the 99th 40s; with no downstream a request's answer
	// is its admission, and end to end is the same.
	assert.Equal(t, engine.Loop{GoodputPerSec: 10, Amplification: 3, HerdPeak: 400, HerdPeakAt: 10*s + 500*ms, HerdSynchrony: 2000,
		SuccessP50: 20401094655, SuccessP99: 40 * s, LatencyP50: 20401094655, LatencyP99: 40 * s}, obeyed.Loop)
	assert.Equal(t, int64(4), jittered.Loop.HerdPeak)
	assert.InDelta(t, 20, jittered.Loop.HerdSynchrony, 1e-9)
	assert.Equal(t, 40*s, obeyed.Wait.Max)
	assert.Equal(t, "45.7s", (jittered.Wait.Max + 500*ms).Round(100*ms).String())

	sc, err = Get("aws-quota-drain")
	require.NoError(t, err)
	sc.Trace = true
	res, err = engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	type counts struct{ offered, attempts, retried, admitted, gaveUp int64 }
	var got []counts
	for _, l := range res.Lanes {
		got = append(got, counts{l.Totals.Offered, l.Totals.Attempts, l.Totals.Retried, l.Totals.Admitted, l.Totals.GaveUp})
	}
	assert.Equal(t, []counts{{1958, 2058, 100, 1511, 447}, {1958, 2836, 878, 1574, 384}, {1958, 3258, 1300, 1958, 0}}, got)
	once, first := 0, time.Duration(-1)
	for _, r := range res.Lanes[0].Trace {
		if r.Outcome == engine.OutcomeGaveUp && r.Attempt == 1 {
			once++
			if first < 0 {
				first = r.At
			}
		}
	}
	assert.Equal(t, 384, once, "gave up at the first attempt: no quota left")
	assert.Equal(t, "11.8s", first.Round(100*ms).String())
	assert.Equal(t, 15*s, res.Lanes[2].Wait.Max, "retryablehttp's 1+2+4+8s")
	for i, want := range []float64{2058.0 / 1958, 2836.0 / 1958, 3258.0 / 1958} {
		assert.InDelta(t, want, res.Lanes[i].Loop.Amplification, 1e-12, res.Lanes[i].Name)
	}

	// A lane whose client drops refusals retries nothing: no herd.
	sc, err = Get("boundary-attack")
	require.NoError(t, err)
	res, err = engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	for _, l := range res.Lanes {
		if l.Totals.Retried == 0 {
			assert.Zero(t, l.Loop.HerdPeak, l.Name)
			assert.Zero(t, l.Loop.HerdSynchrony, l.Name)
			assert.Equal(t, 1.0, l.Loop.Amplification, l.Name)
		}
	}
}
