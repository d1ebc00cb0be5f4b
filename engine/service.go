package engine

import (
	"math/bits"
	"time"
)

// Service is what a lane's downstream measured, in the three quantities of Little's law,
// L = λ·W, over the lane's elapsed time E (the horizon, once the run is done):
//
//	L = MeanInService: the time-average of the requests in service, ∫ busy(t) dt / E
//	λ = ArrivalRate:   the requests that went into service, per second of E
//	W = MeanTime:      their mean time in service; one still in service at E counts the
//	                   time it has had so far, one a server never answered the time until
//	                   its caller's timeout
//
// Counted so, the law holds exactly on every run, not only on average: both sides are the
// same area, summed once over time by the recorder (busy × the gap between events) and once
// over requests (each one's time in service). A pool of 4 busy half the time over 10s with
// 100 requests of 200ms each: L = 2, λ = 10/s, W = 200ms, and 2 = 10/s × 200ms. A
// difference between the two sums is a bookkeeping bug (a request that left without
// freeing its connection, a busy count that missed an event), and the test suite checks
// for one on every downstream of every built-in scenario.
type Service struct {
	Started        int64         `json:"started"`          // requests that went into service: completed + still in service
	StillInService int64         `json:"still_in_service"` // in service at the end of the elapsed time
	MeanInService  float64       `json:"mean_in_service"`  // L
	ArrivalRate    float64       `json:"arrival_rate"`     // λ, requests per second
	MeanTime       time.Duration `json:"mean_time_ns"`     // W
	// MeanCompleted is the mean service time of the completed requests only: the latency a
	// caller sees. On a long run it approaches W; Little's law is stated with W.
	MeanCompleted time.Duration `json:"mean_completed_ns"`
}

// wideSum is an exact unsigned 128-bit sum: requests × nanoseconds overflow an int64 after
// 292 years of service, which 3 requests in flight over a 100-year horizon reach.
type wideSum struct{ hi, lo uint64 }

// add adds a·b for non-negative a and b.
func (w *wideSum) add(a, b int64) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	var carry uint64
	w.lo, carry = bits.Add64(w.lo, lo, 0)
	w.hi += hi + carry
}

// plus is w + o.
func (w wideSum) plus(o wideSum) wideSum {
	lo, carry := bits.Add64(w.lo, o.lo, 0)
	return wideSum{hi: w.hi + o.hi + carry, lo: lo}
}

func (w wideSum) float() float64 { return float64(w.hi)*(1<<64) + float64(w.lo) }

// serviceMeter keeps the two sums behind Service: the busy area, advanced where busy changes,
// and the completed requests' service times.
type serviceMeter struct {
	at        int64   // the time the busy area reaches
	busyArea  wideSum // ∫ busy dt over [0, at]
	served    wideSum // Σ service time of the completed requests
	abandoned wideSum // Σ time at the downstream of requests a server did not answer in time
	completed int64
	started   int64
}

// advance extends the busy area to t, busy requests having been in service since the last
// call: the lane calls it where busy changes (a start, a completion) and before it reports,
// not at every event (the area of a constant stretch is the same in one piece or many).
func (m *serviceMeter) advance(t int64, busy int) {
	if t > m.at {
		m.busyArea.add(int64(busy), t-m.at)
		m.at = t
	}
}

// report is Service at time now, with inService requests still in service for a total of
// residual so far.
func (m *serviceMeter) report(now int64, inService int64, residual wideSum) *Service {
	s := &Service{Started: m.started, StillInService: inService}
	total := m.served.plus(m.abandoned).plus(residual)
	if now > 0 {
		s.MeanInService = m.busyArea.float() / float64(now)
		s.ArrivalRate = float64(m.started) / time.Duration(now).Seconds()
	}
	if m.started > 0 {
		s.MeanTime = time.Duration(total.float() / float64(m.started))
	}
	if m.completed > 0 {
		s.MeanCompleted = time.Duration(m.served.float() / float64(m.completed))
	}
	return s
}
