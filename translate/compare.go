package translate

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// Report is a translation run: every translation of the intent, and for each one run, how
// its decisions compare with the reference's, request for request.
type Report struct {
	Intent    string        `json:"intent"`
	Traffic   string        `json:"traffic"` // "probe", a scenario's name or a trace file
	Requests  int64         `json:"requests"`
	Horizon   time.Duration `json:"horizon_ns"`
	Reference string        `json:"reference"`
	Phases    []Phase       `json:"phases,omitempty"` // the probe's; none for other traffic
	BinWidth  time.Duration `json:"bin_width_ns"`
	// Offered is the requests offered up to the end of each bin of BinWidth.
	Offered []int64      `json:"cumulative_offered,omitempty"`
	Lanes   []LaneReport `json:"lanes"`
}

// LaneReport is one translation and, when it ran, what it decided.
type LaneReport struct {
	Translation
	Ran bool `json:"ran"`
	// Against is the lane it is compared with: Reference, or WaitingReference for a library
	// that never refuses.
	Against     string        `json:"against,omitempty"`
	Admitted    int64         `json:"admitted"`
	Refused     int64         `json:"refused"`
	Delayed     int64         `json:"delayed"`         // admitted after a wait
	LongestWait time.Duration `json:"longest_wait_ns"` // the longest an admitted request waited
	PerPhase    []int64       `json:"admitted_per_phase,omitempty"`
	// Differing is how many requests it decided otherwise than Against: admitted where it
	// refused or the reverse, or (compared with the waiting reference) after another wait.
	Differing int64 `json:"differing"`
	// DifferingPerPhase is Differing in each phase (by arrival time).
	DifferingPerPhase []int64     `json:"differing_per_phase,omitempty"`
	FirstDifference   *Difference `json:"first_difference,omitempty"`
	// Cumulative is the admissions up to the end of each bin of BinWidth, each counted when
	// it was decided (at its arrival), or, for a lane compared wait for wait, when its wait
	// ended.
	Cumulative []int64 `json:"cumulative_admitted,omitempty"`
}

// Identical reports whether the lane ran and decided every request as its reference did.
func (l LaneReport) Identical() bool { return l.Ran && l.Differing == 0 }

// Difference is the first request a lane decided otherwise than its reference.
type Difference struct {
	Request   uint64        `json:"request"` // arrival order, 1 for the first
	At        time.Duration `json:"t_ns"`
	Permits   int           `json:"permits"`
	Lane      Decision      `json:"lane"`
	Reference Decision      `json:"reference"`
}

// Decision is what one limiter did with one request, and its sentence why.
type Decision struct {
	Outcome string        `json:"outcome"` // admitted, delayed (admitted after Wait), refused
	Wait    time.Duration `json:"wait_ns,omitempty"`
	Reason  string        `json:"reason"`
}

// String is "admitted", "refused" or "admitted after 10ms".
func (d Decision) String() string {
	if d.Outcome == outcomeDelayed {
		return "admitted after " + limiters.FormatDuration(d.Wait)
	}
	return d.Outcome
}

const (
	outcomeAdmitted = "admitted"
	outcomeDelayed  = "delayed"
	outcomeRefused  = "refused"
)

// decision classes, as kept per request for the references.
const (
	classNone uint8 = iota
	classAdmitted
	classRefused
)

