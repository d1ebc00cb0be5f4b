package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
)

// burstOf is n requests of key at once, at at.
func burstOf(at time.Duration, key string, n int) Source {
	s := Source{Kind: SourceScript}
	for range n {
		s.Script = append(s.Script, Arrival{At: at, Key: key})
	}
	return s
}

func fleetLane(t *testing.T, stack string, c LaneFleet) LaneSpec {
	t.Helper()
	l := stacks(t, stack)[0]
	l.Fleet = &c
	return l
}

func TestFleetLocalAdmitsNTimesTheLimit(t *testing.T) {
	sc := &Scenario{Horizon: sec, Sources: []Source{burstOf(0, "", 100)},
		Fleet: &Fleet{Instances: 3, Balancer: BalanceRoundRobin},
		Lanes: []LaneSpec{stacks(t, "token-bucket:capacity=10,rate=10/1s")[0],
			fleetLane(t, "token-bucket:capacity=10,rate=10/1s", LaneFleet{Model: CoordLocal})}}
	res := run(t, sc)
	require.EqualValues(t, 10, res.Lanes[0].Totals.Admitted, "one process")
	require.Nil(t, res.Lanes[0].Fleet)
	fl := res.Lanes[1]
	require.EqualValues(t, 30, fl.Totals.Admitted, "3 instances × 10")
	require.Len(t, fl.Fleet.Instances, 3)
	for _, in := range fl.Fleet.Instances {
		require.EqualValues(t, 10, in.Admitted)
		require.InDelta(t, 1.0/3, in.Share, 1e-9)
	}
	require.EqualValues(t, 30, fl.Fleet.MaxAdmitted)
	require.EqualValues(t, 19, fl.Fleet.Bound, "capacity 10 + 9 refilled within a half-open 1s")
	require.Equal(t, 1.579, fl.Fleet.Overshoot)
}

func TestFleetSplitRefusesASkewedKey(t *testing.T) {
	sc := &Scenario{Horizon: sec, Sources: []Source{burstOf(0, "hot", 100)},
		Fleet: &Fleet{Instances: 3, Balancer: BalanceHash},
		Lanes: []LaneSpec{fleetLane(t, "token-bucket:capacity=30,rate=30/1s", LaneFleet{Model: CoordSplit})}}
	res := run(t, sc)
	require.EqualValues(t, 10, res.Lanes[0].Totals.Admitted, "one key on one instance gets a third of 30")
	spec, err := limiters.SplitSpec(limiters.TokenBucketSpec{Capacity: 30, Rate: limiters.PerSecond(10)}, 3)
	require.NoError(t, err)
	require.Equal(t, "token-bucket:capacity=10,rate=10/3s", spec.String())
	_, err = limiters.SplitSpec(limiters.FixedWindowSpec{Limit: 10, Window: sec}, 3)
	require.ErrorContains(t, err, "limit=10 is not a multiple of 3 instances")
}

func TestFleetCentralOutage(t *testing.T) {
	for _, c := range []struct {
		mode limiters.FailureMode
		want int64
	}{{limiters.FailOpen, 10 + 50}, {limiters.FailClosed, 10}, {limiters.FailLocal, 10 + 3*10}} {
		sc := &Scenario{Horizon: 2 * sec, Sources: []Source{burstOf(0, "", 50), burstOf(sec+ms, "", 50)},
			Fleet:  &Fleet{Instances: 3, Balancer: BalanceRoundRobin},
			Faults: []Fault{{Kind: FaultOutage, From: sec, Until: 2 * sec}},
			Lanes: []LaneSpec{fleetLane(t, "token-bucket:capacity=10,rate=1/1h", LaneFleet{Model: CoordCentral,
				Latency: Distribution{Kind: DistConstant, Mean: 2 * ms}, OnFailure: c.mode, Timeout: 50 * ms})}}
		res := run(t, sc)
		fl := res.Lanes[0]
		require.Equal(t, c.want, fl.Totals.Admitted, c.mode.String())
		require.EqualValues(t, 100, fl.Fleet.StoreOps)
		require.EqualValues(t, 50, fl.Fleet.StoreFailures)
		require.InDelta(t, float64(2*ms), float64(fl.Fleet.StoreLatency.P50), float64(ms/16), "the histogram's bucket")
		require.Equal(t, 50*ms, fl.Fleet.StoreLatency.Max)
	}
}

