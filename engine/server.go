package engine

import (
	"fmt"
	"math"
	"time"

	"github.com/ratelab/ratelab/internal/wording"
	"github.com/ratelab/ratelab/limiters"
)

// Server makes the downstream a machine whose latency rises with load, instead of a pool of
// connections that each answer in a drawn time whatever else is going on. Each request
// brings a service demand drawn from the phase's distribution (the work it needs, in
// nanoseconds of one core), and Cores cores work on the requests at the server:
//
//   - processor sharing (DisciplinePS, the default): every request at the server progresses
//     at once, each at min(1, c/n) of a core's speed with n requests present — a machine
//     time-slicing its threads. One core, two requests of 10ms each arriving together: both
//     finish at 20ms.
//   - FIFO (DisciplineFIFO): c requests are served at a core's full speed, the rest wait in
//     arrival order — a fixed worker pool with a queue in front. The same two requests: one
//     at 10ms, the other at 20ms.
//
// A response then travels back in Network (a fixed round trip outside the cores), and a
// caller waits at most Timeout for it (0: forever): a request not answered by then fails
// (the lane's limiters hear ok = false, latency = Timeout) and the server abandons its work,
// as a server does when the caller's context is cancelled.
//
// With mean demand S per request the server completes at most c/S per second, and a request
// alone takes S + Network: by Little's law the concurrency that keeps every core busy
// without a queue is c·(S + Network)/S, the reference an adaptive limit should find
// (ReferenceConcurrency). One core, 10ms, a 10ms network: 2 in flight, 100/s.
//
// Phases (Phase.Cores, BlackHole, Errors) change the machine over time: a brown-out loses
// cores, a black hole answers nothing (its cores make no progress) until the phase ends or
// callers time out, an error burst fails a fraction of requests at once; a later phase
// restores it (recovery). A step slowdown is a phase whose service demand is larger.
type Server struct {
	Cores      int           // c ≥ 1
	Discipline Discipline    // "" is DisciplinePS
	Network    time.Duration // fixed round trip added to every answered request
	Timeout    time.Duration // the callers' deadline; 0: none (a black hole then needs one)
	// TimeoutFrom is when the callers' Timeout starts: at admission ("", FromAdmission: the
	// deadline covers the server alone) or at the request's arrival (FromArrival: it covers
	// the wait in the client queue too, as a caller's end-to-end deadline does). With
	// FromArrival a request that waited 1.3s of a 1.5s deadline has 200ms left for its work
	// and the network; one admitted after its deadline fails at once.
	TimeoutFrom TimeoutFrom
}

// TimeoutFrom is when a server's callers start counting their Timeout.
type TimeoutFrom string

// The starts of a caller's deadline.
const (
	FromAdmission TimeoutFrom = "admission"
	FromArrival   TimeoutFrom = "arrival"
)

// Discipline is how a server's cores share the requests present.
type Discipline string

// The disciplines.
const (
	DisciplinePS   Discipline = "ps"   // processor sharing: all present progress, each at min(1, c/n)
	DisciplineFIFO Discipline = "fifo" // c at full speed, the rest wait in arrival order
)

// ReferenceConcurrency is c·(S + Network)/S for the phase in force at t: the in-flight count
// that keeps the phase's cores busy with no queue, where S is the phase's mean service demand
// (the lognormal's mean e^(σ²/2)·median, the uniform's (min+max)/2); 0 in a black hole or
// without a server.
func (d *Downstream) ReferenceConcurrency(t time.Duration) float64 {
	if d == nil || d.Server == nil || len(d.Phases) == 0 {
		return 0
	}
	p := d.Phases[d.PhaseAt(t)]
	if p.BlackHole {
		return 0
	}
	s := p.Service.MeanValue()
	cores := float64(d.coresIn(p))
	if s <= 0 {
		return cores
	}
	return cores * (s + float64(d.Server.Network)) / s
}

// PhaseAt is the index of the phase in force at t.
func (d *Downstream) PhaseAt(t time.Duration) int {
	i := 0
	for i+1 < len(d.Phases) && d.Phases[i+1].From <= t {
		i++
	}
	return i
}

// coresIn is the cores a phase has: its own, else the server's.
func (d *Downstream) coresIn(p Phase) int {
	if p.Cores > 0 {
		return p.Cores
	}
	return d.Server.Cores
}

