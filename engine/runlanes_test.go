package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
)

// A lane that cannot be made ends the run with its own error, and the lanes already running
// are cancelled, not run to their horizon: lane 1 would take a second (an hour of Poisson
// traffic at 10,000/s); lane 2's limiters fail to build.
func TestRunLanesCancelsTheOthersWhenALaneCannotBeMade(t *testing.T) {
	broken := errors.New("no limiter for you")
	sc := perfScenario(t, time.Hour)
	sc.Lanes = sc.Lanes[:2]
	sc.Lanes[1].Build = func(limiters.Clock) ([]limiters.Limiter, error) { return nil, broken }
	require.NoError(t, sc.Validate())
	ended := make([]error, len(sc.Lanes))
	ran := make([]bool, len(sc.Lanes))
	lanes, err := runLanes(context.Background(), sc, func(ctx context.Context, i int, l *Lane) error {
		ran[i] = true
		ended[i] = l.run(ctx, nil, i)
		return ended[i]
	})
	require.ErrorIs(t, err, broken)
	require.Nil(t, lanes)
	require.True(t, ran[0], "lane 1 was made, and ran")
	require.False(t, ran[1], "lane 2 could not be made")
	require.ErrorIs(t, ended[0], context.Canceled, "lane 1 was cancelled, not run to its horizon")
}