func TestFleetAsyncOverAdmitsUntilSynced(t *testing.T) {
	c := LaneFleet{Model: CoordAsync, Sync: 100 * ms, Owner: 2, Latency: Distribution{Kind: DistConstant, Mean: ms}}
	// Sticky: key a goes to instance 0, b to 1; instance 2 owns the limit and gets nothing.
	sc := &Scenario{Horizon: 3 * sec, Sources: []Source{burstOf(0, "a", 4), burstOf(0, "b", 3),
		burstOf(sec, "a", 5), burstOf(sec, "b", 5), burstOf(2*sec, "a", 5), burstOf(2*sec, "b", 5)},
		Fleet: &Fleet{Instances: 3, Balancer: BalanceSticky},
		Lanes: []LaneSpec{fleetLane(t, "token-bucket:capacity=10,rate=10/1h", c)}}
	recs, res := traced(t, sc, 0)
	at := map[time.Duration]int{}
	for _, r := range filter(recs, OutcomeAdmitted) {
		at[r.At]++
	}
	require.Equal(t, map[time.Duration]int{0: 7, sec: 6}, at, "7 at once; the owner has 3 left, and each of 2 non-owners spends them")
	require.EqualValues(t, 13, res.Totals.Admitted)
	require.EqualValues(t, 0, res.Fleet.Instances[2].Offered)
	require.Greater(t, res.Fleet.Syncs, int64(1))
}

func TestFleetCallerClockDoublesAtABoundary(t *testing.T) {
	for _, c := range []struct {
		offset time.Duration
		want   int64
	}{{0, 10}, {100 * ms, 20}} {
		sc := &Scenario{Horizon: 2 * sec, Sources: []Source{burstOf(950*ms, "", 40), burstOf(sec, "", 40)},
			Fleet:  &Fleet{Instances: 2, Balancer: BalanceRoundRobin},
			Faults: []Fault{{Kind: FaultClock, Instance: 1, Offset: c.offset}},
			Lanes: []LaneSpec{fleetLane(t, "fixed-window:limit=10,window=1s", LaneFleet{Model: CoordCentral, Clock: ClockCaller,
				OnFailure: limiters.FailClosed, Timeout: 50 * ms})}}
		recs, _ := traced(t, sc, 0)
		require.Len(t, filter(recs, OutcomeAdmitted), 20)
		n := int64(0)
		for _, r := range filter(recs, OutcomeAdmitted) {
			if r.At == 950*ms {
				n++
			}
		}
		require.Equal(t, c.want, n, "offset %v", c.offset)
	}
}

func TestFleetJoinLeave(t *testing.T) {
	sc := &Scenario{Horizon: 3 * sec, Sources: []Source{burstOf(0, "", 30), burstOf(sec, "", 30), burstOf(2*sec, "", 30)},
		Fleet:  &Fleet{Instances: 3, Balancer: BalanceRoundRobin},
		Faults: []Fault{{Kind: FaultJoin, Instance: 2, At: sec}, {Kind: FaultLeave, Instance: 0, At: 2 * sec}},
		Lanes:  []LaneSpec{fleetLane(t, "token-bucket:capacity=10,rate=1/1h", LaneFleet{Model: CoordLocal})}}
	res := run(t, sc)
	in := res.Lanes[0].Fleet.Instances
	require.EqualValues(t, []int64{10, 10, 10}, []int64{in[0].Admitted, in[1].Admitted, in[2].Admitted})
	require.EqualValues(t, []int64{15 + 10, 15 + 10 + 15, 10 + 15}, []int64{in[0].Offered, in[1].Offered, in[2].Offered},
		"instance 2 takes requests from 1s on, instance 0 none from 2s")
}