func (s *Server) validate(field string) error {
	if s.Cores < 1 {
		return fieldErr(field+".cores", "must be at least 1, got %d", s.Cores)
	}
	switch s.Discipline {
	case "", DisciplinePS, DisciplineFIFO:
	default:
		return fieldErr(field+".discipline", "unknown discipline %q (ps, fifo)", s.Discipline)
	}
	if s.Network < 0 {
		return fieldErr(field+".network", "must not be negative, got %v", s.Network)
	}
	if err := inRange(field+".network", s.Network); err != nil {
		return err
	}
	if s.Timeout < 0 {
		return fieldErr(field+".timeout", "must not be negative, got %v", s.Timeout)
	}
	switch s.TimeoutFrom {
	case "", FromAdmission:
	case FromArrival:
		if s.Timeout == 0 {
			return fieldErr(field+".timeout_from", "needs a timeout to start")
		}
	default:
		return fieldErr(field+".timeout_from", "unknown start %q%s (admission, arrival)", s.TimeoutFrom,
			wording.DidYouMean(string(s.TimeoutFrom), []string{string(FromAdmission), string(FromArrival)}))
	}
	return inRange(field+".timeout", s.Timeout)
}

// validatePhase checks a phase's server fields: only with a server, and a black hole only
// with a timeout (else its requests never end).
func (d *Downstream) validatePhase(field string, p Phase) error {
	if d.Server == nil {
		switch {
		case p.Cores != 0:
			return fieldErr(field+".cores", "is for a server downstream (downstream.server), not a pool")
		case p.BlackHole:
			return fieldErr(field+".black_hole", "is for a server downstream (downstream.server), not a pool")
		case p.Errors != 0:
			return fieldErr(field+".errors", "is for a server downstream (downstream.server), not a pool")
		}
		return nil
	}
	if p.Cores < 0 {
		return fieldErr(field+".cores", "must be at least 1 (0 or absent: the server's %d), got %d", d.Server.Cores, p.Cores)
	}
	if !(p.Errors >= 0 && p.Errors <= 1) {
		return fieldErr(field+".errors", "must be a fraction in [0, 1], got %v", p.Errors)
	}
	if p.BlackHole && d.Server.Timeout == 0 {
		return fieldErr(field+".black_hole", "needs downstream.server.timeout: without one its requests never end")
	}
	return nil
}

// MeanValue is the distribution's mean in nanoseconds.
func (d Distribution) MeanValue() float64 {
	switch d.Kind {
	case DistUniform:
		return (float64(d.Min) + float64(d.Max)) / 2
	case DistLogNormal:
		return float64(float64(d.Mean) * math.Exp(d.Sigma*d.Sigma/2))
	}
	return float64(d.Mean)
}

// job is one request at a server: its request slot and generation, and the virtual time at
// which it has received all its work (processor sharing: every job present receives work at
// the same rate, so each one's finish on the virtual clock is fixed when it arrives).
type job struct {
	finish float64
	seq    uint64 // arrival order at the server, for ties
	req    int32
	gen    uint32
}

// jobHeap is a binary min-heap of jobs by (finish, seq): ties go in arrival order. Push and
// pop are O(log n) and allocate only when the slice grows past its largest size so far.
type jobHeap []job

func (h jobHeap) less(i, j int) bool {
	return h[i].finish < h[j].finish || (h[i].finish == h[j].finish && h[i].seq < h[j].seq)
}

func (h *jobHeap) push(j job) {
	*h = append(*h, j)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if !a.less(i, p) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *jobHeap) pop() job {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	*h = a
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(a) {
			break
		}
		if r := c + 1; r < len(a) && a.less(r, c) {
			c = r
		}
		if !a.less(c, i) {
			break
		}
		a[i], a[c] = a[c], a[i]
		i = c
	}
	return top
}

func (h jobHeap) top() *job { return &h[0] }

// server is a Server as it runs, driven by its lane. Work is counted on a virtual clock v: the
// work (ns of one core) each job in service has received since the server was last empty.
// Between events v grows at rate r = min(1, c/n) per job under processor sharing (n jobs
// present), 1 under FIFO (every job in service has a core), 0 in a black hole. A job that
// needs w arriving at v₀ finishes when v reaches v₀ + w, whatever happens to n meanwhile, so
// the next completion is the least finish in a heap, due after (finish − v)/r ns. Jobs that
// leave early (their caller timed out) are not searched for: the lane forgets them and the
// server skips them when they reach the heap's top (live).
//
// Arithmetic is float64 with every product rounded by an explicit conversion, so that no
// platform fuses a multiply-add and every run of a seed is the same everywhere; v restarts at
// 0 whenever the server empties, so its precision never decays over a long run.
type server struct {
	cfg     *Server
	v       float64 // the virtual clock
	at      int64   // the real time v was last advanced to
	present int     // jobs at the server (in service and, under FIFO, waiting)
	serving int     // FIFO: jobs holding a core
	jobs    jobHeap // PS: every job present; FIFO: the jobs holding a core (and skipped leavers)
	waiting []job   // FIFO: jobs waiting for a core, oldest first from head (finish holds the demand)
	head    int
	seq     uint64
	epoch   uint32 // the generation of the server's scheduled event: an older one is stale
	due     int64  // when the scheduled event fires (scheduled: one is)
	sched   bool
	cores   int  // the cores of the phase in force
	black   bool // the phase in force is a black hole
}

