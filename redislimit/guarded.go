package redislimit

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// Guarded is a Limiter with a failure policy: each decision waits at most the policy's
// Timeout for the store, and when the store gives none (unreachable, too slow, an error
// reply) the policy decides — fail open, fail closed, or ask a local in-process limiter —
// and the store's error comes back beside that decision (Decide) and is counted (Failures).
//
// It is also a limiters.Limiter, so that the simulator and replay can run it as a lane; that
// interface has no error, so there the errors are only counted, and the caller reads
// Failures afterwards.
type Guarded struct {
	remote *Limiter
	policy limiters.FailurePolicy

	failures atomic.Int64
	mu       sync.Mutex
	first    error // the first failure, under mu
}

var _ limiters.Limiter = (*Guarded)(nil)

// FailureError is a decision the policy made because the store made none.
type FailureError struct {
	Mode     limiters.FailureMode
	Decision limiters.Decision // the policy's
	Err      error             // why the store made none: a *StoreError, usually
}

func (e *FailureError) Error() string {
	return fmt.Sprintf("%v (%s: %s)", e.Err, e.Mode, e.Decision)
}

func (e *FailureError) Unwrap() error { return e.Err }

// NewGuarded puts remote behind policy, which must be valid (limiters.FailurePolicy.Validate).
func NewGuarded(remote *Limiter, policy limiters.FailurePolicy) (*Guarded, error) {
	if remote == nil {
		return nil, fmt.Errorf("redislimit: a remote limiter is required")
	}
	if err := policy.Validate(); err != nil {
		return nil, err
	}
	return &Guarded{remote: remote, policy: policy}, nil
}

// Decide decides n permits at now. now is the caller's time: with CallerClock the store
// decides at it; with ServerClock the store reads its own TIME and now is only the local
// limiter's time under FailLocal. When the store gives no decision within the policy's
// timeout, the decision is the policy's and the error a *FailureError saying which and why.
func (g *Guarded) Decide(ctx context.Context, now time.Duration, n int) (limiters.Decision, error) {
	ctx, cancel := context.WithTimeout(ctx, g.policy.Timeout)
	defer cancel()
	var r Result
	var err error
	if g.remote.clock == CallerClock {
		r, err = g.remote.AcquireAt(ctx, now, n)
	} else {
		r, err = g.remote.Acquire(ctx, n)
	}
	if err == nil {
		return r.Decision, nil
	}
	d := g.policy.Decide(now, n, g.remote.maxN)
	err = &FailureError{Mode: g.policy.Mode, Decision: d, Err: err}
	g.record(err)
	return d, err
}

func (g *Guarded) record(err error) {
	g.mu.Lock()
	if g.first == nil {
		g.first = err
	}
	g.mu.Unlock()
	g.failures.Add(1)
}

// Failures is how many decisions (and state reads) the store failed to make, and the first
// failure's error (nil when none).
func (g *Guarded) Failures() (count int64, first error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.failures.Load(), g.first
}

// Remote is the store-backed limiter.
func (g *Guarded) Remote() *Limiter { return g.remote }

// Policy is the failure policy.
func (g *Guarded) Policy() limiters.FailurePolicy { return g.policy }

// AcquireAt is Decide without a context: the error is counted (Failures), the decision
// returned.
func (g *Guarded) AcquireAt(now time.Duration, n int) limiters.Decision {
	d, _ := g.Decide(context.Background(), now, n)
	return d
}

// AvailableAt is the store's available permits, or the policy's when the store gives none.
func (g *Guarded) AvailableAt(now time.Duration) int {
	s, err := g.state(now)
	if err != nil {
		return g.policy.Available(now, g.remote.maxN)
	}
	return s.Available
}

// Snapshot is the store's state (see Limiter.StateAt); when the store gives none, a state
// holding only the policy's Available.
func (g *Guarded) Snapshot(now time.Duration) limiters.State {
	s, err := g.state(now)
	if err != nil {
		return limiters.State{Kind: g.Kind(), At: now, MaxPermits: g.remote.maxN, Available: g.policy.Available(now, g.remote.maxN)}
	}
	return s
}

