package engine

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// Outcome is what happened to a request at one event of the trace.
type Outcome string

// The outcomes a trace records.
const (
	OutcomeAdmitted  Outcome = "admitted"
	OutcomeDelayed   Outcome = "delayed"  // admitted by every stage after a wait: it goes on when the wait ends, recorded as admitted with ReasonWaitEnded
	OutcomeRejected  Outcome = "rejected" // an attempt refused by a stage
	OutcomeNever     Outcome = "never"    // an attempt refused by a stage that can never grant it
	OutcomeQueued    Outcome = "queued"
	OutcomeRefused   Outcome = "refused"   // the request ends refused: not retried (the client drops, the queue is full, or never)
	OutcomeGaveUp    Outcome = "gave-up"   // the request ends refused after the client's MaxAttempts
	OutcomeTimedOut  Outcome = "timed-out" // the request ends at its timeout in the client queue
	OutcomeCompleted Outcome = "completed"
	OutcomeFailed    Outcome = "failed"
)

// ReasonWaitEnded is the Reason of the admission record of a delayed request whose wait ended.
const ReasonWaitEnded = "its wait ended"

// Record is one traced event of one request. Decisions (admitted, rejected, never) carry the
// deciding stage's state just before it decided and the sentence that explains the decision
// from that state; an admission is explained by the first stage.
type Record struct {
	At      time.Duration   `json:"t_ns"`
	Request uint64          `json:"request"` // arrival order across all sources: the same request in every lane
	Attempt int             `json:"attempt"` // 1 for the first try
	Permits int             `json:"permits"`
	Key     string          `json:"key,omitempty"`
	Outcome Outcome         `json:"outcome"`
	Stage   int             `json:"stage"` // the refusing stage (rejected, never, queued after a refusal), 0 when admitted, else -1
	Reason  string          `json:"reason,omitempty"`
	State   *limiters.State `json:"state,omitempty"` // the deciding stage, before it decided

	// why says how to make Reason when a lane that explains lazily (Lane.LazyReasons) left it
	// empty: ReasonText makes it from State, decision and whyN when the sentence is shown.
	why      why
	decision limiters.Decision
	whyN     int64 // whyWait: the wait; whyKeysFull: the stage, from 0; whyPoolFull: the pool
}

// why is the Reason a Record of a lazily explaining lane has not made yet.
type why uint8

const (
	whyMade     why = iota // Reason is made (or there is none)
	whyExplain             // State.Explain(Permits, decision)
	whyWait                // the same and "; waits <whyN>"
	whyKeysFull            // stage whyN's key table is full
	whyPoolFull            // the downstream pool of whyN is full
)

// ReasonText is Reason, made now if the lane that recorded r explains lazily
// (Lane.LazyReasons) and left it to be made: the same text the lane would have written. The
// State it reads must be r's own (a lazy lane's OnEvent lends it: see LazyReasons).
func (r Record) ReasonText() string {
	switch r.why {
	case whyExplain:
		if r.State != nil {
			return r.State.Explain(r.Permits, r.decision)
		}
	case whyWait:
		if r.State != nil {
			return r.State.Explain(r.Permits, r.decision) + "; waits " + limiters.FormatDuration(time.Duration(r.whyN))
		}
	case whyKeysFull:
		return keysFullReason(int(r.whyN))
	case whyPoolFull:
		return poolFullReason(int(r.whyN))
	}
	return r.Reason
}

// keysFullReason is the Reason of a refusal by stage k's (from 0) full key table.
func keysFullReason(k int) string {
	return "stage " + strconv.Itoa(k+1) + "'s key table is full and can evict no key"
}

// poolFullReason is the Reason of a failure at a full downstream pool of n.
func poolFullReason(n int) string { return "downstream pool of " + strconv.Itoa(n) + " is full" }

