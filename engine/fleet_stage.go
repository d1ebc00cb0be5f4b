package engine

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// FleetResult is what one fleet lane measured beyond the lane's own meters: the lane's
// Windows already meter the global admission stream against the global limit (its stack's
// spec), and Overshoot reads the natural window's.
type FleetResult struct {
	Model     Coordination     `json:"model"`
	Balancer  Balancer         `json:"balancer"`
	Instances []InstanceResult `json:"instances"`
	// Overshoot is the most the fleet admitted in any interval of the spec's natural window,
	// over what one limiter of the spec could admit there (AdmissionBound): 3.0 for three
	// local instances each admitting their full limit at once. 0 when the spec has no bound.
	Overshoot   float64       `json:"overshoot"`
	Window      time.Duration `json:"window_ns"`
	MaxAdmitted int64         `json:"max_admitted"` // in that window
	Bound       int64         `json:"bound"`        // one limiter's AdmissionBound for it
	// StoreOps counts the store's operations: central decisions sent (answered or not), async
	// messages (hit batches and the broadcasts each instance received).
	StoreOps int64 `json:"store_ops"`
	// StoreFailures counts decisions the failure policy made (central), or sync messages lost
	// to an outage (async).
	StoreFailures int64 `json:"store_failures"`
	StoreLatency  Wait  `json:"store_latency"` // the wait each central decision added (Timeout when it timed out)
	Syncs         int64 `json:"syncs"`         // async: broadcasts the owner sent
}

// InstanceResult is one instance's part of a fleet lane.
type InstanceResult struct {
	Offered  int64   `json:"offered"`  // attempts routed to it
	Admitted int64   `json:"admitted"` // of those, admitted
	Share    float64 `json:"share"`    // its part of the fleet's admissions
	// Bins is its admissions in each of the lane's bins (LaneResult.Bins): summed over the
	// instances, bin b's counts are Bins[b].Admitted. 3 instances in 1000 bins: 3000 counts.
	Bins []int64 `json:"bins"`
}

// fleetInstance is one instance of a fleet lane: its own limiters (local, split, async, and a
// central lane's local fallback), its clock offset and whether it takes requests.
type fleetInstance struct {
	stack    *Stack
	offset   time.Duration
	live     bool
	offered  int64
	admitted int64
	bins     []int64 // admissions per bin of the lane's (setBins)
	hits     int64   // async: hits queued for the owner
	flushing bool    // async: a flush is scheduled
}

// fleetEvent is one step of the fleet's own timeline, run before any decision at or after its
// time: faults joining and leaving instances, async's flushes and broadcasts.
type fleetEvent struct {
	at       time.Duration
	seq      uint64
	kind     uint8
	instance int
	value    int64 // hits for evOwnerHits, permits left for evBroadcastArrive
}

const (
	evJoin = iota
	evLeave
	evFlush           // a non-owner sends its queued hits
	evOwnerHits       // the hits reach the owner
	evBroadcast       // the owner sends what it has left
	evBroadcastArrive // one instance receives it
)

type fleetEvents []fleetEvent

func (q fleetEvents) Len() int { return len(q) }
func (q fleetEvents) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q fleetEvents) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *fleetEvents) Push(x any)   { *q = append(*q, x.(fleetEvent)) }
func (q *fleetEvents) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// fleetStage is a fleet lane's one stage as the lane sees it: a limiters.Limiter that routes
// each request (bound to its key by route) to an instance and decides it there by the lane's
// coordination model. It is single-threaded, as a lane is.
type fleetStage struct {
	cfg     LaneFleet
	fleet   Fleet
	lane    int             // the lane's index in the scenario
	specs   []limiters.Spec // the global stack: names the stage and gives the bounds
	build   func(limiters.Clock) (*Stack, error)
	clock   limiters.Clock
	inst    []fleetInstance
	store   *Stack           // central, store clock
	windows map[int64]*Stack // central, caller clock: one store limiter per window index
	window  time.Duration    // the natural window, for ClockCaller
	faults  []Fault
	events  fleetEvents
	seq     uint64
	rng     *rand.Rand // the balancer's random draws
	lat     *rand.Rand // latency draws
	rr      int
	sticky  map[string]int
	key     string
	maxN    int
	// binWidth is the lane's bin width (recorder.binWidth): an admission at t counts in
	// instance k's bins[t/binWidth].
	binWidth int64

	broadcasting bool // async: the owner's broadcast is scheduled
	storeOps     int64
	storeFails   int64
	syncs        int64
	latency      histogram
}