func newServer(cfg *Server) *server {
	return &server{cfg: cfg, cores: cfg.Cores}
}

// rate is the work per ns each job in service receives now.
func (s *server) rate() float64 {
	switch {
	case s.black || s.present == 0:
		return 0
	case s.cfg.Discipline == DisciplineFIFO || s.present <= s.cores:
		return 1
	}
	return float64(s.cores) / float64(s.present)
}

// advance moves the virtual clock to real time now.
func (s *server) advance(now int64) {
	if now > s.at {
		s.v += float64(float64(now-s.at) * s.rate())
		s.at = now
	}
}

// setPhase applies a phase's cores and black hole from now on.
func (s *server) setPhase(now int64, cores int, black bool) {
	s.advance(now)
	s.cores, s.black = cores, black
}

// add puts a job of demand ns at the server at now and reports whether it holds a core at
// once (always under processor sharing; under FIFO when a core is free).
func (s *server) add(now int64, req int32, gen uint32, demand int64) (holdsCore bool) {
	s.advance(now)
	s.present++
	s.seq++
	if s.cfg.Discipline == DisciplineFIFO && s.serving >= s.cores {
		s.waiting = append(s.waiting, job{finish: float64(demand), seq: s.seq, req: req, gen: gen})
		return false
	}
	s.serving++
	s.jobs.push(job{finish: float64(s.v + float64(demand)), seq: s.seq, req: req, gen: gen})
	return true
}

// leave takes a job out early (its caller timed out); holdsCore is whether it held a core
// (FIFO) rather than waiting for one. The job stays in the heap or the queue, skipped when reached.
func (s *server) leave(now int64, holdsCore bool) {
	s.advance(now)
	s.present--
	if holdsCore {
		s.serving--
	}
	if s.present == 0 {
		s.empty()
	}
}

// empty restarts the virtual clock: nothing is present, so every entry left is a leaver.
func (s *server) empty() {
	s.v, s.serving, s.head = 0, 0, 0
	s.jobs = s.jobs[:0]
	s.waiting = s.waiting[:0]
}

// live reports whether job j is still at the server: its request slot holds the same request,
// in service, and not yet answered. A job whose caller timed out is not (see leave).
func live(reqs []request, j *job) bool {
	r := &reqs[j.req]
	return r.gen == j.gen && r.state == reqInService && (r.place == placeCore || r.place == placeQueue)
}

// next is the real time of the next completion after now, false when none will come with the
// server as it is (empty, or a black hole). Leavers at the heap's top are dropped.
func (s *server) next(now int64, reqs []request) (int64, bool) {
	for len(s.jobs) > 0 && !live(reqs, s.jobs.top()) {
		s.jobs.pop()
	}
	r := s.rate()
	if len(s.jobs) == 0 || r == 0 {
		return 0, false
	}
	left := float64((s.jobs.top().finish - s.v) / r)
	if left <= 0 {
		return now, true
	}
	if left >= float64(maxService) {
		return now + maxService, true
	}
	return now + ceilNs(left), true
}

// ceilNs is ⌈x⌉ for 0 < x < 2^62.
func ceilNs(x float64) int64 {
	n := int64(x)
	if float64(n) < x {
		n++
	}
	return n
}

// finished pops the next job that has all its work at now (advance first), false when none
// has. A job within half a nanosecond of its finish counts as finished: the event was
// scheduled at the ceiling of its due time.
func (s *server) finished(reqs []request) (job, bool) {
	for len(s.jobs) > 0 {
		top := s.jobs.top()
		if !live(reqs, top) {
			s.jobs.pop()
			continue
		}
		r := s.rate()
		if r == 0 || float64((top.finish-s.v)/r) > 0.5 {
			return job{}, false
		}
		j := s.jobs.pop()
		s.present--
		s.serving--
		if s.present == 0 {
			s.empty()
		}
		return j, true
	}
	return job{}, false
}

// promote gives free cores to waiting jobs (FIFO), oldest first, skipping leavers, and marks
// each as holding a core.
func (s *server) promote(reqs []request) {
	for s.cfg.Discipline == DisciplineFIFO && s.serving < s.cores && s.head < len(s.waiting) {
		w := &s.waiting[s.head]
		s.head++
		if !live(reqs, w) {
			continue
		}
		s.serving++
		s.jobs.push(job{finish: float64(s.v + w.finish), seq: w.seq, req: w.req, gen: w.gen})
		reqs[w.req].place = placeCore
	}
	if s.head == len(s.waiting) {
		s.waiting, s.head = s.waiting[:0], 0
	}
}

