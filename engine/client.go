package engine

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/ratelab/ratelab/clients"
	"github.com/ratelab/ratelab/headers"
	"github.com/ratelab/ratelab/limiters"
)

// clientPolicy is what a lane's callers do when a stage refuses them, as its Client says:
// give up (drop), try again after a delay (retry, backoff, retry-after, retry-after-header,
// header-paced, and the real libraries' rules: aws-standard, aws-adaptive, retryablehttp,
// retryablehttp-linear, cenkalti-backoff, octokit, stripe, stripe-lock-timeout), or wait in
// the client queue (queue.go). Some also hold attempts back before they go (gate:
// aws-adaptive's token bucket, octokit's group spacing, header-paced's pacing). Every random draw — backoff's
// jitter, the libraries' — comes from the policy's own random stream of the scenario's
// seed, so jitter never shifts the downstream's service times.
//
// A lane's callers are one client of each library: aws-standard's retry quota is the lane's,
// shared by all its requests, as one SDK client's quota is shared by its operations.
type clientPolicy struct {
	cfg *Client // as the scenario says (Policy read by the lane)
	c   Client  // with the library's defaults (WithDefaults)
	rng *rand.Rand

	quota    clients.AWSQuota // aws-standard and aws-adaptive, when hasQuota
	hasQuota bool
	backoff  clients.Exponential // cenkalti-backoff

	// gates: the policy may hold an attempt before it goes (gate); observes: it reads every
	// answer (answered).
	gates, observes bool
	adaptive        clients.AWSAdaptive // aws-adaptive's attempt rate limiter
	minTime         int64               // octokit: its Bottleneck group's spacing
	nextSlot        int64               // octokit: the earliest time the group lets the next request through
	// quotas are the stages' advertised policies (what the headers are written from), for
	// octokit and header-paced; nil for a lane built without specs (LaneSpec.Build).
	quotas []limiters.QuotaPolicy
	// header-paced: what each client last heard. A request's key is its client (one client
	// per API key or address, as each holds its own headers), so byKey[slot] is what the key of
	// that slot (keyCounts) heard and shared what the requests without a counted key heard (one
	// client: the lane's single key, or keys past MaxTrackedKeys). noisy-neighbour's quiet
	// clients behind keys(…):token-bucket:capacity=20,rate=10/1s are each paced by their own
	// bucket, not held back by the neighbour's empty one.
	shared pacing
	byKey  []pacing
}

// pacing is what one header-paced client last heard: the remaining permits, and when the reset
// it announced (in whole seconds, as the header carries it) ends; paced once an answer carried
// a reset.
type pacing struct {
	remaining int
	until     int64
	paced     bool
}

// pacingOf is the pacing of the client behind key slot, grown to it on its first answer
// (24 bytes a key, at most MaxTrackedKeys of them).
func (p *clientPolicy) pacingOf(slot int32) *pacing {
	if slot < 0 {
		return &p.shared
	}
	if int(slot) >= len(p.byKey) {
		p.byKey = append(p.byKey, make([]pacing, int(slot)+1-len(p.byKey))...)
	}
	return &p.byKey[slot]
}