func (g *Guarded) state(now time.Duration) (limiters.State, error) {
	ctx, cancel := context.WithTimeout(context.Background(), g.policy.Timeout)
	defer cancel()
	s, err := g.remote.StateAt(ctx, now)
	if err != nil {
		g.record(err)
	}
	return s, err
}

// MaxPermits is the remote limiter's.
func (g *Guarded) MaxPermits() int { return g.remote.maxN }

// Kind is the spec's kind: a Guarded token bucket decides as a token bucket does.
func (g *Guarded) Kind() limiters.Kind { return g.remote.spec.Kind() }

// String is the spec, which ParseSpec reads back (the key and the policy are not part of it).
func (g *Guarded) String() string { return g.remote.spec.String() }

// Batch pipelines the decisions of Guarded limiters that share one Client: Add queues them,
// Decide sends them all in one round trip (one write, then the replies in order; Redis runs
// them in the order sent, so each limiter decides as it would one by one) and applies each
// one's failure policy, in order, to those the store did not decide. The timeout is the
// longest of their policies', for the whole round trip. A Batch is reused: Reset empties it
// and keeps its memory, so a batch of 64 allocates nothing but its context's timer.
//
// A Batch is not safe for concurrent use; its limiters are.
type Batch struct {
	calls     []batchCall
	results   []Result
	errs      []error
	decisions []limiters.Decision
}

type batchCall struct {
	g  *Guarded
	at time.Duration
	n  int
}

// Add queues a decision of g for n permits at now (the caller's time with CallerClock, from 0
// to 2^62ns; with ServerClock only the local policy's).
func (b *Batch) Add(g *Guarded, now time.Duration, n int) error {
	if g.remote.clock == CallerClock {
		if err := checkTime(now); err != nil {
			return err
		}
	}
	b.calls = append(b.calls, batchCall{g, now, n})
	return nil
}

// Len is how many decisions are queued.
func (b *Batch) Len() int { return len(b.calls) }

// Reset empties the batch.
func (b *Batch) Reset() { b.calls = b.calls[:0] }

// Decision is the i-th queued decision, once Decide has run: the store's, or the policy's
// when the store made none.
func (b *Batch) Decision(i int) limiters.Decision { return b.decisions[i] }

// Decide sends the queued decisions and returns the first failure (a *FailureError, as
// Decide's), counted in each limiter's Failures like Decide's. Every limiter must be on the
// same Client.
func (b *Batch) Decide(ctx context.Context) error {
	n := len(b.calls)
	if n == 0 {
		return nil
	}
	b.results = slices.Grow(b.results[:0], n)[:n]
	b.errs = slices.Grow(b.errs[:0], n)[:n]
	b.decisions = slices.Grow(b.decisions[:0], n)[:n]
	client := b.calls[0].g.remote.client
	timeout := time.Duration(0)
	for _, c := range b.calls {
		if c.g.remote.client != client {
			return fmt.Errorf("redislimit: Batch: %s and %s are on different clients", b.calls[0].g.remote, c.g.remote)
		}
		timeout = max(timeout, c.g.policy.Timeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client.exec(ctx, n, func(i int) call {
		c := b.calls[i]
		return call{l: c.g.remote, at: c.at, n: c.n}
	}, b.results, b.errs)
	var first error
	for i, c := range b.calls {
		err := b.errs[i]
		if err == nil {
			b.decisions[i] = b.results[i].Decision
			continue
		}
		d := c.g.policy.Decide(c.at, c.n, c.g.remote.maxN)
		err = &FailureError{Mode: c.g.policy.Mode, Decision: d, Err: err}
		c.g.record(err)
		b.decisions[i] = d
		if first == nil {
			first = err
		}
	}
	return first
}
