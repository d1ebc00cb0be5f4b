package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ratelab/ratelab/internal/wording"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/redislimit"
)

// redisPrefix marks a stage of a --limiter that runs against the real Redis of --redis:
// "redis/token-bucket:capacity=3,rate=100/1s", or one stage of a stack,
// "redis/token-bucket:capacity=3,rate=100/1s+concurrency:max=20".
const redisPrefix = "redis/"

// redisSettings are replay's --redis flags.
type redisSettings struct {
	addr      string
	onFailure string
	timeout   time.Duration
	keyPrefix string
}

// replayLane is one --limiter of replay: its stages' specs, and which of them run in Redis.
type replayLane struct {
	text   string // as given
	specs  []limiters.Spec
	remote []bool // remote[k]: stage k is a redis/ stage
}

func (l replayLane) hasRemote() bool {
	for _, r := range l.remote {
		if r {
			return true
		}
	}
	return false
}

// parseReplayLane reads a --limiter: a stack whose stages may carry the redis/ prefix.
func parseReplayLane(text string) (replayLane, error) {
	lane := replayLane{text: text}
	parts, empty := wording.SplitList(text, "+", "stage")
	if empty != "" || len(parts) == 0 {
		_, err := engine.ParseStack(text) // the same words as every other --limiter
		return lane, err
	}
	for _, part := range parts {
		rest, remote := strings.CutPrefix(part, redisPrefix)
		if limiters.IsKeyedSpec(rest) {
			// keys(max=…,evict=…):SPEC, one limiter per row key, as run's lanes take it.
			if remote {
				return lane, fmt.Errorf("%s: a keys(…) stage cannot run in Redis (its table of keys is in-process)", part)
			}
			spec, err := limiters.ParseKeyedSpec(rest)
			if err != nil {
				return lane, err
			}
			lane.specs = append(lane.specs, spec)
			lane.remote = append(lane.remote, false)
			continue
		}
		spec, err := limiters.ParseSpec(rest)
		if err != nil {
			return lane, err
		}
		if _, stored := spec.(limiters.Stored); remote && !stored {
			return lane, fmt.Errorf("%s: kind %s cannot run in Redis (%s can)", part, spec.Kind(), limiters.StoredKinds())
		}
		lane.specs = append(lane.specs, spec)
		lane.remote = append(lane.remote, remote)
	}
	if lane.hasRemote() && slices.ContainsFunc(lane.specs, func(s limiters.Spec) bool { _, keyed := s.(limiters.KeyedSpec); return keyed }) {
		return lane, fmt.Errorf("%s: a keys(…) stage and a redis/ stage cannot share a lane (the redis/ stages are built one limiter each); give each its own --limiter", text)
	}
	return lane, nil
}

// name is the lane's column header: its stages, a redis/ stage with its prefix.
func (l replayLane) name() string {
	parts := make([]string, len(l.specs))
	for k, s := range l.specs {
		parts[k] = s.String()
		if l.remote[k] {
			parts[k] = redisPrefix + parts[k]
		}
	}
	return strings.Join(parts, "+")
}

// redisReplay holds what the redis/ stages of a replay share: the client and every guarded
// stage, to report their failures.
type redisReplay struct {
	settings redisSettings
	client   *redislimit.Client
	guarded  []*redislimit.Guarded
	lanes    []int // guarded[i] is a stage of lane lanes[i]
}

// connectRedis makes replay's client and checks that Redis answers within the timeout.
func connectRedis(ctx context.Context, s redisSettings) (*redisReplay, error) {
	c, err := dialRedis(ctx, s, 1)
	if err != nil {
		return nil, err
	}
	return &redisReplay{settings: s, client: c}, nil
}