// LaneResult is everything one lane measured.
type LaneResult struct {
	Name   string   `json:"name"`
	Stack  []string `json:"stack"`
	Totals Totals   `json:"totals"`
	Loop   Loop     `json:"loop"`
	Wait   Wait     `json:"wait"`
	// WaitHistogram is the waits of the admitted requests (Wait's source), its non-empty
	// buckets in increasing order: a wait-time distribution to draw.
	WaitHistogram []WaitBucket  `json:"wait_histogram,omitempty"`
	MinSpacing    time.Duration `json:"min_spacing_ns"` // smallest gap between admissions; -1 with fewer than two
	Windows       []WindowMeter `json:"windows"`
	Bins          []Bin         `json:"bins"`
	Events        uint64        `json:"events"`
	Trace         []Record      `json:"trace,omitempty"`
	Truncated     bool          `json:"trace_truncated,omitempty"`
	// TraceFrom and TraceTo are the window the trace covers when the scenario narrowed it
	// (Scenario.TraceFrom, TraceTo); both 0 when it covers the whole run.
	TraceFrom time.Duration   `json:"trace_from_ns,omitempty"`
	TraceTo   time.Duration   `json:"trace_to_ns,omitempty"`
	Keys      *KeyResults     `json:"keys,omitempty"`     // per key, when requests carry more than one key or a stage is keyed
	Service   *Service        `json:"service,omitempty"`  // the downstream's Little's-law measurements, when the scenario has one
	Adaptive  *AdaptiveResult `json:"adaptive,omitempty"` // an adaptive limit against the server's reference, when a stage is one
	Fleet     *FleetResult    `json:"fleet,omitempty"`    // a fleet lane's instances and store
	Classes   []ClassResult   `json:"classes,omitempty"`  // per request class, when the sources name classes (classes.go)
}

// recorder is what a lane measures: totals and per-bin counts, the wait histograms, the
// admission-window meters, the least spacing between admissions, and the trace. Each counted
// event has one method, which counts it in the totals and in the current bin at once, so the
// bins sum to the totals by construction. Some totals have no per-bin count (the permit
// sums, Never, Queued, Wasted, Waiting), and the maxima are maxima, not sums.
//
// The current bin is the one holding the lane's time: counting happens only at events, all
// before the horizon, and advance has closed every bin that ended at or before the event.
type recorder struct {
	result   LaneResult
	horizon  int64
	binWidth int64 // ⌈horizon/bins⌉: 1h in 1000 bins is 3.6s each
	bin      int   // the current bin's index
	cur      *Bin  // &result.Bins[bin]; nil once every bin is closed
	binEnd   int64 // the current bin's end, (bin+1)·binWidth; math.MaxInt64 once every bin is closed
	mark     int64 // the earlier of binEnd and traceSwitch: advance's one test per event
	// traceSwitch is when a narrowed trace starts (tracing is false before) or stops
	// (tracing is true before); math.MaxInt64 when it does neither again.
	traceSwitch int64
	traceTo     int64     // a narrowed trace's end; math.MaxInt64 when it runs to the horizon
	binHist     histogram // the waits of the current bin's admissions
	hist        histogram // every admission's wait
	// success and latency are kept only where they differ from hist: success (every
	// admission's time since its first attempt, Loop.SuccessP50) when the client may hold a
	// first attempt back after the arrival (Client.Holds), latency (every answer's time since
	// its arrival, Loop.LatencyP50) when a downstream answers after the admission. Otherwise
	// each is, value for value, an admission's wait: hist, read in their place.
	success, latency       histogram
	ownSuccess, ownLatency bool
	meters                 []*admissionWindow
	lastAdmit              int64 // the last admission's time; math.MinInt64 before the first
	svc                    serviceMeter
	herdEnd                int64 // the end of the 10ms bin herdCount counts in
	herdCount              int64
	tracing                bool
	traceLimit             int
	probes                 int // the adaptive stage's probes at the last bin's end
}

