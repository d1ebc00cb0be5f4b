//go:build unix

package redislimit

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/internal/redistest"
	"github.com/ratelab/ratelab/limiters"
)

// TestKilledServerGivesThePolicy kills the server (SIGKILL) in the middle of a run of 8
// goroutines deciding against a token bucket of capacity 20, once per failure mode. Every
// decision the store made is the store's, at most 20 admitted in all; every decision it did
// not make is the policy's, with an error that names the key, the policy and the cause;
// nothing panics; and Failures counts them.
func TestKilledServerGivesThePolicy(t *testing.T) {
	spec := limiters.TokenBucketSpec{Capacity: 20, Rate: limiters.Rate{Permits: 1, Window: time.Hour}}
	for _, mode := range limiters.FailureModes() {
		t.Run(mode.String(), func(t *testing.T) {
			srv := redistest.Start(t)
			c := client(t, srv, 8)
			remote, err := New(c, "killed", spec, Options{Clock: CallerClock})
			require.NoError(t, err)
			policy := limiters.FailurePolicy{Mode: mode, Timeout: 500 * time.Millisecond}
			var local *limiters.TokenBucket
			if mode == limiters.FailLocal {
				local, err = limiters.NewTokenBucket(3, spec.Rate, fixedClock(0))
				require.NoError(t, err)
				policy.Local = local
			}
			g, err := NewGuarded(remote, policy)
			require.NoError(t, err)

			var storeAdmitted, policyAdmitted, policyRejected, failed atomic.Int64
			var firstErr atomic.Value
			var wg sync.WaitGroup
			stop := make(chan struct{})
			const deciders = 8
			decided := make(chan struct{}, deciders)
			for range deciders {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						d, err := g.Decide(context.Background(), time.Second, 1)
						if i == 1 {
							decided <- struct{}{}
						}
						if err == nil {
							if d == limiters.Admitted {
								storeAdmitted.Add(1)
							}
							continue
						}
						failed.Add(1)
						firstErr.CompareAndSwap(nil, err)
						var fe *FailureError
						if !errors.As(err, &fe) || fe.Decision != d || fe.Mode != mode {
							t.Errorf("error %v is not the policy's %s for decision %s", err, mode, d)
						}
						if d == limiters.Admitted {
							policyAdmitted.Add(1)
						} else {
							policyRejected.Add(1)
						}
					}
				}()
			}
			for range deciders { // every decider has decided against the live store
				<-decided
			}
			srv.Kill()
			time.Sleep(100 * time.Millisecond) // decisions against the dead store
			close(stop)
			wg.Wait()

			require.LessOrEqual(t, storeAdmitted.Load(), int64(20), "the store admits at most its capacity")
			require.Positive(t, failed.Load(), "decisions after the kill failed")
			count, first := g.Failures()
			require.Equal(t, failed.Load(), count)
			require.Error(t, first)
			err = firstErr.Load().(error)
			var store *StoreError
			require.True(t, errors.As(err, &store), "%v", err)
			require.Equal(t, "killed", store.Key)
			// The first failure is whichever the dying server gave first: a refused or reset
			// connection, its close, or — on a loaded machine, where a decision in flight waits
			// out its read deadline before the kill lands — no answer in time (CI saw this).
			require.True(t, errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) ||
				store.Timeout(), "the cause is the dead server: %v", err)
			require.Contains(t, err.Error(), `redislimit: token-bucket at key "killed": the store gave no decision: `)
			switch mode {
			case limiters.FailOpen:
				require.Equal(t, failed.Load(), policyAdmitted.Load(), "fail-open admits every failed decision")
				require.Contains(t, err.Error(), "(fail-open: admitted)")
			case limiters.FailClosed:
				require.Equal(t, failed.Load(), policyRejected.Load(), "fail-closed refuses every failed decision")
				require.Contains(t, err.Error(), "(fail-closed: rejected)")
			case limiters.FailLocal:
				require.EqualValues(t, 3, policyAdmitted.Load(), "the local bucket of capacity 3 admits 3 at its frozen time, then refuses")
				require.Equal(t, failed.Load()-3, policyRejected.Load())
			}
			// After the run, a decision on the dead store: the policy's, and an error.
			d, err := g.Decide(context.Background(), time.Second, 1)
			require.Error(t, err)
			require.Equal(t, policy.Decide(time.Second, 1, 20), d)
			// As a limiters.Limiter (what the simulator and replay call) it answers too.
			require.Equal(t, policy.Available(time.Second, 20), g.AvailableAt(time.Second))
			require.Equal(t, limiters.KindTokenBucket, g.Snapshot(time.Second).Kind)
		})
	}
}

// TestHungServerTimesOut: a store that accepts and never answers (SIGSTOP: hung, or
// partitioned away) costs a decision the policy's timeout, not more, and the decision is the
// policy's, with a deadline error.
func TestHungServerTimesOut(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv, 1)
	remote, err := New(c, "hung", limiters.FixedWindowSpec{Limit: 10, Window: time.Second}, Options{Clock: CallerClock})
	require.NoError(t, err)
	g, err := NewGuarded(remote, limiters.FailurePolicy{Mode: limiters.FailOpen, Timeout: 100 * time.Millisecond})
	require.NoError(t, err)
	d, err := g.Decide(context.Background(), 0, 1)
	require.NoError(t, err)
	require.Equal(t, limiters.Admitted, d)

	srv.Pause()
	start := time.Now()
	d, err = g.Decide(context.Background(), 0, 1)
	took := time.Since(start)
	require.Equal(t, limiters.Admitted, d, "fail-open")
	var store *StoreError
	require.ErrorAs(t, err, &store)
	require.True(t, store.Timeout(), "%v", err)
	require.Contains(t, err.Error(), `redislimit: fixed-window at key "hung": the store gave no decision: no answer in time (`)
	require.GreaterOrEqual(t, took, 100*time.Millisecond)
	require.Less(t, took, time.Second, "the timeout bounds the wait")

	// Resumed, the store decides again (a fresh connection: the timed-out one was dropped).
	srv.Resume()
	require.Eventually(t, func() bool {
		_, err := g.Decide(context.Background(), 0, 1)
		return err == nil
	}, 5*time.Second, 20*time.Millisecond)
}

func TestGuardedRefuses(t *testing.T) {
	_, err := NewGuarded(nil, limiters.FailurePolicy{Mode: limiters.FailOpen, Timeout: time.Second})
	require.ErrorContains(t, err, "a remote limiter is required")
	srv := redistest.Start(t)
	remote, err := New(client(t, srv, 1), "k", limiters.LeakyBucketSpec{Rate: limiters.PerSecond(1)}, Options{})
	require.NoError(t, err)
	_, err = NewGuarded(remote, limiters.FailurePolicy{Mode: limiters.FailClosed})
	require.ErrorContains(t, err, "timeout=0s: must be positive")
}
