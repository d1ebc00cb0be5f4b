package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// attemptsOf lists the (time, attempt) of every decision about request id.
func decisionsOf(recs []Record, id uint64) []Record {
	var out []Record
	for _, r := range recs {
		if r.Request == id && (r.Outcome == OutcomeAdmitted || r.Outcome == OutcomeRejected) {
			out = append(out, r)
		}
	}
	return out
}

func TestDropGivesUpAtOnce(t *testing.T) {
	sc := &Scenario{Horizon: sec, Client: Client{Policy: PolicyDrop}, Lanes: stacks(t, "token-bucket:capacity=1,rate=1/1s"),
		Sources: []Source{script(0, 0, 0)}}
	recs, lane := traced(t, sc, 0)
	assert.Equal(t, Totals{Offered: 3, OfferedPermits: 3, Attempts: 3, Admitted: 1, AdmittedPermits: 1, RefusedAttempts: 2, Refused: 2, Completed: 1}, lane.Totals)
	assert.Len(t, filter(recs, OutcomeRefused), 2, "a dropped request ends refused")
	assert.Empty(t, filter(recs, OutcomeGaveUp), "gave up is for a retrying client")
}

func TestRetryFixedDelayGivesUpAfterMaxAttempts(t *testing.T) {
	sc := &Scenario{Horizon: sec, Client: Client{Policy: PolicyRetry, Delay: 10 * ms, MaxAttempts: 4},
		Lanes: stacks(t, "token-bucket:capacity=1,rate=1/1s"), Sources: []Source{script(0, 0)}}
	recs, lane := traced(t, sc, 0)
	d := decisionsOf(recs, 2)
	require.Len(t, d, 4)
	for k, r := range d {
		assert.Equal(t, OutcomeRejected, r.Outcome)
		assert.Equal(t, k+1, r.Attempt)
		assert.Equal(t, time.Duration(k)*10*ms, r.At)
	}
	gave := filter(recs, OutcomeGaveUp)
	require.Len(t, gave, 1)
	assert.Equal(t, 30*ms, gave[0].At)
	assert.Equal(t, int64(5), lane.Totals.Attempts)
	assert.Equal(t, int64(3), lane.Totals.Retried)
	assert.Equal(t, int64(4), lane.Totals.RefusedAttempts)
	assert.Equal(t, int64(1), lane.Totals.GaveUp)
}

func TestBackoffDoublesAndCaps(t *testing.T) {
	sc := &Scenario{Horizon: sec, Client: Client{Policy: PolicyBackoff, Delay: 10 * ms, MaxDelay: 40 * ms, MaxAttempts: 6},
		Lanes: stacks(t, "token-bucket:capacity=1,rate=1/1s"), Sources: []Source{script(0, 0)}}
	recs, _ := traced(t, sc, 0)
	d := decisionsOf(recs, 2)
	require.Len(t, d, 6)
	// Delays 10, 20, 40, 40 (80 capped), 40 (160 capped).
	assert.Equal(t, []time.Duration{0, 10 * ms, 30 * ms, 70 * ms, 110 * ms, 150 * ms}, times(d))
}

func TestJitterStaysWithinTheDelay(t *testing.T) {
	c := Client{Policy: PolicyBackoff, Delay: 10 * ms, MaxDelay: 50 * ms, Jitter: true, MaxAttempts: 6}
	sc := &Scenario{Horizon: 10 * sec, Client: c, Lanes: stacks(t, "token-bucket:capacity=1,rate=1/10s"),
		Sources: []Source{{Kind: SourceConstant, Rate: 100, Until: sec}}}
	recs, _ := traced(t, sc, 0)
	byReq := map[uint64][]Record{}
	for _, r := range recs {
		if r.Outcome == OutcomeRejected || r.Outcome == OutcomeAdmitted {
			byReq[r.Request] = append(byReq[r.Request], r)
		}
	}
	distinct := map[time.Duration]bool{}
	n := 0
	for _, d := range byReq {
		for k := 1; k < len(d); k++ {
			gap := d[k].At - d[k-1].At
			limit := min(c.Delay<<(k-1), c.MaxDelay)
			assert.GreaterOrEqual(t, gap, time.Duration(0))
			assert.LessOrEqual(t, gap, limit, "retry %d waited %v, more than its delay %v", k, gap, limit)
			distinct[gap] = true
			n++
		}
	}
	assert.Greater(t, n, 400)
	assert.Greater(t, len(distinct), n/2, "full jitter draws random delays")
}

