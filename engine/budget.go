package engine

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// Estimate is what a run of a scenario will cost, known before it starts from the scenario
// alone: the requests its sources offer, the kernel events its lanes process (the work), and
// the memory it keeps (the largest parts named). Counts are expected values (a Poisson
// source's mean), taken on the high side where the run decides (a retrying client is counted
// at its every attempt); memory is an upper bound for what grows with the run.
//
// The one-hour perf scenario (Poisson at 10,000/s, six lanes, dropping): 36M requests, about
// 432M events (2 per request per lane: its arrival and its decision), 13 MB.
type Estimate struct {
	Lanes    int
	Requests int64        // requests the sources offer (each lane sees them all)
	Events   int64        // events over all lanes
	Memory   int64        // bytes kept, over all lanes
	Parts    []MemoryPart // what Memory is made of, largest first
	// TraceJSON is the trace's size as JSON text (with Trace), which a caller that prints
	// the results as JSON holds on top of Memory: about 600 bytes a record, and 100 more per
	// sliding-window slot in its state (measured: 200,000 records of 10 slots are 320 MB).
	TraceJSON int64
	Runtime   time.Duration // Events at DefaultEventCost, on one core
}

// Times is the estimate of k such runs, one after another or side by side, each keeping its
// results: k times the requests, events, memory and run time.
func (e Estimate) Times(k int) Estimate {
	if k <= 1 {
		return e
	}
	f := float64(k)
	e.Requests, e.Events, e.Memory = saturate(float64(e.Requests)*f), saturate(float64(e.Events)*f), saturate(float64(e.Memory)*f)
	parts := make([]MemoryPart, len(e.Parts))
	for i, p := range e.Parts {
		parts[i] = MemoryPart{p.What, saturate(float64(p.Bytes) * f)}
	}
	e.Parts = parts
	e.Runtime = time.Duration(math.Min(float64(e.Runtime)*f, math.MaxInt64))
	return e
}

// MemoryPart is one part of an Estimate's memory.
type MemoryPart struct {
	What  string
	Bytes int64
}

// DefaultEventCost is what one event costs on a 2-core VM of the project's CI (the perf
// scenario's 80ns, rounded up), for a rough run time.
const DefaultEventCost = 100 * time.Nanosecond

// Sizes of what a run keeps, in bytes (unsafe.Sizeof and slice headers, rounded up).
const (
	binBytes    = 160 // a Bin, without its Available readings
	recordBytes = 320 // a traced Record with its State
	slotBytes   = 40  // one limiters.Slot of a sliding window's state
	// recordJSONBytes and slotJSONBytes are a Record and a Slot as JSON text.
	recordJSONBytes = 600
	slotJSONBytes   = 100
	admissionBytes  = 16  // one admission a window meter holds: its time and permits
	keyCountBytes   = 120 // one key's counters and its index entry
	pacingBytes     = 24  // what one header-paced client (a key) last heard (client.go's pacing)
	baseBytes       = 1 << 20
)