// Run runs every translation that can run as a lane of sc's traffic, open loop (a refused
// request is dropped and never retried, and there is no downstream: the lanes see exactly
// the same requests), and compares each lane's decisions with its reference's, request for
// request. phases, when given, are spans to count admissions in (the probe's).
//
// Memory is 9 bytes per request for the references' decisions and waits, whatever the number
// of lanes; lanes run on all cores, and the report is the same whatever their number.
func Run(ctx context.Context, sc *engine.Scenario, in Intent, translations []Translation, phases []Phase) (*Report, error) {
	base, run, err := runScenario(sc, translations)
	if err != nil {
		return nil, err
	}
	refIndex := map[string]int{} // lane index of each reference
	for k, i := range run {
		if translations[i].Fit == FitReference {
			refIndex[translations[i].Lane] = k
		}
	}
	refTry, ok1 := refIndex[Reference]
	refWait, ok2 := refIndex[WaitingReference]
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("translate: the translations lack the references (%s, %s)", Reference, WaitingReference)
	}
	if err := base.Validate(); err != nil {
		return nil, err
	}
	rep := &Report{Intent: in.String(), Traffic: sc.Name, Horizon: base.Horizon, Reference: in.Reference().String(), Phases: phases}
	rep.BinWidth, _ = binWidth(&base)

	// The references first: each request's decision class, and the waiting one's waits.
	refs := make([]*refDecisions, 2)
	lanes := make([]LaneReport, len(run))
	for r, k := range []int{refTry, refWait} {
		d := &refDecisions{keepWaits: r == 1}
		lr, err := runLane(ctx, &base, k, translations[run[k]], phases, nil, d)
		if err != nil {
			return nil, err
		}
		refs[r] = d
		lanes[k] = lr
		if r == 0 {
			rep.Offered = d.offered
		}
	}
	// Then every other lane, compared with its reference as it runs.
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	work := make(chan int)
	for range max(1, min(runtime.GOMAXPROCS(0), len(run))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				t := translations[run[k]]
				ref := refs[0]
				if t.Waits {
					ref = refs[1]
				}
				lr, err := runLane(ctx, &base, k, t, phases, ref, nil)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				lanes[k] = lr
				mu.Unlock()
			}
		}()
	}
	for k := range run {
		if k != refTry && k != refWait {
			work <- k
		}
	}
	close(work)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	rep.Requests = int64(len(refs[0].class))
	// The references' sentences for the requests some lane first differs at: a second run of
	// each reference, keeping only those.
	for r, k := range []int{refTry, refWait} {
		want := map[uint64][]*Decision{}
		for i := range lanes {
			if f := lanes[i].FirstDifference; f != nil && (lanes[i].Waits == (r == 1)) {
				want[f.Request] = append(want[f.Request], &f.Reference)
			}
		}
		if len(want) == 0 {
			continue
		}
		if err := explainRequests(ctx, &base, k, want); err != nil {
			return nil, err
		}
	}
	// In the translations' order, the ones not run included.
	at := 0
	for i, t := range translations {
		if at < len(run) && run[at] == i {
			rep.Lanes = append(rep.Lanes, lanes[at])
			at++
			continue
		}
		rep.Lanes = append(rep.Lanes, LaneReport{Translation: t})
	}
	return rep, nil
}

// runScenario is sc as Run runs it: a dropping client, no downstream, no trace, and one lane
// per translation that runs; run is each lane's index in translations.
func runScenario(sc *engine.Scenario, translations []Translation) (base engine.Scenario, run []int, err error) {
	base = *sc
	base.Client = engine.Client{Policy: engine.PolicyDrop}
	base.Downstream = nil
	base.Trace = false
	base.Lanes = nil
	for i, t := range translations {
		if !t.Fit.Runs() {
			continue
		}
		stack, err := engine.ParseStack(t.Spec)
		if err != nil {
			return base, nil, fmt.Errorf("%s: %s: %w", t.Lane, t.Spec, err)
		}
		base.Lanes = append(base.Lanes, engine.LaneSpec{Name: t.Lane, Stack: stack, MaxWait: t.MaxWait})
		run = append(run, i)
	}
	return base, run, nil
}

// Sizes of what Run keeps besides the engine's lanes, in bytes, and what an event costs it.
const (
	arrivalBytes  = 32 // one of the probe's scripted arrivals (engine.Arrival)
	decisionBytes = 9  // the references' decision class and wait, per request
	// workingBytes is the rest, per request, measured: every lane's records and reasons as
	// they are made and read, the arrivals of the lanes running at once, and the collector's
	// headroom. The probe of rate=1/1ns,burst=100000 (1.3M requests) peaks at 580 MB RSS,
	// 446 bytes a request, where the parts above and the engine's count 67.
	workingBytes = 400
	// eventCost is what one of Run's events costs, measured on the same probe on the
	// project's 2-core VM: 94.6s for 38M events, 2.5µs, where a plain run's is
	// engine.DefaultEventCost (each decision's record and its reason are made and read).
	eventCost = 2500 * time.Nanosecond
)

