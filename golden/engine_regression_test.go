package golden

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
)

// Regression (engine, Lane.drainQueue, found by this package and fixed in the engine): a
// queued request that can never be admitted (it asks for more permits than a stage's
// MaxPermits) was not given up when the queue reached it: its decision is Never, there is no
// retry time for it, and it sat at the head until it timed out, holding everyone behind it.
// drainQueue now gives it up at once, as attempt() does (Totals.Never).
//
// leaky-bucket:rate=100/1s (T=10ms, MaxPermits 1), a queue of 10 with a 1s timeout:
// 1 permit at 0 (admitted), 1 at 1ms (queued, due at 10ms), 2 permits at 2ms (queued behind
// it: can never pass), 1 at 3ms (queued). Expected: the 2-permit request is given up as never
// at 10ms and the 3ms request admitted at 20ms. Before the fix the 3ms request was admitted at
// 1.002s, when the 2-permit request timed out.
func TestEngineQueueGivesUpANeverRequestAtTheHead(t *testing.T) {
	stack, err := engine.ParseStack("leaky-bucket:rate=100/1s")
	require.NoError(t, err)
	sc := &engine.Scenario{Name: "queue-never", Seed: 1, Horizon: 2 * sec, Bins: 1, Trace: true,
		Client: engine.Client{Policy: engine.PolicyQueue, QueueSize: 10, Timeout: sec},
		Lanes:  []engine.LaneSpec{{Stack: stack}},
		Sources: []engine.Source{{Kind: engine.SourceScript, Script: []engine.Arrival{
			{At: 0}, {At: msec}, {At: 2 * msec, Permits: 2}, {At: 3 * msec}}}}}
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	lane := res.Lanes[0]
	admittedAt := map[uint64]time.Duration{}
	for _, rec := range lane.Trace {
		if rec.Outcome == engine.OutcomeAdmitted {
			admittedAt[rec.Request] = rec.At
		}
	}
	assert.Equal(t, 10*msec, admittedAt[2], "request 2 (queued at 1ms) is admitted when due")
	assert.Equal(t, int64(1), lane.Totals.Never, "the 2-permit request can never pass a leaky bucket: never, given up at once")
	assert.Equal(t, 20*msec, admittedAt[4],
		"request 4 (1 permit at 3ms) waited behind a request that can never pass: admitted at %s, one T after request 2 is 20ms", ms(admittedAt[4]))
}