func TestRetryAfterRetriesAtTheHint(t *testing.T) {
	sc := &Scenario{Horizon: sec, Client: Client{Policy: PolicyRetryAfter, Delay: 500 * ms, MaxAttempts: 3},
		Lanes: stacks(t, "token-bucket:capacity=1,rate=10/1s"), Sources: []Source{script(0, 30*ms)}}
	recs, lane := traced(t, sc, 0)
	d := decisionsOf(recs, 2)
	require.Len(t, d, 2)
	assert.Equal(t, OutcomeRejected, d[0].Outcome)
	assert.Equal(t, 30*ms, d[0].At)
	assert.Equal(t, OutcomeAdmitted, d[1].Outcome, "retrying at the hint is admitted")
	assert.Equal(t, 100*ms, d[1].At, "the token bucket's next permit is due at 100ms")
	assert.Equal(t, int64(2), lane.Totals.Admitted)
	assert.Equal(t, int64(70*ms), int64(lane.Wait.Max), "waited exactly the hint")

	// A stage without a hint (concurrency) falls back to Delay.
	sc = &Scenario{Horizon: 2 * sec, Client: Client{Policy: PolicyRetryAfter, Delay: 500 * ms, MaxAttempts: 3},
		Lanes: stacks(t, "concurrency:max=1"), Sources: []Source{script(0, 0)},
		Downstream: &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: 300 * ms}}}}}
	recs, _ = traced(t, sc, 0)
	assert.Equal(t, []time.Duration{0, 500 * ms}, times(decisionsOf(recs, 2)))
}

func queueScenario(t *testing.T, stack string, size int, timeout time.Duration, src Source) *Scenario {
	return &Scenario{Horizon: 2 * sec, Client: Client{Policy: PolicyQueue, QueueSize: size, Timeout: timeout},
		Lanes: stacks(t, stack), Sources: []Source{src}}
}

func TestQueueIsFIFO(t *testing.T) {
	sc := queueScenario(t, "token-bucket:capacity=1,rate=10/1s", 10, sec, script(0, 0, 0, 0, 10*ms, 20*ms))
	recs, lane := traced(t, sc, 0)
	adm := filter(recs, OutcomeAdmitted)
	require.Len(t, adm, 6)
	for i, r := range adm {
		assert.Equal(t, uint64(i+1), r.Request, "admitted in arrival order")
		assert.Equal(t, time.Duration(i)*100*ms, r.At, "one per emission interval")
	}
	assert.Equal(t, int64(6), lane.Totals.Attempts, "queue re-checks are not attempts")
	assert.Equal(t, int64(5), lane.Totals.Queued)
	assert.Equal(t, 5, lane.Totals.MaxQueue)
}

func TestQueueSizeBound(t *testing.T) {
	sc := queueScenario(t, "token-bucket:capacity=1,rate=10/1s", 2, sec, script(0, 0, 0, 0, 0))
	recs, lane := traced(t, sc, 0)
	refused := filter(recs, OutcomeRefused)
	require.Len(t, refused, 2)
	assert.Equal(t, []uint64{4, 5}, []uint64{refused[0].Request, refused[1].Request}, "the excess is refused at once: the queue is full")
	assert.Equal(t, []time.Duration{0, 0}, times(refused))
	assert.Equal(t, []time.Duration{0, 100 * ms, 200 * ms}, times(filter(recs, OutcomeAdmitted)))
	assert.Equal(t, 2, lane.Totals.MaxQueue)
	assert.Equal(t, int64(2), lane.Totals.Refused)
	assert.Equal(t, int64(0), lane.Totals.GaveUp)
}

