package engine

import (
	"math"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// StepN runs up to n events: what n calls of Step do, faster. It returns false once the lane
// has reached its horizon (then it ran fewer, perhaps none).
func (l *Lane) StepN(n int) (bool, error) {
	ran, err := l.steps(l.horizon, n)
	if err != nil || ran == n {
		return !l.done, err
	}
	return l.Step() // the next event is at the horizon or later (or none is left): finish
}

// steps runs up to n events before to (at most the horizon), as many calls of Step would, and
// returns how many it ran. It does not finish the lane at its horizon; Step does.
func (l *Lane) steps(to int64, n int) (int, error) {
	to = min(to, l.horizon)
	ran := 0
	for ran < n && !l.done {
		if l.flatOnly != nil && !l.observed() && l.OnDecide == nil {
			if ran += l.flatArrivals(to, n-ran); ran == n {
				break
			}
		}
		if e, _ := l.nextEvent(); e == nil || e.at >= to {
			break
		}
		if _, err := l.Step(); err != nil {
			return ran, err
		}
		ran++
	}
	return ran, nil
}

// flatArrivals runs, up to n events, the arrivals of the lane's one source (Lane.flatOnly)
// and the events between them (completions), before to and before the recorder's next mark
// (a bin's end, or a narrowed trace's switch), and returns how many it ran. It is Step and
// decideAtOnce in one loop, with what each event leaves unchanged kept out of it:
//
//   - Before the mark, advance would only move the lane's time, so the loop sets it.
//   - The source's next arrival replaces this one in the arrivals' heap, of one: no sift.
//   - A stack of one stage is that stage's AcquireAt (Stack.Acquire's own fast path).
//   - A plain refusal (Rejected), 99% of the perf scenario's requests, is counted once for
//     all of them when the loop ends: offered, one attempt, refused, ended refused, in the
//     totals and the current bin, all of which nothing reads during the loop. An admission,
//     and a refusal that is not plain, goes through decidedAtOnce as in decideAtOnce; any
//     other event through runEvent, as in Step.
//
// Each arrival gets the sequence number, request id and counts Step would give it, so the
// results are the same to the byte (the determinism tests run both ways).
func (l *Lane) flatArrivals(to int64, n int) int {
	fs := l.flatOnly
	permits, key := fs.permits, fs.key
	limit := min(to, l.rec.mark)
	refused, ran := int64(0), 0
	pc := &l.poolCounts // a pool lane's counts, made when the loop ends (in memory: registers are few)
	for ran < n && len(l.arrivals.items) == 1 {
		top := &l.arrivals.items[0]
		if len(l.events.items) > 0 && less(&l.events.items[0], top) {
			// Another event first (a completion): run it here too, below the mark.
			e := &l.events.items[0]
			if e.at >= limit || e.at < l.now {
				break
			}
			ran++
			if l.pool && e.kind == evComplete {
				// complete, but for the counts made when the loop ends.
				now, req := e.at, e.req
				l.events.removeTop() // e is gone
				l.now = now
				r := &l.reqs[req]
				l.rec.svc.advance(now, l.down.busy)
				l.down.busy--
				service := now - r.started
				l.rec.svc.served.add(service, 1)
				r.place = placeNone
				if rel := l.release; rel != nil {
					rel.Release(r.permits)
				} else if l.completes {
					l.stack.Complete(time.Duration(now), r.permits, time.Duration(service), true)
				}
				if latency := now - r.arrived; latency == pc.latency {
					pc.runs++
				} else {
					l.rec.latency.addN(pc.latency, pc.runs)
					pc.latency, pc.runs = latency, 1
				}
				r.state = reqFree
				r.key = ""
				l.free = append(l.free, req)
				if l.queue.len() > 0 {
					l.drainQueue()
				}
				pc.completed++
				continue
			}
			ev := l.events.pop()
			l.now = ev.at
			l.runEvent(ev)
			continue
		}
		at := top.at
		if at >= limit || at < l.now {
			break // Step runs it: a mark to cross, or time going back (an error)
		}
		l.now = at
		ran++
		next, ok := int64(0), true
		if fs.pos < fs.n { // nextAt's common case, inlined (see flatStream)
			next = fs.buf[fs.pos]
			fs.pos++
		} else {
			next, ok = fs.nextAt()
		}
		if ok {
			l.seq++
			top.at, top.seq = next, l.seq
		} else {
			l.arrivals.items = l.arrivals.items[:0]
		}
		l.nextID++
		var d limiters.Decision
		if l.only != nil {
			d = l.only.AcquireAt(time.Duration(at), permits)
		} else {
			var wasted int64
			d, _, wasted = l.stack.Acquire(time.Duration(at), permits, nil)
			l.rec.wasted(wasted)
		}
		if d == limiters.Rejected {
			refused++
			continue
		}
		if d == limiters.Admitted && l.pool && !l.down.full() {
			// decidedAtOnce and admitted, but for the counts made when the loop ends.
			rec := &l.rec
			if len(rec.meters) > 0 {
				rec.admitMeters(at, permits)
			}
			if rec.lastAdmit != math.MinInt64 {
				if gap := time.Duration(at - rec.lastAdmit); rec.result.MinSpacing < 0 || gap < rec.result.MinSpacing {
					rec.result.MinSpacing = gap
				}
			}
			rec.lastAdmit = at
			i := l.takeSlot()
			r := &l.reqs[i] // as fillReq and admitted leave it
			r.id = l.nextID
			r.gen++
			r.state = reqInService
			r.attempts = 1
			r.retryCost = 0
			r.gated = false
			r.first = at
			r.permits = permits
			r.arrived = at
			r.started = at
			r.key = key
			r.keySlot = -1 // the lane's one key is not counted (keyCounts.single)
			r.class = 0
			rec.svc.advance(at, l.down.busy)
			l.down.busy++ // start
			service := l.service
			if service < 0 {
				service = l.down.serviceTime(at)
			}
			pc.maxBusy = max(pc.maxBusy, l.down.busy)
			l.schedule(event{at: l.after(service), kind: evComplete, req: i, gen: r.gen})
			pc.admitted++
			continue
		}
		l.decidedAtOnce(at, permits, key, d)
	}
	l.processed += uint64(ran)
	l.rec.refusedAtOnce(refused, permits)
	l.rec.countPool(pc, permits)
	return ran
}
