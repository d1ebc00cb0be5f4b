package engine

import (
	"fmt"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
)

// reqState is where a request is.
type reqState uint8

const (
	reqFree      reqState = iota // the slot holds no request
	reqPending                   // trying the stages, or waiting to retry
	reqQueued                    // in the client queue
	reqInService                 // admitted, at the downstream
	reqDelayed                   // admitted after a wait, which has not ended yet
)

// place is where a request in service is at a server downstream (server.go).
type place uint8

const (
	placeNone      place = iota // not at a server (a pool downstream, or not in service)
	placeCore                   // receiving work
	placeQueue                  // FIFO: waiting for a core
	placeReturning              // answered; the response is on the network
	placeLost                   // answered too late: its caller's deadline comes first
)

// request is one offered request while it lives, in a slot of Lane.reqs that is reused once
// it ends. gen counts the slot's uses: an event or queue entry made for an earlier use is
// stale and skipped.
type request struct {
	id        uint64
	gen       uint32
	state     reqState
	retryCost uint8 // aws-standard: the quota tokens its latest retry took (5), refunded if it succeeds
	place     place // where an in-service request is at a server downstream
	gated     bool  // its client's gate gave it a slot to come back at (octokit's group spacing)
	class     uint8 // its source's class: 0 none, k the scenario's Classes()[k−1]
	attempts  int
	first     int64 // its first attempt's time (time to success counts from it)
	permits   int
	arrived   int64
	started   int64 // when it went to the downstream
	key       string
	keySlot   int32 // its key's counters (Lane.keys)
}

// Lane simulates one limiter stack against the scenario's traffic. It is single-threaded and
// deterministic: events are ordered by (time, scheduling sequence). Step runs one event,
// RunUntil runs to a time; Run (the package function) runs every lane of a scenario in
// parallel.
//
// The lane itself is the event loop; each concern it drives has its own type: the limiters
// (Stack, stack.go), what refused callers do (clientPolicy, client.go, and clientQueue,
// queue.go), the service behind the limiters (downstream, downstream.go) and what is
// measured (recorder, recorder.go).
type Lane struct {
	spec    LaneSpec
	index   int
	stages  []limiters.Limiter  // the stack's stages, first to last (Stages)
	clock   *virtualclock.Clock // the lane's time whenever a stage reads it (laneClock), and the horizon once done
	OnEvent func(Record)        // called for every traced event when set (the TUI's log)
	// LazyReasons, set before the first event, makes the decisions OnEvent hears carry no
	// Reason: Record.ReasonText makes it when asked, from the Record's State, which OnEvent
	// is lent (valid during the call only: copy it to keep it). Formatting every decision
	// was half of the TUI's CPU on the perf scenario (State.Explain, 52%), though a few dozen
	// are on screen. A traced lane (Scenario.Trace) still writes every Reason.
	LazyReasons bool
	// OnDecide, when set while OnEvent is nil, hears every decision a lane that decides each
	// request at its arrival (AtOnce) makes: when, which request, what the stack decided —
	// no Record, no state, nothing to explain, and the lane keeps its unobserved fast path
	// (decideAtOnce). The TUI counts its charts and finds its marks with it between the ends
	// of its frames, where it observes again for the log.
	OnDecide func(at time.Duration, request uint64, d limiters.Decision)

	stack  *Stack
	shapes bool // some stage waits (LaneSpec.MaxWait, or a stage's own limiters.Waiting)
	// atOnce: a drop client (one attempt) before a stack with no keyed or waiting stage, so
	// every request is decided the moment it arrives (decideAtOnce, when nobody observes).
	atOnce bool
	client clientPolicy
	queue  clientQueue
	down   downstream

	streams  []stream
	flat     []*flatStream // flat[k] is streams[k] when it is a flatStream, else nil
	pending  []arrival     // each source's next arrival
	arrivals eventQueue    // each source's next arrival as an event (one per source at most)
	events   eventQueue    // every other event
	// seq numbers the events of both queues in scheduling order: the earlier of the two tops
	// by (time, seq) is the event one heap of both would run next, so keeping the arrivals
	// apart changes no order, and an arrival's successor replaces it at the top of a heap of
	// one per source instead of sifting through every pending completion.
	seq       uint64
	reqs      []request
	free      []int32 // slots of reqs that hold no request
	nextID    uint64  // the last request's id: requests are numbered 1, 2, ... in arrival order
	now       int64
	horizon   int64
	done      bool
	processed uint64 // events run

	rec   recorder
	keys  keyCounts   // per key: offered, admitted, refused
	fleet *fleetStage // a fleet lane's one stage (fleet_stage.go), else nil

	// flatOnly is the lane's one source when it is flat and its requests are decided at once
	// with one key (atOnce, keys.single): steps runs its arrivals in a loop of their own
	// (flatArrivals). only is the stack's one stage, nil for a stack of more.
	flatOnly *flatStream
	only     limiters.Limiter

	// classes counts per request class, nil when the sources name none; srcClass is each
	// source's class (classes.go), arriving the class of the request arriving now.
	classes  *classCounts
	srcClass []uint8
	arriving uint8

	// rtt sums, per bin, the latency of the completions an adaptive stage heard (adaptive.go),
	// for the limit chart; nil for other lanes.
	rtt []rttBin

	before limiters.State // the deciding stage's state before it decided (tryStages), reused

	// pool: flatArrivals sends an admission straight to the downstream and completes it there
	// itself: a lane of flatOnly before a downstream without a server, with no request class,
	// adaptive stage or retry quota to tell.
	pool bool
	// release is a pool lane's one stage told of a completion (Stack.Complete), when it is
	// told nothing but the release of the permits (a bulkhead's); completes: some stage is
	// told something (else Stack.Complete has nothing to do).
	release   limiters.Releaser
	completes bool
	// service is a pool lane's service time when every one is the same (a downstream of one
	// constant phase), else −1; poolCounts is what flatArrivals counts once it stops
	// (recorder.countPool).
	service    int64
	poolCounts poolCounts
}

