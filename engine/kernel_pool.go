package engine

// A pool lane's own pieces (Lane.pool): flatArrivals admits each arrival into service and
// completes it itself (steps.go), with these helpers; the counts that are the same for every
// request are made once per batch (recorder.countPool).

import "github.com/ratelab/ratelab/limiters"

// removeTop removes the earliest event: pop, without the copy of it. O(log n).
func (q *eventQueue) removeTop() {
	items := q.items
	last := len(items) - 1
	items[0] = items[last]
	q.items = items[:last]
	q.siftDown()
}

// fixedService is the service time of every request at d when d has one constant phase
// (drawDuration's Mean, drawing nothing), else −1.
func fixedService(d *Downstream) int64 {
	if d == nil || len(d.Phases) != 1 {
		return -1
	}
	switch dist := d.Phases[0].Service; dist.Kind {
	case DistUniform, DistExponential, DistLogNormal:
		return -1
	default:
		if mean := int64(dist.Mean); mean >= 0 {
			return mean
		}
		return -1
	}
}

// poolCounts are the counts Lane.flatArrivals makes for a pool lane (Lane.pool) as it runs,
// to count once it stops (countPool): admitted, the requests it admitted at their arrival and
// sent to the downstream, and maxBusy, the most in service after one went; completed, the
// requests it saw served; and the latest run of runs equal end-to-end latencies.
type poolCounts struct {
	admitted, completed int64
	maxBusy             int
	latency, runs       int64
}

// countPool counts what p holds (admissions of permits each) in the current bin, as
// decidedAtOnce and complete count each (offered, one attempt, admitted, started, a wait and
// time to success of 0; served, the latencies), and clears it.
func (r *recorder) countPool(p *poolCounts, permits int) {
	if n := p.admitted; n > 0 {
		t, b := &r.result.Totals, r.cur
		t.Offered += n
		t.OfferedPermits += n * int64(permits)
		t.Attempts += n
		t.Admitted += n
		t.AdmittedPermits += n * int64(permits)
		b.Offered += n
		b.Attempts += n
		b.Admitted += n
		r.hist.addZeros(n)
		r.binHist.addZeros(n)
		if r.ownSuccess {
			r.success.addZeros(n)
		}
		r.svc.started += n
		t.MaxInFlight = max(t.MaxInFlight, p.maxBusy)
		b.MaxInFlight = max(b.MaxInFlight, p.maxBusy)
	}
	if n := p.completed; n > 0 {
		r.svc.completed += n
		r.result.Totals.Completed += n
		r.cur.Completed += n
	}
	r.latency.addN(p.latency, p.runs)
	*p = poolCounts{}
}

// addN is n calls of add(v) (h.sum wraps as n additions would).
func (h *histogram) addN(v, n int64) {
	if n == 0 {
		return
	}
	b := bucketOf(v)
	h.counts[b] += uint32(n)
	if h.total == 0 {
		h.lo, h.hi = b, b
	} else {
		h.lo, h.hi = min(h.lo, b), max(h.hi, b)
	}
	h.total += uint64(n)
	h.sum += v * n
	h.max = max(h.max, v)
}

// addZeros is n calls of add(0).
func (h *histogram) addZeros(n int64) {
	h.counts[0] += uint32(n)
	if h.total == 0 {
		h.lo, h.hi = 0, 0
	} else {
		h.lo = 0
	}
	h.total += uint64(n)
	h.max = max(h.max, 0)
}

// admitMeters counts an admission of permits at now in the admission-window meters.
func (r *recorder) admitMeters(now int64, permits int) {
	for _, m := range r.meters {
		m.admit(now, int64(permits))
	}
}

// soleRelease is the one stage Complete tells, when it is told nothing but the release of
// the permits, else nil: Complete is then that stage's Release. nil for a keyed stack, whose
// stages change with the key bound (Bind).
func (s *Stack) soleRelease() limiters.Releaser {
	var sole limiters.Releaser
	if s.keyed != nil {
		return nil
	}
	for _, c := range s.caps {
		switch {
		case c.Feedback != nil:
			return nil
		case c.Release == nil:
		case sole != nil:
			return nil
		default:
			sole = c.Release
		}
	}
	return sole
}

// completes reports whether Complete tells some stage something.
func (s *Stack) completes() bool {
	for _, c := range s.caps {
		if c.Feedback != nil || c.Release != nil {
			return true
		}
	}
	return false
}