func newClientPolicy(cfg *Client, seed uint64) clientPolicy {
	p := clientPolicy{cfg: cfg, c: cfg.WithDefaults(), rng: newRand(seed, 0xc11e47)}
	switch p.c.Policy {
	case PolicyAWSStandard, PolicyAWSAdaptive:
		if p.c.RetryQuota != NoRetryQuota {
			p.quota, p.hasQuota = clients.NewAWSQuota(p.c.RetryQuota), true
		}
		if p.c.Policy == PolicyAWSAdaptive {
			p.adaptive, p.gates, p.observes = clients.NewAWSAdaptive(0), true, true
		}
	case PolicyOctokit:
		p.minTime = int64(clients.OctokitGroups[p.c.Group])
		p.gates = p.minTime > 0
	case PolicyHeaderPaced:
		p.gates, p.observes = true, true
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
//   - aws-adaptive: as aws-standard (its attempts also pass gate's token bucket).
//   - octokit: a refusal whose stage has 0 permits left is a primary rate limit: it waits
//     max(⌈X-RateLimit-Reset − now⌉ + 1, 0) whole seconds (the reset an epoch second with the
//     lane's 0 at the Unix epoch, now in whole milliseconds): a fixed window of 1s refusing
//     at 300ms resets at second 1, and the retry comes at 2.3s. Any other refusal is thrown
//     to the caller: it gives up. One retry (MaxAttempts 2), as the README's handler.
//   - stripe: gives up at once (a 429 rate_limit is not retried).
//   - stripe-lock-timeout: before retry n+1, Delay·(1 + n²) capped at MaxDelay (500ms, 1s,
//     2.5s, 5s), less a uniform draw in [0, a quarter of it), at least Delay.
//   - header-paced: as retry-after-header.
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
	case PolicyOctokit:
		q := p.quotaAt(stack, stage, now)
		if !clients.OctokitPrimary(q.Remaining) {
			return 0, false // no rate limit to the plugin: thrown, not retried
		}
		var reset int64 // X-RateLimit-Reset, epoch seconds with the lane's 0 at the epoch; 0 when not sent
		if q.ResetOK {
			reset = headers.Seconds(time.Duration(now) + q.Reset)
		}
		return max(int64(clients.OctokitRateLimitWait(now/int64(time.Millisecond), reset)), 1), true
	case PolicyStripe:
		return 0, false // a 429 rate_limit: canRetry is false
	case PolicyStripeLock:
		var jitter int64
		if d := clients.StripeDelay(c.Delay, c.MaxDelay, r.attempts-1); d/4 > 0 {
			jitter = p.rng.Int64N(int64(d / 4))
		}
		return max(int64(clients.StripeSleep(c.Delay, c.MaxDelay, r.attempts-1, jitter)), 1), true
	case PolicyRetryAfterHeader, PolicyHeaderPaced:
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
	case PolicyAWSStandard, PolicyAWSAdaptive:
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

// bindStack gives the policy the lane's stack specs (nil for a built lane), whose advertised
// quotas octokit and header-paced read as a server's headers carry them.
func (p *clientPolicy) bindStack(specs []limiters.Spec, stages int) {
	if p.c.Policy != PolicyOctokit && p.c.Policy != PolicyHeaderPaced {
		return
	}
	p.quotas = make([]limiters.QuotaPolicy, stages)
	if len(specs) == stages {
		for k, spec := range specs {
			p.quotas[k] = limiters.PolicyOf(spec)
		}
	}
}

// quotaAt is stage k's quota at now as its headers would say it (X-RateLimit-Remaining and
// -Reset): a stage without a policy says its remaining permits and no reset.
func (p *clientPolicy) quotaAt(stack *Stack, k int, now int64) limiters.Quota {
	var pol limiters.QuotaPolicy
	if k < len(p.quotas) {
		pol = p.quotas[k]
	}
	return limiters.QuotaAt(stack.Stage(k), time.Duration(now), pol)
}

// gate is when request r's next attempt may go, now or later (the lane tries again then,
// counting no attempt in between):
//
//   - aws-adaptive: once its token bucket is on (after the first throttle), an attempt takes a
//     token or sleeps (1 − tokens)/fill rate and asks again.
//   - octokit: its Bottleneck group lets requests through at least minTime apart (write: 1s),
//     in the order they ask: a request is given the next slot, and goes when it comes. Not
//     modelled: the global group's 10 at once (a lane's attempts take no time at the
//     limiter), and the priority 0 that lets the plugin's retries pass waiting first tries.
//   - header-paced: while the last answer said fewer permits remain than r asks for, not
//     before the reset it announced (whole seconds, rounded up, from that answer).
func (p *clientPolicy) gate(r *request, now int64) int64 {
	switch p.c.Policy {
	case PolicyAWSAdaptive:
		if ok, wait := p.adaptive.Acquire(now); !ok {
			return now + max(int64(wait), 1)
		}
	case PolicyOctokit:
		if r.gated { // its slot has come
			r.gated = false
			return now
		}
		slot := max(now, p.nextSlot)
		p.nextSlot = slot + p.minTime
		r.gated = slot > now
		return slot
	case PolicyHeaderPaced:
		if c := p.pacingOf(r.keySlot); c.paced && c.remaining < r.permits && now < c.until {
			return c.until
		}
	}
	return now
}

// answered tells the policy the stack's decision d at now on request r's attempt (stage the
// refusing stage; the stack still bound to r's key): aws-adaptive updates its rate (a refusal
// is a throttle, a 429); header-paced reads the answer's X-RateLimit-Remaining and -Reset,
// which speak for the refusing stage, or, when all admitted, for the one with the fewest
// permits left, into what r's client heard.
func (p *clientPolicy) answered(now int64, r *request, stack *Stack, d limiters.Decision, stage int) {
	switch p.c.Policy {
	case PolicyAWSAdaptive:
		p.adaptive.Update(now, d != limiters.Admitted)
	case PolicyHeaderPaced:
		var q limiters.Quota
		if d != limiters.Admitted {
			q = p.quotaAt(stack, stage, now)
		} else {
			for k := range stack.Len() {
				if qk := p.quotaAt(stack, k, now); k == 0 || qk.Remaining < q.Remaining {
					q = qk
				}
			}
		}
		c := p.pacingOf(r.keySlot)
		c.remaining, c.paced = q.Remaining, q.ResetOK
		if q.ResetOK {
			c.until = now + headers.Seconds(q.Reset)*int64(time.Second)
		}
	}
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