// NewLane prepares lane i of sc. The scenario must be valid (Validate).
func NewLane(sc *Scenario, i int) (*Lane, error) {
	spec := sc.Lanes[i]
	l := &Lane{
		spec: spec, index: i, clock: newLaneClock(), horizon: int64(sc.Horizon),
		down:  newDownstream(sc.Downstream, sc.Seed),
		queue: newClientQueue(),
		// What every event writes starts at 512 bytes, on cache lines of its own (lines.go).
		reqs:     make([]request, 0, lineSized(unsafe.Sizeof(request{}))),
		free:     make([]int32, 0, lineSized(4)),
		events:   eventQueue{items: make([]event, 0, lineSized(unsafe.Sizeof(event{})))},
		arrivals: eventQueue{items: make([]event, 0, max(len(sc.Sources), lineSized(unsafe.Sizeof(event{}))))},
	}
	client := &sc.Client
	if spec.Client != nil {
		client = spec.Client
	}
	l.client = newClientPolicy(client, sc.Seed)
	l.queue.disc = client.Discipline
	if spec.Fleet != nil && sc.Fleet != nil {
		fs, err := newFleetStage(sc, i, laneClock{l})
		if err != nil {
			return nil, err
		}
		l.fleet = fs
		l.stack = StackOf([]limiters.Limiter{fs})
		l.stack.router = fs
	} else if spec.Build != nil {
		built, err := spec.Build(laneClock{l})
		if err != nil {
			return nil, fmt.Errorf("limiters[%d]: %w", i, err)
		}
		l.stack = StackOf(built)
	} else {
		st, err := NewStack(spec.Stack, laneClock{l})
		if err != nil {
			return nil, fmt.Errorf("limiters[%d] %w", i, err) // "limiters[0] stage 2: ..."
		}
		l.stack = st
	}
	l.stack.Waste(spec.Waste)
	l.shapes = l.stack.SetWaits(spec.Stack, spec.MaxWait)
	if l.shapes {
		if err := l.stack.CanReserve(); err != nil {
			l.closeStreams()
			return nil, fmt.Errorf("limiters[%d] max_wait: %w", i, err)
		}
	}
	l.stages = l.stack.Stages()
	l.client.bindStack(spec.Stack, l.stack.Len())
	names := sc.Classes()
	l.stack.SetClasses(names)
	if names != nil {
		l.classes = newClassCounts(names)
		l.srcClass = make([]uint8, len(sc.Sources))
		for k, src := range sc.Sources {
			for j, n := range names {
				if src.Class == n {
					l.srcClass[k] = uint8(j + 1)
				}
			}
		}
	}
	switch l.client.cfg.Policy {
	case PolicyDrop, "":
		// A request of a class is given a slot, to count it and tell a partition its class.
		l.atOnce = !l.shapes && !l.stack.Keyed() && names == nil && !l.stack.Classed()
	}
	l.rec = newRecorder(sc, spec, l.stack.Len())
	if l.stack.adaptive() != nil && sc.Downstream != nil {
		l.rtt = make([]rttBin, len(l.rec.result.Bins))
	}
	l.keys.single = !l.stack.Keyed() && singleKey(sc.Sources)
	if l.fleet != nil {
		l.fleet.setBins(l.rec.binWidth, len(l.rec.result.Bins))
	}
	for k, src := range sc.Sources {
		st, err := newStream(src, k, sc.Seed, sc.Horizon)
		if err != nil {
			l.closeStreams()
			return nil, err
		}
		l.streams = append(l.streams, st)
		fs, _ := st.(*flatStream)
		l.flat = append(l.flat, fs)
		l.pending = append(l.pending, arrival{})
		if err := l.pull(k); err != nil {
			l.closeStreams()
			return nil, err
		}
	}
	if len(l.flat) == 1 && l.flat[0] != nil && l.atOnce && l.keys.single {
		l.flatOnly = l.flat[0]
		if l.stack.Len() == 1 {
			l.only = l.stack.Stage(0)
		}
		l.pool = l.down.cfg != nil && l.down.srv == nil && l.classes == nil && l.rtt == nil &&
			!l.client.hasQuota && l.stack.classed == nil && !l.stack.Keyed()
		l.release, l.completes = l.stack.soleRelease(), l.stack.completes()
		l.service = fixedService(sc.Downstream)
	}
	return l, nil
}

