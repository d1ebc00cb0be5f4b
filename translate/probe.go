package translate

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// Phase is a span of the probe's traffic that exercises one difference.
type Phase struct {
	Name     string        `json:"name"`
	From     time.Duration `json:"from_ns"`
	To       time.Duration `json:"to_ns"` // exclusive
	Requests int           `json:"requests"`
}

// Probe is the built-in traffic, in units of the intent's T and burst b, so that each phase
// tests the same thing at any rate. At 100/1s with a burst of 20 (T = 10ms) it is the peers
// scenario's script exactly:
//
//	first     ⌈1.5b⌉ at 0 (30)                      the first requests: full, empty or cold
//	steady    200, one every T/2 from 100T to 200T  twice the rate (1s to 2s): the bucket drains
//	            (5ms apart, 1s to 2s)               and then one per T passes
//	idle      ⌈1.5b⌉ at 500T (30 at 5s)             after 300T of silence: the burst after idle
//	boundary  5b at B − T/10 and 5b at B (100 at    across a boundary of every window of b·T
//	            6.999s, 100 at 7s)                  (B = ⌈700/b⌉·b·T: 7s), and of 1s windows
//
// The horizon is B + 100T (8s).
func Probe(in Intent) (script []engine.Arrival, phases []Phase, horizon time.Duration) {
	b := in.Burst
	T := in.Interval()
	burst := func(at time.Duration, n int) {
		for range n {
			script = append(script, engine.Arrival{At: at})
		}
	}
	phase := func(name string, from, to time.Duration, start int) {
		phases = append(phases, Phase{Name: name, From: from, To: to, Requests: len(script) - start})
	}
	firstN, boundary, horizon := probeShape(in)
	burst(0, firstN)
	phase("first", 0, 100*T, 0)
	start := len(script)
	half := max(T/2, 1)
	for k := range 200 {
		script = append(script, engine.Arrival{At: 100*T + time.Duration(k)*half})
	}
	phase("steady 2×", 100*T, 500*T, start)
	start = len(script)
	burst(500*T, firstN)
	phase("after idle", 500*T, 600*T, start)
	before := max(T/10, 1)
	start = len(script)
	burst(boundary-before, 5*b)
	burst(boundary, 5*b)
	phase("boundary", 600*T, horizon, start)
	return script, phases, horizon
}

// probeShape is the probe's first burst, ⌈1.5b⌉, its window boundary B = ⌈700/b⌉·b·T, and
// its horizon B + 100T: what Probe lays out, known without laying it out.
func probeShape(in Intent) (first int, boundary, horizon time.Duration) {
	b, T := in.Burst, in.Interval()
	boundary = time.Duration((700+b-1)/b) * time.Duration(b) * T
	return (3*b + 1) / 2, boundary, boundary + 100*T
}

// ProbeScenario is the probe as a scenario: one scripted source, refused requests dropped.
func ProbeScenario(in Intent) (*engine.Scenario, []Phase) {
	script, phases, horizon := Probe(in)
	b := in.Burst
	T := in.Interval()
	dur := limiters.FormatDuration
	boundary := phases[3].To - 100*T
	return &engine.Scenario{
		Name: "translate-probe",
		Description: fmt.Sprintf("The translation probe for %s: %d at once at 0 (the first requests); one every %s (twice the rate) "+
			"from %s to %s; silence; %d at once at %s (after idle); %d at %s and %d at %s (across a window boundary).",
			in, (3*b+1)/2, dur(max(T/2, 1)), dur(100*T), dur(200*T), (3*b+1)/2, dur(500*T), 5*b, dur(boundary-max(T/10, 1)), 5*b, dur(boundary)),
		Seed: 1, Horizon: horizon, Client: engine.Client{Policy: engine.PolicyDrop},
		Sources: []engine.Source{{Kind: engine.SourceScript, Script: script}},
	}, phases
}
