package engine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// Predict, then reveal: a workbench (the TUI's p key, the page's predict box) pauses just
// before a decisive moment — the first request after an idle (a burst), or a full fixed
// window reaching its boundary — and asks how many of the next PredictCount requests each
// lane will admit, then plays until every lane has decided them and shows each answer beside
// the guess. What makes a moment decisive, what counts as deciding a request, and how a guess
// is read are here, so that the terminal and the page ask the same questions and score them
// the same way.

// PredictCount is how many of the next requests a prediction is about.
const PredictCount = 5

// BurstIdleSlices is how long a lane must see no request for the next one to start a burst,
// in chart columns (ChartSlice): burst-after-idle's columns are 1ms, so its requests at 50ms,
// 80ms and 150ms each start one (an idle of 10ms or more), the one at 152ms does not.
const BurstIdleSlices = 10

// chartSlices are the widths ChartSlice picks from.
var chartSlices = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 20 * time.Second,
	30 * time.Second, time.Minute,
}

// ChartSlice is a workbench chart's column width for a run of horizon: the smallest of 1, 2,
// 5 × 10ⁿ ms (to 1 minute) that cuts the horizon into at most 400 columns (250ms → 1ms,
// 10s → 50ms, 60s → 200ms), else horizon/400 rounded up.
func ChartSlice(horizon time.Duration) time.Duration {
	for _, d := range chartSlices {
		if horizon/d <= 400 {
			return d
		}
	}
	return (horizon + 399) / 400
}

// Moments is what a workbench remembers of one lane's records to find its decisive moments.
// The zero value is a lane before its first record.
type Moments struct {
	LastRequest  uint64
	LastArrival  time.Duration
	LastDecision Outcome
}

// See notes r and reports whether it marks a moment: burst when r is the lane's first record
// of a request that arrived after an idle of idle or more (or the lane's first request at
// all), refusal when r is a rejection that follows an admission (the limiter starts refusing).
func (m *Moments) See(r Record, idle time.Duration) (burst, refusal bool) {
	if r.Request > m.LastRequest { // requests are numbered in arrival order: a new one
		burst = m.LastRequest == 0 || r.At-m.LastArrival >= idle
		m.LastRequest, m.LastArrival = r.Request, r.At
	}
	switch r.Outcome {
	case OutcomeRejected, OutcomeNever:
		refusal = m.LastDecision == OutcomeAdmitted
		m.LastDecision = r.Outcome
	case OutcomeAdmitted, OutcomeDelayed:
		m.LastDecision = OutcomeAdmitted
	}
	return burst, refusal
}

// FullWindowAhead reports the boundary of a full fixed window (a fixed-window stage at its
// limit, in any lane) that the next event, at next, reaches from now: the moment the window
// resets and what it refused becomes admissible.
func FullWindowAhead(lanes []*Lane, now, next time.Duration) (time.Duration, bool) {
	for _, lane := range lanes {
		for _, stage := range lane.stages {
			if stage.Kind() != limiters.KindFixedWindow {
				continue
			}
			st := stage.Snapshot(now)
			if st.Count >= st.Limit && next >= st.WindowEnd && st.WindowEnd > now {
				return st.WindowEnd, true
			}
		}
	}
	return 0, false
}

// Prediction is one question, about requests First..Last (numbered as in lane 0: every lane
// is offered the same requests), and, once guessed, each lane's guess and what it did.
type Prediction struct {
	First, Last uint64
	Guesses     []int // per lane, how many of the requests it will admit
	Admitted    []int // per lane, how many it admitted so far
	Ended       []int // per lane, how many it has decided for good so far
	seen        [][]bool
}

// NewPrediction is the question about the PredictCount requests from first on, with the
// lanes' guesses (ParseGuesses).
func NewPrediction(first uint64, guesses []int) *Prediction {
	n := len(guesses)
	p := &Prediction{First: first, Last: first + PredictCount - 1, Guesses: guesses,
		Admitted: make([]int, n), Ended: make([]int, n), seen: make([][]bool, n)}
	for i := range p.seen {
		p.seen[i] = make([]bool, PredictCount)
	}
	return p
}

