package scenarios

import (
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// fleetLimit is the fleet scenario's global limit: 150 per second, bursts of 30.
const fleetLimit = "token-bucket:capacity=30,rate=150/1s"

// fleetScenario is one limit, 150/s, enforced by three instances in each coordination model,
// with the store down from 4s to 6s.
func fleetScenario() *engine.Scenario {
	lane := func(name string, c *engine.LaneFleet) engine.LaneSpec {
		stack, err := engine.ParseStack(fleetLimit)
		if err != nil {
			panic(err)
		}
		return engine.LaneSpec{Name: name, Stack: stack, Fleet: c}
	}
	store := engine.Distribution{Kind: engine.DistLogNormal, Mean: 2 * time.Millisecond, Sigma: 0.5}
	return &engine.Scenario{
		Name: "fleet",
		Description: "One limit, 150 requests per second with bursts of 30, in front of three instances behind a " +
			"round-robin balancer, offered 300 per second for 10s; the shared store is down from 4s to 6s. " +
			"One process admits 1,529 (150/s and its first burst). Three local limiters, each with the full " +
			"limit, admit all 3,000: 300 in one second, where one limiter allows at most 179 (overshoot 1.68). " +
			"Split, each instance a burst of 10 and 50/s, admits 1,527 like one process, because round-robin " +
			"spreads the load evenly. A central store with a 2ms round trip admits 150/s until the outage; " +
			"failing open it then admits all 600 offered (1,858 in all), failing closed none of them (1,258). " +
			"Async, gubernator's GLOBAL with a 100ms sync, admits 2,923: after each sync an instance holds what " +
			"the owner had left, nothing here, but refills it at the full 150/s on its own until the next one, " +
			"so a limit that refills continuously is, between syncs, three limits.",
		Seed: 1, Horizon: 10 * s, Client: engine.Client{Policy: engine.PolicyDrop},
		Fleet:  &engine.Fleet{Instances: 3, Balancer: engine.BalanceRoundRobin},
		Faults: []engine.Fault{{Kind: engine.FaultOutage, From: 4 * s, Until: 6 * s}},
		Lanes: []engine.LaneSpec{
			{Name: "one process", Stack: lane("", nil).Stack},
			lane("local", &engine.LaneFleet{Model: engine.CoordLocal}),
			lane("split", &engine.LaneFleet{Model: engine.CoordSplit}),
			lane("central fail-open", &engine.LaneFleet{Model: engine.CoordCentral, Latency: store,
				OnFailure: limiters.FailOpen, Timeout: 20 * time.Millisecond}),
			lane("central fail-closed", &engine.LaneFleet{Model: engine.CoordCentral, Latency: store,
				OnFailure: limiters.FailClosed, Timeout: 20 * time.Millisecond}),
			lane("async", &engine.LaneFleet{Model: engine.CoordAsync, Sync: 100 * time.Millisecond,
				Latency: engine.Distribution{Kind: engine.DistConstant, Mean: time.Millisecond}}),
		},
		Sources: []engine.Source{{Kind: engine.SourceConstant, Rate: 300}},
	}
}