// pull fetches source k's next arrival and schedules it.
func (l *Lane) pull(k int) error {
	a, ok, err := l.streams[k].next()
	if err != nil {
		return err
	}
	if ok {
		l.pending[k] = a
		l.seq++
		l.arrivals.insert(event{at: a.at, seq: l.seq, kind: evArrival, src: int32(k)})
	}
	return nil
}

// schedule adds e to the lane's events, stamped with the next sequence number.
func (l *Lane) schedule(e event) {
	l.seq++
	e.seq = l.seq
	l.events.insert(e)
}

// nextEvent is the earliest pending event, nil when none is, and whether it is an arrival.
func (l *Lane) nextEvent() (e *event, arrival bool) {
	if len(l.arrivals.items) == 0 {
		if len(l.events.items) == 0 {
			return nil, false
		}
		return &l.events.items[0], false
	}
	a := &l.arrivals.items[0]
	if len(l.events.items) > 0 && less(&l.events.items[0], a) {
		return &l.events.items[0], false
	}
	return a, true
}

// pendingEvents is the number of events scheduled, arrivals included.
func (l *Lane) pendingEvents() int { return l.arrivals.len() + l.events.len() }

func (l *Lane) closeStreams() {
	for _, s := range l.streams {
		s.close()
	}
}

// Close releases what the lane holds open (a trace source's file). A lane abandoned before its
// horizon, as the TUI does on restart, must be closed; one that ran to its horizon already is.
// Closing twice is harmless.
func (l *Lane) Close() { l.closeStreams() }

// Now is the lane's virtual time.
func (l *Lane) Now() time.Duration { return time.Duration(l.now) }

// Done reports whether the lane has reached its horizon.
func (l *Lane) Done() bool { return l.done }

// InFlight is the number of requests at the downstream.
func (l *Lane) InFlight() int { return l.down.busy }

// QueueLen is the number of requests waiting in the client queue.
func (l *Lane) QueueLen() int { return l.queue.len() }

