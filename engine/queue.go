package engine

import (
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// clientQueue is the queue policy's queue of waiting requests. A request leaves it from one
// end — the front (oldest) or the back (newest), as its discipline says (codel.go) —
// admitted, refused for good or shed (drainQueue), or from anywhere at its timeout. The entry
// of a request that timed out stays until it reaches an end, where it is skipped, so leaving
// costs O(1); live counts the requests still waiting, and when it reaches 0 the entries left
// (all stale) are dropped.
//
// The queue is re-checked when a completion releases permits, when the next request times
// out, and at a wake: the time the refusing stage's hint says the next request would fit.
// One wake is pending at a time, the earliest asked for.
type clientQueue struct {
	waiting []queued
	head    int   // waiting[head] is the oldest entry
	live    int   // requests waiting
	wakeAt  int64 // the pending wake's time; -1: none

	disc      QueueDiscipline
	back      bool  // the request next returned is at the back (pop takes it from there)
	lastEmpty int64 // adaptive-lifo: the last time the queue held nobody
	codel     codel // codel's state
}

// queued is a request in the client queue: its slot, and the slot's generation when it joined
// (a different one now means the request left and the slot was reused).
type queued struct {
	req int32
	gen uint32
}

func newClientQueue() clientQueue { return clientQueue{wakeAt: -1} }

// len is the number of requests waiting.
func (q *clientQueue) len() int { return q.live }

// push adds the request in slot i, of generation gen, at the back at now.
func (q *clientQueue) push(now int64, i int32, gen uint32) {
	if q.live == 0 {
		q.lastEmpty = now
	}
	q.waiting = append(q.waiting, queued{req: i, gen: gen})
	q.live++
}

// congested is adaptive-lifo's test at now: the queue has not been empty for the last
// CoDelInterval.
func (q *clientQueue) congested(now int64) bool {
	return q.live > 0 && q.lastEmpty < now-int64(CoDelInterval)
}

// timeout is how long a request joining at now may wait: the client's Timeout, or under
// adaptive-lifo the shorter of that and the controlled delay's CoDelTarget (congested) or
// CoDelInterval (not).
func (q *clientQueue) timeout(now int64, client time.Duration) int64 {
	if q.disc != QueueAdaptiveLIFO {
		return int64(client)
	}
	if q.congested(now) {
		return int64(min(client, CoDelTarget))
	}
	return int64(min(client, CoDelInterval))
}

// next is the slot of the request that goes next at now (the oldest, or the newest under
// lifo and a congested adaptive-lifo), or -1 when none is waiting. It drops the entries
// before it at that end whose request left.
func (q *clientQueue) next(reqs []request, now int64) int32 {
	q.back = q.disc == QueueLIFO || (q.disc == QueueAdaptiveLIFO && q.congested(now))
	if q.back {
		return q.newest(reqs)
	}
	for q.live > 0 {
		e := q.waiting[q.head]
		if r := &reqs[e.req]; r.gen == e.gen && r.state == reqQueued {
			return e.req
		}
		q.dropHead()
	}
	return -1
}

// newest is next's back end.
func (q *clientQueue) newest(reqs []request) int32 {
	for q.live > 0 {
		e := q.waiting[len(q.waiting)-1]
		if r := &reqs[e.req]; r.gen == e.gen && r.state == reqQueued {
			return e.req
		}
		q.dropTail()
	}
	return -1
}

// pop removes the request next returned, at now.
func (q *clientQueue) pop(now int64) {
	if q.back {
		q.dropTail()
	} else {
		q.dropHead()
	}
	q.left(now)
}

// left counts out a request that left from anywhere in the queue at now.
func (q *clientQueue) left(now int64) {
	q.live--
	if q.live == 0 {
		q.waiting, q.head = q.waiting[:0], 0
		q.lastEmpty = now
		q.codel.idle()
	}
}

// dropTail removes the newest entry.
func (q *clientQueue) dropTail() {
	q.waiting = q.waiting[:len(q.waiting)-1]
	if q.head == len(q.waiting) {
		q.waiting, q.head = q.waiting[:0], 0
	}
}

// dropHead removes the oldest entry. The array is reused: emptied when the head reaches the
// end, and compacted once more than half of it (and over 1024 entries) lies before the head.
func (q *clientQueue) dropHead() {
	q.head++
	if q.head == len(q.waiting) {
		q.waiting, q.head = q.waiting[:0], 0
	} else if q.head > 1024 && q.head*2 > len(q.waiting) {
		n := copy(q.waiting, q.waiting[q.head:])
		q.waiting, q.head = q.waiting[:n], 0
	}
}

// wantWake asks for a re-check at time at, and reports whether that takes a new wake event:
// it does unless one is pending at or before at.
func (q *clientQueue) wantWake(at int64) bool {
	if q.wakeAt >= 0 && q.wakeAt <= at {
		return false
	}
	q.wakeAt = at
	return true
}

// woken reports whether a wake event firing at time at is the pending one (an earlier wake
// asked later supersedes it), and if so clears it.
func (q *clientQueue) woken(at int64) bool {
	if at != q.wakeAt {
		return false
	}
	q.wakeAt = -1
	return true
}

// enqueue puts request i at the back of the client queue, or gives it up when the queue is
// full. stage is the stage that refused it (-1: it never tried, the queue was not empty).
func (l *Lane) enqueue(i int32, stage int) {
	c := l.client.cfg
	if l.queue.len() >= c.QueueSize {
		l.giveUp(i, endRefused)
		return
	}
	r := &l.reqs[i]
	r.state = reqQueued
	timeout := l.queue.timeout(l.now, c.Timeout)
	l.queue.push(l.now, i, r.gen)
	l.rec.queued(l.queue.len())
	l.schedule(event{at: l.after(timeout), kind: evTimeout, req: i, gen: r.gen})
	l.trace(r, OutcomeQueued, stage, nil, "")
	if stage >= 0 {
		l.scheduleWake(r, stage)
	}
}

// timeOut gives up queued request i: it waited its Timeout (or adaptive-lifo's shorter one).
func (l *Lane) timeOut(i int32) {
	front := l.queue.next(l.reqs, l.now) == i
	l.queue.left(l.now)
	l.giveUp(i, endTimedOut)
	if front && l.queue.len() > 0 {
		// The wake was scheduled for the old next request's permits; the new one may fit
		// sooner (it asks for fewer), or at once.
		l.drainQueue()
	}
}

// scheduleWake arranges for the queue to be re-checked when stage's hint says r's permits
// will fit. A stage without a hint (a concurrency limiter) gets its permits back at a
// completion, which re-checks the queue anyway.
func (l *Lane) scheduleWake(r *request, stage int) {
	wait, ok := l.stack.RetryAfter(stage, time.Duration(l.now), r.permits)
	if !ok {
		return
	}
	at := l.after(max(int64(wait), 1))
	if l.queue.wantWake(at) {
		l.schedule(event{at: at, kind: evQueueWake})
	}
}

// drainQueue admits waiting requests, next first (the discipline's order), while they fit,
// and stops at the first that does not. Under codel the request the stack could take is
// first judged by CoDel, which may drop it (and then judges the next). Re-checks are not
// attempts: a queued request's one attempt was counted when it was refused, or when it
// joined a non-empty queue without trying.
func (l *Lane) drainQueue() {
	for l.queue.len() > 0 {
		i := l.queue.next(l.reqs, l.now)
		r := &l.reqs[i]
		l.bindHeld(r)
		if l.stack.BulkheadFull(time.Duration(l.now), r.permits) {
			// A concurrency stage cannot take it: a completion will drain the queue again.
			// Trying anyway would take (and waste) the permits of rate stages before it on
			// every completion: polling that no real caller does.
			return
		}
		if l.queue.disc == QueueCoDel && l.queue.codel.next(l.now, l.now-r.arrived, l.queue.len() == 1) {
			l.queue.pop(l.now)
			l.shed(i)
			continue
		}
		d, stage, wait := l.tryStages(r, true)
		switch d {
		case limiters.Admitted:
			l.queue.pop(l.now)
			r.state = reqPending
			l.pass(i, wait)
		case limiters.Rejected:
			l.scheduleWake(r, stage)
			return
		default:
			// Never (or Invalid): it joined the queue behind others without trying, and
			// waiting cannot help. Refuse it now rather than block the queue until its
			// timeout.
			l.queue.pop(l.now)
			l.rec.refusedAttempt()
			l.keys.at(r.keySlot).RefusedAttempts++
			l.rec.never()
			l.giveUp(i, endRefused)
		}
	}
}

// shed refuses queued request i, which CoDel dropped: a request waits at a queue, so its
// arrival is its joining (a queue-policy request joins at the instant it arrives).
func (l *Lane) shed(i int32) {
	r := &l.reqs[i]
	l.rec.ended(endRefused)
	l.keys.at(r.keySlot).ended(endRefused)
	l.classes.ended(r.class, endRefused)
	if l.observed() {
		l.record(r, OutcomeRefused, -1, nil, "CoDel drop: waited "+limiters.FormatDuration(time.Duration(l.now-r.arrived))+
			", above the "+
			limiters.FormatDuration(CoDelTarget)+" target for "+limiters.FormatDuration(CoDelInterval))
	}
	l.freeReq(i)
}
