package replicate

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/stretchr/testify/require"
)

// The engine checked against queueing theory. Each check runs K replications, and the exact
// value must lie within the 99.9% interval (1.69 × the 95% half-width for K = 20, whose
// t(0.9995, 19) / t(0.975, 19) = 3.883 / 2.093): a real discrepancy, not bad luck, fails it. The
// intervals are also required to be narrow enough that a formula off by 3% (5% on the shorter runs under -race) would be caught,
// and each check is shown to reject a system the formula does not describe.

// wideFactor turns a 95% half-width with K = 20 into a 99.9% one.
const wideFactor = 3.8834 / 2.0930

// precision is the error the checks must be able to catch: 3%, or 5% on the shorter runs
// under the race detector or -short.
func precision() float64 {
	if raceDetector || testing.Short() {
		return 0.05
	}
	return 0.03
}

// sized is n, or n/div under the race detector or -short.
func sized(n, div int) int {
	if raceDetector || testing.Short() {
		return max(n/div, 1)
	}
	return n
}

func mustParse(t testing.TB, text string) engine.LaneSpec {
	t.Helper()
	st, err := engine.ParseStack(text)
	require.NoError(t, err, text)
	return engine.LaneSpec{Stack: st}
}

// replicated runs k replications and returns the lane's interval of the metric called name.
func replicated(t testing.TB, sc *engine.Scenario, k int, name string) Interval {
	t.Helper()
	set, err := Run(context.Background(), sc, k, nil)
	require.NoError(t, err)
	m := MetricIndex(name)
	require.GreaterOrEqual(t, m, 0, name)
	return set.Lanes[0].Estimate(m)
}

// leakyScenario offers Poisson arrivals at lambda per second to one dropping leaky bucket
// of 100/s (T = 10ms), for horizon.
func leakyScenario(t testing.TB, lane string, lambda float64, horizon time.Duration, seed uint64) *engine.Scenario {
	return &engine.Scenario{Name: "md11", Seed: seed, Horizon: horizon, Bins: 1,
		Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: lambda}},
		Lanes:   []engine.LaneSpec{mustParse(t, lane)}}
}

// leakyAdmitted is 1/(1+λT): ratelab's leaky bucket is GCRA with τ = T, so a request passes
// iff now ≥ TAT, and TAT becomes now + T: it is exactly a server busy for T after each
// admission, and a request arriving while it is busy is dropped (the client drops; nothing
// queues). That is the M/D/1/1 loss system. By renewal: a cycle is T busy plus an
// exponential idle wait of mean 1/λ for the next arrival, one admission per cycle, λ(T+1/λ) =
// 1+λT arrivals per cycle on average; so the admitted fraction is 1/(1+λT). At λ = 100/s and
// T = 10ms, half are admitted.
func leakyAdmitted(lambda float64, T time.Duration) float64 { return 1 / (1 + lambda*T.Seconds()) }

func TestLeakyBucketIsAnMD11LossSystem(t *testing.T) {
	const k = 20
	horizon := time.Duration(sized(60, 4)) * time.Second
	for _, lambda := range []float64{30, 100, 400} {
		t.Run(fmt.Sprintf("λ=%g/s", lambda), func(t *testing.T) {
			want := leakyAdmitted(lambda, 10*time.Millisecond)
			iv := replicated(t, leakyScenario(t, "leaky-bucket:rate=100/1s", lambda, horizon, 1), k, "admit_ratio")
			require.LessOrEqual(t, abs(iv.Mean-want), wideFactor*iv.HalfWidth,
				"admitted %.5f ± %.5f, 1/(1+λT) = %.5f", iv.Mean, iv.HalfWidth, want)
			require.Less(t, iv.HalfWidth, precision()*want/wideFactor, "the interval is too wide to catch a %.0f%% error", 100*precision())
			t.Logf("λT = %.1f: admitted %.5f ± %.5f, exact %.5f", lambda/100, iv.Mean, iv.HalfWidth, want)
		})
	}
	// The check has teeth: a token bucket of the same rate and capacity 2 tolerates one more
	// request in a cluster, is not a one-server loss system, and admits visibly more.
	t.Run("capacity 2 is not M/D/1/1", func(t *testing.T) {
		want := leakyAdmitted(100, 10*time.Millisecond)
		iv := replicated(t, leakyScenario(t, "token-bucket:capacity=2,rate=100/1s", 100, horizon, 1), k, "admit_ratio")
		require.Greater(t, abs(iv.Mean-want), wideFactor*iv.HalfWidth, "admitted %.5f ± %.5f", iv.Mean, iv.HalfWidth)
	})
}

// erlangB is the loss probability of c servers offered a Erlangs with no queue, by the
// stable recursion B(0) = 1, B(n) = a·B(n−1) / (n + a·B(n−1)). B(5, 4) = 0.1991.
func erlangB(c int, a float64) float64 {
	b := 1.0
	for n := 1; n <= c; n++ {
		b = a * b / (float64(n) + a*b)
	}
	return b
}

// TestErlangB checks the recursion against the closed form B(c, a) = (aᶜ/c!) / Σₖ₌₀ᶜ aᵏ/k!
// and against the tables' B(5, 4) = 0.1991.
func TestErlangB(t *testing.T) {
	closed := func(c int, a float64) float64 {
		term, sum := 1.0, 1.0
		for k := 1; k <= c; k++ {
			term *= a / float64(k)
			sum += term
		}
		return term / sum
	}
	for _, c := range []int{1, 2, 5, 20, 60} {
		for _, a := range []float64{0.5, 4, 10, 45} {
			require.InEpsilon(t, closed(c, a), erlangB(c, a), 1e-12, "B(%d, %g)", c, a)
		}
	}
	require.InDelta(t, 0.8, erlangB(1, 4), 1e-15) // a/(1+a)
	require.InDelta(t, 0.1991, erlangB(5, 4), 5e-5)
}