// Step runs the next event. It returns false when the lane has reached its horizon.
func (l *Lane) Step() (bool, error) {
	if l.done {
		return false, nil
	}
	top, isArrival := l.nextEvent()
	if top == nil || top.at >= l.horizon {
		l.finish()
		return false, nil
	}
	if isArrival {
		// The hot path: the source's next arrival replaces this one at the top of the
		// arrivals' heap, drawn before this one is offered (its sequence number comes before
		// those of the events the offer schedules).
		src, at := top.src, top.at
		if err := l.advance(at); err != nil {
			return false, err
		}
		if l.srcClass != nil {
			l.arriving = l.srcClass[src]
		}
		l.processed++
		if fs := l.flat[src]; fs != nil {
			// A flat-rate source (constant, poisson, on-off) without a key population: no
			// interface call, and its requests all ask for the same permits and key.
			if next, ok := fs.nextAt(); ok {
				l.seq++
				l.arrivals.replaceTopStamped(event{at: next, seq: l.seq, kind: evArrival, src: src})
			} else {
				l.arrivals.pop()
			}
			l.arrive(at, fs.permits, fs.key)
			return true, nil
		}
		a := l.pending[src]
		next, ok, err := l.streams[src].next()
		if err != nil {
			return false, err
		}
		if ok {
			l.pending[src] = next
			l.seq++
			l.arrivals.replaceTopStamped(event{at: next.at, seq: l.seq, kind: evArrival, src: src})
		} else {
			l.arrivals.pop()
		}
		l.arrive(a.at, a.permits, a.key)
		return true, nil
	}
	e := l.events.pop()
	if err := l.advance(e.at); err != nil {
		return false, err
	}
	l.processed++
	l.runEvent(e)
	return true, nil
}

// runEvent runs e, an event other than an arrival, at the lane's time.
func (l *Lane) runEvent(e event) {
	switch e.kind {
	case evAttempt:
		if r := &l.reqs[e.req]; r.gen == e.gen && r.state == reqPending {
			l.attempt(e.req)
		}
	case evComplete:
		l.complete(e.req)
	case evServer:
		l.serverEvent(e.gen)
	case evDeadline:
		if r := &l.reqs[e.req]; r.gen == e.gen && r.state == reqInService {
			l.deadline(e.req)
		}
	case evTimeout:
		if r := &l.reqs[e.req]; r.gen == e.gen && r.state == reqQueued {
			l.timeOut(e.req)
		}
	case evQueueWake:
		if l.queue.woken(e.at) {
			l.drainQueue()
		}
	case evProceed:
		if r := &l.reqs[e.req]; r.gen == e.gen && r.state == reqDelayed {
			r.state = reqPending
			l.trace(r, OutcomeAdmitted, 0, nil, ReasonWaitEnded)
			l.admitted(e.req)
		}
	}
}

// complete ends request i's service at now: answered, in its time.
func (l *Lane) complete(i int32) {
	r := &l.reqs[i]
	l.rec.svc.advance(l.now, l.down.busy) // the busy area changes slope here only
	l.down.done()
	l.rec.served(l.now - r.started)
	l.rec.endToEnd(l.now - r.arrived)
	l.classes.answered(r.class, l.now-r.started)
	if l.rtt != nil {
		l.heard(l.now - r.started)
	}
	l.trace(r, OutcomeCompleted, -1, nil, "")
	l.bindHeld(r)
	r.place = placeNone
	l.stack.Complete(time.Duration(l.now), r.permits, time.Duration(l.now-r.started), true)
	l.freeReq(i)
	l.drainQueue()
}

// RunUntil runs every event before t (or to the horizon, if sooner), then moves the lane's
// time to t so that its bins and state read as of t.
func (l *Lane) RunUntil(t time.Duration) error {
	if _, err := l.steps(int64(t), math.MaxInt); err != nil {
		return err
	}
	if int64(t) >= l.horizon {
		l.finish()
		return nil
	}
	if int64(t) > l.now {
		return l.advance(int64(t))
	}
	return nil
}

