package redislanes

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/redislimit"
)

// runKeyTTL is how long a key of run --redis outlives its last decision in real time, should
// the run be killed before it deletes its keys.
const runKeyTTL = time.Hour

// CheckScenario refuses a scenario with no central lane, and a central lane that Redis
// cannot hold, naming it: one stage, of a kind redislimit has a script for. The command line
// puts the flag in front ("--redis ADDR: …").
func CheckScenario(sc *engine.Scenario) error {
	central := 0
	for i, lane := range sc.Lanes {
		if lane.Fleet == nil || lane.Fleet.Model != engine.CoordCentral {
			continue
		}
		central++
		name := fmt.Sprintf("lane %q (limiters[%d])", lane.Label(), i)
		if lane.Build != nil {
			return fmt.Errorf("%s is built by code, not from a spec: it cannot run in Redis", name)
		}
		if len(lane.Stack) != 1 {
			return fmt.Errorf("%s is a stack of %d stages: a central store runs in Redis as one stage (a stage in Redis cannot be refunded when a later one refuses)",
				name, len(lane.Stack))
		}
		held := lane.Stack[0]
		if k, keyed := held.(limiters.KeyedSpec); keyed { // one store limiter per key, each of the inner spec
			held = k.Spec
		}
		if _, stored := held.(limiters.Stored); !stored {
			return fmt.Errorf("%s is a central %s: kind %s cannot run in Redis (%s can)",
				name, lane.Stack[0], lane.Stack[0].Kind(), limiters.StoredKinds())
		}
	}
	if central == 0 {
		return fmt.Errorf("scenario %s has no central fleet lane (fleet: {model: central, …}) to keep in Redis", sc.Name)
	}
	return nil
}

// RunOptions say where a run's central stores go.
type RunOptions struct {
	Addr    string        // named in Finish's lines and errors
	Prefix  string        // of every key; "" is ratelab:run:SCENARIO:SEED:RANDOM:, unique to the run
	Timeout time.Duration // the longest a central lane waits for Redis per decision, in real time
}

// Run is run --redis: the client, every key the run made (deleted at the end), and what
// Redis failed to do, per lane.
type Run struct {
	ctx     context.Context
	options RunOptions
	client  *redislimit.Client
	sc      *engine.Scenario

	mu         sync.Mutex
	keys       map[string]bool
	failed     []int64 // per lane: decisions Redis did not make
	readFailed int64   // state reads (available permits, freshness) it did not answer
	first      error

	finished  bool // Finish ran and reported
	closeOnce sync.Once
	closeErr  error
}

// CentralLanes is how many of sc's lanes keep a central store: the connections a run's
// client needs (the lanes run in parallel, one decision at a time each).
func CentralLanes(sc *engine.Scenario) int {
	central := 0
	for _, lane := range sc.Lanes {
		if lane.Fleet != nil && lane.Fleet.Model == engine.CoordCentral {
			central++
		}
	}
	return central
}

// StartRun sets sc's fleet to keep its central stores in the Redis of client (CheckScenario
// first), decided at the run's virtual times; Finish or Close closes the client. ctx bounds
// every decision, with the options' Timeout.
func StartRun(ctx context.Context, client *redislimit.Client, sc *engine.Scenario, options RunOptions) *Run {
	if options.Prefix == "" {
		var b [4]byte
		_, _ = rand.Read(b[:]) // names the keys only: no result depends on it
		options.Prefix = fmt.Sprintf("ratelab:run:%s:%d:%x:", sc.Name, sc.Seed, b)
	}
	r := &Run{ctx: ctx, options: options, client: client, sc: sc, keys: map[string]bool{}, failed: make([]int64, len(sc.Lanes))}
	fleet := *sc.Fleet
	fleet.Store = r.store
	sc.Fleet = &fleet
	return r
}

// store is the fleet's StoreFactory: one Redis key per store limiter,
// PREFIX + lane + ":" + spec [+ ":window=" + index under the caller's clock] [+ ":key=" + key].
func (r *Run) store(slot engine.StoreSlot, spec limiters.Spec, _ limiters.Clock) (limiters.Limiter, error) {
	lane := r.sc.Lanes[slot.Lane]
	key := r.options.Prefix + strconv.Itoa(slot.Lane+1) + ":" + spec.String()
	if lane.Fleet.Clock == engine.ClockCaller {
		key += ":window=" + strconv.FormatInt(slot.Window, 10)
	}
	if _, keyed := lane.Stack[0].(limiters.KeyedSpec); keyed {
		key += ":key=" + slot.Key
	}
	remote, err := redislimit.New(r.client, key, spec, redislimit.Options{Clock: redislimit.CallerClock, CallerKeyTTL: runKeyTTL})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.keys[key] = true
	r.mu.Unlock()
	return &runStore{run: r, lane: slot.Lane, remote: remote}, nil
}

func (r *Run) record(lane int, decision bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if decision {
		r.failed[lane]++
	} else {
		r.readFailed++
	}
	if r.first == nil {
		r.first = err
	}
}