func TestQueueTimeoutGivesUp(t *testing.T) {
	sc := queueScenario(t, "token-bucket:capacity=1,rate=1/1s", 10, 250*ms, script(0, 0, 0))
	recs, lane := traced(t, sc, 0)
	to := filter(recs, OutcomeTimedOut)
	require.Len(t, to, 2)
	assert.Equal(t, []time.Duration{250 * ms, 250 * ms}, times(to))
	assert.Equal(t, int64(2), lane.Totals.TimedOut)
	assert.Equal(t, int64(0), lane.Totals.GaveUp, "timed out is its own ending")
	assert.Equal(t, int64(1), lane.Totals.Admitted)
	// After the queue emptied by timeouts, a later arrival goes straight through.
	sc = queueScenario(t, "token-bucket:capacity=1,rate=1/1s", 10, 250*ms, script(0, 0, 0, 1500*ms))
	recs, _ = traced(t, sc, 0)
	assert.Equal(t, []time.Duration{0, 1500 * ms}, times(filter(recs, OutcomeAdmitted)))
}

// When the head of the queue times out, the next request must be tried on its own terms: it
// asks for fewer permits, which come back sooner than the head's.
func TestQueueHeadTimeoutWakesTheNext(t *testing.T) {
	src := Source{Kind: SourceScript, Script: []Arrival{{At: 0, Permits: 5}, {At: ms, Permits: 5}, {At: 50 * ms, Permits: 1}}}
	sc := queueScenario(t, "token-bucket:capacity=5,rate=10/1s", 10, 60*ms, src)
	recs, lane := traced(t, sc, 0)
	to := filter(recs, OutcomeTimedOut)
	require.Len(t, to, 1)
	assert.Equal(t, uint64(2), to[0].Request)
	assert.Equal(t, 61*ms, to[0].At)
	adm := filter(recs, OutcomeAdmitted)
	require.Len(t, adm, 2, "request 3 (1 permit, due at 100ms) must not time out behind a wake meant for 5 permits")
	assert.Equal(t, uint64(3), adm[1].Request)
	assert.Equal(t, 100*ms, adm[1].At)
	assert.Equal(t, int64(1), lane.Totals.TimedOut)
}

// A concurrency-limited stack has no hint: its queue must be woken by completions.
func TestQueueWokenByCompletions(t *testing.T) {
	for _, stack := range []string{"concurrency:max=2", "token-bucket:capacity=10,rate=100/1s+concurrency:max=2", "concurrency:max=2+token-bucket:capacity=10,rate=100/1s"} {
		sc := queueScenario(t, stack, 10, sec, script(0, 0, 0, 0, 0))
		sc.Downstream = &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: 100 * ms}}}}
		recs, lane := traced(t, sc, 0)
		assert.Equal(t, []time.Duration{0, 0, 100 * ms, 100 * ms, 200 * ms}, times(filter(recs, OutcomeAdmitted)), stack)
		assert.Equal(t, int64(5), lane.Totals.Admitted, stack)
		assert.Equal(t, int64(0), lane.Totals.TimedOut, stack)
		assert.Equal(t, 2, lane.Totals.MaxInFlight, stack)
	}
}

// Rate-limited with a downstream: the wake comes from the hint even while completions also drain.
func TestQueueRateAndCompletionsTogether(t *testing.T) {
	sc := queueScenario(t, "token-bucket:capacity=1,rate=20/1s+concurrency:max=1", 100, 2*sec, Source{Kind: SourceConstant, Rate: 100, Until: 100 * ms})
	sc.Downstream = &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: 80 * ms}}}}
	recs, lane := traced(t, sc, 0)
	adm := filter(recs, OutcomeAdmitted)
	require.Len(t, adm, 10, "all ten wait and are admitted")
	for i := 1; i < len(adm); i++ {
		assert.Equal(t, adm[i-1].Request+1, adm[i].Request, "FIFO")
		assert.GreaterOrEqual(t, adm[i].At-adm[i-1].At, 80*ms, "one in flight at a time")
	}
	assert.Equal(t, 1, lane.Totals.MaxInFlight)
}

