package engine

import (
	"math/bits"
	"time"
)

// Totals counts a lane's whole run. Requests are what sources offer; attempts include retries.
//
// Requests and attempts are counted apart. Each request offered ends as exactly one of
// admitted, refused, timed out, gave up, or is still waiting, so
//
//	Offered = Admitted + Refused + TimedOut + GaveUp + Waiting
//
// holds for every lane at every moment (retry-storm's immediate retries: 2355 offered = 2006
// admitted + 349 gave up, over 13837 attempts of which 11831 were refused). Attempts,
// Retried and RefusedAttempts count tries: a retried request is refused many times.
type Totals struct {
	Offered         int64 `json:"offered"`          // requests offered by the sources
	OfferedPermits  int64 `json:"offered_permits"`  // permits those requests asked for
	Admitted        int64 `json:"admitted"`         // requests admitted by every stage
	AdmittedPermits int64 `json:"admitted_permits"` // permits of those requests
	Refused         int64 `json:"refused"`          // requests refused and not retried: the client drops, its queue is full, or a stage can never grant them
	TimedOut        int64 `json:"timed_out"`        // requests that waited in the client queue until their timeout
	GaveUp          int64 `json:"gave_up"`          // requests a retrying client gave up on: refused at each of its MaxAttempts
	Waiting         int64 `json:"waiting"`          // requests not ended yet: retrying, queued, or waiting out a reservation (at the horizon, when the run is done)

	Attempts        int64 `json:"attempts"`         // first tries and retries; joining a non-empty queue counts as one
	Retried         int64 `json:"retried"`          // attempts after the first
	RefusedAttempts int64 `json:"refused_attempts"` // attempts refused by a stage

	Delayed   int64 `json:"delayed,omitempty"` // admitted requests that went on after a reservation's wait (LaneSpec.MaxWait)
	Never     int64 `json:"never"`             // refused requests larger than a stage can ever grant (part of Refused)
	Queued    int64 `json:"queued"`            // requests that waited in the client queue
	Completed int64 `json:"completed"`         // admitted requests the downstream served
	Failed    int64 `json:"failed"`            // admitted requests the downstream failed: pool full, or a server's error or timeout
	// ServerErrors and ServerTimeouts are the failures of a server downstream (part of
	// Failed): failed at once in an error burst, and not answered within the callers' timeout.
	ServerErrors   int64 `json:"server_errors,omitempty"`
	ServerTimeouts int64 `json:"server_timeouts,omitempty"`
	Wasted         int64 `json:"wasted"`        // permits earlier stages kept (no refund, or refund: false) when a later stage refused
	MaxInFlight    int   `json:"max_in_flight"` // the most requests at the downstream at once
	MaxQueue       int   `json:"max_queue"`     // the longest the client queue got
}

// Ended is the requests that have ended: admitted, refused, timed out or given up.
func (t Totals) Ended() int64 { return t.Admitted + t.Refused + t.TimedOut + t.GaveUp }

// AdmitRatio is admitted requests over offered ones.
func (t Totals) AdmitRatio() float64 {
	if t.Offered == 0 {
		return 0
	}
	return float64(t.Admitted) / float64(t.Offered)
}

// Loop is what a lane's clients made of the limit, the measures retry debates turn on:
// goodput, amplification and how synchronised the retries are. The herd counts retries only
// (attempts after a request's first): first tries are the sources' traffic, retries are what
// the loop adds. retry-herd's clients obey a fixed window's Retry-After and send 400 retries
// into one 10ms bin at the window's reset; with 5s of jitter the most in any 10ms is 4.
type Loop struct {
	// GoodputPerSec is admitted requests per second of the horizon.
	GoodputPerSec float64 `json:"goodput_per_s"`
	// Amplification is attempts per offered request: 1 when nothing is retried.
	Amplification float64 `json:"amplification"`
	// HerdPeak is the most retries in one 10ms bin aligned to 0, at HerdPeakAt (the bin's
	// start); 0 when nothing is retried.
	HerdPeak   int64         `json:"herd_peak"`
	HerdPeakAt time.Duration `json:"herd_peak_at_ns"`
	// HerdSynchrony is HerdPeak over the mean retries per 10ms bin of the horizon: about 1
	// for retries spread evenly, the number of bins when they all come at once.
	HerdSynchrony float64 `json:"herd_synchrony"`
	// SuccessP50 and SuccessP99 are the time to success of admitted requests: from a
	// request's first attempt (which a pacing client may hold back after its arrival) to its
	// admission, every refusal and backoff between included. retry-herd's 500 obeying
	// clients arrive at 500ms into a window of 100 per 10s: 100 succeed at once and 100 more
	// at each reset, a median of 20s and a 99th percentile of 40s.
	SuccessP50 time.Duration `json:"success_p50_ns"`
	SuccessP99 time.Duration `json:"success_p99_ns"`
	// LatencyP50 and LatencyP99 are end to end over completed requests: from a request's
	// arrival to its answer (the end of its service; its admission without a downstream),
	// every client wait — pacing, backoff, queueing, a reservation — and the service
	// included. Both from Wait's histogram kind: within 6.25%, never above the maximum.
	LatencyP50 time.Duration `json:"latency_p50_ns"`
	LatencyP99 time.Duration `json:"latency_p99_ns"`
}