// poolScenario offers Poisson arrivals at lambda per second, all admitted (a bulkhead far
// above the pool), to a pool of c connections with exponential service of mean s.
func poolScenario(t testing.TB, c int, lambda float64, s time.Duration, horizon time.Duration) *engine.Scenario {
	return &engine.Scenario{Name: "mmcc", Seed: 1, Horizon: horizon, Bins: 1,
		Sources:    []engine.Source{{Kind: engine.SourcePoisson, Rate: lambda}},
		Lanes:      []engine.LaneSpec{mustParse(t, "concurrency:max=100000")},
		Downstream: &engine.Downstream{Pool: c, Phases: []engine.Phase{{Service: engine.Distribution{Kind: engine.DistExponential, Mean: s}}}}}
}

// TestPoolLosesTheErlangBFraction: Poisson arrivals into c servers with exponential service
// and no queue (the engine's Downstream with Pool = c: an admitted request that finds every
// connection busy fails) is M/M/c/c, which loses B(c, λ·s) of what it is offered. By
// Little's law the pool then carries L = λ(1 − B)·s requests on average, W = s each.
func TestPoolLosesTheErlangBFraction(t *testing.T) {
	const k = 20
	horizon := time.Duration(sized(40, 4)) * time.Second
	s := 10 * time.Millisecond
	for _, c := range []struct {
		pool   int
		lambda float64
	}{{1, 100}, {5, 400}, {20, 1000}} {
		a := c.lambda * s.Seconds()
		loss := erlangB(c.pool, a)
		t.Run(fmt.Sprintf("c=%d a=%g", c.pool, a), func(t *testing.T) {
			set, err := Run(context.Background(), poolScenario(t, c.pool, c.lambda, s, horizon), k, nil)
			require.NoError(t, err)
			lane := set.Lanes[0]
			failed := make([]float64, k)
			for i := range k {
				failed[i] = lane.Values[MetricIndex("failed")][i] / lane.Values[MetricIndex("admitted")][i]
			}
			iv := Estimate(failed)
			require.LessOrEqual(t, abs(iv.Mean-loss), wideFactor*iv.HalfWidth, "lost %.5f ± %.5f, B(%d, %g) = %.5f", iv.Mean, iv.HalfWidth, c.pool, a, loss)
			require.Less(t, iv.HalfWidth, max(precision()*loss, 0.002)/wideFactor, "the interval is too wide to catch a %.0f%% error", 100*precision())
			carried := a * (1 - loss)
			L := lane.Estimate(MetricIndex("mean_in_service"))
			require.LessOrEqual(t, abs(L.Mean-carried), wideFactor*L.HalfWidth, "L %.4f ± %.4f, λ(1−B)s = %.4f", L.Mean, L.HalfWidth, carried)
			W := lane.Estimate(MetricIndex("service_time_ns"))
			require.LessOrEqual(t, abs(W.Mean-float64(s)), wideFactor*W.HalfWidth, "W %.0f ± %.0f ns, s = %d", W.Mean, W.HalfWidth, s)
			t.Logf("lost %.5f ± %.5f (B = %.5f); L %.4f ± %.4f (%.4f); W %.4gms ± %.2gms", iv.Mean, iv.HalfWidth, loss,
				L.Mean, L.HalfWidth, carried, W.Mean/1e6, W.HalfWidth/1e6)
		})
	}
	// Teeth: a constant 10ms service is M/D/c/c, whose loss Erlang's formula also gives (it is
	// insensitive to the service distribution) — but a pool of c−1 is not.
	t.Run("one connection fewer", func(t *testing.T) {
		set, err := Run(context.Background(), poolScenario(t, 4, 400, s, horizon), k, nil)
		require.NoError(t, err)
		lane := set.Lanes[0]
		failed := make([]float64, k)
		for i := range k {
			failed[i] = lane.Values[MetricIndex("failed")][i] / lane.Values[MetricIndex("admitted")][i]
		}
		iv := Estimate(failed)
		require.Greater(t, abs(iv.Mean-erlangB(5, 4)), wideFactor*iv.HalfWidth)
	})
}

// TestIntervalsCoverTheExactValue: 200 independent experiments (disjoint seeds), each K = 5
// replications of the M/D/1/1 leaky bucket at λT = 1, each giving a 95% interval of the
// admitted fraction. The exact 1/2 must lie in 95% ± 3.5% of them: 183 to 197 of 200. Too
// few would mean intervals too narrow (a wrong t quantile, a variance without K − 1,
// correlated seeds); too many, intervals too wide.
func TestIntervalsCoverTheExactValue(t *testing.T) {
	const experiments, k = 200, 5
	horizon := time.Duration(sized(20, 4)) * time.Second
	want := leakyAdmitted(100, 10*time.Millisecond)
	covered := 0
	for e := range experiments {
		iv := replicated(t, leakyScenario(t, "leaky-bucket:rate=100/1s", 100, horizon, uint64(1000+e*k)), k, "admit_ratio")
		if iv.Contains(want) {
			covered++
		}
	}
	t.Logf("%d of %d intervals contain %.3f", covered, experiments, want)
	require.GreaterOrEqual(t, covered, 183)
	require.LessOrEqual(t, covered, 197)
}

func abs(x float64) float64 { return max(x, -x) }