// NextEventAt is the time of the next event, or the horizon when none is left before it.
func (l *Lane) NextEventAt() time.Duration {
	if e, _ := l.nextEvent(); e != nil && e.at < l.horizon {
		return time.Duration(e.at)
	}
	return time.Duration(l.horizon)
}

// advance moves time to t, closing every bin that ends at or before t. The virtual clock
// follows when read (laneClock): most stages are told the time (AcquireAt) and never read it,
// and an atomic compare-and-swap at every event was a fifth of the perf scenario's event.
func (l *Lane) advance(t int64) error {
	if t < l.now {
		return fmt.Errorf("engine: an event at %v after the lane's time %v: time cannot move backwards", time.Duration(t), time.Duration(l.now))
	}
	l.rec.advance(t, l.stack, l.down.busy, l.queue.len())
	l.now = t
	return nil
}

// laneClock is the clock a lane's stages are built with: the lane's time. Now moves the
// lane's virtual clock (Lane.clock) to it first, so the two agree whenever a stage reads the
// time. Stages are called on the lane's goroutine only, as is Now.
type laneClock struct{ l *Lane }

// Now is the lane's time.
func (c laneClock) Now() time.Duration {
	if t := time.Duration(c.l.now); c.l.clock.Now() != t {
		_ = c.l.clock.AdvanceTo(t) // the lane's time never goes back (advance)
	}
	return time.Duration(c.l.now)
}

// finish closes the remaining bins and moves the lane to its horizon.
func (l *Lane) finish() {
	if l.done {
		return
	}
	l.rec.finish(l.stack, l.down.busy, l.queue.len())
	l.now = max(l.now, l.horizon)
	_ = l.clock.AdvanceTo(time.Duration(l.now))
	l.done = true
	l.closeStreams()
}

// Result is what the lane measured so far (all of it once Done). Its Totals.Waiting is
// counted from the requests themselves, not as what the other outcomes leave.
func (l *Lane) Result() LaneResult {
	res := l.rec.report(l.processed)
	for i := range l.reqs {
		switch l.reqs[i].state {
		case reqPending, reqQueued, reqDelayed:
			res.Totals.Waiting++
		}
	}
	res.Keys = l.keys.report(l.stack)
	res.Classes = l.classes.results()
	if l.down.cfg != nil {
		var inService int64
		var residual wideSum
		for i := range l.reqs {
			if r := &l.reqs[i]; r.state == reqInService {
				inService++
				residual.add(l.now-r.started, 1)
			}
		}
		l.rec.svc.advance(l.now, l.down.busy)
		res.Service = l.rec.svc.report(l.now, inService, residual)
	}
	if l.stack.adaptive() != nil && l.done {
		res.Adaptive = adaptiveReport(&res, l.down.cfg, l.rec.binWidth, time.Duration(l.horizon))
		res.Adaptive.RTT = meanRTT(l.rtt)
	}
	if l.fleet != nil {
		l.fleet.runUntil(time.Duration(l.now))
		res.Fleet = l.fleet.report(res.Windows)
	}
	return res
}

// newReq puts a request arrived at at, asking for permits with key, in a free slot, or a
// new one, and returns the slot.
func (l *Lane) newReq(at int64, permits int, key string) int32 {
	l.nextID++
	keySlot := l.keys.slot(key)
	l.keys.at(keySlot).Offered++
	if c := l.classes.at(l.arriving); c != nil {
		c.Offered++
	}
	return l.fillReq(at, permits, key, keySlot, 0)
}

// fillReq puts request l.nextID in a free slot, or a new one, and returns the slot.
func (l *Lane) fillReq(at int64, permits int, key string, keySlot int32, attempts int) int32 {
	i := l.takeSlot()
	// Field by field, not *r = request{...}: the composite is built on the stack and copied
	// in wide loads that cannot forward from its narrow stores, a stall on every arrival.
	r := &l.reqs[i]
	r.id = l.nextID
	r.gen++
	r.state = reqPending
	r.attempts = attempts
	r.retryCost = 0
	r.gated = false
	r.first = at
	r.permits = permits
	r.arrived = at
	r.started = 0
	r.key = key
	r.keySlot = keySlot
	r.class = l.arriving
	return i
}

