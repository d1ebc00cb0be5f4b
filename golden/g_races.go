package golden

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
)

// raceRounds is how many times each race is run; every round uses a fresh limiter.
const raceRounds = 200

// raceGoroutines is how many goroutines race for the permits.
const raceGoroutines = 16

// raceResult is one round: permits granted, and the limiter's own count afterwards.
type raceResult struct {
	granted   int64
	available int
	count     int // window kinds: the live count; concurrency: in flight
}

// race makes a limiter from spec on a virtual clock frozen at 5ms, releases 16 goroutines at
// once through a start gate, and has each ask for one permit at a time for as long as the
// limiter reports permits available (a refusal caused only by racing, which the sliding window
// allows, is retried; a limiter that reports nothing available is done). After the race every
// goroutine asks once more, into a full limiter.
func (r *run) race(spec limiters.Spec) (raceResult, error) {
	clock, err := virtualclock.NewAt(5 * msec)
	if err != nil {
		return raceResult{}, err
	}
	clock.Freeze()
	defer clock.Thaw()
	built, err := r.factory.build(spec, clock)
	if err != nil {
		return raceResult{}, err
	}
	l, ok := built.(limiters.Clocked)
	if !ok {
		return raceResult{}, fmt.Errorf("%s reads no clock of its own (not limiters.Clocked): goroutines cannot race on it", built)
	}
	var granted atomic.Int64
	var ready, done sync.WaitGroup
	gate := make(chan struct{})
	for range raceGoroutines {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-gate
			for l.Available() > 0 {
				if l.TryAcquire(1) {
					granted.Add(1)
				}
				runtime.Gosched()
			}
		}()
	}
	ready.Wait()
	close(gate)
	done.Wait()
	for range raceGoroutines { // into a full limiter: every one must be refused
		if l.TryAcquire(1) {
			granted.Add(1)
		}
	}
	st := l.Snapshot(clock.Now())
	res := raceResult{granted: granted.Load(), available: st.Available, count: st.Count}
	if st.Shape() == limiters.ShapeBulkhead {
		res.count = st.InFlight
	}
	return res, nil
}

// raceSpecs are the limiters the seed promises exact counts for: 16 goroutines racing for a
// limit of 20 get exactly 20.
var raceSpecs = []string{
	"token-bucket:capacity=20,rate=20/1s",
	"sliding-window:limit=20,window=1s,slots=10",
	"fixed-window:limit=20,window=1s",
	"concurrency:max=20",
}

var racesExact = &Guarantee{
	ID: "races-exact",
	Algorithms: []limiters.Kind{limiters.KindTokenBucket, limiters.KindSlidingWindow, limiters.KindFixedWindow,
		limiters.KindConcurrency},
	Claim: "16 goroutines racing for a limit of 20 get exactly 20, from a token bucket, a sliding window, a fixed window " +
		"and a concurrency limiter; no permit is lost to a race (a leaky bucket gives exactly 1, a cold warm-up bucket exactly its cold burst)",
	Scenario: fmt.Sprintf("real goroutines on a virtual clock frozen at 5ms: %d goroutines released by a start gate, each asking for one "+
		"permit while the limiter reports any available, then once more into the full limiter; %d rounds per limiter, a fresh limiter each round; "+
		"token-bucket:capacity=20,rate=20/1s, sliding-window:limit=20,window=1s,slots=10, fixed-window:limit=20,window=1s, concurrency:max=20; "+
		"leaky-bucket:rate=20/1s; warm-up:capacity=20,rate=20/1s,warmup=1h (cold: I = 150ms, τ = 1s)",
		raceGoroutines, raceRounds),
	Bound:   "exactly 20 granted in every round (leaky: exactly 1; cold warm-up: exactly ⌊1s/150ms⌋ = 6), and 0 available afterwards",
	Checker: "the granted count of every round against 20, and the limiter's available permits after the race against 0",
	run: func(r *run) error {
		for _, text := range raceSpecs {
			if err := r.raceRounds(mustSpec(text), 20, false); err != nil {
				return err
			}
		}
		// A leaky bucket hands out exactly 1, a cold warm-up bucket exactly ⌊τ/3T⌋.
		if err := r.raceRounds(mustSpec("leaky-bucket:rate=20/1s"), 1, false); err != nil {
			return err
		}
		return r.raceRounds(mustSpec("warm-up:capacity=20,rate=20/1s,warmup=1h"), 6, false)
	},
}

var slidingFailsClosed = &Guarantee{
	ID:         "sliding-window-fails-closed",
	Algorithms: []limiters.Kind{limiters.KindSlidingWindow},
	Claim: "a sliding window fails closed under contention: concurrent callers never push its count past the limit, " +
		"because a caller that finds the window full after reserving rolls its reservation back",
	Scenario: fmt.Sprintf("sliding-window:limit=20,window=1s,slots=10 on a virtual clock frozen at 5ms; %d goroutines released by a "+
		"start gate ask for one permit each while any is available, then each asks once more into the full window; %d rounds",
		raceGoroutines, raceRounds),
	Bound:   "granted = 20 and the window's own count = granted = 20 after every round, including the 16 refused requests",
	Checker: "granted count and the limiter's live count (Snapshot) after every round, against the limit",
	run: func(r *run) error {
		return r.raceRounds(mustSpec("sliding-window:limit=20,window=1s,slots=10"), 20, true)
	},
}

// raceRounds runs raceRounds races of spec and checks each grants exactly want; with
// checkCount, also that the window's count after the race equals the permits granted.
func (r *run) raceRounds(spec limiters.Spec, want int64, checkCount bool) error {
	failed := 0
rounds:
	for round := 1; round <= raceRounds; round++ {
		res, err := r.race(spec)
		if err != nil {
			return err
		}
		switch {
		case res.granted != want:
			r.failf("%s, round %d: %d goroutines racing at 5ms were granted %d: the bound is exactly %d", spec, round, raceGoroutines, res.granted, want)
		case res.available != 0:
			r.failf("%s, round %d: %d available after granting %d: the bound is exactly 0", spec, round, res.available, res.granted)
		case checkCount && int64(res.count) != res.granted:
			r.failf("%s, round %d: the window counts %d after granting %d and refusing %d: concurrent callers pushed the count past the limit %d",
				spec, round, res.count, res.granted, raceGoroutines, want)
		default:
			continue
		}
		failed++
		break rounds
	}
	if failed == 0 {
		line := fmt.Sprintf("%-45s %d rounds: exactly %d granted in every round, 0 available after", spec, raceRounds, want)
		if checkCount {
			line += fmt.Sprintf(", the window's count %d after %d more refused", want, raceGoroutines)
		}
		r.linef("%s", line)
	} else {
		r.linef("%-45s FAILED", spec)
	}
	return nil
}