// Finish deletes the run's keys and closes the client. Its lines, for standard error, say
// where the stores were and whether their keys are gone, then one line per central lane Redis
// failed; the error, when Redis failed any decision or state read, says the results are then
// partly the failure policy's, not the store's.
func (r *Run) Finish() (lines []string, err error) {
	r.finished = true
	deleted := r.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	where := fmt.Sprintf("central stores in Redis at %s, keys %s*: %d keys", r.options.Addr, r.options.Prefix, len(r.keys))
	if deleted == nil {
		lines = append(lines, where+", deleted after the run")
	} else {
		lines = append(lines, where, "warning: "+deleted.Error())
	}
	var total int64
	for i, n := range r.failed {
		if n == 0 {
			continue
		}
		total += n
		lines = append(lines, fmt.Sprintf("  %s: %d decisions Redis did not make, decided %s instead", r.sc.Lanes[i].Label(), n, r.sc.Lanes[i].Fleet.OnFailure))
	}
	if r.readFailed > 0 {
		lines = append(lines, fmt.Sprintf("  %d reads of a store's state Redis did not answer (the results' available permits show 0 there)", r.readFailed))
	}
	if total > 0 || r.readFailed > 0 {
		err = fmt.Errorf("--redis %s: %d decisions and %d state reads failed; the first: %v", r.options.Addr, total, r.readFailed, r.first)
	}
	return lines, err
}

// Abandon closes a run that ended before Finish, warning on w when its keys stay behind.
func (r *Run) Abandon(w io.Writer) {
	if !r.finished {
		if err := r.Close(); err != nil {
			fmt.Fprintln(w, "warning:", err)
		}
	}
}

// Close deletes every key the run made and closes the client, once (a run that fails early
// closes here, one that finishes in Finish); a key it cannot delete expires runKeyTTL after
// its last decision.
func (r *Run) Close() error {
	r.closeOnce.Do(func() { r.closeErr = r.close() })
	return r.closeErr
}

func (r *Run) close() error {
	r.mu.Lock()
	keys := make([]string, 0, len(r.keys))
	for k := range r.keys {
		keys = append(keys, k)
	}
	r.mu.Unlock()
	slices.Sort(keys)
	var err error
	for len(keys) > 0 && err == nil {
		batch := keys[:min(len(keys), 1000)]
		keys = keys[len(batch):]
		ctx, cancel := context.WithTimeout(context.Background(), r.options.Timeout)
		if _, e := r.client.Del(ctx, batch...); e != nil {
			err = fmt.Errorf("--redis %s: could not delete the run's keys (%s*; they expire %s after their last decision): %v",
				r.options.Addr, r.options.Prefix, limiters.FormatDuration(runKeyTTL), e)
		}
		cancel()
	}
	if e := r.client.Close(); err == nil {
		err = e
	}
	return err
}

// runStore is one limiter of a central store, in Redis, decided at the lane's virtual time.
// Its key is deleted before its first use, so it starts fresh as the in-process one would.
// A decision Redis does not make is counted and reported to the lane (engine.StoreFailer),
// whose failure policy then decides.
type runStore struct {
	run    *Run
	lane   int
	remote *redislimit.Limiter
	reset  bool  // the key has been deleted
	err    error // the last decision's failure, until StoreErr reads it
}

var (
	_ limiters.Limiter   = (*runStore)(nil)
	_ limiters.Fresh     = (*runStore)(nil)
	_ engine.StoreFailer = (*runStore)(nil)
)

// prepare deletes the key before the limiter's first use.
func (s *runStore) prepare(ctx context.Context) error {
	if !s.reset {
		if err := s.remote.Reset(ctx); err != nil {
			return err
		}
		s.reset = true
	}
	return nil
}

func (s *runStore) AcquireAt(now time.Duration, n int) limiters.Decision {
	ctx, cancel := context.WithTimeout(s.run.ctx, s.run.options.Timeout)
	defer cancel()
	err := s.prepare(ctx)
	var r redislimit.Result
	if err == nil {
		r, err = s.remote.AcquireAt(ctx, now, n)
	}
	if err != nil {
		s.err = err
		s.run.record(s.lane, true, err)
		return limiters.Rejected
	}
	return r.Decision
}

func (s *runStore) StoreErr() error {
	err := s.err
	s.err = nil
	return err
}

func (s *runStore) state(now time.Duration) (limiters.State, bool) {
	ctx, cancel := context.WithTimeout(s.run.ctx, s.run.options.Timeout)
	defer cancel()
	err := s.prepare(ctx)
	var st limiters.State
	if err == nil {
		st, err = s.remote.StateAt(ctx, now)
	}
	if err != nil {
		s.run.record(s.lane, false, err)
		return limiters.State{Kind: s.Kind(), At: now, MaxPermits: s.remote.MaxPermits()}, false
	}
	return st, true
}

func (s *runStore) AvailableAt(now time.Duration) int {
	st, _ := s.state(now)
	return st.Available
}

func (s *runStore) Snapshot(now time.Duration) limiters.State {
	st, _ := s.state(now)
	return st
}

// FreshAt is the in-process limiter's test on the stored state, for a keyed table that evicts
// only fresh keys: a TAT at or before now (a bucket), no permit used in now's window or a later
// one (a fixed window). A state Redis does not give is not fresh: the key is kept.
func (s *runStore) FreshAt(now time.Duration) bool {
	st, ok := s.state(now)
	if !ok {
		return false
	}
	if !s.remote.Spec().(limiters.Stored).StoreForm().GCRA { // a fixed window
		return st.Count == 0
	}
	return st.Arrival <= st.At
}

func (s *runStore) MaxPermits() int     { return s.remote.MaxPermits() }
func (s *runStore) Kind() limiters.Kind { return s.remote.Spec().Kind() }
func (s *runStore) String() string      { return s.remote.Spec().String() }