// newRecorder prepares the measurements of sc's lane spec, whose stack has stages stages.
func newRecorder(sc *Scenario, spec LaneSpec, stages int) recorder {
	r := recorder{horizon: int64(sc.Horizon), lastAdmit: math.MinInt64, tracing: sc.Trace, traceLimit: TraceLimit,
		traceSwitch: math.MaxInt64, traceTo: math.MaxInt64, ownLatency: sc.Downstream != nil}
	client := sc.Client
	if spec.Client != nil {
		client = *spec.Client
	}
	r.ownSuccess = client.Holds()
	if sc.Trace && (sc.TraceFrom > 0 || sc.TraceTo > 0) {
		if sc.TraceTo > 0 {
			r.traceTo = int64(sc.TraceTo)
		}
		r.tracing, r.traceSwitch = false, int64(sc.TraceFrom)
		if sc.TraceFrom == 0 {
			r.tracing, r.traceSwitch = true, r.traceTo
		}
	}
	bins := sc.Bins
	if bins == 0 {
		bins = DefaultBins
	}
	// The width is rounded up, which can leave fewer bins than asked: a 10ns horizon asked
	// in 6 bins gets 5 of 2ns.
	r.binWidth = (r.horizon + int64(bins) - 1) / int64(bins)
	bins = int((r.horizon + r.binWidth - 1) / r.binWidth)
	r.result = LaneResult{Name: spec.Label(), MinSpacing: -1, Bins: make([]Bin, bins)}
	if sc.Trace {
		r.result.TraceFrom, r.result.TraceTo = sc.TraceFrom, sc.TraceTo
	}
	for _, s := range spec.Stack {
		r.result.Stack = append(r.result.Stack, s.String())
	}
	// Every bin's readings in one allocation, not one per bin; the bins set field by field
	// (they are zero, and a Bin is 160 bytes).
	available := make([]int, bins*stages)
	for b := range r.result.Bins {
		bin := &r.result.Bins[b]
		bin.Start, bin.Available = time.Duration(int64(b)*r.binWidth), available[b*stages:(b+1)*stages:(b+1)*stages]
	}
	for _, length := range meterLengths(sc) {
		bound, ok := limiters.StackBound(spec.Stack, length)
		if !ok {
			bound = -1
		}
		r.meters = append(r.meters, newAdmissionWindow(length, bound))
	}
	r.moveToBin(0)
	return r
}

// moveToBin makes bin b the current one.
func (r *recorder) moveToBin(b int) {
	r.bin = b
	if b < len(r.result.Bins) {
		r.cur, r.binEnd = &r.result.Bins[b], int64(b+1)*r.binWidth
	} else {
		r.cur, r.binEnd = nil, math.MaxInt64
	}
	r.mark = min(r.binEnd, r.traceSwitch)
}

// offered counts a request a source offered, asking for permits.
func (r *recorder) offered(permits int) {
	r.result.Totals.Offered++
	r.result.Totals.OfferedPermits += int64(permits)
	r.cur.Offered++
}

// attempt counts an attempt (see Totals.Attempts); retry when it is not the request's first.
func (r *recorder) attempt(retry bool) {
	b := r.cur
	r.result.Totals.Attempts++
	b.Attempts++
	if retry {
		r.result.Totals.Retried++
		b.Retried++
	}
}

// herdRetry counts a retry at now in its 10ms bin (Loop.HerdPeak). Retries come in time
// order (a lane runs its events so), so one bin's count at a time is all it takes.
func (r *recorder) herdRetry(now int64) {
	if now >= r.herdEnd {
		r.herdEnd = (now/int64(HerdBin) + 1) * int64(HerdBin)
		r.herdCount = 0
	}
	r.herdCount++
	if l := &r.result.Loop; r.herdCount > l.HerdPeak {
		l.HerdPeak, l.HerdPeakAt = r.herdCount, time.Duration(r.herdEnd-int64(HerdBin))
	}
}

// refusedAttempt counts an attempt a stage refused.
func (r *recorder) refusedAttempt() {
	r.result.Totals.RefusedAttempts++
	r.cur.RefusedAttempts++
}

// refusedAtOnce counts n requests of permits each, refused (Rejected) at their one attempt
// and ended so, in the current bin: decidedAtOnce's counts for each, n at once.
func (r *recorder) refusedAtOnce(n int64, permits int) {
	if n == 0 {
		return
	}
	t, b := &r.result.Totals, r.cur
	t.Offered += n
	t.OfferedPermits += n * int64(permits)
	t.Attempts += n
	t.RefusedAttempts += n
	t.Refused += n
	b.Offered += n
	b.Attempts += n
	b.RefusedAttempts += n
	b.Refused += n
}

