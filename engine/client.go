package engine

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/ratelab/ratelab/clients"
	"github.com/ratelab/ratelab/headers"
)

// clientPolicy is what a lane's callers do when a stage refuses them, as its Client says:
// give up (drop), try again after a delay (retry, backoff, retry-after, retry-after-header,
// and the real libraries' rules: aws-standard, retryablehttp, retryablehttp-linear,
// cenkalti-backoff), or wait in the client queue (queue.go). Every random draw — backoff's
// jitter, the libraries' — comes from the policy's own random stream of the scenario's
// seed, so jitter never shifts the downstream's service times.
//
// A lane's callers are one client of each library: aws-standard's retry quota is the lane's,
// shared by all its requests, as one SDK client's quota is shared by its operations.
type clientPolicy struct {
	cfg *Client // as the scenario says (Policy read by the lane)
	c   Client  // with the library's defaults (WithDefaults)
	rng *rand.Rand

	quota    clients.AWSQuota // aws-standard, when hasQuota
	hasQuota bool
	backoff  clients.Exponential // cenkalti-backoff
}

func newClientPolicy(cfg *Client, seed uint64) clientPolicy {
	p := clientPolicy{cfg: cfg, c: cfg.WithDefaults(), rng: newRand(seed, 0xc11e47)}
	switch p.c.Policy {
	case PolicyAWSStandard:
		if p.c.RetryQuota != NoRetryQuota {
			p.quota, p.hasQuota = clients.NewAWSQuota(p.c.RetryQuota), true
		}
	case PolicyCenkalti:
		p.backoff = clients.CenkaltiDefaults
		p.backoff.Initial, p.backoff.Max = p.c.Delay, p.c.MaxDelay
	}
	return p
}

// retryDelay is how long request r, whose r.attempts-th attempt was refused at now by stage
// of stack, waits to retry; ok is false when the client gives up instead (its attempts
// are spent, aws-standard's quota has not the tokens, cenkalti-backoff's time is up). The
// delay is at least 1ns: a retry never runs at the instant of its refusal.
//
//   - retry: Delay.
//   - backoff: Delay·2^(attempts−1), capped at MaxDelay (Delay 10ms: 10, 20, 40ms, ...); with
//     Jitter, a uniform draw in [0, that].
//   - retry-after: the refusing stage's exact hint (Stack.RetryAfter), or Delay when it has none.
//   - retry-after-header: the hint as a server's Retry-After header carries it — whole
//     seconds, rounded up, never 0 (a wait of 300ms is 1s, of 1.2s is 2s) — capped at
//     MaxDelay; backoff's Delay·2^(attempts−1), capped at MaxDelay, when the stage has no
//     hint (no header); with Jitter, plus a uniform draw in [0, Delay].
//   - aws-standard: every refusal is a throttling error (a 429): it takes 5 tokens of the
//     quota, or gives up when fewer remain, and waits b·min(Delay·2^(attempts−1), MaxDelay),
//     b uniform in [0, 1) (Delay 1s, MaxDelay 20s: up to 1s, 2s, 4s, ...). The SDK ignores
//     Retry-After.
//   - retryablehttp: the header's seconds when the stage has a hint, uncapped; else
//     Delay·2^(attempts−1), capped at MaxDelay (1s, 2s, 4s, 8s).
//   - retryablehttp-linear: (Delay + u·(MaxDelay−Delay))·attempts, u uniform in [0, 1);
//     ignores Retry-After.
//   - cenkalti-backoff: the attempts-th interval of 500ms·1.5^(k−1), capped at MaxDelay
//     (60s), drawn in [½, 1½] of it; gives up when now − arrival + that wait > MaxElapsed.
func (p *clientPolicy) retryDelay(r *request, now int64, stack *Stack, stage int) (delay int64, ok bool) {
	c := &p.c
	if c.MaxAttempts > 0 && r.attempts >= c.MaxAttempts {
		return 0, false
	}
	hint := func() (time.Duration, bool) { return stack.RetryAfter(stage, time.Duration(now), r.permits) }
	switch c.Policy {
	case PolicyBackoff:
		d := p.doubled(r.attempts)
		if c.Jitter {
			d = p.rng.Int64N(d + 1)
		}
		return max(d, 1), true
	case PolicyRetryAfter:
		if wait, ok := hint(); ok {
			return max(int64(wait), 1), true
		}
	case PolicyRetryAfterHeader:
		var d int64
		if wait, ok := hint(); ok {
			d = headerWait(headers.RetryAfterSeconds(wait))
			if c.MaxDelay > 0 {
				d = min(d, int64(c.MaxDelay))
			}
		} else {
			d = p.doubled(r.attempts)
		}
		if c.Jitter {
			d += p.rng.Int64N(int64(c.Delay) + 1)
		}
		return max(d, 1), true
	case PolicyAWSStandard:
		if p.hasQuota {
			cost, ok := p.quota.Retry(true)
			if !ok {
				return 0, false
			}
			r.retryCost = uint8(cost)
		}
		return max(int64(clients.AWSBackoff(r.attempts, c.Delay, c.MaxDelay, p.rng.Float64())), 1), true
	case PolicyRetryableHTTP:
		seconds := int64(-1)
		if wait, ok := hint(); ok {
			seconds = headers.RetryAfterSeconds(wait)
		}
		if seconds >= 0 {
			return headerWait(seconds), true
		}
		return max(int64(clients.RetryableDefaultBackoff(c.Delay, c.MaxDelay, r.attempts-1, -1)), 1), true
	case PolicyRetryableLin:
		return max(int64(clients.RetryableLinearJitterBackoff(c.Delay, c.MaxDelay, r.attempts-1, p.rng.Float64())), 1), true
	case PolicyCenkalti:
		d := max(int64(p.backoff.Randomized(p.backoff.Interval(r.attempts), p.rng.Float64())), 1)
		if now-r.arrived > int64(c.MaxElapsed)-d {
			return 0, false
		}
		return d, true
	}
	return int64(c.Delay), true
}

// doubled is backoff's Delay·2^(attempts−1), capped at MaxDelay when it is set.
func (p *clientPolicy) doubled(attempts int) int64 {
	d := int64(p.c.Delay)
	for k := 1; k < attempts && d < math.MaxInt64/2; k++ {
		d *= 2
	}
	if p.c.MaxDelay > 0 {
		d = min(d, int64(p.c.MaxDelay))
	}
	return d
}

// headerWait is a Retry-After of seconds as nanoseconds, saturating (a hint never exceeds
// 2^62ns, about 4.6e9 seconds, so it does not).
func headerWait(seconds int64) int64 {
	if seconds > math.MaxInt64/int64(time.Second) {
		return math.MaxInt64
	}
	return seconds * int64(time.Second)
}

// succeeded is told that request r's r.attempts-th attempt succeeded: aws-standard's quota
// earns 1 token back for a first attempt, or the cost of the retry that succeeded.
func (p *clientPolicy) succeeded(r *request) {
	if p.hasQuota {
		p.quota.Succeeded(r.attempts, int(r.retryCost))
	}
}

// mostRetries is the most retries one request of c (with its defaults) can make: MaxAttempts
// − 1, or for cenkalti-backoff without an attempt limit, as many of its shortest waits (half
// each interval) as fit in MaxElapsed: 39 with the defaults.
func (c Client) mostRetries() float64 {
	if c.Policy != PolicyCenkalti || c.MaxAttempts > 0 {
		return float64(max(c.MaxAttempts-1, 0))
	}
	e := clients.CenkaltiDefaults
	e.Initial, e.Max = c.Delay, c.MaxDelay
	return e.MostWaits(c.MaxElapsed)
}
