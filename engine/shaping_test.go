package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
)

// A shaping lane admits after a wait instead of refusing: a token bucket of 100/s with
// capacity 3 and five requests at once lets three go at once and the fourth and fifth after
// 10ms and 20ms; the downstream sees them then, and the waits are measured.
func TestShapingLaneAdmitsAfterTheWait(t *testing.T) {
	sc := &Scenario{Horizon: sec, Bins: 1, Client: Client{Policy: PolicyDrop},
		Lanes:      stacks(t, "token-bucket:capacity=3,rate=100/1s"),
		Sources:    []Source{script(0, 0, 0, 0, 0)},
		Downstream: &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: 5 * ms}}}}}
	sc.Lanes[0].MaxWait = time.Second
	require.NoError(t, sc.Validate())
	recs, lane := traced(t, sc, 0)
	assert.Equal(t, []time.Duration{0, 0, 0, 10 * ms, 20 * ms}, times(filter(recs, OutcomeAdmitted)), "they go on when their waits end")
	assert.Equal(t, []time.Duration{0, 0}, times(filter(recs, OutcomeDelayed)), "decided at once")
	assert.Contains(t, filter(recs, OutcomeDelayed)[1].Reason, "; waits 20ms")
	assert.Equal(t, []time.Duration{5 * ms, 5 * ms, 5 * ms, 15 * ms, 25 * ms}, times(filter(recs, OutcomeCompleted)),
		"the downstream serves each after its wait")
	assert.Equal(t, int64(5), lane.Totals.Admitted)
	assert.Equal(t, int64(2), lane.Totals.Delayed)
	assert.Equal(t, int64(0), lane.Totals.RefusedAttempts)
	assert.Equal(t, 20*ms, lane.Wait.Max, "the longest wait")
	assert.Equal(t, lane.Totals.Delayed, lane.Bins[0].Delayed, "the bins count delays too")

	// A caller who waits at most 15ms: the fifth, due in 20ms, is refused and takes nothing.
	sc.Lanes[0].MaxWait = 15 * ms
	recs, lane = traced(t, sc, 0)
	assert.Equal(t, []time.Duration{0, 0, 0, 10 * ms}, times(filter(recs, OutcomeAdmitted)))
	assert.Equal(t, int64(1), lane.Totals.RefusedAttempts)
	assert.Equal(t, 3, lane.Bins[0].Available[0], "by 1s the bucket is full again")
}

// The leaky bucket as a queue: with a maximum wait it is the textbook picture, requests wait
// and leave one per T; those that would wait longer than the maximum are refused.
func TestLeakyBucketQueueLeavesOnePerInterval(t *testing.T) {
	var at []time.Duration
	for range 10 {
		at = append(at, 0)
	}
	sc := &Scenario{Horizon: sec, Bins: 1, Client: Client{Policy: PolicyDrop},
		Lanes: stacks(t, "leaky-bucket:rate=100/1s"), Sources: []Source{script(at...)}}
	sc.Lanes[0].MaxWait = 50 * ms
	recs, lane := traced(t, sc, 0)
	assert.Equal(t, []time.Duration{0, 10 * ms, 20 * ms, 30 * ms, 40 * ms, 50 * ms}, times(filter(recs, OutcomeAdmitted)))
	assert.Equal(t, int64(4), lane.Totals.RefusedAttempts, "the 7th would wait 60ms > 50ms")
	assert.Equal(t, 10*ms, lane.MinSpacing, "one per T leaves the queue")
}

// In a shaping stack a bulkhead decides at once and holds its permits through the wait; when
// it refuses, the earlier stage's reservation is cancelled and costs nothing.
func TestShapingStackCancelsReservationsTheBulkheadRefuses(t *testing.T) {
	sc := &Scenario{Horizon: 100 * ms, Bins: 1, Client: Client{Policy: PolicyDrop},
		Lanes:      stacks(t, "token-bucket:capacity=3,rate=100/1s+concurrency:max=4"),
		Sources:    []Source{script(0, 0, 0, 0, 0, 0, 50*ms)},
		Downstream: &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: time.Second}}}}}
	sc.Lanes[0].MaxWait = time.Second
	recs, lane := traced(t, sc, 0)
	assert.Equal(t, []time.Duration{0, 0, 0, 10 * ms}, times(filter(recs, OutcomeAdmitted)))
	assert.Equal(t, int64(3), lane.Totals.RefusedAttempts, "5th and 6th at 0, 7th at 50ms: the bulkhead holds 4")
	assert.Equal(t, []int{3, 0}, lane.Bins[0].Available,
		"the bucket lost only the four it admitted: the refused reservations were cancelled, and it refilled by 100ms")
	assert.Equal(t, int64(0), lane.Totals.Wasted)
}

