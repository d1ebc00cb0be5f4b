package golden

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/ratelimit"
	"golang.org/x/time/rate"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// twinEpoch is the time.Time the direct library calls below take for virtual 0: not the one
// the kinds use, since only differences of times may matter.
var twinEpoch = time.Date(2024, time.June, 1, 12, 0, 0, 0, time.UTC)

// libraryTwin makes the call a program using the library directly would make for a request
// of n at t, and undoes it when a later stage of the stack refused.
type libraryTwin interface {
	decide(t time.Time, n int, cancel bool) (limiters.Decision, time.Duration)
}

type xTimeRateDirect struct {
	lim     *rate.Limiter
	burst   int
	maxWait time.Duration
}

func (w *xTimeRateDirect) decide(t time.Time, n int, cancel bool) (limiters.Decision, time.Duration) {
	if w.maxWait == 0 {
		switch {
		case w.lim.AllowN(t, n):
			return limiters.Admitted, 0 // AllowN has no undo: a later refusal wastes it
		case n > w.burst:
			return limiters.Never, 0
		}
		return limiters.Rejected, 0
	}
	r := w.lim.ReserveN(t, n)
	if !r.OK() {
		return limiters.Never, 0
	}
	d := r.DelayFrom(t)
	if d > w.maxWait || cancel {
		r.CancelAt(t)
	}
	if d > w.maxWait {
		return limiters.Rejected, d
	}
	return limiters.Admitted, d
}

type uberDirect struct {
	lim   ratelimit.Limiter
	clock *directClock
	slack int
}

type directClock struct{ now time.Time }

func (c *directClock) Now() time.Time      { return c.now }
func (c *directClock) Sleep(time.Duration) {}

func (w *uberDirect) decide(t time.Time, n int, _ bool) (limiters.Decision, time.Duration) {
	if n > w.slack+1 {
		return limiters.Never, 0 // ratelab's cap on n Takes in a row (uber has no TakeN): no call
	}
	w.clock.now = t
	var last time.Time
	for range n {
		last = w.lim.Take()
	}
	return limiters.Admitted, max(last.Sub(t), 0)
}

func newTwin(t *testing.T, s limiters.Spec) libraryTwin {
	switch s := s.(type) {
	case peers.XTimeRateSpec:
		limit := rate.Limit(float64(s.Rate.Permits) / s.Rate.Window.Seconds())
		return &xTimeRateDirect{lim: rate.NewLimiter(limit, s.Burst), burst: s.Burst, maxWait: s.CallerWait()}
	case peers.UberSpec:
		c := &directClock{now: twinEpoch}
		slack := ratelimit.WithSlack(s.Slack)
		if s.Slack == 0 {
			slack = ratelimit.WithoutSlack
		}
		return &uberDirect{lim: ratelimit.New(s.Rate.Permits, ratelimit.Per(s.Rate.Window), slack, ratelimit.WithClock(c)), clock: c, slack: s.Slack}
	}
	t.Fatalf("no twin for %s", s)
	return nil
}