// dialRedis makes a client of pool connections and checks that Redis answers PING within
// the timeout.
func dialRedis(ctx context.Context, s redisSettings, pool int) (*redislimit.Client, error) {
	c, err := redislimit.NewClient(redislimit.ClientOptions{Addr: s.addr, PoolSize: pool, Timeout: s.timeout})
	if err != nil {
		return nil, usageErrorf("--redis %s: %v", s.addr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := c.Ping(ctx); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("--redis %s: no answer to PING within %s: %v", s.addr, limiters.FormatDuration(s.timeout), err)
	}
	return c, nil
}

// build makes a lane's stack: in-process stages on the replay's virtual clock, redis/ stages
// keyed PREFIX + lane + ":" + stage + ":" + spec, on the trace's times (the caller's clock),
// emptied first so that the replay starts from fresh limiters as the in-process ones do.
func (r *redisReplay) build(ctx context.Context, index int, lane replayLane, clock limiters.Clock) (*engine.Stack, error) {
	mode, err := limiters.ParseFailureMode(r.settings.onFailure)
	if err != nil {
		return nil, usageErrorf("--redis-on-failure: %v", err)
	}
	if !lane.hasRemote() {
		// A lane without a redis/ stage is built as every other replay's is (a keys(…) stage
		// becomes its table there).
		st, err := engine.NewStack(lane.specs, clock)
		if err != nil {
			return nil, fmt.Errorf("limiter %d: %w", index+1, err)
		}
		if st.SetWaits(lane.specs, 0) {
			if err := st.CanReserve(); err != nil {
				return nil, fmt.Errorf("limiter %d: %w", index+1, err)
			}
		}
		return st, nil
	}
	stages := make([]limiters.Limiter, len(lane.specs))
	for k, spec := range lane.specs {

		local, err := spec.New(clock)
		if err != nil {
			return nil, fmt.Errorf("limiter %d: %w", index+1, err)
		}
		if !lane.remote[k] {
			stages[k] = local
			continue
		}
		key := r.settings.keyPrefix + strconv.Itoa(index+1) + ":" + strconv.Itoa(k+1) + ":" + spec.String()
		remote, err := redislimit.New(r.client, key, spec, redislimit.Options{Clock: redislimit.CallerClock})
		if err != nil {
			return nil, fmt.Errorf("limiter %d: %w", index+1, err)
		}
		resetCtx, cancel := context.WithTimeout(ctx, r.settings.timeout)
		err = remote.Reset(resetCtx)
		cancel()
		if err != nil {
			return nil, err
		}
		policy := limiters.FailurePolicy{Mode: mode, Timeout: r.settings.timeout}
		if mode == limiters.FailLocal {
			policy.Local = local
		}
		g, err := redislimit.NewGuarded(remote, policy)
		if err != nil {
			return nil, err
		}
		r.guarded, r.lanes = append(r.guarded, g), append(r.lanes, index)
		stages[k] = g
	}
	st := engine.StackOf(stages)
	if st.SetWaits(lane.specs, 0) { // an in-process stage whose callers wait decides by reservation
		if err := st.CanReserve(); err != nil {
			return nil, fmt.Errorf("limiter %d: %w", index+1, err)
		}
	}
	return st, nil
}

// failures is one line per redis/ stage the store failed, and an error when any did.
func (r *redisReplay) failures() (lines []string, err error) {
	var total int64
	var first error
	for i, g := range r.guarded {
		n, e := g.Failures()
		if n == 0 {
			continue
		}
		total += n
		if first == nil {
			first = e
		}
		lines = append(lines, fmt.Sprintf("  limiter %d: %d decisions Redis did not make, decided %s instead", r.lanes[i]+1, n, g.Policy().Mode))
	}
	if total > 0 {
		err = fmt.Errorf("--redis %s: %d decisions failed; the first: %v", r.settings.addr, total, first)
	}
	return lines, err
}

func (r *redisReplay) Close() error { return r.client.Close() }

// runKeyTTL is how long a key of run --redis outlives its last decision in real time, should
// the run be killed before it deletes its keys.
const runKeyTTL = time.Hour

// redisRunFlags are run's --redis flags.
type redisRunFlags struct {
	addr, prefix string
	timeout      time.Duration
}

func (f *redisRunFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "redis", "", "the Redis `ADDR` (host:port) where every central fleet lane keeps its shared store (token-bucket, leaky-bucket, fixed-window, keyed or not), "+
		"decided at the run's virtual times, so the results are those of the in-process store; the simulated faults stay simulated. "+
		"A decision Redis does not make within --redis-timeout is the lane's on_failure policy's, and the run then prints its results, says how many there were and exits 1")
	fs.StringVar(&f.prefix, "redis-prefix", "", "the `PREFIX` of the central stores' keys, each emptied before its first use and deleted after the run "+
		"(default ratelab:run:SCENARIO:SEED:RANDOM:, unique to the run)")
	fs.DurationVar(&f.timeout, "redis-timeout", time.Second, "the longest a central lane waits for Redis per decision, in real time (the scenario's own timeout is simulated)")
}

// checkRedisLanes refuses a scenario with no central lane, and a central lane that Redis
// cannot hold, naming it: one stage, of a kind redislimit has a script for.
func checkRedisLanes(sc *engine.Scenario, addr string) error {
	central := 0
	for i, lane := range sc.Lanes {
		if lane.Fleet == nil || lane.Fleet.Model != engine.CoordCentral {
			continue
		}
		central++
		name := fmt.Sprintf("lane %q (limiters[%d])", lane.Label(), i)
		if lane.Build != nil {
			return usageErrorf("--redis %s: %s is built by code, not from a spec: it cannot run in Redis", addr, name)
		}
		if len(lane.Stack) != 1 {
			return usageErrorf("--redis %s: %s is a stack of %d stages: a central store runs in Redis as one stage (a stage in Redis cannot be refunded when a later one refuses)",
				addr, name, len(lane.Stack))
		}
		held := lane.Stack[0]
		if k, keyed := held.(limiters.KeyedSpec); keyed { // one store limiter per key, each of the inner spec
			held = k.Spec
		}
		if _, stored := held.(limiters.Stored); !stored {
			return usageErrorf("--redis %s: %s is a central %s: kind %s cannot run in Redis (%s can)",
				addr, name, lane.Stack[0], lane.Stack[0].Kind(), limiters.StoredKinds())
		}
	}
	if central == 0 {
		return usageErrorf("--redis %s: scenario %s has no central fleet lane (fleet: {model: central, …}) to keep in Redis", addr, sc.Name)
	}
	return nil
}