func TestStackReleasesConcurrencyAndCountsWasted(t *testing.T) {
	// Concurrency first, rate second: the refused requests' concurrency permits come back.
	sc := &Scenario{Horizon: 100 * ms, Bins: 1, Client: Client{Policy: PolicyDrop},
		Lanes:      stacks(t, "concurrency:max=2+token-bucket:capacity=1,rate=1/1s"),
		Sources:    []Source{script(0, 0, 0, ms)},
		Downstream: &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: sec}}}}}
	res := run(t, sc)
	lane := res.Lanes[0]
	assert.Equal(t, int64(1), lane.Totals.Admitted)
	assert.Equal(t, int64(3), lane.Totals.RefusedAttempts)
	assert.Equal(t, int64(0), lane.Totals.Wasted, "concurrency permits are released, not wasted")
	assert.Equal(t, []int{1, 0}, lane.Bins[0].Available, "one held by the request in service, none leaked")

	// Rate first, concurrency second: the rate permits the refused requests took are refunded.
	sc.Lanes = stacks(t, "token-bucket:capacity=5,rate=1/1s+concurrency:max=1")
	lane = run(t, sc).Lanes[0]
	assert.Equal(t, int64(1), lane.Totals.Admitted)
	assert.Equal(t, int64(0), lane.Totals.Wasted, "refunded, not wasted")
	assert.Equal(t, []int{4, 0}, lane.Bins[0].Available, "only the admitted request's token is gone")

	// With Waste, the token bucket keeps them: wasted.
	sc.Lanes[0].Waste = true
	lane = run(t, sc).Lanes[0]
	assert.Equal(t, int64(1), lane.Totals.Admitted)
	assert.Equal(t, int64(3), lane.Totals.Wasted)
	assert.Equal(t, []int{1, 0}, lane.Bins[0].Available)
}

func TestDownstreamPoolFailures(t *testing.T) {
	sc := &Scenario{Horizon: 500 * ms, Bins: 1, Client: Client{Policy: PolicyDrop},
		Lanes:      stacks(t, "concurrency:max=100"),
		Sources:    []Source{script(0, 0, 0, 0, 0)},
		Downstream: &Downstream{Pool: 2, Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: sec}}}}}
	lane := run(t, sc).Lanes[0]
	assert.Equal(t, int64(5), lane.Totals.Admitted)
	assert.Equal(t, int64(3), lane.Totals.Failed)
	assert.Equal(t, 2, lane.Totals.MaxInFlight)
	assert.Equal(t, []int{98}, lane.Bins[0].Available, "a failed request's permits come back")
}

func TestDownstreamPhasesSwitchAtFrom(t *testing.T) {
	sc := &Scenario{Horizon: 3 * sec, Client: Client{Policy: PolicyDrop}, Lanes: stacks(t, "concurrency:max=100"),
		Sources: []Source{script(500*ms, sec-1, sec, 1500*ms)},
		Downstream: &Downstream{Phases: []Phase{
			{From: 0, Service: Distribution{Kind: DistConstant, Mean: 10 * ms}},
			{From: sec, Service: Distribution{Kind: DistConstant, Mean: 100 * ms}},
		}}}
	recs, _ := traced(t, sc, 0)
	assert.Equal(t, []time.Duration{510 * ms, sec - 1 + 10*ms, 1100 * ms, 1600 * ms}, times(filter(recs, OutcomeCompleted)))
}

