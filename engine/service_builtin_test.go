package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
)

// TestLittlesLawOnEveryBuiltInDownstream: in every lane of every built-in scenario with a
// downstream, L = λ·W (to float rounding and W's whole nanoseconds), and the downstream's
// request counts agree with the lane's: started = completed + still in service. The runs are
// cut to 10s (the law holds at every moment of a run, not only at its horizon).
func TestLittlesLawOnEveryBuiltInDownstream(t *testing.T) {
	checked := 0
	for _, sc := range scenarios.All() {
		if sc.Downstream == nil {
			continue
		}
		sc.Horizon = min(sc.Horizon, 10*time.Second)
		res, err := engine.Run(context.Background(), sc, nil)
		require.NoError(t, err, sc.Name)
		for _, l := range res.Lanes {
			s := l.Service
			require.NotNil(t, s, "%s %s", sc.Name, l.Name)
			require.Equal(t, s.Started, l.Totals.Completed+l.Totals.ServerTimeouts+s.StillInService, "%s %s", sc.Name, l.Name)
			require.LessOrEqual(t, s.StillInService, int64(l.Totals.MaxInFlight), "%s %s", sc.Name, l.Name)
			lambdaW := s.ArrivalRate * s.MeanTime.Seconds()
			require.InEpsilon(t, s.MeanInService, lambdaW, 1e-6, "%s %s: L = %g, λW = %g", sc.Name, l.Name, s.MeanInService, lambdaW)
			checked++
		}
	}
	require.GreaterOrEqual(t, checked, 10, "the catalogue has downstreams to check")
}