// Estimate is sc's estimate. sc should be valid (Validate).
func (sc *Scenario) Estimate() Estimate {
	e := Estimate{Lanes: len(sc.Lanes)}
	horizon := float64(sc.Horizon)
	requests := 0.0
	keys := 0.0
	for _, src := range sc.Sources {
		requests += src.expectedRequests(sc.Horizon)
		if p := src.Keys; p != nil {
			keys += float64(p.Clients) + 1
		}
	}
	e.Requests = saturate(requests)
	var events, memory, traceJSON float64
	parts := map[string]float64{}
	lengths := meterLengths(sc) // every lane's lengths, the same in each: once, not once per lane
	for _, lane := range sc.Lanes {
		client := sc.Client
		if lane.Client != nil {
			client = *lane.Client
		}
		// Per request: its arrival and first decision; each retry's; a queue's timeout; a
		// wait's end; a downstream's completion.
		per := 2.0
		switch {
		case client.Retries():
			per += client.WithDefaults().mostRetries()
		case client.Policy == PolicyQueue:
			per++
		}
		if lane.MaxWait > 0 || stackWaits(lane.Stack) {
			per++
		}
		if sc.Downstream != nil {
			per++
		}
		laneEvents := requests * per
		events += laneEvents

		bins := float64(sc.Bins)
		if bins == 0 {
			bins = DefaultBins
		}
		parts["bins"] += bins * float64(binBytes+8*len(lane.Stack))
		if sc.Trace {
			// Each record keeps the deciding stage's state, and a sliding window's holds
			// its every slot: 4096 slots are 160 KiB a record, 32 GiB over a full trace.
			records, slots := math.Min(laneEvents, TraceLimit), float64(stateSlots(lane.Stack))
			parts["trace"] += records * (recordBytes + slots*slotBytes)
			traceJSON += records * (recordJSONBytes + slots*slotJSONBytes)
		}
		// Each window meter holds the admissions of its last window: no more than the
		// requests, nor than the lane's bound in it (as the recorder takes it); without a
		// bound, an even rate with room for bursts.
		for _, L := range lengths {
			held := math.Min(requests, requests*float64(L)/math.Max(horizon, 1)*4+1)
			if b, ok := limiters.StackBound(lane.Stack, L); ok && b >= 0 {
				held = math.Min(held, float64(b))
			}
			parts["window meters"] += held * admissionBytes
		}
		for _, spec := range lane.Stack {
			if k, ok := spec.(limiters.KeyedSpec); ok {
				parts["key tables"] += float64(k.Keys.MaxKeys) * 320
			}
		}
		perKey := float64(keyCountBytes)
		if client.Policy == PolicyHeaderPaced {
			perKey += pacingBytes
		}
		parts["per-key counts"] += math.Min(keys, MaxTrackedKeys) * perKey
	}
	e.Events = saturate(events)
	e.TraceJSON = saturate(traceJSON)
	memory = baseBytes
	for what, b := range parts {
		if b >= 1 {
			e.Parts = append(e.Parts, MemoryPart{what, saturate(b)})
			memory += b
		}
	}
	sortParts(e.Parts)
	e.Memory = saturate(memory)
	e.Runtime = time.Duration(math.Min(float64(e.Events)*float64(DefaultEventCost), math.MaxInt64))
	return e
}

// stateSlots is the most slots a stage of stack shows in its state: a sliding window's (a
// keyed one's inner spec's), 0 for every other kind.
func stateSlots(stack []limiters.Spec) int {
	most := 0
	for _, s := range stack {
		if k, ok := s.(limiters.KeyedSpec); ok {
			s = k.Spec
		}
		if sw, ok := s.(limiters.SlidingWindowSpec); ok {
			slots := sw.Slots
			if slots == 0 {
				slots = limiters.DefaultSlots
			}
			most = max(most, slots)
		}
	}
	return most
}

// expectedRequests is how many requests src offers before the horizon, on average.
func (src Source) expectedRequests(horizon time.Duration) float64 {
	until := horizon
	if src.Until > 0 && src.Until < until {
		until = src.Until
	}
	active := math.Max(float64(until-src.From), 0) / float64(time.Second)
	switch src.Kind {
	case SourceConstant, SourcePoisson, SourceSine:
		return src.Rate * active
	case SourceOnOff:
		if src.On+src.Off <= 0 {
			return 0
		}
		return src.Rate * active * float64(src.On) / float64(src.On+src.Off)
	case SourceRamp:
		return (src.Rate + src.RateTo) / 2 * active
	case SourceBursts:
		n := 0.0
		for _, b := range src.Bursts {
			if src.From+b.At < horizon {
				n += float64(b.Count)
			}
		}
		return n
	case SourceScript:
		n := 0.0
		for _, a := range src.Script {
			if src.From+a.At < horizon {
				n++
			}
		}
		return n
	case SourceTrace:
		if src.TraceFile == "" {
			return float64(strings.Count(src.TraceData, "\n"))
		}
		return traceRows(src.TraceFile)
	}
	return 0
}

// traceRows estimates a trace file's rows from its size and the length of its first lines.
// Only a regular file is opened: opening a FIFO here would take the data its writer gives
// the first reader (or wait for a writer), and the run's own open would then wait forever.
func traceRows(path string) float64 {
	if info, err := os.Stat(path); err != nil || !info.Mode().IsRegular() {
		return 0 // the run will say why; a pipe's length is not known
	}
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return 0
	}
	sample := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, sample)
	lines := bytes.Count(sample[:n], []byte{'\n'})
	if lines == 0 {
		return 1
	}
	return float64(info.Size()) * float64(lines) / float64(n)
}

// stackWaits reports whether a stage's callers wait (a peer's mode=wait, timeout, delay).
func stackWaits(stack []limiters.Spec) bool {
	for _, s := range stack {
		if w, ok := s.(limiters.Waiting); ok && w.CallerWait() > 0 {
			return true
		}
	}
	return false
}

