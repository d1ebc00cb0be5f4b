package engine

import (
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// MaxClasses is the most request classes a scenario's sources may name.
const MaxClasses = 255

// Classes is the request classes the sources name (Source.Class), in the order they first
// appear; nil when none does.
func (sc *Scenario) Classes() []string {
	var out []string
	for _, s := range sc.Sources {
		if s.Class != "" && !contains(out, s.Class) {
			out = append(out, s.Class)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ClassResult is one request class's requests over the run: what became of them and how long
// the downstream took to answer them (from admission to the answer, the network included).
// A priority partition (limiters.PartitionSpec) should hold the latency and the answered count
// of its critical class while a flood of another is shed.
type ClassResult struct {
	Class    string `json:"class"`
	Offered  int64  `json:"offered"`
	Admitted int64  `json:"admitted"`
	Refused  int64  `json:"refused"`
	TimedOut int64  `json:"timed_out"`
	GaveUp   int64  `json:"gave_up"`
	Answered int64  `json:"answered"` // completed by the downstream (or at once without one)
	Failed   int64  `json:"failed"`   // admitted, then failed at the downstream
	// LatencyP50 and LatencyP99 are of the answered requests; 0 when none was.
	LatencyP50 time.Duration `json:"latency_p50_ns"`
	LatencyP99 time.Duration `json:"latency_p99_ns"`
}

// classCounts is a lane's per-class counts, class c+1 of a request being index c (class 0,
// none, is not counted).
type classCounts struct {
	of  []ClassResult
	lat []histogram
}

func newClassCounts(names []string) *classCounts {
	c := &classCounts{of: make([]ClassResult, len(names)), lat: make([]histogram, len(names))}
	for i, n := range names {
		c.of[i].Class = n
	}
	return c
}

// at is class k's counts, nil for no class.
func (c *classCounts) at(k uint8) *ClassResult {
	if c == nil || k == 0 {
		return nil
	}
	return &c.of[k-1]
}

func (c *classCounts) ended(k uint8, end ending) {
	if r := c.at(k); r != nil {
		switch end {
		case endRefused:
			r.Refused++
		case endTimedOut:
			r.TimedOut++
		case endGaveUp:
			r.GaveUp++
		}
	}
}

func (c *classCounts) answered(k uint8, latency int64) {
	if r := c.at(k); r != nil {
		r.Answered++
		c.lat[k-1].add(latency)
	}
}

// results is every class's counts with its latency percentiles.
func (c *classCounts) results() []ClassResult {
	if c == nil {
		return nil
	}
	out := make([]ClassResult, len(c.of))
	for i := range c.of {
		out[i] = c.of[i]
		out[i].LatencyP50 = c.lat[i].quantile(0.50)
		out[i].LatencyP99 = c.lat[i].quantile(0.99)
	}
	return out
}

// classedStage is a stage that decides per class (limiters.Classed), and the partition each
// scenario class maps to: of[k] for class k (0: none, the unknown partition).
type classedStage struct {
	lim limiters.Classed
	of  []int
}

// SetClasses tells the stack's classed stages (priority partitions) the scenario's class
// names, so that a request's class (0: none, k: names[k−1]) finds its partition.
func (s *Stack) SetClasses(names []string) {
	s.classed = s.classed[:0]
	for _, lim := range s.stages {
		cl, ok := lim.(limiters.Classed)
		if !ok {
			continue
		}
		of := make([]int, len(names)+1)
		of[0] = -1
		for k, n := range names {
			of[k+1] = -1
			for j, pn := range cl.Classes() {
				if pn == n {
					of[k+1] = j
				}
			}
		}
		s.classed = append(s.classed, classedStage{lim: cl, of: of})
	}
}

// Classed reports whether a stage decides per class.
func (s *Stack) Classed() bool { return len(s.classed) > 0 }

// setClass names the class of the request next decided, released or observed.
func (s *Stack) setClass(k uint8) {
	for i := range s.classed {
		c := &s.classed[i]
		c.lim.SetClass(c.of[k])
	}
}