func TestServiceDistributions(t *testing.T) {
	for _, tc := range []struct {
		d        Distribution
		mean     float64
		min, max time.Duration
	}{
		{Distribution{Kind: DistUniform, Min: 10 * ms, Max: 30 * ms}, float64(20 * ms), 10 * ms, 30 * ms},
		{Distribution{Kind: DistExponential, Mean: 20 * ms}, float64(20 * ms), 0, time.Hour},
		{Distribution{Kind: DistLogNormal, Mean: 20 * ms, Sigma: 0.5}, float64(20*ms) * 1.1331, 0, time.Hour}, // mean = median·e^(σ²/2)
	} {
		sc := &Scenario{Horizon: 100 * sec, Seed: 3, Client: Client{Policy: PolicyDrop}, Lanes: stacks(t, "concurrency:max=1000"),
			Sources:    []Source{{Kind: SourceConstant, Rate: 100, Until: 90 * sec}},
			Downstream: &Downstream{Phases: []Phase{{Service: tc.d}}}}
		l, err := NewLane(sc, 0)
		require.NoError(t, err)
		var sum float64
		for range 20000 {
			v := time.Duration(l.down.serviceTime(0))
			assert.GreaterOrEqual(t, v, tc.min)
			assert.LessOrEqual(t, v, tc.max)
			sum += float64(v)
		}
		assert.InEpsilon(t, tc.mean, sum/20000, 0.03, tc.d.Kind)
	}
}

// A request larger than a stage can ever grant is refused as never and not retried.
func TestNeverIsNotRetried(t *testing.T) {
	src := Source{Kind: SourceScript, Script: []Arrival{{At: 0, Permits: 5}}}
	sc := &Scenario{Horizon: sec, Client: Client{Policy: PolicyRetry, Delay: ms, MaxAttempts: 5},
		Lanes: stacks(t, "token-bucket:capacity=3,rate=10/1s"), Sources: []Source{src}}
	recs, lane := traced(t, sc, 0)
	assert.Equal(t, int64(1), lane.Totals.Attempts)
	assert.Equal(t, int64(1), lane.Totals.Never)
	assert.Len(t, filter(recs, OutcomeNever), 1)
}

func TestTraceIsCappedAndMarkedTruncated(t *testing.T) {
	sc := &Scenario{Horizon: sec, Client: Client{Policy: PolicyDrop}, Lanes: stacks(t, "concurrency:max=10"),
		Sources: []Source{{Kind: SourceConstant, Rate: 100}}, Trace: true}
	l, err := NewLane(sc, 0)
	require.NoError(t, err)
	l.rec.traceLimit = 30
	require.NoError(t, l.RunUntil(sc.Horizon))
	res := l.Result()
	assert.Len(t, res.Trace, 30)
	assert.True(t, res.Truncated)
	assert.Equal(t, int64(100), res.Totals.Admitted, "counting goes on")
}

// A lane stepped by RunUntil in slices (the TUI's way) ends where Run ends.
func TestRunUntilInSlicesEqualsRun(t *testing.T) {
	sc := &Scenario{Horizon: 5 * sec, Bins: 50, Client: Client{Policy: PolicyQueue, QueueSize: 5, Timeout: 30 * ms},
		Lanes: stacks(t, "token-bucket:capacity=5,rate=50/1s"), Sources: []Source{{Kind: SourcePoisson, Rate: 80}},
		Downstream: &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistExponential, Mean: 20 * ms}}}}}
	want := run(t, sc).Lanes[0]
	l, err := NewLane(sc, 0)
	require.NoError(t, err)
	for at := time.Duration(0); !l.Done(); at += 37 * ms {
		require.NoError(t, l.RunUntil(at))
		assert.LessOrEqual(t, l.Now(), max(at, 0))
	}
	got := l.Result()
	assert.Equal(t, want.Totals, got.Totals)
	assert.Equal(t, want.Bins, got.Bins)
	assert.Equal(t, want.Events, got.Events)
}

