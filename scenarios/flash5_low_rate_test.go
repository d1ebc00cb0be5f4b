package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
)

// flash5-low-rate's numbers: Flash5's token bucket admits one a second, both per minute and per
// hour, where ratelab's token bucket keeps the configured rate.
func TestFlash5LowRateTeachesWhatItSays(t *testing.T) {
	sc, err := Get("flash5-low-rate")
	require.NoError(t, err)
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	for i, want := range []int64{399, 599, 300, 1} {
		lane := res.Lanes[i]
		assert.Equal(t, int64(1200), lane.Totals.Offered, lane.Name)
		assert.Equal(t, want, lane.Totals.Admitted, lane.Name)
	}
	// Once the full bucket has drained (4/s against 1/s: by 34s), Flash5's admissions are
	// exactly 1s apart at both rates; the token bucket's per minute are 600ms apart on average,
	// on the 250ms grid of the arrivals.
	gaps := func(lane engine.LaneResult, from time.Duration) map[time.Duration]int {
		out := map[time.Duration]int{}
		var admitted []time.Duration
		for _, r := range lane.Trace {
			if r.Outcome == engine.OutcomeAdmitted && r.At >= from {
				admitted = append(admitted, r.At)
			}
		}
		for i := 1; i < len(admitted); i++ {
			out[admitted[i]-admitted[i-1]]++
		}
		return out
	}
	assert.Equal(t, map[time.Duration]int{time.Second: 239}, gaps(res.Lanes[0], time.Minute), "flash5 100/1m: one a second")
	assert.Equal(t, map[time.Duration]int{time.Second: 299}, gaps(res.Lanes[2], 0), "flash5 1/1h: one a second")
	for gap := range gaps(res.Lanes[1], time.Minute) {
		assert.Contains(t, []time.Duration{500 * time.Millisecond, 750 * time.Millisecond}, gap, "token bucket 100/1m: 600ms on a 250ms grid")
	}
}