func TestFleetValidation(t *testing.T) {
	base := func() *Scenario {
		return &Scenario{Horizon: sec, Sources: []Source{burstOf(0, "", 1)}, Fleet: &Fleet{Instances: 3, Balancer: BalanceHash},
			Lanes: []LaneSpec{fleetLane(t, "fixed-window:limit=10,window=1s", LaneFleet{Model: CoordSplit})}}
	}
	require.ErrorContains(t, base().Validate(), "limiters[0].fleet.model: stage 1: split: fixed-window:limit=10,window=1s: limit=10 is not a multiple of 3")
	sc := base()
	sc.Fleet.Balancer = "nearest"
	require.ErrorContains(t, sc.Validate(), `fleet.balancer: unknown balancer "nearest"`)
	sc = base()
	sc.Lanes[0].Fleet = &LaneFleet{Model: CoordCentral, Timeout: ms}
	require.ErrorContains(t, sc.Validate(), "limiters[0].fleet.on_failure")
	sc = base()
	sc.Lanes[0].Fleet = &LaneFleet{Model: CoordAsync}
	require.ErrorContains(t, sc.Validate(), "limiters[0].fleet.sync: must be positive")
	sc = base()
	sc.Faults = []Fault{{Kind: FaultClock, Instance: 3}}
	require.ErrorContains(t, sc.Validate(), "faults[0].instance: no instance 3")
	sc = base()
	sc.Fleet = nil
	require.ErrorContains(t, sc.Validate(), "limiters[0].fleet: a lane's coordination needs the scenario's fleet: block")
	sc = base()
	sc.Lanes[0] = fleetLane(t, "concurrency:max=3", LaneFleet{Model: CoordLocal})
	require.ErrorContains(t, sc.Validate(), "has no time axis")

	// A fault's timeline is used whole or refused (Fault's rule), for faults made by code too.
	for want, faults := range map[string][]Fault{
		"faults[0].until: not a field of a leave fault (its fields: instance, at)":   {{Kind: FaultLeave, Instance: 1, At: sec / 2, Until: sec}},
		"faults[0].instances: not a field of a latency fault":                        {{Kind: FaultLatency, From: 0, Until: sec, Add: ms, Instances: []int{1}}},
		"faults[0].offset: not a field of an outage fault":                           {{Kind: FaultOutage, Until: sec, Offset: ms}},
		"faults[1].instance: instance 2 already has a clock offset (faults[0], 1ms)": {{Kind: FaultClock, Instance: 2, Offset: ms}, {Kind: FaultClock, Instance: 2, Offset: 2 * ms}},
		"faults[2].kind: instance 1 leaves at 900ms but already left at 100ms (faults[0]) with no join between": {
			{Kind: FaultLeave, Instance: 1, At: 100 * ms}, {Kind: FaultLeave, Instance: 2, At: 500 * ms}, {Kind: FaultLeave, Instance: 1, At: 900 * ms}},
		"faults[1].at: instance 0 already joins at 0s (faults[0]): one join or leave per instance per instant": {{Kind: FaultJoin}, {Kind: FaultLeave}},
	} {
		sc = base()
		sc.Lanes[0] = fleetLane(t, "fixed-window:limit=9,window=1s", LaneFleet{Model: CoordSplit})
		sc.Faults = faults
		require.ErrorContains(t, sc.Validate(), want)
	}
	sc = base()
	sc.Lanes[0] = fleetLane(t, "fixed-window:limit=9,window=1s", LaneFleet{Model: CoordSplit})
	sc.Faults = []Fault{{Kind: FaultLeave, Instance: 1, At: 100 * ms}, {Kind: FaultJoin, Instance: 1, At: 900 * ms}, {Kind: FaultLatency, From: 2 * sec, Until: 3 * sec, Add: ms}}
	require.NoError(t, sc.Validate(), "a latency past the horizon is left to ValidateFaultTimes")
	require.ErrorContains(t, sc.ValidateFaultTimes(), "faults[2].from: 2s is at or past the horizon (1s): this latency would never happen")
}