// newFleetStage builds lane i's fleet stage: each instance's stack from spec (split when
// the model says), the store, and the fault timeline's joins and leaves.
func newFleetStage(sc *Scenario, i int, clock limiters.Clock) (*fleetStage, error) {
	spec := sc.Lanes[i]
	f := &fleetStage{cfg: *spec.Fleet, fleet: *sc.Fleet, lane: i, specs: spec.Stack, clock: clock, faults: sc.Faults,
		rng:    rand.New(rand.NewPCG(sc.Seed, 0xf1ee7)),
		lat:    rand.New(rand.NewPCG(sc.Seed^uint64(i), 0x1a7e)),
		sticky: map[string]int{}}
	specs := spec.Stack
	if f.cfg.Model == CoordSplit && spec.Build == nil {
		specs = make([]limiters.Spec, len(spec.Stack))
		for j, s := range spec.Stack {
			split, err := limiters.SplitSpec(s, sc.Fleet.Instances)
			if err != nil {
				return nil, fmt.Errorf("limiters[%d].fleet: stage %d: %w", i, j+1, err)
			}
			specs[j] = split
		}
	}
	f.build = func(c limiters.Clock) (*Stack, error) {
		if spec.Build != nil {
			built, err := spec.Build(c)
			if err != nil {
				return nil, err
			}
			return StackOf(built), nil
		}
		return NewStack(specs, c)
	}
	if len(spec.Stack) > 0 {
		f.window = spec.Stack[0].NaturalWindow()
	}
	f.inst = make([]fleetInstance, sc.Fleet.Instances)
	// An instance whose earliest membership event is a join is absent until then.
	joinsFirst := make([]bool, len(f.inst))
	first := make([]time.Duration, len(f.inst))
	for k := range first {
		first[k] = -1
	}
	for _, ft := range sc.Faults {
		switch ft.Kind {
		case FaultClock:
			f.inst[ft.Instance].offset = ft.Offset
		case FaultJoin, FaultLeave:
			kind := uint8(evJoin)
			if ft.Kind == FaultLeave {
				kind = evLeave
			}
			f.push(fleetEvent{at: ft.At, kind: kind, instance: ft.Instance})
			if first[ft.Instance] < 0 || ft.At < first[ft.Instance] {
				first[ft.Instance] = ft.At
				joinsFirst[ft.Instance] = ft.Kind == FaultJoin
			}
		}
	}
	for k := range f.inst {
		f.inst[k].live = !joinsFirst[k]
		st, err := f.build(clock)
		if err != nil {
			return nil, fmt.Errorf("limiters[%d] %w", i, err)
		}
		f.inst[k].stack = st
	}
	if f.cfg.Model == CoordCentral {
		if f.fleet.Store != nil && (spec.Build != nil || len(spec.Stack) != 1) {
			return nil, fmt.Errorf("limiters[%d].fleet: a store made by Fleet.Store decides one stage given by its spec; this lane has %d stages%s",
				i, len(spec.Stack), map[bool]string{true: " built by code", false: ""}[spec.Build != nil])
		}
		f.windows = map[int64]*Stack{}
		var st *Stack
		var err error
		if f.cfg.Clock == ClockCaller && f.fleet.Store != nil {
			// Under the callers' clocks every decision goes to a window's store, and f.store
			// only shows a fresh limit (AvailableAt): in process, as without Fleet.Store, and
			// window 0's made now, so that a factory that cannot serve the spec says so here.
			if st, err = f.build(clock); err == nil {
				f.windows[0], err = f.newStore(0)
			}
		} else {
			st, err = f.newStore(0)
		}
		if err != nil {
			return nil, fmt.Errorf("limiters[%d] %w", i, err)
		}
		f.store = st
	}
	f.maxN = f.inst[0].stack.Stage(0).MaxPermits()
	for _, st := range f.inst[0].stack.Stages()[1:] {
		f.maxN = min(f.maxN, st.MaxPermits())
	}
	return f, nil
}

// setBins gives each instance n bins of width, the lane's: allocated once, O(instances × n).
func (f *fleetStage) setBins(width int64, n int) {
	f.binWidth = width
	for k := range f.inst {
		f.inst[k].bins = make([]int64, n)
	}
}

func (f *fleetStage) push(e fleetEvent) {
	f.seq++
	e.seq = f.seq
	heap.Push(&f.events, e)
}

// route binds the next decision to key (Stack.Bind calls it).
func (f *fleetStage) route(key string) { f.key = key }

// runUntil runs every fleet event at or before now.
func (f *fleetStage) runUntil(now time.Duration) {
	for len(f.events) > 0 && f.events[0].at <= now {
		e := heap.Pop(&f.events).(fleetEvent)
		f.run(e)
	}
}

