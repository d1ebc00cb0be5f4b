package replicate

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/stretchr/testify/require"
)

// randomScenario has randomness everywhere: Poisson arrivals, jittered backoff, a pool with
// lognormal service.
func randomScenario(t testing.TB) *engine.Scenario {
	return &engine.Scenario{Name: "random", Seed: 42, Horizon: 3 * time.Second, Bins: 30,
		Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 150}},
		Client:  engine.Client{Policy: engine.PolicyBackoff, Delay: 5 * time.Millisecond, Jitter: true, MaxAttempts: 3},
		Lanes:   []engine.LaneSpec{mustParse(t, "token-bucket:capacity=5,rate=100/1s"), mustParse(t, "leaky-bucket:rate=100/1s")},
		Downstream: &engine.Downstream{Pool: 4, Phases: []engine.Phase{{Service: engine.Distribution{
			Kind: engine.DistLogNormal, Mean: 20 * time.Millisecond, Sigma: 1}}}}}
}

// fingerprint prints every value of a set, floats by their bits, so NaN equals NaN.
func fingerprint(s *Set) string {
	out := fmt.Sprint(s.Seeds, s.First.Lanes[0].Totals, s.First.Lanes[1].Totals)
	for _, l := range s.Lanes {
		for _, vs := range l.Values {
			for _, v := range vs {
				out += fmt.Sprintf(" %x", math.Float64bits(v))
			}
		}
		out += fmt.Sprint(l.Offered, l.Admitted, l.RefusedAttempts)
	}
	return out
}

// TestRunIsIdenticalWhateverGOMAXPROCS: one core or eight, the same set to the bit.
func TestRunIsIdenticalWhateverGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var prints []string
	for _, procs := range []int{1, 2, 8} {
		runtime.GOMAXPROCS(procs)
		set, err := Run(context.Background(), randomScenario(t), 12, nil)
		require.NoError(t, err)
		prints = append(prints, fingerprint(set))
	}
	require.Equal(t, prints[0], prints[1])
	require.Equal(t, prints[0], prints[2])
}

// TestReplicationsAreSeedsFromTheBase: replication i is the single run of seed base+i, and
// the replications differ (the seeds do reach every random stream).
func TestReplicationsAreSeedsFromTheBase(t *testing.T) {
	sc := randomScenario(t)
	set, err := Run(context.Background(), sc, 3, nil)
	require.NoError(t, err)
	require.Equal(t, []uint64{42, 43, 44}, set.Seeds)
	admitted := MetricIndex("admitted")
	for i, seed := range set.Seeds {
		one := *sc
		one.Seed = seed
		res, err := engine.Run(context.Background(), &one, nil)
		require.NoError(t, err)
		for j, lane := range res.Lanes {
			require.Equal(t, float64(lane.Totals.Admitted), set.Lanes[j].Values[admitted][i], "replication %d lane %d", i, j)
			for b, bin := range lane.Bins {
				require.Equal(t, bin.Admitted, set.Lanes[j].Admitted[i][b])
			}
		}
		if i == 0 {
			require.Equal(t, res.Lanes[0].Totals, set.First.Lanes[0].Totals)
		}
	}
	vs := set.Lanes[0].Values[MetricIndex("service_time_ns")]
	require.NotEqual(t, vs[0], vs[1])
	require.Equal(t, []uint64{math.MaxUint64, 0}, Seeds(math.MaxUint64, 2), "seeds wrap")
}

// TestTotalsAddUpInTheMeans: offered = admitted + refused + timed_out + gave_up + waiting in
// every replication, hence in the means.
func TestTotalsAddUpInTheMeans(t *testing.T) {
	set, err := Run(context.Background(), randomScenario(t), 6, nil)
	require.NoError(t, err)
	for _, l := range set.Lanes {
		sum := 0.0
		for _, name := range []string{"admitted", "refused", "timed_out", "gave_up", "waiting"} {
			sum += l.Estimate(MetricIndex(name)).Mean
		}
		require.InDelta(t, l.Estimate(MetricIndex("offered")).Mean, sum, 1e-9)
	}
}

// TestOneReplicationHasNoInterval: K = 1 gives the value and a NaN half-width.
func TestOneReplicationHasNoInterval(t *testing.T) {
	set, err := Run(context.Background(), randomScenario(t), 1, nil)
	require.NoError(t, err)
	iv := set.Lanes[0].Estimate(MetricIndex("admitted"))
	require.Equal(t, 1, iv.N)
	require.Equal(t, float64(set.First.Lanes[0].Totals.Admitted), iv.Mean)
	require.False(t, iv.Defined())
	require.True(t, math.IsNaN(iv.HalfWidth))
	require.False(t, iv.Contains(iv.Mean), "no interval contains anything")
}

// TestServiceMetricsAreAbsentWithoutADownstream: NaN in every replication, an empty estimate.
func TestServiceMetricsAreAbsentWithoutADownstream(t *testing.T) {
	sc := randomScenario(t)
	sc.Downstream = nil
	set, err := Run(context.Background(), sc, 2, nil)
	require.NoError(t, err)
	require.Equal(t, 0, set.Lanes[0].Estimate(MetricIndex("mean_in_service")).N)
	require.Equal(t, 2, set.Lanes[0].Estimate(MetricIndex("admitted")).N)
}

func TestRunRefusesBadCountsAndStopsWhenCancelled(t *testing.T) {
	for _, k := range []int{0, -1, MaxReplications + 1} {
		_, err := Run(context.Background(), randomScenario(t), k, nil)
		require.ErrorContains(t, err, fmt.Sprintf("%d replications: must be 1 to %d", k, MaxReplications))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	sc := randomScenario(t)
	sc.Horizon = time.Hour
	_, err := Run(ctx, sc, 4, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "replication 1 (seed 42)")
}

func TestProgressCountsReplications(t *testing.T) {
	p := NewProgress(5)
	require.Zero(t, p.Fraction())
	_, err := Run(context.Background(), randomScenario(t), 5, p)
	require.NoError(t, err)
	require.Equal(t, 1.0, p.Fraction())
	require.Zero(t, (*Progress)(nil).Fraction())
}

func TestEstimateByHand(t *testing.T) {
	iv := Estimate([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	require.Equal(t, 5.0, iv.Mean)
	require.InDelta(t, math.Sqrt(32.0/7), iv.StdDev, 1e-12)
	require.InDelta(t, 2.3646*math.Sqrt(32.0/7)/math.Sqrt(8), iv.HalfWidth, 1e-4)
	require.Equal(t, [2]float64{2, 9}, [2]float64{iv.Min, iv.Max})
	tenths := Estimate([]float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1})
	require.Equal(t, 0.1, tenths.Mean, "ten equal values: their value, not the rounded sum over ten")
	require.Zero(t, tenths.HalfWidth)
	same := Estimate([]float64{3, 3, 3})
	require.Zero(t, same.HalfWidth, "a deterministic scenario: every seed agrees")
	require.True(t, same.Contains(3))
	require.Equal(t, 0, Estimate(nil).N)
	require.True(t, math.IsNaN(Estimate(nil).Mean))
}