// Estimate is what Run of translations over sc will cost, known before anything is made: the
// engine's estimate of the scenario Run runs (one lane per translation that runs), its events
// counted once more for the two references' second runs (explaining the first differences),
// and what Run keeps besides: 9 bytes a request for the references' decisions and waits and
// about 400 more in flight (measured; see workingBytes), with a run time at Run's own 2.5µs an
// event. A nil
// sc is the probe (ProbeScenario), counted from the intent alone without making its
// arrivals: 2⌈1.5b⌉ + 10b + 200 requests of 32 bytes each, 13,000,201 (397 MiB) for a
// burst of 1,000,000.
func Estimate(sc *engine.Scenario, in Intent, translations []Translation) (engine.Estimate, error) {
	probe := sc == nil
	var requests int64
	if probe {
		first, _, horizon := probeShape(in)
		requests = 2*int64(first) + 10*int64(in.Burst) + 200
		// A stand-in with the probe's requests and horizon, for the engine's estimate.
		sc = &engine.Scenario{Name: "translate-probe", Seed: 1, Horizon: horizon,
			Sources: []engine.Source{{Kind: engine.SourceBursts, Bursts: []engine.Burst{{Count: int(requests)}}}}}
	}
	base, _, err := runScenario(sc, translations)
	if err != nil {
		return engine.Estimate{}, err
	}
	if !probe { // (Estimate needs a valid scenario; the probe's stand-in is one by making)
		if err := base.Validate(); err != nil {
			return engine.Estimate{}, err
		}
	}
	est := base.Estimate()
	if lanes := int64(max(est.Lanes, 1)); est.Events < math.MaxInt64/2 {
		est.Events += est.Events / lanes * 2 // the references' second runs
	}
	est.Runtime = time.Duration(min(float64(est.Events)*float64(eventCost), math.MaxInt64))
	add := func(what string, bytes float64) {
		b := int64(min(bytes, math.MaxInt64/4))
		est.Parts = append(est.Parts, engine.MemoryPart{What: what, Bytes: b})
		est.Memory = min(est.Memory+b, math.MaxInt64/2)
	}
	add("the references' decisions", float64(est.Requests)*decisionBytes)
	add("records, reasons and arrivals in flight", float64(est.Requests)*workingBytes)
	if probe {
		add("the probe's arrivals", float64(requests)*arrivalBytes)
	}
	slices.SortStableFunc(est.Parts, func(a, b engine.MemoryPart) int { return cmp.Compare(b.Bytes, a.Bytes) })
	return est, nil
}

// refDecisions is a reference's decision for each request (index: request − 1).
type refDecisions struct {
	keepWaits bool
	order     error // a request decided out of arrival order (never with a dropping client)
	class     []uint8
	wait      []time.Duration
	offered   []int64 // cumulative per bin
}

func (d *refDecisions) at(id uint64) (uint8, time.Duration) {
	if id == 0 || id > uint64(len(d.class)) {
		return classNone, 0
	}
	var w time.Duration
	if d.keepWaits {
		w = d.wait[id-1]
	}
	return d.class[id-1], w
}

// decisionOf reads a traced record as a request's first decision: ok is false for any other
// record (an end, a wait's end, a retry).
func decisionOf(rec engine.Record) (class uint8, wait time.Duration, ok bool) {
	if rec.Attempt != 1 {
		return classNone, 0, false
	}
	switch rec.Outcome {
	case engine.OutcomeAdmitted:
		if rec.Reason == engine.ReasonWaitEnded {
			return classNone, 0, false
		}
		return classAdmitted, 0, true
	case engine.OutcomeDelayed:
		return classAdmitted, waitOf(rec.Reason), true
	case engine.OutcomeRejected, engine.OutcomeNever:
		return classRefused, 0, true
	}
	return classNone, 0, false
}

// waitOf reads the wait the engine appends to a delayed request's sentence ("…; waits 10ms").
func waitOf(reason string) time.Duration {
	i := strings.LastIndex(reason, "; waits ")
	if i < 0 {
		return 0
	}
	d, err := time.ParseDuration(reason[i+len("; waits "):])
	if err != nil {
		return 0
	}
	return d
}

func outcomeOf(class uint8, wait time.Duration) string {
	switch {
	case class == classRefused:
		return outcomeRefused
	case wait > 0:
		return outcomeDelayed
	}
	return outcomeAdmitted
}

