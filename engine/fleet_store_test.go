package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
)

// storeScenario has a central lane of each shape a StoreFactory serves: one limiter, one per
// window of the callers' clocks (instance 1 runs 150ms ahead), one per key of a table of 3
// (12 clients: keys are evicted and come back fresh), and one per key of a table that evicts
// only fresh keys; 200 requests per second for 3s, instance 2 cut off from 1s to 1.5s.
func storeScenario(t *testing.T) *Scenario {
	central := LaneFleet{Model: CoordCentral, Latency: Distribution{Kind: DistConstant, Mean: ms}, OnFailure: limiters.FailClosed, Timeout: 20 * ms}
	caller := central
	caller.Clock = ClockCaller
	local := central
	local.OnFailure = limiters.FailLocal
	return &Scenario{Name: "store", Seed: 3, Horizon: 3 * sec, Bins: 30,
		Sources: []Source{{Kind: SourceConstant, Rate: 200, Poisson: true, Keys: &KeyPopulation{Kind: PopulationZipf, Clients: 12, Exponent: 1}}},
		Fleet:   &Fleet{Instances: 3, Balancer: BalanceRoundRobin},
		Faults: []Fault{{Kind: FaultOutage, From: sec, Until: 1500 * ms, Instances: []int{2}},
			{Kind: FaultClock, Instance: 1, Offset: 150 * ms}},
		Lanes: []LaneSpec{
			fleetLane(t, "token-bucket:capacity=10,rate=50/1s", local),
			fleetLane(t, "fixed-window:limit=30,window=500ms", caller),
			fleetLane(t, "keys(max=3,evict=lru):token-bucket:capacity=4,rate=5/1s", central),
			fleetLane(t, "keys(max=5,evict=fresh):fixed-window:limit=6,window=1s", central),
		}}
}

// slotLog records what a StoreFactory was asked for.
type slotLog struct {
	mu    sync.Mutex
	slots []StoreSlot
	specs []string
}

func (s *slotLog) factory(wrap func(limiters.Limiter) limiters.Limiter) StoreFactory {
	return func(slot StoreSlot, spec limiters.Spec, clock limiters.Clock) (limiters.Limiter, error) {
		s.mu.Lock()
		s.slots, s.specs = append(s.slots, slot), append(s.specs, spec.String())
		s.mu.Unlock()
		lim, err := spec.New(clock)
		if err != nil || wrap == nil {
			return lim, err
		}
		return wrap(lim), nil
	}
}

func (s *slotLog) of(lane int) (slots []StoreSlot, specs []string) {
	for i, sl := range s.slots {
		if sl.Lane == lane {
			slots, specs = append(slots, sl), append(specs, s.specs[i])
		}
	}
	return slots, specs
}

func resultsJSON(t *testing.T, res *Results) string {
	b, err := json.Marshal(res)
	require.NoError(t, err)
	return string(b)
}

// TestFleetStoreFactoryDecidesAsInProcess runs the central lanes once on in-process stores
// and once on stores a StoreFactory made (limiters of the same specs): the results are the
// same to the byte, and the factory was asked for exactly the limiters the in-process store
// makes: one for the plain lane, one per window of the callers' clocks, one per key each time
// the key enters its table.
func TestFleetStoreFactoryDecidesAsInProcess(t *testing.T) {
	want := resultsJSON(t, run(t, storeScenario(t)))
	sc := storeScenario(t)
	var log slotLog
	sc.Fleet.Store = log.factory(nil)
	require.Equal(t, want, resultsJSON(t, run(t, sc)))

	slots, specs := log.of(0)
	require.Equal(t, []StoreSlot{{Lane: 0}}, slots, "one limiter, at the start")
	require.Equal(t, []string{"token-bucket:capacity=10,rate=50/1s"}, specs)

	slots, _ = log.of(1)
	var windows []int64
	for _, s := range slots {
		require.Empty(t, s.Key)
		windows = append(windows, s.Window)
	}
	// 3s of 500ms windows, and instance 1 opens the 7th (3s to 3.5s) at 2.85s.
	require.Equal(t, []int64{0, 1, 2, 3, 4, 5, 6}, windows, "one per window, in order")

	for lane := 2; lane <= 3; lane++ {
		slots, specs := log.of(lane)
		keys := map[string]int{}
		for i, s := range slots {
			require.Regexp(t, `^client-\d+$`, s.Key)
			require.Zero(t, s.Window)
			require.NotContains(t, specs[i], "keys(", "the inner spec")
			keys[s.Key]++
		}
		if lane == 2 {
			require.Len(t, keys, 12, "lru: every client has had a limiter")
			require.Greater(t, len(slots), len(keys), "a table of 3 evicts keys that come back")
		} else {
			require.Greater(t, len(keys), 5, "fresh: more keys than the table holds have had a limiter")
		}
	}
}