// HerdBin is the width of the bins Loop's herd measures count attempts in.
const HerdBin = 10 * time.Millisecond

// Bin is one slice of the run's time axis: [Start, Start+width).
type Bin struct {
	Start    time.Duration `json:"start_ns"`
	Offered  int64         `json:"offered"`
	Attempts int64         `json:"attempts"`
	Retried  int64         `json:"retried"`
	Admitted int64         `json:"admitted"`
	Delayed  int64         `json:"delayed,omitempty"`
	// Refused, TimedOut and GaveUp are requests that ended so in the bin (see Totals);
	// RefusedAttempts the attempts refused in it.
	Refused         int64 `json:"refused"`
	TimedOut        int64 `json:"timed_out"`
	GaveUp          int64 `json:"gave_up"`
	RefusedAttempts int64 `json:"refused_attempts"`
	Completed       int64 `json:"completed"`
	Failed          int64 `json:"failed"`
	MaxInFlight     int   `json:"max_in_flight"`
	MaxQueue        int   `json:"max_queue"`
	Available       []int `json:"available"` // each stage's available permits at the bin's end
	// Limit is an adaptive stage's limit at the bin's end (the first such stage's), and
	// Probes its no-load RTT probes during the bin; 0 for lanes without one.
	Limit   int           `json:"limit,omitempty"`
	Probes  int           `json:"probes,omitempty"`
	WaitP50 time.Duration `json:"wait_p50_ns"`
	WaitP99 time.Duration `json:"wait_p99_ns"`
	WaitMax time.Duration `json:"wait_max_ns"`
}

// Wait summarises the time from a request's arrival to its admission (retries and queueing
// included), over admitted requests. Percentiles come from a log-linear histogram with 16
// sub-buckets per power of two: within 6.25% of the exact value, and never above the maximum.
type Wait struct {
	P50  time.Duration `json:"p50_ns"`
	P90  time.Duration `json:"p90_ns"`
	P99  time.Duration `json:"p99_ns"`
	P999 time.Duration `json:"p999_ns"` // the 99.9th percentile
	Max  time.Duration `json:"max_ns"`
	Mean time.Duration `json:"mean_ns"`
}

// WaitBucket is one bucket of a lane's wait histogram: Count admitted requests waited
// between From and To inclusive. Waits below 32ns have a bucket each (From = To); above, each
// power of two is cut in 16 buckets of equal width — [1.024µs, 1.087µs], [1.088µs, 1.151µs], …
// — so a bucket's width is at most 1/16 of its From: 6.25%.
type WaitBucket struct {
	From  time.Duration `json:"from_ns"`
	To    time.Duration `json:"to_ns"`
	Count uint64        `json:"count"`
}

// WindowMeter is the exact streaming guarantee meter for one interval length L: the most
// permits admitted in any half-open interval [a, a+L), where it happened, and the first time
// the lane's stated bound was exceeded.
type WindowMeter struct {
	Length        time.Duration `json:"length_ns"`
	MaxAdmitted   int64         `json:"max_admitted"`
	From          time.Duration `json:"from_ns"`           // first admission of the worst interval
	To            time.Duration `json:"to_ns"`             // last admission of the worst interval
	Bound         int64         `json:"bound"`             // the least bound any stage promises for L; -1: none
	FirstExceeded time.Duration `json:"first_exceeded_ns"` // -1: never
}

// PrimaryWindow is the guarantee meter a lane's summary shows — run's table, --assert, a
// sweep's cells and the replications' summary alike: the meter of its first stage's natural
// window if it has one, else its first meter; false when the lane has none.
func PrimaryWindow(lane LaneSpec, r LaneResult) (WindowMeter, bool) {
	for _, s := range lane.Stack {
		if w := s.NaturalWindow(); w > 0 {
			for _, m := range r.Windows {
				if m.Length == w {
					return m, true
				}
			}
		}
	}
	if len(r.Windows) > 0 {
		return r.Windows[0], true
	}
	return WindowMeter{}, false
}