func (f *fleetStage) run(e fleetEvent) {
	switch e.kind {
	case evJoin:
		in := &f.inst[e.instance]
		if !in.live {
			if st, err := f.build(f.clock); err == nil { // built once already: it cannot fail now
				in.stack = st
			}
			in.hits, in.flushing = 0, false
		}
		in.live = true
	case evLeave:
		f.inst[e.instance].live = false
	case evFlush:
		in := &f.inst[e.instance]
		hits := in.hits
		in.hits, in.flushing = 0, false
		if !in.live || hits == 0 {
			return
		}
		f.storeOps++
		if f.unreachable(e.at, e.instance) || f.unreachable(e.at, f.cfg.Owner) {
			f.storeFails++ // gubernator logs the error and drops the batch
			return
		}
		f.push(fleetEvent{at: e.at + f.oneWay(e.at), kind: evOwnerHits, instance: e.instance, value: hits})
	case evOwnerHits:
		owner := f.inst[f.cfg.Owner].stack
		now := e.at + f.inst[f.cfg.Owner].offset
		take := min(e.value, int64(owner.Stage(0).AvailableAt(now)))
		if take > 0 {
			owner.Acquire(now, int(take), nil) // DRAIN_OVER_LIMIT: more hits than left take what is left
		}
		f.armBroadcast(e.at)
	case evBroadcast:
		f.broadcasting = false
		f.syncs++
		left := int64(f.inst[f.cfg.Owner].stack.Stage(0).AvailableAt(e.at + f.inst[f.cfg.Owner].offset))
		for k := range f.inst {
			if k == f.cfg.Owner || !f.inst[k].live {
				continue
			}
			f.storeOps++
			if f.unreachable(e.at, k) || f.unreachable(e.at, f.cfg.Owner) {
				f.storeFails++
				continue
			}
			f.push(fleetEvent{at: e.at + f.oneWay(e.at), kind: evBroadcastArrive, instance: k, value: left})
		}
	case evBroadcastArrive:
		in := &f.inst[e.instance]
		if !in.live {
			return
		}
		// The instance's limiter becomes the owner's: a fresh one, drained to what the owner
		// had left (gubernator replaces its cache item with the owner's status).
		st, err := f.build(f.clock)
		if err != nil {
			return
		}
		now := e.at + in.offset
		if drain := int64(st.Stage(0).AvailableAt(now)) - e.value; drain > 0 {
			st.Acquire(now, int(drain), nil)
		}
		in.stack = st
	}
}

func (f *fleetStage) armBroadcast(at time.Duration) {
	if !f.broadcasting {
		f.broadcasting = true
		f.push(fleetEvent{at: at + f.cfg.Sync, kind: evBroadcast})
	}
}

// unreachable reports whether instance k cannot reach the store at t (an outage fault).
func (f *fleetStage) unreachable(t time.Duration, k int) bool {
	for _, ft := range f.faults {
		if ft.Kind != FaultOutage || t < ft.From || t >= ft.Until {
			continue
		}
		if len(ft.Instances) == 0 {
			return true
		}
		for _, i := range ft.Instances {
			if i == k {
				return true
			}
		}
	}
	return false
}

// added is the latency faults' extra delay at t.
func (f *fleetStage) added(t time.Duration) time.Duration {
	var add time.Duration
	for _, ft := range f.faults {
		if ft.Kind == FaultLatency && t >= ft.From && t < ft.Until {
			add += ft.Add
		}
	}
	return add
}

// oneWay is one drawn latency plus the faults' at t: an async message's, a central round trip.
func (f *fleetStage) oneWay(t time.Duration) time.Duration {
	var d time.Duration
	if f.cfg.Latency.Kind != "" {
		d = time.Duration(drawDuration(f.lat, f.cfg.Latency))
	}
	return min(d+f.added(t), MaxTime)
}

// pick routes the current key to a live instance, or -1 when none lives.
func (f *fleetStage) pick() int {
	live := 0
	for k := range f.inst {
		if f.inst[k].live {
			live++
		}
	}
	if live == 0 {
		return -1
	}
	nth := func(n int) int { // the n-th live instance
		for k := range f.inst {
			if f.inst[k].live {
				if n == 0 {
					return k
				}
				n--
			}
		}
		return -1
	}
	switch f.fleet.Balancer {
	case BalanceRandom:
		return nth(f.rng.IntN(live))
	case BalanceHash:
		return nth(int(fnv1a(f.key) % uint64(live)))
	case BalanceSticky:
		if k, ok := f.sticky[f.key]; ok && f.inst[k].live {
			return k
		}
		k := f.nextRoundRobin()
		f.sticky[f.key] = k
		return k
	}
	return f.nextRoundRobin()
}