// never counts a refused request that waiting cannot change (Never or Invalid); it also
// ends refused.
func (r *recorder) never() { r.result.Totals.Never++ }

// ended counts a request that ended without admission, as end says.
func (r *recorder) ended(end ending) {
	t, b := &r.result.Totals, r.cur
	switch end {
	case endRefused:
		t.Refused++
		b.Refused++
	case endTimedOut:
		t.TimedOut++
		b.TimedOut++
	default:
		t.GaveUp++
		b.GaveUp++
	}
}

// queued counts a request that joined the client queue, which is now length long.
func (r *recorder) queued(length int) {
	r.result.Totals.Queued++
	r.result.Totals.MaxQueue = max(r.result.Totals.MaxQueue, length)
	b := r.cur
	b.MaxQueue = max(b.MaxQueue, length)
}

// wasted counts permits that rate stages granted to a request a later stage refused.
func (r *recorder) wasted(permits int64) { r.result.Totals.Wasted += permits }

// admitted counts an admission of permits at now, wait after the request arrived.
func (r *recorder) admitted(now int64, permits int, wait int64) {
	r.result.Totals.Admitted++
	r.result.Totals.AdmittedPermits += int64(permits)
	r.cur.Admitted++
	r.hist.add(wait)
	r.binHist.add(wait)
	for _, m := range r.meters {
		m.admit(now, int64(permits))
	}
	if r.lastAdmit != math.MinInt64 {
		if gap := time.Duration(now - r.lastAdmit); r.result.MinSpacing < 0 || gap < r.result.MinSpacing {
			r.result.MinSpacing = gap
		}
	}
	r.lastAdmit = now
}

// succeeded counts an admission d after the request's first attempt (time to success).
func (r *recorder) succeeded(d int64) {
	if r.ownSuccess {
		r.success.add(d)
	}
}

// endToEnd counts a request answered d after it arrived (end-to-end latency).
func (r *recorder) endToEnd(d int64) { r.latency.add(d) }

// delayed counts an admission that goes on after a reservation's wait; admitted counts it
// again when the wait ends.
func (r *recorder) delayed() {
	r.result.Totals.Delayed++
	r.cur.Delayed++
}

// inService notes that a request went into service and busy requests are now at the
// downstream.
func (r *recorder) inService(busy int) {
	r.svc.started++
	r.result.Totals.MaxInFlight = max(r.result.Totals.MaxInFlight, busy)
	b := r.cur
	b.MaxInFlight = max(b.MaxInFlight, busy)
}

// served counts a request the downstream completed after service ns in service.
func (r *recorder) served(service int64) {
	r.svc.served.add(service, 1)
	r.svc.completed++
	r.completed()
}

// completed counts an admitted request the downstream served (at once, without one).
func (r *recorder) completed() {
	r.result.Totals.Completed++
	r.cur.Completed++
}

// serverError counts an admitted request a server failed at once (an error burst).
func (r *recorder) serverError() {
	r.result.Totals.ServerErrors++
	r.failed()
}

// serverTimeout counts an admitted request a server did not answer within its caller's
// timeout, after service ns at the downstream (part of W in Little's law).
func (r *recorder) serverTimeout(service int64) {
	r.svc.abandoned.add(service, 1)
	r.result.Totals.ServerTimeouts++
	r.failed()
}

// failed counts an admitted request the downstream refused: its pool was full.
func (r *recorder) failed() {
	r.result.Totals.Failed++
	r.cur.Failed++
}

// advance closes every bin that ends at or before t. busy and queued are the lane's requests
// at the downstream and in the queue, which the next bin's maxima start from.
func (r *recorder) advance(t int64, stack *Stack, busy, queued int) {
	if t < r.mark {
		return
	}
	for t >= r.binEnd {
		r.closeBin(stack, busy, queued)
	}
	if t >= r.traceSwitch { // a narrowed trace starts or stops (at most once each)
		if !r.tracing && t < r.traceTo {
			r.tracing, r.traceSwitch = true, r.traceTo
		} else {
			r.tracing, r.traceSwitch = false, math.MaxInt64
		}
	}
	r.mark = min(r.binEnd, r.traceSwitch)
}

