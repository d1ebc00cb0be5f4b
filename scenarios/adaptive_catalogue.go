package scenarios

import (
	"time"

	"github.com/ratelab/ratelab/engine"
)

// adaptiveLanes is the line-up of the adaptive scenarios: a bulkhead sized for the server at
// no load, and Netflix's four rules at their defaults (every sample updates the limit).
func adaptiveLanes() []engine.LaneSpec {
	return lanes(
		"concurrency:max=32",
		"aimd:initial=20,min=20,max=200",
		"vegas:initial=20,max=1000",
		"gradient:initial=50,min=1,max=1000",
		"gradient2:initial=20,min=20,max=200",
	)
}

// adaptiveServer is 16 cores behind a 100ms network, callers giving up after timeout: with
// 100ms of work per request, 160 answers per second and a reference concurrency of
// 16·(100 + 100)/100 = 32.
func adaptiveServer(timeout time.Duration, phases ...engine.Phase) *engine.Downstream {
	return &engine.Downstream{Server: &engine.Server{Cores: 16, Network: 100 * ms, Timeout: timeout}, Phases: phases}
}

func demand(mean time.Duration) engine.Distribution {
	return engine.Distribution{Kind: engine.DistExponential, Mean: mean}
}

// adaptiveScenarios are the built-ins that put adaptive limits against a server that slows.
func adaptiveScenarios() []*engine.Scenario {
	return []*engine.Scenario{
		{
			Name: "server-slowdown",
			Description: "A drastic slowdown and recovery. 200 requests per second (Poisson) against 16 cores " +
				"behind a 100ms network, 100ms of work each (exponential): 160 answers per second at most, and " +
				"the best concurrency is 16·(100+100)/100 = 32 in flight. From 20s each request needs 400ms " +
				"(40 per second, best concurrency 16·500/400 = 20); from 40s, 100ms again. Callers give up after 5s. The bulkhead of 32 keeps " +
				"32 in flight whatever the server does, so after the slowdown its requests queue inside the " +
				"server; the adaptive limits move towards the new reference and back. The server section under " +
				"the run table says how fast and how steadily.",
			Seed: 1, Horizon: 60 * s, Bins: 600, Client: drop, Lanes: adaptiveLanes(),
			Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 200}},
			Downstream: adaptiveServer(5*s,
				engine.Phase{Service: demand(100 * ms)},
				engine.Phase{From: 20 * s, Service: demand(400 * ms)},
				engine.Phase{From: 40 * s, Service: demand(100 * ms)}),
		},
		{
			Name: "black-hole",
			Description: "A black hole. 120 requests per second against the same 16-core server (160 per " +
				"second at most, reference 32); from 10s to 15s it answers nothing and callers give up after " +
				"2s. Every limit fills with requests that will time out: the bulkhead stays full of them until " +
				"the hole ends; AIMD halves on the timeouts' drops; Vegas and Gradient read the 1s RTTs; " +
				"Gradient2 ignores drops. After 15s: how fast each lets traffic back in.",
			Seed: 1, Horizon: 30 * s, Bins: 300, Client: drop, Lanes: adaptiveLanes(),
			Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 120}},
			Downstream: adaptiveServer(2*s,
				engine.Phase{Service: demand(100 * ms)},
				engine.Phase{From: 10 * s, BlackHole: true, Service: demand(100 * ms)},
				engine.Phase{From: 15 * s, Service: demand(100 * ms)}),
		},
		{
			Name: "mild-overload",
			Description: "A mild sustained overload: 176 requests per second, 110% of what the 16-core server " +
				"answers (160 per second, reference 32), for two minutes. Does the limit find 32 and stay, " +
				"or creep up as the queue it tolerates becomes the new normal? Gradient2's long-term RTT " +
				"average drifts up under a standing queue; Vegas's no-load RTT is re-probed under load.",
			Seed: 1, Horizon: 120 * s, Bins: 600, Client: drop, Lanes: adaptiveLanes(),
			Sources:    []engine.Source{{Kind: engine.SourcePoisson, Rate: 176}},
			Downstream: adaptiveServer(5*s, engine.Phase{Service: demand(100 * ms)}),
		},
		{
			Name: "spike-then-quiet",
			Description: "A spike, then quiet: 80 requests per second (half of what the 16-core server answers), " +
				"400 per second for 5s from 10s, then 80 again. During the spike the limits should hold " +
				"near 32; after it, does each recover its headroom, or stay stuck low (Vegas after a spike is " +
				"a reported case)? At 80 per second about 80·200ms = 16 are in flight: a limit at or above " +
				"that refuses nothing.",
			Seed: 1, Horizon: 40 * s, Bins: 400, Client: drop, Lanes: adaptiveLanes(),
			Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 80},
				{Kind: engine.SourcePoisson, Rate: 320, From: 10 * s, Until: 15 * s}},
			Downstream: adaptiveServer(5*s, engine.Phase{Service: demand(100 * ms)}),
		},
		{
			Name: "codel-overload",
			Description: "The same overload before four queues. 200 requests per second (Poisson) against a " +
				"bulkhead of 32 before the 16-core server (100ms of work, a 100ms network: 160 answers per " +
				"second at most), refused requests waiting in a queue of 200; callers give up 1.5s after they " +
				"arrive, queue wait included (timeout_from: arrival). FIFO fills its queue: every request it " +
				"admits has waited about 200/150 = 1.3s and has 0.2s left for 0.2s of work and network, so most " +
				"answers come too late. LIFO serves the newest at once and leaves the oldest to time out; CoDel " +
				"drops at the front once waits stay above 5ms for 100ms, faster as the queue stands " +
				"(100ms/√count); adaptive LIFO serves newest first and gives joiners a 5ms queue timeout once " +
				"the queue has not emptied for 100ms. Compare the p99 waits and the answers per second.",
			Seed: 1, Horizon: 30 * s, Bins: 300, Client: drop,
			Lanes: []engine.LaneSpec{
				queueLane("fifo", engine.QueueFIFO), queueLane("lifo", engine.QueueLIFO),
				queueLane("codel", engine.QueueCoDel), queueLane("adaptive-lifo", engine.QueueAdaptiveLIFO),
			},
			Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 200}},
			Downstream: &engine.Downstream{
				Server: &engine.Server{Cores: 16, Network: 100 * ms, Timeout: 1500 * ms, TimeoutFrom: engine.FromArrival},
				Phases: []engine.Phase{{Service: demand(100 * ms)}},
			},
		},
		{
			Name: "user-vs-prefetch",
			Description: "Prefetch against user traffic under a 12× spike. Users send 50 requests per second " +
				"(Poisson), prefetch 20, then 240 (12×) from 10s to 25s, to the 16-core server (160 answers " +
				"per second, reference 32 in flight; callers give up after 5s). A bulkhead of 32 and Gradient2 " +
				"alone refuse users and prefetch alike once the spike fills them; partitioned 90% user, 10% " +
				"prefetch (Netflix's partitioned limiter: each class keeps ⌈limit·share⌉ when the whole is full, " +
				"and borrows while it is not), users keep their 29 of 32 and lose nothing while prefetch is " +
				"shed. The classes section under the run table shows each class's refusals and latency.",
			Seed: 1, Horizon: 40 * s, Bins: 400, Client: drop,
			Lanes: named(lanes(
				"concurrency:max=32",
				"partition(user=0.9,prefetch=0.1):concurrency:max=32",
				"gradient2:initial=20,min=20,max=200",
				"partition(user=0.9,prefetch=0.1):gradient2:initial=20,min=20,max=200",
			), "bulkhead", "partitioned", "gradient2", "partitioned-gradient2"),
			Sources: []engine.Source{
				{Kind: engine.SourcePoisson, Rate: 50, Class: "user"},
				{Kind: engine.SourcePoisson, Rate: 20, Class: "prefetch", Until: 10 * s},
				{Kind: engine.SourcePoisson, Rate: 240, Class: "prefetch", From: 10 * s, Until: 25 * s},
				{Kind: engine.SourcePoisson, Rate: 20, Class: "prefetch", From: 25 * s},
			},
			Downstream: adaptiveServer(5*s, engine.Phase{Service: demand(100 * ms)}),
		},
		{
			Name: "probe-cost",
			Description: "What the no-load RTT probe costs. 140 requests per second (Poisson), 88% of what the " +
				"16-core server answers (160 per second, reference 32 in flight), for a minute: enough load that " +
				"a limit pinned low refuses. To measure the RTT without queueing, Gradient (probing every 50 to " +
				"99 samples here, Netflix's default being 1000 to 1999) drops its limit to its minimum for a " +
				"sample, Vegas resets its no-load RTT every 30·limit samples or so, Envoy's gradient controller " +
				"pins concurrency at 3 for 20 requests every 5 to 5.75s. probe_refused counts the refusals in " +
				"the bins where a probe happened; the bulkhead of 32, which never probes, is the baseline.",
			Seed: 1, Horizon: 60 * s, Bins: 600, Client: drop,
			Lanes: lanes(
				"concurrency:max=32",
				"gradient:initial=50,min=1,max=1000,probe=50",
				"vegas:initial=20,max=1000",
				"envoy-gradient:update=100ms,interval=5s,requests=20",
			),
			Sources:    []engine.Source{{Kind: engine.SourcePoisson, Rate: 140}},
			Downstream: adaptiveServer(5*s, engine.Phase{Service: demand(100 * ms)}),
		},
	}
}

// named gives lanes their names, in order.
func named(ls []engine.LaneSpec, names ...string) []engine.LaneSpec {
	for i := range ls {
		ls[i].Name = names[i]
	}
	return ls
}

// queueLane is a bulkhead of 32 (the server's reference concurrency) whose refused callers
// wait in a queue of 200 for up to 1.5s, served by disc.
func queueLane(name string, disc engine.QueueDiscipline) engine.LaneSpec {
	l := lanes("concurrency:max=32")[0]
	l.Name = name
	l.Client = &engine.Client{Policy: engine.PolicyQueue, QueueSize: 200, Timeout: 1500 * ms, Discipline: disc}
	return l
}