// nextRoundRobin is the first live instance from the round-robin cursor on.
func (f *fleetStage) nextRoundRobin() int {
	for range f.inst {
		k := f.rr % len(f.inst)
		f.rr++
		if f.inst[k].live {
			return k
		}
	}
	return -1
}

func fnv1a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// decide takes n permits for the bound key at now, on an instance.
func (f *fleetStage) decide(now time.Duration, n int) limiters.Decision {
	f.runUntil(now)
	k := f.pick()
	if k < 0 {
		return limiters.Rejected // no instance lives: the balancer has nowhere to send it
	}
	in := &f.inst[k]
	in.offered++
	local := now + in.offset
	var d limiters.Decision
	switch f.cfg.Model {
	case CoordCentral:
		d = f.central(now, local, k, n)
	case CoordAsync:
		d = f.onStack(in.stack, local, n)
		if k == f.cfg.Owner {
			f.armBroadcast(now)
		} else if d != limiters.Invalid && d != limiters.Never {
			in.hits += int64(n) // every hit is queued, admitted or not, as gubernator queues them
			if !in.flushing {
				in.flushing = true
				f.push(fleetEvent{at: now + f.cfg.Sync, kind: evFlush, instance: k})
			}
		}
	default:
		d = f.onStack(in.stack, local, n)
	}
	if d == limiters.Admitted {
		in.admitted++
		if n := len(in.bins); n > 0 { // decisions come before the horizon; the last bin holds any at it
			in.bins[min(int(int64(now)/f.binWidth), n-1)]++
		}
	}
	return d
}

func (f *fleetStage) onStack(st *Stack, now time.Duration, n int) limiters.Decision {
	if st.Keyed() {
		if _, ok := st.Bind(now, f.key); !ok {
			return limiters.Rejected
		}
	}
	d, _, _ := st.Acquire(now, n, nil)
	return d
}

// central is one decision by the store: a round trip drawn from the latency distribution
// (plus the faults'); over the timeout, or in an outage, the failure policy decides. A slow
// answer was still counted by the store; one lost to an outage was not.
func (f *fleetStage) central(now, local time.Duration, k, n int) limiters.Decision {
	f.storeOps++
	if f.unreachable(now, k) {
		f.latency.add(int64(f.cfg.Timeout))
		return f.fail(local, k, n)
	}
	rtt := f.oneWay(now)
	store := f.store
	at := now
	if f.cfg.Clock == ClockCaller {
		at = local
		store = f.windowStore(local)
	}
	d := f.onStack(store, at, n)
	if failer, ok := store.Stage(0).(StoreFailer); ok && failer.StoreErr() != nil {
		// A real store that gave no decision (Fleet.Store): the policy decides, as in an outage.
		f.latency.add(int64(f.cfg.Timeout))
		return f.fail(local, k, n)
	}
	if rtt > f.cfg.Timeout {
		f.latency.add(int64(f.cfg.Timeout))
		return f.fail(local, k, n)
	}
	f.latency.add(int64(rtt))
	return d
}

// windowStore is the store's limiter for the window that local falls in, by the caller's clock.
func (f *fleetStage) windowStore(local time.Duration) *Stack {
	w := int64(local / f.window)
	if st, ok := f.windows[w]; ok {
		return st
	}
	st, err := f.newStore(w)
	if err != nil {
		return f.store
	}
	for old := range f.windows {
		if old < w-2 { // no caller is two windows behind: clock offsets are under a window
			delete(f.windows, old)
		}
	}
	f.windows[w] = st
	return st
}

// newStore makes a central store's limiters: in process from the lane's spec, or by the
// fleet's StoreFactory for window (ClockCaller's window index, else 0). A keyed stage keeps
// its table in process and has the factory make each key's limiter as the key enters it.
func (f *fleetStage) newStore(window int64) (*Stack, error) {
	factory := f.fleet.Store
	if factory == nil {
		return f.build(f.clock)
	}
	spec := f.specs[0]
	ks, keyed := spec.(limiters.KeyedSpec)
	if !keyed {
		lim, err := factory(StoreSlot{Lane: f.lane, Window: window}, spec, f.clock)
		if err != nil {
			return nil, &StageError{Stage: 1, Err: err}
		}
		return StackOf([]limiters.Limiter{lim}), nil
	}
	made := &storeSpec{Spec: ks.Spec, make: func(c limiters.Clock) (limiters.Limiter, error) {
		return factory(StoreSlot{Lane: f.lane, Window: window, Key: f.key}, ks.Spec, c)
	}}
	st, err := NewStack([]limiters.Spec{limiters.KeyedSpec{Keys: ks.Keys, Spec: made}}, f.clock)
	if err != nil {
		return nil, err
	}
	made.armed = true
	return st, nil
}

