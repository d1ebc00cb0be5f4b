package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The estimate is close to what a run does: its requests within a few percent of those
// offered (a Poisson source's are random), its events between half and three times those
// processed, whatever the client, the downstream and the sources.
func TestEstimateIsNearTheRun(t *testing.T) {
	ds := &Downstream{Pool: 8, Phases: []Phase{{Service: Distribution{Kind: DistExponential, Mean: 40 * ms}}}}
	lanes := stacks(t, "token-bucket:capacity=10,rate=100/1s", "leaky-bucket:rate=100/1s", "concurrency:max=4")
	lanes[1].Client = &Client{Policy: PolicyBackoff, Delay: 5 * ms, MaxDelay: 100 * ms, Jitter: true, MaxAttempts: 4}
	lanes[2].Client = &Client{Policy: PolicyQueue, QueueSize: 20, Timeout: 50 * ms}
	for _, sc := range []*Scenario{
		{Name: "poisson", Horizon: 10 * sec, Client: Client{Policy: PolicyDrop}, Lanes: lanes, Downstream: ds,
			Sources: []Source{{Kind: SourcePoisson, Rate: 150}, {Kind: SourceBursts, Bursts: []Burst{{At: 3 * sec, Count: 80}}}}},
		{Name: "shapes", Horizon: 20 * sec, Client: Client{Policy: PolicyDrop}, Lanes: lanes[:1],
			Sources: []Source{{Kind: SourceOnOff, Rate: 300, On: sec, Off: 2 * sec}, {Kind: SourceRamp, Rate: 10, RateTo: 90, From: sec, Until: 11 * sec},
				{Kind: SourceSine, Rate: 50, Amplitude: 40, Period: 5 * sec}, {Kind: SourceScript, Script: []Arrival{{At: 1}, {At: 30 * sec}}}}},
	} {
		est := sc.Estimate()
		res, err := Run(context.Background(), sc, nil)
		require.NoError(t, err)
		var events uint64
		for _, l := range res.Lanes {
			events += l.Events
		}
		offered := res.Lanes[0].Totals.Offered
		assert.InEpsilon(t, float64(offered), float64(est.Requests), 0.05, "%s: %d offered, %d estimated", sc.Name, offered, est.Requests)
		assert.GreaterOrEqual(t, float64(est.Events), 0.5*float64(events), sc.Name)
		assert.LessOrEqual(t, float64(est.Events), 3*float64(events), sc.Name)
		assert.Equal(t, len(sc.Lanes), est.Lanes)
	}
}

// What made hours-long or gigabyte runs is refused before it starts, saying by how much and
// which flag raises the budget; the run it refuses is not started.
func TestBudgetRefusesRunawayRuns(t *testing.T) {
	steady := &Scenario{Name: "steady", Horizon: 100000 * time.Hour, Client: Client{Policy: PolicyDrop},
		Lanes: stacks(t, "token-bucket:capacity=10,rate=100/1s", "fixed-window:limit=100,window=1s"), Sources: []Source{{Kind: SourcePoisson, Rate: 50}}}
	err := DefaultBudget.Check(steady, steady.Estimate())
	var be *BudgetError
	require.True(t, errors.As(err, &be))
	assert.True(t, be.Events)
	// 50/s for 3.6·10^8 s is 1.8·10^10 requests; each lane decides each: 2 events a request.
	assert.Equal(t, "steady: about 72G events (18G requests through 2 lanes; 2h at 100ns an event), over the budget of 10G events: "+
		"shorten the horizon, or raise the budget with --max-events 72G", err.Error())

	traced := &Scenario{Name: "traced", Horizon: 10 * time.Hour, Trace: true, Client: Client{Policy: PolicyDrop},
		Lanes: stacks(t, "sliding-window:limit=100,window=1s,slots=4096"), Sources: []Source{{Kind: SourcePoisson, Rate: 1000}}}
	est := traced.Estimate()
	// A trace keeps at most TraceLimit records, but each keeps the sliding window's 4096
	// slots: 200,000 × (320 + 4096 × 40) bytes, 30.6 GiB (it was estimated under 200 MiB,
	// and a traced run of it grew to 10 GB before it died).
	assert.Equal(t, int64(TraceLimit)*(recordBytes+4096*slotBytes), est.Parts[0].Bytes, "%s: %s", est.Parts[0].What, Bytes(est.Parts[0].Bytes))
	assert.Equal(t, int64(TraceLimit)*(recordJSONBytes+4096*slotJSONBytes), est.TraceJSON)
	tb := &Scenario{Name: "traced", Horizon: 10 * time.Hour, Trace: true, Client: Client{Policy: PolicyDrop},
		Lanes: stacks(t, "token-bucket:capacity=10,rate=100/1s"), Sources: []Source{{Kind: SourcePoisson, Rate: 1000}}}
	est = tb.Estimate()
	assert.Less(t, est.Memory, int64(200<<20), "a trace keeps at most TraceLimit records: %s", Bytes(est.Memory))

	meter := &Scenario{Name: "meter", Horizon: time.Hour, Windows: []time.Duration{100000 * time.Hour}, Client: Client{Policy: PolicyDrop},
		Lanes: stacks(t, "concurrency:max=1000000"), Sources: []Source{{Kind: SourceConstant, Rate: 1e7}}}
	err = DefaultBudget.Check(meter, meter.Estimate())
	require.True(t, errors.As(err, &be))
	assert.Contains(t, err.Error(), "meter: about 72G events")
	err = Budget{MaxMemory: 2 << 30}.Check(meter, meter.Estimate())
	require.True(t, errors.As(err, &be))
	assert.False(t, be.Events)
	// The 100000h meter would hold every one of the hour's 3.6·10^10 admissions, 16 bytes each.
	assert.Equal(t, "meter: about 536 GiB of memory (window meters 536 GiB, bins 164 KiB), over the budget of 2 GiB: raise it with --max-memory 540GiB", err.Error())

	bursts := &Scenario{Name: "bursts", Horizon: time.Second, Client: Client{Policy: PolicyDrop}, Lanes: stacks(t, "token-bucket:capacity=10,rate=100/1s"),
		Sources: []Source{{Kind: SourceBursts, Bursts: []Burst{{At: 0, Count: 20_000_000_000}}}}}
	assert.Error(t, DefaultBudget.Check(bursts, bursts.Estimate()))
	assert.NoError(t, Budget{}.Check(bursts, bursts.Estimate()), "no budget: no limit")
}

func TestSIAndBytes(t *testing.T) {
	assert.Equal(t, "999", SI(999))
	assert.Equal(t, "1.2k", SI(1234))
	assert.Equal(t, "432M", SI(432_000_000))
	assert.Equal(t, "10G", SI(1e10))
	assert.Equal(t, "512 B", Bytes(512))
	assert.Equal(t, "13 MiB", Bytes(13<<20))
	assert.Equal(t, "1.5 GiB", Bytes(3<<29))
	assert.Equal(t, int64(36_000), roundUp(35_001))
}