// takeSlot is a free request slot, or a new one.
func (l *Lane) takeSlot() int32 {
	if n := len(l.free); n > 0 {
		i := l.free[n-1]
		l.free = l.free[:n-1]
		return i
	}
	l.reqs = append(l.reqs, request{})
	return int32(len(l.reqs) - 1)
}

func (l *Lane) freeReq(i int32) {
	l.reqs[i].state = reqFree
	l.reqs[i].key = ""
	l.free = append(l.free, i)
}

// arrive offers a source's request, arrived at at asking for permits with key, to the stack,
// or, when the queue policy already has requests waiting, puts it behind them: joining counts
// as its attempt.
func (l *Lane) arrive(at int64, permits int, key string) {
	if l.atOnce && !l.observed() {
		l.decideAtOnce(at, permits, key)
		return
	}
	i := l.newReq(at, permits, key)
	l.rec.offered(permits)
	if l.client.cfg.Policy == PolicyQueue && l.queue.len() > 0 {
		// FIFO: a newcomer does not overtake the requests already waiting.
		l.reqs[i].attempts++
		l.rec.attempt(false)
		l.enqueue(i, -1)
		return
	}
	l.attempt(i)
}

// decideAtOnce is arrive, attempt and, for a refusal, giveUp, for a lane whose requests are
// decided the moment they arrive (Lane.atOnce) and that nobody observes: the same counts in
// the same order, but a refused request, which ends there, takes no request slot (nothing
// can refer to it later), and only an admitted one is given one. In the perf scenario 99% of
// the requests are refused.
func (l *Lane) decideAtOnce(at int64, permits int, key string) {
	l.nextID++
	d, _, wasted := l.stack.Acquire(time.Duration(l.now), permits, nil)
	l.rec.wasted(wasted)
	if l.OnDecide != nil {
		l.OnDecide(time.Duration(at), l.nextID, d)
	}
	l.decidedAtOnce(at, permits, key, d)
}

// AtOnce reports whether the lane decides each request at its arrival when nobody observes
// it (a dropping client before a stack that neither waits nor keys): OnDecide hears those.
func (l *Lane) AtOnce() bool { return l.atOnce }

// decidedAtOnce counts request l.nextID, which the stack decided d at its arrival (at, asking
// for permits with key), as arrive, attempt and giveUp would, and sends it on when admitted.
func (l *Lane) decidedAtOnce(at int64, permits int, key string, d limiters.Decision) {
	keySlot := l.keys.slot(key)
	kc := l.keys.at(keySlot)
	kc.Offered++
	l.rec.offered(permits)
	l.rec.attempt(false)
	if d == limiters.Admitted {
		l.admitted(l.fillReq(at, permits, key, keySlot, 1)) // Acquire's admissions never wait: the stack does not shape
		return
	}
	l.rec.refusedAttempt()
	kc.RefusedAttempts++
	if d != limiters.Rejected {
		l.rec.never()
	}
	l.rec.ended(endRefused)
	kc.ended(endRefused)
}

// attempt is one try of request i at the stack, and what the client does when it is refused.
func (l *Lane) attempt(i int32) {
	r := &l.reqs[i]
	if l.client.gates {
		if at := l.client.gate(r, l.now); at > l.now {
			l.schedule(event{at: at, kind: evAttempt, req: i, gen: r.gen})
			return
		}
	}
	r.attempts++
	if r.attempts > 1 {
		l.rec.attempt(true)
		l.rec.herdRetry(l.now)
	} else {
		l.rec.attempt(false)
		r.first = l.now
	}
	d, stage, wait := l.tryStages(r, false)
	if l.client.observes {
		l.client.answered(l.now, r, l.stack, d, stage)
	}
	if d == limiters.Admitted {
		l.pass(i, wait)
		return
	}
	l.rec.refusedAttempt()
	l.keys.at(r.keySlot).RefusedAttempts++
	if d != limiters.Rejected { // Never or Invalid: retrying cannot help
		l.rec.never()
		l.giveUp(i, endRefused)
		return
	}
	switch c := l.client.cfg; {
	case c.Retries():
		delay, ok := l.client.retryDelay(r, l.now, l.stack, stage)
		if !ok {
			l.giveUp(i, endGaveUp)
			return
		}
		l.schedule(event{at: l.after(delay), kind: evAttempt, req: i, gen: r.gen})
	case c.Policy == PolicyQueue:
		l.enqueue(i, stage)
	default:
		l.giveUp(i, endRefused)
	}
}