// storeSpec is a keyed store's inner spec whose New asks the StoreFactory. The table makes a
// key's limiter only inside Bind, for the key being decided (fleetStage.key), so the factory
// is told that key. Before it is armed (NewKeyed's check of the spec, the limiter a keyed stage
// shows before its first key) New makes in-process ones, which decide nothing.
type storeSpec struct {
	limiters.Spec
	make  func(limiters.Clock) (limiters.Limiter, error)
	armed bool
}

func (s *storeSpec) New(c limiters.Clock) (limiters.Limiter, error) {
	if !s.armed {
		return s.Spec.New(c)
	}
	return s.make(c)
}

// fail is the failure policy's decision on instance k: its local limiter for FailLocal.
func (f *fleetStage) fail(local time.Duration, k, n int) limiters.Decision {
	f.storeFails++
	policy := limiters.FailurePolicy{Mode: f.cfg.OnFailure, Timeout: f.cfg.Timeout}
	if policy.Mode == limiters.FailLocal {
		return f.onStack(f.inst[k].stack, local, n)
	}
	return policy.Decide(local, n, f.maxN)
}

// report is the fleet's measurements; windows are the lane's meters.
func (f *fleetStage) report(windows []WindowMeter) *FleetResult {
	res := &FleetResult{Model: f.cfg.Model, Balancer: f.fleet.Balancer, StoreOps: f.storeOps, StoreFailures: f.storeFails,
		Syncs: f.syncs, Instances: make([]InstanceResult, len(f.inst))}
	var total int64
	for _, in := range f.inst {
		total += in.admitted
	}
	for k, in := range f.inst {
		res.Instances[k] = InstanceResult{Offered: in.offered, Admitted: in.admitted, Bins: slices.Clone(in.bins)}
		if total > 0 {
			res.Instances[k].Share = float64(in.admitted) / float64(total)
		}
	}
	if f.latency.total > 0 {
		h := &f.latency
		res.StoreLatency = Wait{P50: h.quantile(0.5), P90: h.quantile(0.9), P99: h.quantile(0.99), Max: time.Duration(h.max),
			Mean: time.Duration(h.sum / int64(h.total))}
	}
	res.Window = f.window
	for _, w := range windows {
		if w.Length == f.window && w.Bound > 0 {
			res.MaxAdmitted, res.Bound = w.MaxAdmitted, w.Bound
			res.Overshoot = math.Round(float64(w.MaxAdmitted)/float64(w.Bound)*1000) / 1000
		}
	}
	return res
}

// The fleet stage as the lane's one limiter.

func (f *fleetStage) AcquireAt(now time.Duration, n int) limiters.Decision { return f.decide(now, n) }

// AvailableAt is what the first live instance's first stage could take (the lane's
// available-permits reading; the fleet as a whole has no one number).
func (f *fleetStage) AvailableAt(now time.Duration) int {
	for k := range f.inst {
		if f.inst[k].live {
			if f.cfg.Model == CoordCentral && f.store != nil {
				return f.store.Stage(0).AvailableAt(now)
			}
			return f.inst[k].stack.Stage(0).AvailableAt(now + f.inst[k].offset)
		}
	}
	return 0
}

func (f *fleetStage) MaxPermits() int     { return f.maxN }
func (f *fleetStage) Kind() limiters.Kind { return f.specs[0].Kind() }
func (f *fleetStage) String() string      { return StackString(f.specs) }
func (f *fleetStage) Snapshot(now time.Duration) limiters.State {
	return f.inst[0].stack.Stage(0).Snapshot(now)
}

// InstancesLive is, for a fleet lane, whether each instance takes requests now: false from a
// leave fault on, and before the join of one whose first membership event is a join. nil for
// a lane that is not a fleet. Like Result, it first runs the fleet's events due by now, which
// the next decision would run before deciding anyway: reading it changes no decision. Three
// instances, instance 2 joining at 1s and instance 0 leaving at 2s: at 1.5s, [true true true].
func (l *Lane) InstancesLive() []bool {
	if l.fleet == nil {
		return nil
	}
	l.fleet.runUntil(time.Duration(l.now))
	live := make([]bool, len(l.fleet.inst))
	for k := range l.fleet.inst {
		live[k] = l.fleet.inst[k].live
	}
	return live
}