func TestRunStopsOnCancelAndReportsProgress(t *testing.T) {
	sc := &Scenario{Horizon: 24 * time.Hour, Client: Client{Policy: PolicyDrop}, Lanes: stacks(t, "concurrency:max=1", "leaky-bucket:rate=1/1s"),
		Sources: []Source{{Kind: SourceConstant, Rate: 1000}}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, sc, nil)
	assert.ErrorIs(t, err, context.Canceled)

	sc.Horizon = 10 * sec
	p := NewProgress(sc)
	assert.Zero(t, p.Fraction())
	_, err = Run(context.Background(), sc, p)
	require.NoError(t, err)
	assert.Equal(t, 1.0, p.Fraction())
	var nilProgress *Progress
	assert.Zero(t, nilProgress.Fraction())
}

// At every event, each concurrency stage holds exactly the permits of the requests in service:
// no refusal, pool failure, queue re-check or timeout leaks one.
func TestConcurrencyPermitsNeverLeak(t *testing.T) {
	clients := []Client{
		{Policy: PolicyDrop},
		{Policy: PolicyRetry, Delay: 3 * ms, MaxAttempts: 3},
		{Policy: PolicyBackoff, Delay: ms, MaxDelay: 20 * ms, Jitter: true, MaxAttempts: 4},
		{Policy: PolicyRetryAfter, Delay: 2 * ms, MaxAttempts: 3},
		{Policy: PolicyQueue, QueueSize: 8, Timeout: 40 * ms},
	}
	stackTexts := []string{"concurrency:max=4", "token-bucket:capacity=5,rate=200/1s+concurrency:max=4",
		"concurrency:max=4+leaky-bucket:rate=150/1s", "concurrency:max=6+sliding-window:limit=20,window=100ms+concurrency:max=3"}
	for ci, c := range clients {
		for _, text := range stackTexts {
			src := Source{Kind: SourcePoisson, Rate: 300}
			scr := Source{Kind: SourceScript, Script: []Arrival{{At: 100 * ms, Permits: 2}, {At: 100 * ms, Permits: 3}, {At: 200 * ms, Permits: 9}}}
			sc := &Scenario{Horizon: 2 * sec, Seed: uint64(ci), Client: c, Lanes: stacks(t, text), Sources: []Source{src, scr},
				Downstream: &Downstream{Pool: 3, Phases: []Phase{{Service: Distribution{Kind: DistExponential, Mean: 15 * ms}}}}}
			require.NoError(t, sc.Validate())
			l, err := NewLane(sc, 0)
			require.NoError(t, err)
			for {
				more, err := l.Step()
				require.NoError(t, err)
				if !more {
					break
				}
				held := 0
				for i := range l.reqs {
					if l.reqs[i].state == reqInService {
						held += l.reqs[i].permits
					}
				}
				for k, s := range l.stages {
					if s.Kind() == "concurrency" {
						require.Equal(t, s.MaxPermits()-held, s.AvailableAt(0), "%s, %s: stage %d at %v", c.Policy, text, k+1, l.Now())
					}
				}
				require.LessOrEqual(t, l.InFlight(), 3)
			}
			res := l.Result()
			assert.Greater(t, res.Totals.Admitted, int64(0))
		}
	}
}