// pass sends request i, which every stage admitted, on: at once, or, after a reservation's
// wait, when the wait ends.
func (l *Lane) pass(i int32, wait time.Duration) {
	if wait <= 0 {
		l.admitted(i)
		return
	}
	r := &l.reqs[i]
	r.state = reqDelayed
	l.rec.delayed()
	l.schedule(event{at: l.after(int64(wait)), kind: evProceed, req: i, gen: r.gen})
}

// tryStages is one pass of r through the stack (Stack.Acquire, or Stack.Reserve for a lane
// that shapes), counting the permits it wastes; wait is how long an admitted request waits
// before it goes on. The decision is traced with the deciding stage's state before it
// decided, except a plain refusal when quiet (the queue's re-checks): a never is traced even
// then.
func (l *Lane) tryStages(r *request, quiet bool) (d limiters.Decision, k int, wait time.Duration) {
	now := time.Duration(l.now)
	var before *limiters.State
	if l.observed() {
		before = &l.before // record copies it, or lends it to a lazy OnEvent
	}
	if l.stack.classed != nil {
		l.stack.setClass(r.class)
	}
	if l.stack.Keyed() {
		if k, ok := l.stack.Bind(now, r.key); !ok {
			if before != nil && !quiet {
				l.explain(r, OutcomeRejected, k, nil, whyKeysFull, 0, int64(k))
			}
			return limiters.Rejected, k, 0
		}
	}
	if l.shapes {
		d, k, wait = l.stack.Reserve(now, r.permits, before)
	} else {
		var wasted int64
		d, k, wasted = l.stack.Acquire(now, r.permits, before)
		l.rec.wasted(wasted)
	}
	if before == nil {
		return d, k, wait
	}
	switch {
	case d == limiters.Admitted && wait > 0:
		l.explain(r, OutcomeDelayed, 0, before, whyWait, d, int64(wait))
	case d == limiters.Admitted:
		l.explain(r, OutcomeAdmitted, 0, before, whyExplain, d, 0)
	case d == limiters.Rejected && !quiet:
		l.explain(r, OutcomeRejected, k, before, whyExplain, d, 0)
	case d != limiters.Rejected:
		l.explain(r, OutcomeNever, k, before, whyExplain, d, 0)
	}
	return d, k, wait
}

// explain records a decision of an observed lane with its Reason (Record.ReasonText), made
// now, or left to be made when shown by a lazy lane that is not traced (LazyReasons).
func (l *Lane) explain(r *request, outcome Outcome, stage int, st *limiters.State, w why, d limiters.Decision, n int64) {
	rec := Record{At: time.Duration(l.now), Request: r.id, Attempt: r.attempts, Permits: r.permits,
		Key: r.key, Outcome: outcome, Stage: stage, State: st, why: w, decision: d, whyN: n}
	if l.LazyReasons && !l.rec.tracing {
		if l.OnEvent != nil {
			l.OnEvent(rec) // lends st: the listener copies what it keeps
		}
		return
	}
	l.record(r, outcome, stage, st, rec.ReasonText())
}