// InstancesLive follows the joins and leaves as the next decision would see them (a join at
// 1s takes the requests at 1s), and reading it at every step changes nothing the lane decides.
func TestInstancesLiveFollowsJoinsAndLeaves(t *testing.T) {
	sc := &Scenario{Horizon: 3 * sec, Sources: []Source{burstOf(0, "", 30), burstOf(sec, "", 30), burstOf(2*sec, "", 30)},
		Fleet:  &Fleet{Instances: 3, Balancer: BalanceRoundRobin},
		Faults: []Fault{{Kind: FaultJoin, Instance: 2, At: sec}, {Kind: FaultLeave, Instance: 0, At: 2 * sec}},
		Lanes: []LaneSpec{fleetLane(t, "token-bucket:capacity=10,rate=1/1h", LaneFleet{Model: CoordLocal}),
			stacks(t, "token-bucket:capacity=10,rate=1/1h")[0]}}
	require.NoError(t, sc.Validate())
	lane, err := NewLane(sc, 0)
	require.NoError(t, err)
	for _, c := range []struct {
		at   time.Duration
		live []bool
	}{{0, []bool{true, true, false}}, {sec / 2, []bool{true, true, false}}, {sec, []bool{true, true, true}},
		{2 * sec, []bool{false, true, true}}, {3 * sec, []bool{false, true, true}}} {
		require.NoError(t, lane.RunUntil(c.at))
		require.Equal(t, c.live, lane.InstancesLive(), "at %v", c.at)
	}
	require.Nil(t, func() []bool { l, err := NewLane(sc, 1); require.NoError(t, err); return l.InstancesLive() }(), "not a fleet")

	read, err := NewLane(sc, 0)
	require.NoError(t, err)
	for !read.Done() {
		_ = read.InstancesLive()
		_, err := read.Step()
		require.NoError(t, err)
	}
	require.Equal(t, run(t, sc).Lanes[0], read.Result(), "reading at every step changed the run")
}

// Each instance's admissions per bin: exact for joins and leaves, and summed over the
// instances equal to the lane's own per-bin admissions under every coordination model.
func TestFleetBinsSumToTheLanesAdmissions(t *testing.T) {
	sc := &Scenario{Horizon: 3 * sec, Bins: 3, Sources: []Source{burstOf(0, "", 30), burstOf(sec, "", 30), burstOf(2*sec, "", 30)},
		Fleet:  &Fleet{Instances: 3, Balancer: BalanceRoundRobin},
		Faults: []Fault{{Kind: FaultJoin, Instance: 2, At: sec}, {Kind: FaultLeave, Instance: 0, At: 2 * sec}},
		Lanes:  []LaneSpec{fleetLane(t, "token-bucket:capacity=10,rate=1/1h", LaneFleet{Model: CoordLocal})}}
	in := run(t, sc).Lanes[0].Fleet.Instances
	require.Equal(t, [][]int64{{10, 0, 0}, {10, 0, 0}, {0, 10, 0}}, [][]int64{in[0].Bins, in[1].Bins, in[2].Bins},
		"instances 0 and 1 spend their 10 at 0s; instance 2 joins at 1s with a fresh 10")

	latency := Distribution{Kind: DistConstant, Mean: 2 * ms}
	sc = &Scenario{Horizon: 4 * sec, Bins: 40, Seed: 7, Sources: []Source{{Kind: SourcePoisson, Rate: 300}},
		Fleet:  &Fleet{Instances: 4, Balancer: BalanceRandom},
		Faults: []Fault{{Kind: FaultOutage, From: sec, Until: 2 * sec}, {Kind: FaultLeave, Instance: 3, At: 3 * sec}},
		Lanes: []LaneSpec{
			fleetLane(t, "token-bucket:capacity=20,rate=100/1s", LaneFleet{Model: CoordLocal}),
			fleetLane(t, "token-bucket:capacity=20,rate=100/1s", LaneFleet{Model: CoordSplit}),
			fleetLane(t, "token-bucket:capacity=20,rate=100/1s", LaneFleet{Model: CoordCentral, Latency: latency,
				OnFailure: limiters.FailLocal, Timeout: 20 * ms}),
			fleetLane(t, "token-bucket:capacity=20,rate=100/1s", LaneFleet{Model: CoordAsync, Sync: 50 * ms, Latency: latency}),
		}}
	for _, lane := range run(t, sc).Lanes {
		require.Len(t, lane.Bins, 40)
		for b, bin := range lane.Bins {
			var sum int64
			for _, in := range lane.Fleet.Instances {
				require.Len(t, in.Bins, 40)
				sum += in.Bins[b]
			}
			require.Equal(t, bin.Admitted, sum, "%s: bin %d", lane.Name, b)
		}
		for k, in := range lane.Fleet.Instances {
			var total int64
			for _, n := range in.Bins {
				total += n
			}
			require.Equal(t, in.Admitted, total, "%s: instance %d", lane.Name, k)
		}
		require.Zero(t, lane.Fleet.Instances[3].Bins[35], "%s: instance 3 has left", lane.Name)
	}
}
