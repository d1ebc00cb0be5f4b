package scenarios

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
)

// TestProbeCostTeaches holds probe-cost to its description on three seeds: Gradient probes
// about every 75 samples (100-odd probes in a minute at 130/s), Envoy's controller 9 times
// (every 5 to 5.75s), and the bins where they probe refuse several times what the bulkhead's
// bins refuse on average (seeds 1–10: Gradient 3.7–4.7 a bin, Envoy 4.6–9.9, the bulkhead
// 0.94–1.35).
func TestProbeCostTeaches(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		sc, err := Get("probe-cost")
		require.NoError(t, err)
		sc.Seed = seed
		res, err := engine.Run(context.Background(), sc, nil)
		require.NoError(t, err)
		bulk := res.Lanes[0]
		require.Nil(t, bulk.Adaptive, "the bulkhead has no adaptive limit")
		base := float64(bulk.Totals.Refused) / float64(len(bulk.Bins))
		perProbeBin := func(l engine.LaneResult) float64 {
			bins := 0
			for _, b := range l.Bins {
				if b.Probes > 0 {
					bins++
				}
			}
			require.Positive(t, bins, l.Name)
			return float64(l.Adaptive.RefusedInProbeBins) / float64(bins)
		}
		gradient, envoy := res.Lanes[1], res.Lanes[3]
		assert.InDelta(t, 103, gradient.Adaptive.Probes, 10, "seed %d: Gradient probes every 50 to 99 samples", seed)
		assert.Equal(t, 9, envoy.Adaptive.Probes, "seed %d: Envoy re-measures every 5 to 5.75s", seed)
		assert.Greater(t, perProbeBin(gradient), 2.5*base, "seed %d: Gradient's probe bins refuse more", seed)
		assert.Greater(t, perProbeBin(envoy), 3*base, "seed %d: Envoy's probe bins refuse more", seed)
	}
}
