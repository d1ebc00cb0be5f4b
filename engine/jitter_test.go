package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Backoff's full jitter draws from the scenario's seed: one seed gives the same delays run
// after run, and another seed other delays. The traffic is a script and there is no
// downstream, so that the seed reaches nothing but the jitter (a jitter that ignored the seed,
// drawing from a fixed stream, passed every other test).
func TestBackoffJitterFollowsTheSeed(t *testing.T) {
	delays := func(seed uint64) []time.Duration {
		t.Helper()
		sc := &Scenario{
			Seed: seed, Horizon: 10 * sec, Trace: true,
			Client:  Client{Policy: PolicyBackoff, Delay: 100 * ms, MaxDelay: sec, Jitter: true, MaxAttempts: 4},
			Lanes:   stacks(t, "fixed-window:limit=1,window=1h"), // admits the first request only
			Sources: []Source{script(0, ms, 2*ms, 3*ms, 4*ms, 5*ms, 6*ms, 7*ms, 8*ms, 9*ms)},
		}
		recs, _ := traced(t, sc, 0)
		last := map[uint64]time.Duration{} // each request's previous attempt
		var out []time.Duration
		for _, r := range recs {
			if r.Outcome != OutcomeRejected && r.Outcome != OutcomeAdmitted {
				continue
			}
			if r.Attempt > 1 {
				out = append(out, r.At-last[r.Request])
			}
			last[r.Request] = r.At
		}
		require.Len(t, out, 9*3, "9 refused requests retry 3 times each")
		return out
	}
	one := delays(1)
	assert.Equal(t, one, delays(1), "one seed, the same jitter")
	for _, seed := range []uint64{2, 3, 1 << 40} {
		other := delays(seed)
		assert.NotEqual(t, one, other, "seed %d draws the same delays as seed 1", seed)
		same := 0
		for i := range one {
			if one[i] == other[i] {
				same++
			}
		}
		assert.Less(t, same, 3, "seed %d: %d of %d delays equal to seed 1's", seed, same, len(one))
	}
}
