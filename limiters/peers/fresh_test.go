package peers

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The numbers in Nginx.FreshAt's comment: 10r/s, burst=5 nodelay, three requests at 0 leave excess 2000; at
// 200ms it has decayed to 0 but the next request would be accounted at 1000 (a new node's at
// 0), so only from 300ms is the node fresh.
func TestNginxFreshNeedsAWholeRequestOfDecay(t *testing.T) {
	l := must(NewNginx(NginxSpec{Rate: limiters.PerSecond(10), Burst: 5, NoDelay: true}, zeroClock{}))
	assert.True(t, l.FreshAt(0), "never seen")
	for range 3 {
		require.Equal(t, limiters.Admitted, l.AcquireAt(0, 1))
	}
	assert.False(t, l.FreshAt(200*time.Millisecond))
	assert.True(t, l.FreshAt(300*time.Millisecond))
	// What the difference is: at 200ms the old node passes 5 at once, a new one 6.
	assert.Equal(t, 5, l.AvailableAt(200*time.Millisecond))
	assert.Equal(t, 6, must(NewNginx(NginxSpec{Rate: limiters.PerSecond(10), Burst: 5, NoDelay: true}, zeroClock{})).AvailableAt(200*time.Millisecond))
}

// Uber with slack is never fresh once taken: after a long idle it returns slack+1 Takes at
// once, a new limiter one (then one per 10ms).
func TestUberWithSlackIsNeverFresh(t *testing.T) {
	old := must(NewUber(UberSpec{Rate: limiters.PerSecond(100), Slack: 10}, zeroClock{}))
	assert.True(t, old.FreshAt(0))
	old.AcquireAt(0, 1)
	assert.False(t, old.FreshAt(time.Hour))
	young := must(NewUber(UberSpec{Rate: limiters.PerSecond(100), Slack: 10}, zeroClock{}))
	assert.Equal(t, 11, old.AvailableAt(time.Hour))
	assert.Equal(t, 1, young.AvailableAt(time.Hour))
}