// A request that can never pass (more permits than a stage can ever grant) and reached the
// queue behind others must not block the queue until its timeout: it is refused as never.
func TestQueueDropsNeverAtTheHead(t *testing.T) {
	src := Source{Kind: SourceScript, Script: []Arrival{{At: 0, Permits: 3}, {At: ms, Permits: 1}, {At: 2 * ms, Permits: 5}, {At: 3 * ms, Permits: 1}}}
	sc := queueScenario(t, "token-bucket:capacity=3,rate=100/1s", 10, 100*ms, src)
	recs, lane := traced(t, sc, 0)
	adm := filter(recs, OutcomeAdmitted)
	require.Len(t, adm, 3)
	assert.Equal(t, []uint64{1, 2, 4}, []uint64{adm[0].Request, adm[1].Request, adm[2].Request})
	assert.Equal(t, []time.Duration{0, 10 * ms, 20 * ms}, times(adm))
	assert.Equal(t, int64(1), lane.Totals.Never)
	assert.Equal(t, int64(0), lane.Totals.TimedOut)
	refused := filter(recs, OutcomeRefused)
	require.Len(t, refused, 1)
	assert.Equal(t, uint64(3), refused[0].Request)
	assert.Equal(t, 10*ms, refused[0].At)
	assert.Equal(t, int64(1), lane.Totals.Refused)
	never := filter(recs, OutcomeNever)
	require.Len(t, never, 1, "the refusal is explained")
	assert.Equal(t, uint64(3), never[0].Request)
	assert.Contains(t, never[0].Reason, "more than the 3")
}

// A heavy-tailed service time can exceed int64 nanoseconds; it must saturate, not wrap
// negative (which would schedule a completion in the past and stop the run).
func TestServiceTimeNeverNegative(t *testing.T) {
	sc := &Scenario{Horizon: time.Hour, Client: Client{Policy: PolicyDrop}, Lanes: stacks(t, "concurrency:max=1000000"),
		Sources:    []Source{{Kind: SourceConstant, Rate: 1000}},
		Downstream: &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistLogNormal, Mean: time.Hour, Sigma: 5}}}}}
	require.NoError(t, sc.Validate())
	l, err := NewLane(sc, 0)
	require.NoError(t, err)
	for range 50_000 { // P(median·e^(5z) > 2^63ns) = P(z > 2.95) ≈ 0.16%: ~80 overflows expected
		require.GreaterOrEqual(t, l.down.serviceTime(0), int64(0))
	}
	sc.Horizon = 10 * time.Minute
	res := run(t, sc)
	assert.Equal(t, res.Lanes[0].Totals.Offered, res.Lanes[0].Totals.Admitted)
}

// The longest delays validation accepts (MaxTime is refused: TestValidateRefusesValuesPastTheRange).
func TestHugeDelaysSaturate(t *testing.T) {
	huge := MaxTime - 1
	for _, c := range []Client{
		{Policy: PolicyQueue, QueueSize: 5, Timeout: huge},
		{Policy: PolicyRetry, Delay: huge, MaxAttempts: 2},
		{Policy: PolicyBackoff, Delay: huge / 2, MaxAttempts: 5},
	} {
		sc := &Scenario{Horizon: 10 * sec, Client: c, Lanes: stacks(t, "token-bucket:capacity=1,rate=1/1s"),
			Sources: []Source{{Kind: SourceConstant, Rate: 10}}}
		_, err := runErr(sc)
		assert.NoError(t, err, c.Policy)
	}
}

// The queue's re-checks must not burn a rate stage's permits while a bulkhead behind it is
// full: with refunds nothing is wasted; with Waste only the client's real attempt wastes one.
func TestQueueRecheckDoesNotWasteRatePermits(t *testing.T) {
	sc := queueScenario(t, "token-bucket:capacity=5,rate=10/1s+concurrency:max=1", 100, 10*sec, script(0, 0, 0, 0, 0))
	sc.Downstream = &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: 10 * ms}}}}
	recs, lane := traced(t, sc, 0)
	assert.Equal(t, []time.Duration{0, 10 * ms, 20 * ms, 30 * ms, 40 * ms}, times(filter(recs, OutcomeAdmitted)))
	assert.Equal(t, int64(0), lane.Totals.Wasted, "request 2's refused attempt got its token back")

	sc.Lanes[0].Waste = true
	recs, lane = traced(t, sc, 0)
	assert.Equal(t, []time.Duration{0, 10 * ms, 20 * ms, 30 * ms, 100 * ms}, times(filter(recs, OutcomeAdmitted)))
	assert.Equal(t, int64(1), lane.Totals.Wasted, "request 2's first attempt took a token the bulkhead then refused")
}
