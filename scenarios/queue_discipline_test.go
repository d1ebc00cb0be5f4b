package scenarios

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
)

// TestCoDelOverloadTeaches holds codel-overload to what its description says, on three
// seeds: FIFO's full queue makes every admitted request wait about 1.3s, which leaves too
// little of the callers' 1.5s for the work, so it answers fewer per second than CoDel, whose
// drops keep the p99 wait a fraction of FIFO's; LIFO answers its newest at once (low median)
// and adaptive LIFO's controlled delay caps every wait at 100ms.
func TestCoDelOverloadTeaches(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		sc, err := Get("codel-overload")
		require.NoError(t, err)
		sc.Seed = seed
		res, err := engine.Run(context.Background(), sc, nil)
		require.NoError(t, err)
		by := map[string]engine.LaneResult{}
		for _, l := range res.Lanes {
			by[l.Name] = l
		}
		fifo, lifo, codel, alifo := by["fifo"], by["lifo"], by["codel"], by["adaptive-lifo"]
		assert.Greater(t, fifo.Wait.P99, 1200*ms, "seed %d: FIFO's full queue: 200 waiting at 150/s", seed)
		assert.Less(t, codel.Wait.P99, fifo.Wait.P99/4, "seed %d: CoDel's p99 wait", seed)
		assert.Less(t, alifo.Wait.P99, 100*ms, "seed %d: adaptive LIFO's queue timeout is at most 100ms", seed)
		assert.Less(t, lifo.Wait.P50, fifo.Wait.P50/10, "seed %d: LIFO serves the newest", seed)
		assert.Greater(t, float64(codel.Totals.Completed), 1.04*float64(fifo.Totals.Completed),
			"seed %d: FIFO's answers come too late for 1.5s callers more often", seed)
		assert.Greater(t, codel.Totals.Refused, int64(0), "seed %d: CoDel drops", seed)
		assert.Equal(t, int64(0), alifo.Totals.Refused, "seed %d: adaptive LIFO sheds by timeout, never a full queue", seed)
	}
}