// histogram is a log-linear histogram of non-negative durations in 1024 buckets: values
// below 32ns are exact, above that each power of two has 16 buckets. Only buckets from lo to
// hi (the lowest and highest counted) are read or cleared: a bin's histogram is read and reset
// at every bin's end, and its waits usually fill a few buckets of the 1024 (a dropping
// client's, one: 0).
type histogram struct {
	counts [1024]uint32
	total  uint64
	sum    int64
	max    int64
	lo, hi int // counts outside [lo, hi] are 0 (when total > 0)
}

func bucketOf(v int64) int {
	if v < 32 {
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - 5
	return shift*16 + int(v>>shift)
}

// bucketBottom is the smallest value that falls in bucket i.
func bucketBottom(i int) int64 {
	if i < 32 {
		return int64(i)
	}
	return bucketTop(i-1) + 1
}

// buckets is the histogram's non-empty buckets in increasing order.
func (h *histogram) buckets() []WaitBucket {
	if h.total == 0 {
		return nil
	}
	var out []WaitBucket
	for i, c := range h.counts[h.lo : h.hi+1] {
		if i += h.lo; c > 0 {
			out = append(out, WaitBucket{From: time.Duration(bucketBottom(i)), To: time.Duration(bucketTop(i)), Count: uint64(c)})
		}
	}
	return out
}

// bucketTop is the largest value that falls in bucket i.
func bucketTop(i int) int64 {
	if i < 32 {
		return int64(i)
	}
	shift := i/16 - 1
	mantissa := int64(i%16 + 16)
	return (mantissa+1)<<shift - 1
}

func (h *histogram) add(v int64) {
	b := bucketOf(v)
	h.counts[b]++
	if h.total == 0 {
		h.lo, h.hi = b, b
	} else {
		h.lo, h.hi = min(h.lo, b), max(h.hi, b)
	}
	h.total++
	h.sum += v
	h.max = max(h.max, v)
}

// quantile is the top of the bucket holding the ⌈q·total⌉-th value, capped at the maximum.
func (h *histogram) quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := uint64(q*float64(h.total) + 0.999999999)
	rank = min(max(rank, 1), h.total)
	var seen uint64
	for i, c := range h.counts[h.lo : h.hi+1] {
		seen += uint64(c)
		if seen >= rank {
			return time.Duration(min(bucketTop(h.lo+i), h.max))
		}
	}
	return time.Duration(h.max)
}

func (h *histogram) reset() {
	if h.total != 0 {
		clear(h.counts[h.lo : h.hi+1])
		h.total, h.sum, h.max, h.lo, h.hi = 0, 0, 0, 0, 0
	}
}

// admissionWindow keeps the admissions of the last L in a ring buffer, so the sum over any
// [t−L, t] is known at each admission. Its size is bounded by what the limiter lets through
// in L, not by the length of the run.
type admissionWindow struct {
	WindowMeter
	times   []int64
	permits []int64
	head, n int
	sum     int64
}

func newAdmissionWindow(length time.Duration, bound int64) *admissionWindow {
	return &admissionWindow{
		WindowMeter: WindowMeter{Length: length, Bound: bound, FirstExceeded: -1},
		times:       make([]int64, 64), permits: make([]int64, 64),
	}
}

// admit records n permits admitted at time now. The window then holds the admissions in
// (now−L, now]: of all half-open intervals of length L, the fullest one whose last admission is
// now. Every admission at or before now−L has left it.
func (w *admissionWindow) admit(now int64, n int64) {
	size := len(w.times)
	for w.n > 0 && w.times[w.head] <= now-int64(w.Length) {
		w.sum -= w.permits[w.head]
		w.head = (w.head + 1) & (size - 1)
		w.n--
	}
	if w.n == size {
		w.grow()
		size = len(w.times)
	}
	tail := (w.head + w.n) & (size - 1)
	w.times[tail], w.permits[tail] = now, n
	w.n++
	w.sum += n
	if w.sum > w.MaxAdmitted {
		w.MaxAdmitted = w.sum
		w.From, w.To = time.Duration(w.times[w.head]), time.Duration(now)
	}
	if w.Bound >= 0 && w.sum > w.Bound && w.FirstExceeded < 0 {
		w.FirstExceeded = time.Duration(now)
	}
}

func (w *admissionWindow) grow() {
	size := len(w.times)
	times, permits := make([]int64, 2*size), make([]int64, 2*size)
	for i := 0; i < w.n; i++ {
		j := (w.head + i) & (size - 1)
		times[i], permits[i] = w.times[j], w.permits[j]
	}
	w.times, w.permits, w.head = times, permits, 0
}
