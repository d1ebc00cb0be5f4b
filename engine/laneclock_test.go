package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
)

// clockReader is a stage that reads its clock at every decision, as the real libraries'
// lanes (uber's Take) do, and remembers what it read beside the time it was told.
type clockReader struct {
	limiters.Limiter
	clock      limiters.Clock
	told, read []time.Duration
}

func (c *clockReader) AcquireAt(now time.Duration, n int) limiters.Decision {
	c.told = append(c.told, now)
	c.read = append(c.read, c.clock.Now())
	return c.Limiter.AcquireAt(now, n)
}

// A stage that reads its clock reads the lane's time, though the lane moves its virtual clock
// only when read (laneClock); once done, the virtual clock is at the horizon.
func TestStagesReadTheLanesTime(t *testing.T) {
	var stage *clockReader
	sc := &Scenario{Horizon: time.Second, Client: Client{Policy: PolicyDrop},
		Sources: []Source{{Kind: SourcePoisson, Rate: 500}},
		Lanes: []LaneSpec{{Name: "reader", Build: func(clock limiters.Clock) ([]limiters.Limiter, error) {
			tb, err := limiters.NewTokenBucket(5, limiters.PerSecond(100), clock)
			stage = &clockReader{Limiter: tb, clock: clock}
			return []limiters.Limiter{stage}, err
		}}}}
	require.NoError(t, sc.Validate())
	l, err := NewLane(sc, 0)
	require.NoError(t, err)
	defer l.Close()
	for {
		more, err := l.Step()
		require.NoError(t, err)
		if !more {
			break
		}
	}
	require.Greater(t, len(stage.told), 400, "about 500 arrivals")
	require.Equal(t, stage.told, stage.read)
	require.Equal(t, time.Second, l.clock.Now())
}