// runLane runs lane k of sc to its horizon: into keep when it is a reference, else compared
// with ref.
func runLane(ctx context.Context, sc *engine.Scenario, k int, t Translation, phases []Phase, ref, keep *refDecisions) (LaneReport, error) {
	lr := LaneReport{Translation: t, Ran: true, PerPhase: make([]int64, len(phases)), DifferingPerPhase: make([]int64, len(phases))}
	if ref == nil {
		lr.Against = t.Lane
	} else if t.Waits {
		lr.Against = WaitingReference
	} else {
		lr.Against = Reference
	}
	l, err := engine.NewLane(sc, k)
	if err != nil {
		return lr, err
	}
	width, bins := binWidth(sc)
	perBin := make([]int64, bins)
	l.OnEvent = func(rec engine.Record) {
		class, wait, ok := decisionOf(rec)
		if !ok {
			return
		}
		if class == classAdmitted {
			lr.Admitted++
			at := rec.At
			if t.Waits {
				at += wait
			}
			if at < sc.Horizon {
				perBin[at/width]++
			}
			if wait > 0 {
				lr.Delayed++
				lr.LongestWait = max(lr.LongestWait, wait)
			}
			for p, ph := range phases {
				if rec.At >= ph.From && rec.At < ph.To {
					lr.PerPhase[p]++
				}
			}
		} else {
			lr.Refused++
		}
		if keep != nil {
			if rec.Request != uint64(len(keep.class))+1 && keep.order == nil {
				keep.order = fmt.Errorf("translate: request %d decided out of arrival order", rec.Request)
			}
			keep.class = append(keep.class, class)
			if keep.keepWaits {
				keep.wait = append(keep.wait, wait)
			}
			return
		}
		refClass, refWait := ref.at(rec.Request)
		if refClass == class && (!t.Waits || refWait == wait) {
			return
		}
		lr.Differing++
		for p, ph := range phases {
			if rec.At >= ph.From && rec.At < ph.To {
				lr.DifferingPerPhase[p]++
			}
		}
		if lr.FirstDifference == nil {
			lr.FirstDifference = &Difference{Request: rec.Request, At: rec.At, Permits: rec.Permits,
				Lane:      Decision{Outcome: outcomeOf(class, wait), Wait: wait, Reason: rec.Reason},
				Reference: Decision{Outcome: outcomeOf(refClass, refWait), Wait: refWait}}
		}
	}
	if err := drive(ctx, l); err != nil {
		return lr, err
	}
	if keep != nil && keep.order != nil {
		return lr, keep.order
	}
	var sum int64
	for _, n := range perBin {
		sum += n
		lr.Cumulative = append(lr.Cumulative, sum)
	}
	if keep != nil {
		var offered int64
		for _, b := range l.Result().Bins {
			offered += b.Offered
			keep.offered = append(keep.offered, offered)
		}
	}
	return lr, nil
}

// explainRequests runs lane k again and fills in its decision and sentence for each request
// of want.
func explainRequests(ctx context.Context, sc *engine.Scenario, k int, want map[uint64][]*Decision) error {
	l, err := engine.NewLane(sc, k)
	if err != nil {
		return err
	}
	l.OnEvent = func(rec engine.Record) {
		if class, wait, ok := decisionOf(rec); ok {
			for _, d := range want[rec.Request] {
				*d = Decision{Outcome: outcomeOf(class, wait), Wait: wait, Reason: rec.Reason}
			}
		}
	}
	return drive(ctx, l)
}

// drive runs a lane to its horizon, checking ctx every 16,384 events.
func drive(ctx context.Context, l *engine.Lane) error {
	defer l.Close()
	for {
		more, err := l.StepN(1 << 14)
		if err != nil || !more {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// binWidth is the width of the scenario's time bins, and their number: the engine's.
func binWidth(sc *engine.Scenario) (time.Duration, int) {
	bins := sc.Bins
	if bins == 0 {
		bins = engine.DefaultBins
	}
	width := (sc.Horizon + time.Duration(bins) - 1) / time.Duration(bins)
	return width, int((sc.Horizon + width - 1) / width)
}