// admitted sends request i, which every stage admitted, to the downstream: it completes at
// once without one, fails when the pool is full (its permits come back either way), or is
// served until its completion event.
func (l *Lane) admitted(i int32) {
	r := &l.reqs[i]
	l.rec.admitted(l.now, r.permits, l.now-r.arrived)
	l.rec.succeeded(l.now - r.first)
	kc := l.keys.at(r.keySlot)
	kc.Admitted++
	kc.Permits += int64(r.permits)
	if c := l.classes.at(r.class); c != nil {
		c.Admitted++
	}
	l.bindHeld(r)
	if l.down.cfg == nil || (!l.down.full() && l.down.srv == nil) {
		l.client.succeeded(r) // a failure at a full pool is no success for the client; a server's answer comes later
	}
	if l.down.cfg == nil {
		l.classes.answered(r.class, 0)
		l.rec.completed() // answered now: its end-to-end latency is its wait (recorder.latency)
		l.stack.Complete(time.Duration(l.now), r.permits, 0, true)
		l.freeReq(i)
		return
	}
	if l.down.full() {
		if c := l.classes.at(r.class); c != nil {
			c.Failed++
		}
		l.rec.failed()
		if l.observed() { // no text per failure when nobody reads it
			l.explain(r, OutcomeFailed, -1, nil, whyPoolFull, 0, int64(l.down.cfg.Pool))
		}
		l.stack.Complete(time.Duration(l.now), r.permits, 0, false)
		l.freeReq(i)
		return
	}
	if l.down.srv != nil {
		l.toServer(i)
		return
	}
	r.started = l.now
	l.rec.svc.advance(l.now, l.down.busy)
	service := l.down.start(l.now)
	l.rec.inService(l.down.busy)
	r.state = reqInService
	l.schedule(event{at: l.after(service), kind: evComplete, req: i, gen: r.gen})
}

// after is now + d, saturating: an event past the end of time is scheduled at its end and
// never runs (the horizon comes first), instead of wrapping into the past.
func (l *Lane) after(d int64) int64 {
	if d > math.MaxInt64-l.now {
		return math.MaxInt64
	}
	return l.now + d
}

// bindHeld points a keyed stack at r's key's limiters, to give r's permits back.
func (l *Lane) bindHeld(r *request) {
	if l.stack.classed != nil {
		l.stack.setClass(r.class)
	}
	if l.stack.Keyed() {
		l.stack.BindHeld(r.key)
	}
}

// ending is how a request ended without admission: the counters' own word for Outcome
// (endRefused is OutcomeRefused, …), a byte to test instead of a string to compare.
type ending uint8

const (
	endRefused ending = iota
	endGaveUp
	endTimedOut
)

// outcome is the trace's word for e.
func (e ending) outcome() Outcome {
	switch e {
	case endGaveUp:
		return OutcomeGaveUp
	case endTimedOut:
		return OutcomeTimedOut
	}
	return OutcomeRefused
}

// giveUp ends request i without admission, as end says.
func (l *Lane) giveUp(i int32, end ending) {
	l.rec.ended(end)
	l.keys.at(l.reqs[i].keySlot).ended(end)
	l.classes.ended(l.reqs[i].class, end)
	if l.observed() {
		l.record(&l.reqs[i], end.outcome(), -1, nil, "")
	}
	l.freeReq(i)
}

// observed reports whether anyone reads the lane's records: its trace, or OnEvent.
func (l *Lane) observed() bool { return l.rec.tracing || l.OnEvent != nil }

// trace records an event of r for the trace and OnEvent. st, when not nil, is the deciding
// stage's state before it decided. Small enough to inline: an unobserved lane pays a test.
func (l *Lane) trace(r *request, outcome Outcome, stage int, st *limiters.State, reason string) {
	if l.observed() {
		l.record(r, outcome, stage, st, reason)
	}
}

// record is trace for an observed lane.
func (l *Lane) record(r *request, outcome Outcome, stage int, st *limiters.State, reason string) {
	rec := Record{At: time.Duration(l.now), Request: r.id, Attempt: r.attempts, Permits: r.permits,
		Key: r.key, Outcome: outcome, Stage: stage, Reason: reason}
	if st != nil {
		s := *st
		s.Slots = slices.Clone(st.Slots) // st is the lane's, reused (tryStages)
		rec.State = &s
	}
	if l.OnEvent != nil {
		l.OnEvent(rec)
	}
	l.rec.keep(rec)
}

// Spec is what the lane was built from: its label, stack and client (the scenario's lane).
func (l *Lane) Spec() LaneSpec { return l.spec }

// Stages are the lane's limiters, first to last, as its stack holds them: read their state
// (Snapshot, Available), do not decide with them — a decision outside the lane's event loop
// would change what the lane admits next.
func (l *Lane) Stages() []limiters.Limiter { return l.stages }