func saturate(v float64) int64 {
	if v >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(math.Ceil(v))
}

func sortParts(p []MemoryPart) {
	for i := 1; i < len(p); i++ {
		for j := i; j > 0 && (p[j].Bytes > p[j-1].Bytes || p[j].Bytes == p[j-1].Bytes && p[j].What < p[j-1].What); j-- {
			p[j], p[j-1] = p[j-1], p[j]
		}
	}
}

// Budget is the most work and memory a run may take; 0 is no limit.
type Budget struct {
	MaxEvents int64
	MaxMemory int64
}

// DefaultBudget is the budget a command line gives a run unless told otherwise: 10^10 events
// (about 17 minutes on one core at DefaultEventCost; the one-hour perf scenario is 4.3·10^8)
// and 2 GiB.
var DefaultBudget = Budget{MaxEvents: 1e10, MaxMemory: 2 << 30}

// BudgetError is an estimate over a budget.
type BudgetError struct {
	Scenario string
	Estimate Estimate
	Budget   Budget
	Events   bool // the events are over (else the memory)
}

func (e *BudgetError) Error() string {
	est := e.Estimate
	if e.Events {
		cost := DefaultEventCost // an estimate's own, when it counts dearer events (translate's)
		if est.Events > 0 && est.Runtime/time.Duration(est.Events) > cost {
			cost = est.Runtime / time.Duration(est.Events)
		}
		return fmt.Sprintf("%s: about %s events (%s requests through %s; %s at %s an event), over the budget of %s events: "+
			"shorten the horizon, or raise the budget with --max-events %s",
			e.Scenario, SI(est.Events), SI(est.Requests), lanesWord(est), limiters.FormatDuration(rough(est.Runtime)),
			limiters.FormatDuration(cost), SI(e.Budget.MaxEvents), SI(roundUp(est.Events)))
	}
	what := make([]string, 0, 3)
	for _, p := range est.Parts[:min(len(est.Parts), 3)] {
		what = append(what, p.What+" "+Bytes(p.Bytes))
	}
	return fmt.Sprintf("%s: about %s of memory (%s), over the budget of %s: raise it with --max-memory %s",
		e.Scenario, Bytes(est.Memory), strings.Join(what, ", "), Bytes(e.Budget.MaxMemory), strings.ReplaceAll(Bytes(roundUp(est.Memory)), " ", ""))
}

// rough is d to the second from 10s, to the ms from 10ms, else to the µs.
func rough(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(time.Second)
	case d >= 10*time.Millisecond:
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}

func lanesWord(e Estimate) string {
	if e.Lanes == 1 {
		return "1 lane"
	}
	return fmt.Sprintf("%d lanes", e.Lanes)
}

// Check refuses an estimate over b with a *BudgetError.
func (b Budget) Check(sc *Scenario, e Estimate) error {
	if b.MaxEvents > 0 && e.Events > b.MaxEvents {
		return &BudgetError{Scenario: sc.Name, Estimate: e, Budget: b, Events: true}
	}
	if b.MaxMemory > 0 && e.Memory > b.MaxMemory {
		return &BudgetError{Scenario: sc.Name, Estimate: e, Budget: b}
	}
	return nil
}

// roundUp is v rounded up to two significant digits.
func roundUp(v int64) int64 {
	if v < 100 {
		return v
	}
	scale := int64(1)
	for v/scale >= 100 {
		scale *= 10
	}
	return (v + scale - 1) / scale * scale
}

// SI writes a count with an SI prefix: 1234 → 1.2k, 432000000 → 432M, 2.2e11 → 220G.
func SI(v int64) string {
	f := float64(v)
	for _, u := range []struct {
		div    float64
		suffix string
	}{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if f >= u.div {
			return trimZero(f/u.div) + u.suffix
		}
	}
	return fmt.Sprint(v)
}

// Bytes writes a size in binary units: 13 MiB, 2 GiB, 512 B.
func Bytes(v int64) string {
	f := float64(v)
	for _, u := range []struct {
		div    float64
		suffix string
	}{{1 << 50, " PiB"}, {1 << 40, " TiB"}, {1 << 30, " GiB"}, {1 << 20, " MiB"}, {1 << 10, " KiB"}} {
		if f >= u.div {
			return trimZero(f/u.div) + u.suffix
		}
	}
	return fmt.Sprintf("%d B", v)
}

func trimZero(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	if f >= 100 {
		s = fmt.Sprintf("%.0f", f)
	}
	return strings.TrimSuffix(s, ".0")
}