// redisRun is run --redis: the client, every key the run made (deleted at the end), and what
// Redis failed to do, per lane.
type redisRun struct {
	ctx      context.Context
	settings redisSettings
	client   *redislimit.Client
	sc       *engine.Scenario

	mu         sync.Mutex
	keys       map[string]bool
	failed     []int64 // per lane: decisions Redis did not make
	readFailed int64   // state reads (available permits, freshness) it did not answer
	first      error

	finished  bool // finish ran and reported
	closeOnce sync.Once
	closeErr  error
}

// startRedisRun connects to Redis and sets sc's fleet to keep its central stores there.
func startRedisRun(ctx context.Context, sc *engine.Scenario, f redisRunFlags) (*redisRun, error) {
	if f.timeout <= 0 {
		return nil, usageErrorf("--redis-timeout %s: must be positive", limiters.FormatDuration(f.timeout))
	}
	if err := checkRedisLanes(sc, f.addr); err != nil {
		return nil, err
	}
	prefix := f.prefix
	if prefix == "" {
		var b [4]byte
		_, _ = rand.Read(b[:]) // names the keys only: no result depends on it
		prefix = fmt.Sprintf("ratelab:run:%s:%d:%x:", sc.Name, sc.Seed, b)
	}
	central := 0
	for _, lane := range sc.Lanes {
		if lane.Fleet != nil && lane.Fleet.Model == engine.CoordCentral {
			central++
		}
	}
	s := redisSettings{addr: f.addr, timeout: f.timeout, keyPrefix: prefix}
	c, err := dialRedis(ctx, s, central) // the lanes run in parallel, one decision at a time each
	if err != nil {
		return nil, err
	}
	r := &redisRun{ctx: ctx, settings: s, client: c, sc: sc, keys: map[string]bool{}, failed: make([]int64, len(sc.Lanes))}
	fleet := *sc.Fleet
	fleet.Store = r.store
	sc.Fleet = &fleet
	return r, nil
}

// store is the fleet's StoreFactory: one Redis key per store limiter,
// PREFIX + lane + ":" + spec [+ ":window=" + index under the caller's clock] [+ ":key=" + key].
func (r *redisRun) store(slot engine.StoreSlot, spec limiters.Spec, _ limiters.Clock) (limiters.Limiter, error) {
	lane := r.sc.Lanes[slot.Lane]
	key := r.settings.keyPrefix + strconv.Itoa(slot.Lane+1) + ":" + spec.String()
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

func (r *redisRun) record(lane int, decision bool, err error) {
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

// finish deletes the run's keys and closes the client. Its lines, for standard error, say
// where the stores were and whether their keys are gone, then one line per central lane Redis
// failed; the error, when Redis failed any decision or state read, says the results are then
// partly the failure policy's, not the store's.
func (r *redisRun) finish() (lines []string, err error) {
	r.finished = true
	deleted := r.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	where := fmt.Sprintf("central stores in Redis at %s, keys %s*: %d keys", r.settings.addr, r.settings.keyPrefix, len(r.keys))
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
		err = fmt.Errorf("--redis %s: %d decisions and %d state reads failed; the first: %v", r.settings.addr, total, r.readFailed, r.first)
	}
	return lines, err
}

// abandon closes a run that ended before finish, warning on w when its keys stay behind.
func (r *redisRun) abandon(w io.Writer) {
	if !r.finished {
		if err := r.Close(); err != nil {
			fmt.Fprintln(w, "warning:", err)
		}
	}
}

// Close deletes every key the run made and closes the client, once (a run that fails early
// closes here, one that finishes in finish); a key it cannot delete expires runKeyTTL after
// its last decision.
func (r *redisRun) Close() error {
	r.closeOnce.Do(func() { r.closeErr = r.close() })
	return r.closeErr
}

func (r *redisRun) close() error {
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
		ctx, cancel := context.WithTimeout(context.Background(), r.settings.timeout)
		if _, e := r.client.Del(ctx, batch...); e != nil {
			err = fmt.Errorf("--redis %s: could not delete the run's keys (%s*; they expire %s after their last decision): %v",
				r.settings.addr, r.settings.keyPrefix, limiters.FormatDuration(runKeyTTL), e)
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
	run    *redisRun
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
	ctx, cancel := context.WithTimeout(s.run.ctx, s.run.settings.timeout)
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
	ctx, cancel := context.WithTimeout(s.run.ctx, s.run.settings.timeout)
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