// Proof of fidelity on recorded traces: the simulator runs x-time-rate and uber lanes (every
// mode; multi-permit requests; a stack whose second stage refuses, so that the peer's
// reservation is cancelled) on mixed random traffic with the trace on; then each lane's
// recorded decisions are replayed on a separate instance of the real library (its own
// epoch: only differences of times may matter), called
// directly at the recorded times — every decision and every wait (the time from the delayed
// record to the one where its wait ended) must be the library's.
func TestPeersDecideAsTheLibraryOnRecordedTraces(t *testing.T) {
	stacks := []string{
		"x-time-rate:rate=100/1s,burst=3",
		"x-time-rate:rate=100/1s,burst=3+fixed-window:limit=80,window=1s", // AllowN has no undo: wasted
		"x-time-rate:rate=3/1s,burst=2,timeout=500ms",
		"x-time-rate:rate=7/1s,burst=4,mode=wait",
		"x-time-rate:rate=100/1s,burst=5,mode=wait+fixed-window:limit=90,window=1s",
		"uber:rate=100/1s",
		"uber:rate=50/1s,slack=0",
		"uber:rate=30/1s,slack=3+fixed-window:limit=27,window=1s",
	}
	total := 0
	for _, text := range stacks {
		stack, err := engine.ParseStack(text)
		require.NoError(t, err)
		r, _ := stack[0].NominalRate()
		perSecond := float64(r.Permits) / r.Window.Seconds()
		// About 1.4 times the rate: single requests, pairs, and a burst of 3 seconds' worth.
		horizon := time.Duration(3000/(1.4*perSecond)) * time.Second
		sc := &engine.Scenario{Name: "peer-fidelity", Seed: 11, Horizon: horizon, Bins: 1, Trace: true,
			Client: engine.Client{Policy: engine.PolicyDrop}, Lanes: []engine.LaneSpec{{Stack: stack}},
			Sources: []engine.Source{
				{Kind: engine.SourcePoisson, Rate: perSecond},
				{Kind: engine.SourcePoisson, Rate: 0.2 * perSecond, Permits: 2},
				{Kind: engine.SourceBursts, Bursts: []engine.Burst{{At: horizon / 3, Count: int(3 * perSecond)}}},
			}}
		require.NoError(t, sc.Validate())
		res, err := engine.Run(context.Background(), sc, nil)
		require.NoError(t, err)
		lane := res.Lanes[0]
		require.False(t, lane.Truncated, lane.Name)
		twin := newTwin(t, stack[0])
		type decision struct {
			at      time.Duration
			n       int
			outcome limiters.Decision
			stage   int
			wait    time.Duration
			pending bool // delayed, its wait not ended by the horizon
		}
		var recorded []*decision
		delayed := map[uint64]*decision{}
		for _, rec := range lane.Trace {
			d := &decision{at: rec.At, n: rec.Permits, stage: rec.Stage}
			switch {
			case rec.Outcome == engine.OutcomeAdmitted && rec.State == nil: // its wait ended
				dd, ok := delayed[rec.Request]
				require.True(t, ok, "%s: request %d ended a wait it never began", lane.Name, rec.Request)
				dd.wait, dd.pending = rec.At-dd.at, false
				continue
			case rec.Outcome == engine.OutcomeAdmitted:
				d.outcome = limiters.Admitted
			case rec.Outcome == engine.OutcomeDelayed:
				d.outcome, d.pending = limiters.Admitted, true
				delayed[rec.Request] = d
			case rec.Outcome == engine.OutcomeRejected:
				d.outcome = limiters.Rejected
			case rec.Outcome == engine.OutcomeNever:
				d.outcome = limiters.Never
			default:
				continue
			}
			recorded = append(recorded, d)
		}
		counts := map[string]int{}
		for j, d := range recorded {
			// A refusal by a later stage: the peer decided (and, if it reserved, is cancelled).
			later := d.outcome != limiters.Admitted && d.stage > 0
			want, wait := twin.decide(twinEpoch.Add(d.at), d.n, later)
			got := d.outcome
			if later {
				got = limiters.Admitted // what the peer itself said
				require.Equal(t, limiters.Admitted, want, "%s: decision %d at %s n=%d: refused by stage %d, so the peer admitted", lane.Name, j, ms(d.at), d.n, d.stage+1)
				counts["cancelled"]++
				continue
			}
			require.Equal(t, want, got, "%s: decision %d at %s n=%d", lane.Name, j, ms(d.at), d.n)
			if got == limiters.Admitted && d.pending {
				require.GreaterOrEqual(t, d.at+wait, sc.Horizon, "%s: decision %d at %s n=%d: a wait not ended by the horizon", lane.Name, j, ms(d.at), d.n)
			} else if got == limiters.Admitted {
				require.Equal(t, wait, d.wait, "%s: decision %d at %s n=%d: the wait", lane.Name, j, ms(d.at), d.n)
				if wait > 0 {
					counts["waited"]++
				}
			}
			counts[got.String()]++
			if d.n > 1 {
				counts["multi-permit"]++
			}
		}
		t.Logf("%s: %d decisions %v", lane.Name, len(recorded), counts)
		assert.Greater(t, len(recorded), 2500, lane.Name)
		assert.Greater(t, counts["multi-permit"], 50, lane.Name)
		if len(stack) > 1 {
			assert.Greater(t, counts["cancelled"], 10, "%s: the second stage refused some", lane.Name)
		}
		if w, _ := stack[0].(limiters.Waiting); w.CallerWait() > 0 {
			assert.Greater(t, counts["waited"], 100, lane.Name)
		}
		total += len(recorded)
	}
	t.Logf("%d recorded decisions replayed on the libraries", total)
}