// failingStore is a real in-process limiter that, between From and Until, reports each
// decision as one its store did not make, as a store that went away does.
type failingStore struct {
	limiters.Limiter
	from, until time.Duration
	err         error
}

func (f *failingStore) AcquireAt(now time.Duration, n int) limiters.Decision {
	if now >= f.from && now < f.until {
		f.err = fmt.Errorf("store gone at %v", now)
		return limiters.Admitted // to be ignored: the policy decides
	}
	return f.Limiter.AcquireAt(now, n)
}

func (f *failingStore) StoreErr() error {
	err := f.err
	f.err = nil
	return err
}

// TestFleetStoreFailureIsThePolicys has the store fail every decision from 300ms to 600ms of a
// run of one request every 10ms against capacity 5, 10/s: each of those 30 decisions is the
// lane's failure policy's (none admitted failing closed, every one failing open), counted as
// a store failure with the timeout as its latency; the decisions around them are the store's.
func TestFleetStoreFailureIsThePolicys(t *testing.T) {
	var times []time.Duration
	for i := range 100 {
		times = append(times, time.Duration(i)*10*ms)
	}
	for _, c := range []struct {
		mode limiters.FailureMode
		want int64 // admitted from 300ms to 600ms
	}{{limiters.FailClosed, 0}, {limiters.FailOpen, 30}} {
		t.Run(c.mode.String(), func(t *testing.T) {
			sc := &Scenario{Horizon: sec, Bins: 10, Sources: []Source{script(times...)},
				Fleet: &Fleet{Instances: 2, Balancer: BalanceRoundRobin},
				Lanes: []LaneSpec{fleetLane(t, "token-bucket:capacity=5,rate=10/1s",
					LaneFleet{Model: CoordCentral, OnFailure: c.mode, Timeout: 20 * ms})}}
			inProcess := run(t, sc).Lanes[0]
			var log slotLog
			sc.Fleet.Store = log.factory(func(l limiters.Limiter) limiters.Limiter {
				return &failingStore{Limiter: l, from: 300 * ms, until: 600 * ms}
			})
			got := run(t, sc).Lanes[0]
			require.EqualValues(t, 30, got.Fleet.StoreFailures)
			require.EqualValues(t, 100, got.Fleet.StoreOps)
			require.Equal(t, 20*ms, got.Fleet.StoreLatency.Max, "a failed decision waited the timeout")
			var admitted int64
			for _, b := range got.Bins[3:6] {
				admitted += b.Admitted
			}
			require.Equal(t, c.want, admitted)
			require.Equal(t, inProcess.Bins[:3], got.Bins[:3], "before the failure, the store's decisions")
			require.EqualValues(t, 0, inProcess.Fleet.StoreFailures)
		})
	}
}

// TestFleetStoreNeedsOneStage: a store a factory makes is one stage.
func TestFleetStoreNeedsOneStage(t *testing.T) {
	sc := &Scenario{Horizon: sec, Sources: []Source{script(0)}, Fleet: &Fleet{Instances: 2, Balancer: BalanceRoundRobin},
		Lanes: []LaneSpec{fleetLane(t, "token-bucket:capacity=5,rate=10/1s+fixed-window:limit=3,window=1s",
			LaneFleet{Model: CoordCentral, OnFailure: limiters.FailOpen, Timeout: ms})}}
	require.NoError(t, sc.Validate())
	var log slotLog
	sc.Fleet.Store = log.factory(nil)
	_, err := runErr(sc)
	require.ErrorContains(t, err, "limiters[0].fleet: a store made by Fleet.Store decides one stage given by its spec; this lane has 2 stages")
	refused := errors.New("no such store")
	sc.Lanes[0] = fleetLane(t, "token-bucket:capacity=5,rate=10/1s", *sc.Lanes[0].Fleet)
	sc.Fleet.Store = func(StoreSlot, limiters.Spec, limiters.Clock) (limiters.Limiter, error) { return nil, refused }
	_, err = runErr(sc)
	require.ErrorIs(t, err, refused)
	require.ErrorContains(t, err, "limiters[0] stage 1: no such store")
}