// Watch counts lane i's record r if it ends one of the predicted requests: admitted (at once
// or after a wait), or given up for good (refused by the client, gave up, timed out). A
// rejection a retrying or queueing client has not given up on yet ends nothing.
func (p *Prediction) Watch(i int, r Record) {
	if i >= len(p.seen) || r.Request < p.First || r.Request > p.Last {
		return
	}
	k := r.Request - p.First
	if p.seen[i][k] {
		return
	}
	switch r.Outcome {
	case OutcomeAdmitted, OutcomeDelayed:
		if r.Reason == ReasonWaitEnded {
			return
		}
		p.Admitted[i]++
	case OutcomeRefused, OutcomeGaveUp, OutcomeTimedOut:
	default:
		return
	}
	p.seen[i][k] = true
	p.Ended[i]++
}

// Done reports whether every lane has ended every predicted request.
func (p *Prediction) Done() bool {
	for _, n := range p.Ended {
		if n < PredictCount {
			return false
		}
	}
	return true
}

// Right is how many lanes' guesses were exactly what they admitted.
func (p *Prediction) Right() int {
	n := 0
	for i, g := range p.Guesses {
		if g == p.Admitted[i] {
			n++
		}
	}
	return n
}

// ParseGuesses reads a guess: one whole number from 0 to PredictCount per lane, in lane order,
// separated by spaces, commas or semicolons ("3 5 0", "3,5,0").
func ParseGuesses(text string, lanes int) ([]int, error) {
	fields := strings.Fields(strings.NewReplacer(",", " ", ";", " ").Replace(text))
	if len(fields) != lanes {
		return nil, fmt.Errorf("%d numbers for %d lanes: one guess per lane, in order (e.g. %s)", len(fields), lanes,
			strings.TrimSpace(strings.Repeat("3 ", lanes)))
	}
	out := make([]int, lanes)
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 || n > PredictCount {
			return nil, fmt.Errorf("lane %d: %q is not a count from 0 to %d", i+1, f, PredictCount)
		}
		out[i] = n
	}
	return out, nil
}

// ErrNoFlatSource is ChangeRate's answer when no constant or Poisson source is active.
var ErrNoFlatSource = errors.New("no source with a flat rate (constant or poisson) is active now: the rate control changes those")

// RateChange is what ChangeRate did: source Source (from 0) of kind Kind sends Rate requests
// a second from At on, instead of Was (from At on, a copy of it appended to the sources does).
type RateChange struct {
	Source    int
	Kind      SourceKind
	Rate, Was float64
	At        time.Duration
}

// String is the change as the workbench's status line says it: "source 1: poisson 125/s from
// t=1.5s (was 100/s)".
func (c RateChange) String() string {
	return fmt.Sprintf("source %d: %s %s/s from t=%s (was %s/s)", c.Source+1, c.Kind, rateText(c.Rate), limiters.ShortDuration(c.At), rateText(c.Was))
}

func rateText(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }

// RateStep is what the workbench's rate-up control multiplies a source's rate by (rate-down
// divides): five presses about triple it (1.25⁵ ≈ 3.05), three about double it (≈ 1.95).
const RateStep = 1.25

// ChangeRate multiplies the rate of the last-listed flat-rate source (constant or Poisson)
// active at at by factor from at on: the source ends at at and a copy at the new rate starts
// there (changed again at the same instant, the copy's rate changes: one change). Like
// InjectBurst, it changes the scenario, not a lane: a run of the changed scenario repeats
// every event before at, a written-out scenario or permalink carries the change, and a view
// stepping back before at shows the run without it. The new rate must be within
// [0.01/s, 10,000,000/s]. The caller validates sc afterwards.
func ChangeRate(sc *Scenario, at time.Duration, factor float64) (RateChange, error) {
	k := -1
	for i, src := range sc.Sources {
		flat := src.Kind == SourceConstant || src.Kind == SourcePoisson
		if flat && src.From <= at && (src.Until == 0 || at < src.Until) {
			k = i
		}
	}
	if k < 0 {
		return RateChange{}, ErrNoFlatSource
	}
	src := sc.Sources[k]
	rate := src.Rate * factor
	if rate < 0.01 || rate > 1e7 {
		return RateChange{}, fmt.Errorf("the rate stays %s/s: it must be between 0.01/s and 10,000,000/s", rateText(src.Rate))
	}
	c := RateChange{Source: k, Kind: src.Kind, Rate: rate, Was: src.Rate, At: at}
	if src.From == at {
		sc.Sources[k].Rate = rate
		return c, nil
	}
	sc.Sources[k].Until = at
	src.From, src.Rate = at, rate
	sc.Sources = append(sc.Sources, src)
	return c, nil
}