// Shaping needs stages that reserve (or release): a sliding window cannot, and the scenario
// is refused at validation, naming the kind and the capability.
func TestShapingRefusesAKindThatCannotReserve(t *testing.T) {
	sc := &Scenario{Horizon: sec, Client: Client{Policy: PolicyDrop},
		Lanes: stacks(t, "token-bucket:capacity=3,rate=100/1s+sliding-window:limit=10,window=1s"), Sources: []Source{script(0)}}
	sc.Lanes[0].MaxWait = 10 * ms
	err := sc.Validate()
	require.Error(t, err)
	assert.Equal(t, "limiters[0].max_wait: stage 2: limiters: sliding-window does not support reserve (its capabilities: "+
		"retry-after, refund): a shaping lane's stages must reserve (or release)", err.Error())
	sc.Lanes[0].MaxWait = -1
	assert.ErrorContains(t, sc.Validate(), "limiters[0].max_wait: must not be negative")
}

// feedbackBulkhead is a bulkhead that records the feedback its stack gives it.
type feedbackBulkhead struct {
	*limiters.Concurrency
	latencies []time.Duration
	failed    int
}

func (f *feedbackBulkhead) ObserveAt(_ time.Duration, _ int, latency time.Duration, ok bool) {
	if ok {
		f.latencies = append(f.latencies, latency)
	} else {
		f.failed++
	}
}

// A stage with the feedback capability hears every completion with its latency at the
// downstream, and every failure: what an adaptive limit will learn from.
func TestFeedbackHearsEveryCompletion(t *testing.T) {
	fb := &feedbackBulkhead{}
	sc := &Scenario{Horizon: sec, Bins: 1, Client: Client{Policy: PolicyDrop},
		Lanes:      stacks(t, "concurrency:max=10"),
		Sources:    []Source{script(0, 0, 0, 100*ms)},
		Downstream: &Downstream{Pool: 2, Phases: []Phase{{Service: Distribution{Kind: DistUniform, Min: 10 * ms, Max: 30 * ms}}}}}
	sc.Lanes[0].Build = func(limiters.Clock) ([]limiters.Limiter, error) {
		c, err := limiters.NewConcurrency(10)
		fb.Concurrency = c
		return []limiters.Limiter{fb}, err
	}
	_, lane := traced(t, sc, 0)
	require.Len(t, fb.latencies, 3, "three served")
	assert.Equal(t, 1, fb.failed, "the third at 0 found the pool of 2 full")
	assert.Equal(t, int64(1), lane.Totals.Failed)
	for _, l := range fb.latencies {
		assert.True(t, l >= 10*ms && l <= 30*ms, "latency %v is the service time", l)
	}
	assert.Equal(t, 0, fb.InFlight(), "and every permit came back")
}

// waitingBucket is a token bucket spec whose callers wait up to wait: what a peer's mode=wait
// or timeout= declares through limiters.Waiting.
type waitingBucket struct {
	limiters.TokenBucketSpec
	wait time.Duration
}

func (w waitingBucket) CallerWait() time.Duration { return w.wait }

// A stage whose spec says its callers wait shapes the lane by itself, with its own maximum
// wait, while the other stages of the stack still decide at once.
func TestAStageThatWaitsShapesItsLane(t *testing.T) {
	bucket := waitingBucket{limiters.TokenBucketSpec{Capacity: 1, Rate: limiters.PerSecond(100)}, 25 * ms}
	sc := &Scenario{Horizon: sec, Bins: 1, Client: Client{Policy: PolicyDrop},
		Lanes:   []LaneSpec{{Stack: []limiters.Spec{bucket}}},
		Sources: []Source{script(0, 0, 0, 0, 0)}}
	require.NoError(t, sc.Validate())
	recs, lane := traced(t, sc, 0)
	assert.Equal(t, []time.Duration{0, 10 * ms, 20 * ms}, times(filter(recs, OutcomeAdmitted)), "waits of 10ms and 20ms fit in 25ms")
	assert.Equal(t, int64(2), lane.Totals.RefusedAttempts)

	// Behind a plain token bucket that refuses at once, only the waiting stage waits.
	sc.Lanes[0].Stack = []limiters.Spec{limiters.TokenBucketSpec{Capacity: 2, Rate: limiters.PerSecond(1)}, bucket}
	recs, _ = traced(t, sc, 0)
	assert.Equal(t, []time.Duration{0, 10 * ms}, times(filter(recs, OutcomeAdmitted)), "the first stage passes two, the second paces them")

	// A stage that must wait but cannot reserve is refused at validation.
	sc.Lanes[0].Stack = []limiters.Spec{limiters.FixedWindowSpec{Limit: 1, Window: sec}}
	sc.Lanes[0].MaxWait = ms
	assert.ErrorContains(t, sc.Validate(), "fixed-window does not support reserve")
}