// toServer sends admitted request i to the server at the lane's time: failed at once in an
// error burst, else at the server until it is answered (serverEvent) or its caller's deadline
// (deadline) comes.
func (l *Lane) toServer(i int32) {
	r := &l.reqs[i]
	d := &l.down
	d.sync(l.now)
	if p := &d.cfg.Phases[d.phase]; p.Errors > 0 && d.rng.Float64() < p.Errors {
		l.rec.serverError()
		if c := l.classes.at(r.class); c != nil {
			c.Failed++
		}
		if l.observed() {
			l.trace(r, OutcomeFailed, -1, nil, fmt.Sprintf("server error (an error burst fails %.0f%% of requests)", 100*p.Errors))
		}
		l.stack.Complete(time.Duration(l.now), r.permits, 0, false)
		l.freeReq(i)
		return
	}
	l.client.succeeded(r)
	r.started = l.now
	l.rec.svc.advance(l.now, d.busy)
	demand := d.start(l.now)
	l.rec.inService(d.busy)
	r.state = reqInService
	r.place = placeQueue
	if d.srv.add(l.now, i, r.gen, demand) {
		r.place = placeCore
	}
	if t := d.cfg.Server.Timeout; t > 0 {
		l.schedule(event{at: max(l.deadlineOf(r), l.now), kind: evDeadline, req: i, gen: r.gen})
	}
	l.reschedule()
}

// reschedule schedules the server's next event, a completion or the next phase's start,
// whichever comes first, unless the one scheduled already fires then; the previous one
// becomes stale (its epoch is past).
func (l *Lane) reschedule() {
	s := l.down.srv
	at, ok := s.next(l.now, l.reqs)
	if b := l.down.nextBoundary(); s.present > 0 && b < l.horizon && (!ok || b < at) {
		at, ok = b, true
	}
	if ok && s.sched && s.due == at {
		return
	}
	s.epoch++
	s.sched, s.due = ok, at
	if ok {
		l.schedule(event{at: at, kind: evServer, gen: s.epoch})
	}
}

// serverEvent runs the server's event of the given epoch: it applies a phase that starts now,
// answers every job whose work is done, gives freed cores to waiting jobs and schedules the
// next event.
func (l *Lane) serverEvent(epoch uint32) {
	s := l.down.srv
	if epoch != s.epoch {
		return // rescheduled since
	}
	s.sched = false
	l.down.sync(l.now)
	s.advance(l.now)
	for {
		j, ok := s.finished(l.reqs)
		if !ok {
			break
		}
		l.answered(j.req)
	}
	s.promote(l.reqs)
	l.reschedule()
}

// answered is request i's work done at now: its response reaches the caller after the
// network's round trip, unless that is at or past the caller's deadline, which then ends it.
func (l *Lane) answered(i int32) {
	r := &l.reqs[i]
	cfg := l.down.cfg.Server
	if cfg.Network == 0 {
		l.complete(i)
		return
	}
	if cfg.Timeout > 0 && l.now+int64(cfg.Network) >= l.deadlineOf(r) {
		r.place = placeLost
		return
	}
	r.place = placeReturning
	l.schedule(event{at: l.after(int64(cfg.Network)), kind: evComplete, req: i, gen: r.gen})
}

// deadlineOf is when request r's caller gives up on the server's answer: Timeout after it
// went to the server, or after it arrived (Server.TimeoutFrom), saturating.
func (l *Lane) deadlineOf(r *request) int64 {
	cfg := l.down.cfg.Server
	from := r.started
	if cfg.TimeoutFrom == FromArrival {
		from = r.arrived
	}
	if int64(cfg.Timeout) > math.MaxInt64-from {
		return math.MaxInt64
	}
	return from + int64(cfg.Timeout)
}

// deadline ends request i, still unanswered at its caller's timeout: it fails, its limiters
// hear ok = false after the timeout, and the server drops its work.
func (l *Lane) deadline(i int32) {
	r := &l.reqs[i]
	if r.place == placeCore || r.place == placeQueue {
		l.down.sync(l.now)
		l.down.srv.leave(l.now, r.place == placeCore)
	}
	l.rec.svc.advance(l.now, l.down.busy)
	l.down.done()
	l.rec.serverTimeout(l.now - r.started)
	if l.rtt != nil {
		l.heard(l.now - r.started)
	}
	if c := l.classes.at(r.class); c != nil {
		c.Failed++
	}
	if l.observed() {
		l.trace(r, OutcomeFailed, -1, nil, "no answer within the callers' timeout of "+limiters.FormatDuration(l.down.cfg.Server.Timeout))
	}
	l.bindHeld(r)
	r.place = placeNone
	l.stack.Complete(time.Duration(l.now), r.permits, time.Duration(l.now-r.started), false)
	l.freeReq(i)
	l.down.srv.promote(l.reqs)
	l.reschedule()
	l.drainQueue()
}
