package engine

import (
	"math"
	"math/rand/v2"
	"time"
)

// clientPolicy is what a lane's callers do when a stage refuses them, as its Client says:
// give up (drop), try again after a delay (retry, backoff, retry-after), or wait in the
// client queue (queue.go). Backoff's full jitter draws from the policy's own random stream of
// the scenario's seed, so jitter never shifts the downstream's service times.
type clientPolicy struct {
	cfg *Client
	rng *rand.Rand
}

func newClientPolicy(cfg *Client, seed uint64) clientPolicy {
	return clientPolicy{cfg: cfg, rng: newRand(seed, 0xc11e47)}
}

// retryDelay is how long a request waits to retry after its attempts-th attempt, for
// permits, was refused at now by stage of stack. It is at least 1ns (Validate keeps Delay
// positive): a retry never runs at the instant of its refusal.
//
//   - retry: Delay.
//   - backoff: Delay·2^(attempts−1), capped at MaxDelay (Delay 10ms: 10, 20, 40ms, ...); with
//     Jitter, a uniform draw in [0, that].
//   - retry-after: the refusing stage's hint (RetryAfter), or Delay when it has none.
func (p *clientPolicy) retryDelay(attempts, permits int, now int64, stack *Stack, stage int) int64 {
	c := p.cfg
	switch c.Policy {
	case PolicyBackoff:
		d := int64(c.Delay)
		for k := 1; k < attempts && d < math.MaxInt64/2; k++ {
			d *= 2
		}
		if c.MaxDelay > 0 {
			d = min(d, int64(c.MaxDelay))
		}
		if c.Jitter {
			d = p.rng.Int64N(d + 1)
		}
		return max(d, 1)
	case PolicyRetryAfter:
		if wait, ok := stack.RetryAfter(stage, time.Duration(now), permits); ok {
			return max(int64(wait), 1)
		}
	}
	return int64(c.Delay)
}