// finish closes every bin left: the lane is at its horizon.
func (r *recorder) finish(stack *Stack, busy, queued int) {
	r.svc.advance(r.horizon, busy)
	for r.cur != nil {
		r.closeBin(stack, busy, queued)
	}
}

// closeBin reads each stage's available permits at the current bin's end (the horizon for
// the last bin, which may be shorter) and its wait quantiles, and moves to the next bin.
func (r *recorder) closeBin(stack *Stack, busy, queued int) {
	b := r.cur
	end := time.Duration(min(r.binEnd, r.horizon))
	for k, s := range stack.Stages() {
		b.Available[k] = s.AvailableAt(end)
	}
	if a := stack.adaptive(); a != nil {
		p := a.Probes()
		b.Limit, b.Probes = a.Limit(), p-r.probes
		r.probes = p
	}
	b.WaitP50, b.WaitP99, b.WaitMax = r.binHist.quantile(0.50), r.binHist.quantile(0.99), time.Duration(r.binHist.max)
	r.binHist.reset()
	r.moveToBin(r.bin + 1)
	if next := r.cur; next != nil {
		next.MaxInFlight, next.MaxQueue = busy, queued
	}
}

// keep adds rec to the trace when the lane keeps one, up to traceLimit records; past it,
// the trace is marked truncated.
func (r *recorder) keep(rec Record) {
	if !r.tracing {
		return
	}
	if len(r.result.Trace) >= r.traceLimit {
		r.result.Truncated = true
		return
	}
	r.result.Trace = append(r.result.Trace, rec)
}

// report is what was measured so far; events is the lane's count of events run.
func (r *recorder) report(events uint64) LaneResult {
	res := r.result
	res.Events = events
	h := &r.hist
	res.Wait = Wait{P50: h.quantile(0.50), P90: h.quantile(0.90), P99: h.quantile(0.99), P999: h.quantile(0.999), Max: time.Duration(h.max)}
	res.WaitHistogram = h.buckets()
	if h.total > 0 {
		res.Wait.Mean = time.Duration(h.sum / int64(h.total))
	}
	res.Windows = make([]WindowMeter, len(r.meters))
	for i, m := range r.meters {
		res.Windows[i] = m.WindowMeter
	}
	t := &res.Totals
	if r.horizon > 0 {
		res.Loop.GoodputPerSec = float64(t.Admitted) / time.Duration(r.horizon).Seconds()
	}
	if t.Offered > 0 {
		res.Loop.Amplification = float64(t.Attempts) / float64(t.Offered)
	}
	success, latency := &r.success, &r.latency
	if !r.ownSuccess {
		success = &r.hist
	}
	if !r.ownLatency {
		latency = &r.hist
	}
	res.Loop.SuccessP50, res.Loop.SuccessP99 = success.quantile(0.50), success.quantile(0.99)
	res.Loop.LatencyP50, res.Loop.LatencyP99 = latency.quantile(0.50), latency.quantile(0.99)
	if bins := float64(r.horizon) / float64(HerdBin); t.Retried > 0 && bins > 0 {
		res.Loop.HerdSynchrony = float64(res.Loop.HerdPeak) / (float64(t.Retried) / max(bins, 1))
	}
	return res
}

// meterLengths is the sorted set of every stage's natural window in every lane, plus the
// scenario's own: the same lengths in every lane, so lanes compare side by side.
func meterLengths(sc *Scenario) []time.Duration {
	var lengths []time.Duration
	for _, lane := range sc.Lanes {
		for _, s := range lane.Stack {
			if w := s.NaturalWindow(); w > 0 {
				lengths = append(lengths, w)
			}
		}
	}
	lengths = append(lengths, sc.Windows...)
	slices.Sort(lengths)
	return slices.Compact(lengths)
}
