// Package scenarios is ratelab's traffic catalogue and the reader of user scenario files.
//
// Each built-in scenario teaches one thing about rate limiting — a burst after idle, the fixed
// window's boundary, the sliding window's slot edge, a cold start, a slow downstream, a retry
// storm — and runs every limiter it compares on the identical offered traffic.
package scenarios

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// Default is the scenario ratelab runs when given none.
const Default = "poisson"

//go:embed traces/api-gateway.csv
var apiGatewayTrace string

const (
	ms = time.Millisecond
	s  = time.Second
)

// six is the standard line-up at 100 permits per second, one lane per algorithm. The
// concurrency limiter's max of 5 matches 100/s against a 50ms downstream (Little's law:
// 100/s × 50ms = 5 in flight).
func six() []engine.LaneSpec {
	return lanes(
		"token-bucket:capacity=10,rate=100/1s",
		"leaky-bucket:rate=100/1s",
		"sliding-window:limit=100,window=1s,slots=10",
		"fixed-window:limit=100,window=1s",
		"warm-up:capacity=10,rate=100/1s,warmup=10s",
		"concurrency:max=5",
	)
}

func lanes(stacks ...string) []engine.LaneSpec {
	out := make([]engine.LaneSpec, len(stacks))
	for i, text := range stacks {
		stack, err := engine.ParseStack(text)
		if err != nil {
			panic(fmt.Sprintf("scenarios: built-in stack %q: %v", text, err)) // a bug in this file, caught by its tests
		}
		out[i] = engine.LaneSpec{Stack: stack}
	}
	return out
}

func service(d time.Duration) *engine.Downstream {
	return &engine.Downstream{Phases: []engine.Phase{{Service: engine.Distribution{Kind: engine.DistConstant, Mean: d}}}}
}

var drop = engine.Client{Policy: engine.PolicyDrop}

// catalogue builds every built-in scenario afresh (callers may modify what they get).
func catalogue() []*engine.Scenario {
	return append([]*engine.Scenario{
		{
			Name: "steady",
			Description: "Steady traffic at half the limit: 50 requests per second, evenly spaced, against six " +
				"limiters of 100/s. Five of them admit everything: a limiter costs nothing when it is not needed. " +
				"The sixth, the warm-up bucket, is a fresh instance: cold, it allows a third of its rate (33/s), so " +
				"it refuses part of the first few seconds until its ramp passes 50/s.",
			Seed: 1, Horizon: 10 * s, Client: drop, Lanes: six(), Downstream: service(50 * ms),
			Sources: []engine.Source{{Kind: engine.SourceConstant, Rate: 50}},
		},
		{
			Name: "poisson",
			Description: "Random (Poisson) arrivals at 95 requests per second against six limiters of 100/s: " +
				"near the limit, the gaps between requests vary and short clusters exceed the rate for a moment. " +
				"The bucket limiters absorb clusters with their capacity; the leaky bucket refuses every request " +
				"that comes sooner than 10ms after the last; the window limiters only refuse once a window is full.",
			Seed: 1, Horizon: 60 * s, Client: drop, Lanes: six(), Downstream: service(50 * ms),
			Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 95}},
		},
		{
			Name: "burst-after-idle",
			Description: "The algorithms document's example: a token bucket (100/s, capacity 3) and a leaky " +
				"bucket (100/s) sit idle for 50ms, then five requests arrive at once, and five more at 150ms. The " +
				"token bucket admits three of each burst (its capacity accumulated while idle), then one per 10ms; " +
				"the leaky bucket admits one, because nothing accumulates. Same core (GCRA), different tolerance: " +
				"not a relabelling.",
			Seed: 1, Horizon: 250 * ms, Client: drop, Trace: true,
			Lanes: lanes("token-bucket:capacity=3,rate=100/1s", "leaky-bucket:rate=100/1s"),
			Sources: []engine.Source{{Kind: engine.SourceBursts, Bursts: []engine.Burst{
				{At: 50 * ms, Count: 5}, {At: 80 * ms, Count: 1}, {At: 150 * ms, Count: 5}, {At: 152 * ms, Count: 2, Spread: 20 * ms},
			}}},
		},
		{
			Name: "boundary-attack",
			Description: "A client sends 100 requests in the last 10ms of a one-second window and 100 more in the " +
				"first 10ms of the next. The fixed window (100 per 1s) admits all 200 within 20ms, twice its " +
				"rate; the sliding window (100 per 1s in 10 slots) admits only the first 100, because the " +
				"rolling window still holds them; the token bucket (capacity 100, 100/s) admits 101: its 100 " +
				"plus the one permit that refilled by 1s (the next is due at 1.01s, just after the last request).",
			Seed: 1, Horizon: 3 * s, Client: drop, Windows: []time.Duration{20 * ms},
			Lanes: lanes("fixed-window:limit=100,window=1s", "sliding-window:limit=100,window=1s,slots=10",
				"token-bucket:capacity=100,rate=100/1s"),
			Sources: []engine.Source{{Kind: engine.SourceBursts, Bursts: []engine.Burst{
				{At: 990 * ms, Count: 100, Spread: 10 * ms}, {At: 1000 * ms, Count: 100, Spread: 10 * ms},
			}}},
		},
		{
			Name: "slot-edge",
			Description: "The sliding window's one-slot imprecision. 100 per 1s in 10 slots of 100ms: 100 requests " +
				"at 99ms (the end of slot 0) and 100 more at 1000ms, the instant slot 0 leaves the window. Both " +
				"bursts pass: 200 within 901ms, inside one window length. The same limit measured in 1000 slots " +
				"of 1ms refuses the second burst until 1099ms. Precision is one slot.",
			Seed: 1, Horizon: 2 * s, Client: drop, Windows: []time.Duration{901*ms + 1},
			Lanes: lanes("sliding-window:limit=100,window=1s,slots=10", "sliding-window:limit=100,window=1s,slots=1000"),
			Sources: []engine.Source{{Kind: engine.SourceBursts, Bursts: []engine.Burst{
				{At: 99 * ms, Count: 100}, {At: 1000 * ms, Count: 100}, {At: 1099 * ms, Count: 100},
			}}},
		},
		{
			Name: "cold-start",
			Description: "A freshly started instance is offered 200 requests per second from its first moment. " +
				"The token bucket (capacity 10, 100/s) admits 100/s at once; the warm-up bucket (same, with a 10s " +
				"warm-up) starts at a third of the rate with a burst of 3 and ramps to 100/s at 10s along the " +
				"documented curve: about 549 requests during the warm-up instead of 1000.",
			Seed: 1, Horizon: 20 * s, Client: drop,
			Lanes:   lanes("warm-up:capacity=10,rate=100/1s,warmup=10s", "token-bucket:capacity=10,rate=100/1s"),
			Sources: []engine.Source{{Kind: engine.SourceConstant, Rate: 200}},
		},
		{
			Name: "slow-downstream",
			Description: "Rate is not concurrency. 15 requests per second are offered; a token bucket allows 10/s. " +
				"The downstream answers in 50ms until 10s, then in 3s, and has a pool of 20 connections. Once it " +
				"slows, the rate limiter is perfectly happy while 30 requests want to be in flight, and the pool " +
				"refuses a third of them. A concurrency limit of 20, alone or stacked behind the token bucket, " +
				"keeps the pool whole: zero downstream failures.",
			Seed: 1, Horizon: 30 * s, Client: drop,
			Lanes: lanes("token-bucket:capacity=10,rate=10/1s", "concurrency:max=20",
				"token-bucket:capacity=10,rate=10/1s+concurrency:max=20"),
			Downstream: &engine.Downstream{Pool: 20, Phases: []engine.Phase{
				{From: 0, Service: engine.Distribution{Kind: engine.DistConstant, Mean: 50 * ms}},
				{From: 10 * s, Service: engine.Distribution{Kind: engine.DistConstant, Mean: 3 * s}},
			}},
			Sources: []engine.Source{{Kind: engine.SourceConstant, Rate: 15}},
		},
		{
			Name: "retry-storm",
			Description: "120 requests per second against a token bucket of 100/s, with three kinds of client. " +
				"Immediate retries (every 1ms, up to 20 attempts) multiply the offered load: most attempts are " +
				"retries. Exponential backoff with full jitter (10ms doubling to 1s, up to 6 attempts) spreads them " +
				"out and makes the fewest attempts. Retrying exactly when the limiter's Retry-After hint says " +
				"synchronises the retriers: they all come back at the instant the next permit is due, one wins and " +
				"the rest are refused again — a hint needs jitter too.",
			Seed: 1, Horizon: 20 * s, Client: drop,
			Lanes: []engine.LaneSpec{
				{Name: "immediate retry", Stack: mustStack("token-bucket:capacity=20,rate=100/1s"),
					Client: &engine.Client{Policy: engine.PolicyRetry, Delay: ms, MaxAttempts: 20}},
				{Name: "backoff + jitter", Stack: mustStack("token-bucket:capacity=20,rate=100/1s"),
					Client: &engine.Client{Policy: engine.PolicyBackoff, Delay: 10 * ms, MaxDelay: s, Jitter: true, MaxAttempts: 6}},
				{Name: "retry-after hint", Stack: mustStack("token-bucket:capacity=20,rate=100/1s"),
					Client: &engine.Client{Policy: engine.PolicyRetryAfter, Delay: 10 * ms, MaxAttempts: 6}},
			},
			Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 120}},
		},
		{
			Name: "on-off",
			Description: "Traffic in bursts of activity: 300 requests per second for 1s, then 2s of silence, " +
				"repeating — 100/s on average, exactly the limit. Averages hide it: every limiter refuses most of " +
				"each on-phase. The token bucket's capacity and the windows that reset during the silence decide " +
				"how much of each phase gets through.",
			Seed: 1, Horizon: 15 * s, Client: drop, Lanes: six(), Downstream: service(50 * ms),
			Sources: []engine.Source{{Kind: engine.SourceOnOff, Rate: 300, On: s, Off: 2 * s}},
		},
		{
			Name: "diurnal",
			Description: "A compressed day: Poisson arrivals whose rate follows a sine from 20 to 140 requests " +
				"per second over 60s. Below the limit every algorithm admits everything; at the peak each refuses " +
				"the excess in its own way, and requests queue for up to 500ms before giving up.",
			Seed: 1, Horizon: 120 * s,
			Client: engine.Client{Policy: engine.PolicyQueue, QueueSize: 50, Timeout: 500 * ms},
			Lanes:  six(), Downstream: service(50 * ms),
			Sources: []engine.Source{{Kind: engine.SourceSine, Rate: 80, Amplitude: 60, Period: 60 * s, Poisson: true}},
		},
		{
			Name: "replay",
			Description: "A recorded 20-second trace of an API gateway (1919 requests): about 60/s of background " +
				"traffic from three clients, a batch job bursting 150 requests at 5s and 12s, a client hammering " +
				"at 400/s between 15s and 16s, and one 5-permit export at 18s. Replay your own with " +
				"`ratelab replay --in TRACE.csv` or a scenario file with a trace source.",
			Seed: 1, Horizon: 20 * s, Client: drop, Lanes: six(), Downstream: service(50 * ms),
			Sources: []engine.Source{{Kind: engine.SourceTrace, TraceData: apiGatewayTrace}},
		},
		{
			Name: "nginx-burst",
			Description: "What NGINX limit_req's burst and delay do: bursts of 10 requests at once every 2s " +
				"(at 0, 2, 4, 6 and 8s) against limit_req at 10r/s. With burst=5 nodelay, 6 of each burst pass at " +
				"once (burst + 1: a drained key's first request is free) and 4 get 503 — exactly what " +
				"token-bucket:capacity=6 at 10/s admits: nginx's burst is a capacity of burst + 1. With delay=2, " +
				"3 pass at once and nginx holds 3 for 100, 200 and 300ms (until the excess has drained to the " +
				"delay), 4 get 503. With burst=5 and no delay, only the first passes at once and 5 are held 100ms " +
				"to 500ms apart: the burst becomes a queue paced at the rate. Without a burst 1 of each 10 passes. " +
				"Over the 5 bursts: 30 of 50 served by each burst=5 lane (15 and 25 of them held), 5 without a burst.",
			Seed: 1, Horizon: 10 * s, Client: drop,
			Lanes: lanes(
				"nginx:rate=10r/s,burst=5,delay=nodelay",
				"nginx:rate=10r/s,burst=5,delay=2",
				"nginx:rate=10r/s,burst=5",
				"nginx:rate=10r/s",
				"token-bucket:capacity=6,rate=10/1s",
			),
			Sources: []engine.Source{{Kind: engine.SourceBursts, Bursts: []engine.Burst{
				{At: 0, Count: 10}, {At: 2 * s, Count: 10}, {At: 4 * s, Count: 10}, {At: 6 * s, Count: 10}, {At: 8 * s, Count: 10}}}},
		},
		{
			Name: "guava-prepay",
			Description: "Guava's RateLimiter lets the next caller pay for a request. Three lanes allow 10 per second " +
				"with a burst of 10: Guava's SmoothBursty called with tryAcquire (guava-bursty:rate=10/1s, which stores " +
				"at most 1s of permits), the same called with acquire (mode=wait: the caller waits as long as it takes), " +
				"and ratelab's token bucket (capacity 10). At 0 a batch job asks for 10 permits at once; then one request " +
				"every 100ms, exactly the rate, until 3s; at 5s, after 2s of silence, 15 requests at once. All three admit " +
				"the batch at once: the token bucket from its full bucket, Guava from nothing (it starts empty) by pushing " +
				"its next free ticket to 1s. tryAcquire then refuses the 9 requests before 1s and admits the 21 from 1s on; " +
				"acquire admits all 30, each after 900ms (at exactly the rate the batch's cost is never repaid); the token " +
				"bucket admits all 30 at once. At 5s the token bucket admits 10 of the 15, tryAcquire 11 (the 10 stored " +
				"permits and one more, whose cost falls on the next caller), and acquire all 15, the last four after 100 " +
				"to 400ms. Guava's bound is 2^31 − 1 permits and more in any interval: a single request of any size " +
				"passes once its ticket has come.",
			Seed: 1, Horizon: 6 * s, Client: drop, Trace: true,
			Lanes:   lanes("guava-bursty:rate=10/1s", "guava-bursty:rate=10/1s,mode=wait", "token-bucket:capacity=10,rate=10/1s"),
			Sources: []engine.Source{{Kind: engine.SourceScript, Script: prepayScript()}},
		},
		{
			Name:        "peers",
			Description: peersDescription,
			Seed:        1, Horizon: 8 * s, Client: drop, Trace: true,
			Lanes:   lanes(peersLanes...),
			Sources: []engine.Source{{Kind: engine.SourceScript, Script: peersScript()}},
		},
		{
			Name: "noisy-neighbour",
			Description: "One client takes 60% of the traffic. 1000 requests per second (Poisson) come from 100 " +
				"clients and one noisy neighbour, which sends 600 of them; each quiet client sends about 4 per " +
				"second. A single limiter of 200/s for everyone refuses without looking at who asks: four in five " +
				"requests are refused, the quiet clients' as often as the neighbour's: they get about 780 of " +
				"their 4000, the neighbour 1240 (Jain's fairness index over clients 0.03, where 1 is every " +
				"client admitted alike). A token bucket per client (keys(max=1000): 10/s, a burst of 20) " +
				"admits every quiet client's every request and refuses only the neighbour, down to its own 10/s " +
				"(fairness 0.94). Its table holds a key per client; a table of 50 keys for 101 clients " +
				"(evict=lru) changes nothing here, because the keys it forgets are idle ones with full buckets, " +
				"which a new bucket replaces exactly; with evict=fresh it forgets only such keys and refuses a " +
				"new client while none is idle enough (its 'full' count), instead of forgetting a busy one.",
			Seed: 1, Horizon: 10 * s, Client: drop,
			Lanes: lanes("token-bucket:capacity=20,rate=200/1s",
				"keys(max=1000):token-bucket:capacity=20,rate=10/1s",
				"keys(max=50,evict=lru):token-bucket:capacity=20,rate=10/1s",
				"keys(max=50,evict=fresh):token-bucket:capacity=20,rate=10/1s"),
			Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 1000,
				Keys: &engine.KeyPopulation{Kind: engine.PopulationNoisy, Clients: 100, Share: 0.6}}},
		},
		{
			Name: "flash5-low-rate",
			Description: "Flash5's token bucket refills a whole number of milli-tokens per millisecond, " +
				"⌊limit·1000/windowMs⌋ and at least 1, so it admits that many per second whatever the window says. A " +
				"client sends 4 requests a second, evenly, for 5 minutes, against 100 per minute and 1 per hour, each " +
				"as Flash5's TOKEN_BUCKET (flash5-token) and as ratelab's token bucket of the same capacity and rate. " +
				"100 per minute is ⌊100000/60000⌋ = 1 milli-token per ms, one token a second: after the full bucket " +
				"drains, Flash5 admits 60 a minute, where the token bucket admits 100 (one every 600ms): 399 against " +
				"599 in all (the 100 of the full bucket, then 299 and 499 refilled). 1 per hour is ⌊1000/3600000⌋ = 0, " +
				"raised to 1: one a second again, 300 in the 5 minutes, where the token bucket admits the 1 its bucket holds. A limiter configured per hour or per minute " +
				"silently becomes one per second.",
			Seed: 1, Horizon: 5 * time.Minute, Client: drop, Trace: true,
			Lanes: lanes("flash5-token:limit=100,window=1m", "token-bucket:capacity=100,rate=100/1m",
				"flash5-token:limit=1,window=1h", "token-bucket:capacity=1,rate=1/1h"),
			Sources: []engine.Source{{Kind: engine.SourceConstant, Rate: 4}},
		},
		fleetScenario(),
		{
			Name:        "leaky-queue",
			Description: leakyQueueDescription,
			Seed:        1, Horizon: 5 * s, Client: drop, Trace: true,
			Lanes: []engine.LaneSpec{
				{Stack: mustStack("leaky-bucket:rate=10/1s")},
				{Name: "queue ≤ 500ms", Stack: mustStack("leaky-bucket:rate=10/1s"), MaxWait: 500 * ms},
				{Name: "queue ≤ 1s", Stack: mustStack("leaky-bucket:rate=10/1s"), MaxWait: s},
				{Stack: mustStack("token-bucket:capacity=8,rate=10/1s")},
			},
			Sources: []engine.Source{{Kind: engine.SourceBursts, Bursts: []engine.Burst{{At: 0, Count: 8}, {At: 1500 * ms, Count: 8}, {At: 3 * s, Count: 8}}}},
		},
		{
			Name: "retry-herd", Description: retryHerdDescription,
			Seed: 1, Horizon: 50 * s, Bins: 5000, Client: drop,
			Lanes: []engine.LaneSpec{
				{Name: "Retry-After obeyed", Stack: mustStack("fixed-window:limit=100,window=10s"),
					Client: &engine.Client{Policy: engine.PolicyRetryAfterHeader, Delay: s, MaxAttempts: 10}},
				{Name: "Retry-After + 5s jitter", Stack: mustStack("fixed-window:limit=100,window=10s"),
					Client: &engine.Client{Policy: engine.PolicyRetryAfterHeader, Delay: 5 * s, Jitter: true, MaxAttempts: 10}},
			},
			Sources: []engine.Source{{Kind: engine.SourceBursts, Bursts: []engine.Burst{{At: 500 * ms, Count: 500}}}},
		},
		{
			Name: "aws-quota-drain", Description: awsQuotaDrainDescription,
			Seed: 1, Horizon: 40 * s, Client: drop,
			Lanes: []engine.LaneSpec{
				{Name: "AWS SDK, quota 500", Stack: mustStack("concurrency:max=10"),
					Client: &engine.Client{Policy: engine.PolicyAWSStandard}},
				{Name: "AWS SDK, no quota", Stack: mustStack("concurrency:max=10"),
					Client: &engine.Client{Policy: engine.PolicyAWSStandard, RetryQuota: engine.NoRetryQuota}},
				{Name: "go-retryablehttp", Stack: mustStack("concurrency:max=10"),
					Client: &engine.Client{Policy: engine.PolicyRetryableHTTP}},
			},
			Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 50}},
			Downstream: &engine.Downstream{Phases: []engine.Phase{
				{Service: engine.Distribution{Kind: engine.DistConstant, Mean: 20 * ms}},
				{From: 10 * s, Service: engine.Distribution{Kind: engine.DistConstant, Mean: 10 * s}},
				{From: 10*s + 500*ms, Service: engine.Distribution{Kind: engine.DistConstant, Mean: 20 * ms}},
			}},
		},
	}, append(adaptiveScenarios(), loopScenarios()...)...)
}

const retryHerdDescription = "500 clients call at once (at 0.5s) a fixed window of 100 per 10s, and every " +
	"refused one obeys the Retry-After header it is sent: the 9.5s to the next window, rounded up to 10s. " +
	"The window admits 100 and sends the other 400 back together: 400 retries land in the same 10ms at 10.5s, " +
	"300 at 20.5s, 200 at 30.5s, 100 at 40.5s — a herd at every reset, synchronised by the header itself. " +
	"Adding up to 5s of random jitter to the header's wait admits the same 100 per window with the same 1,000 " +
	"retries, but never more than 4 retries in any 10ms: the same limit, without the spikes it would hit " +
	"whatever stands in front of it with. The price is latency: the last admission comes at 45.7s instead of 40.5s."

const awsQuotaDrainDescription = "An outage: requests started in 10s–10.5s hang for 10s and fill a bulkhead of 10, " +
	"which refuses everything until they end at about 20s, under Poisson traffic of 50/s. Three clients of the " +
	"same service. The AWS SDK for Go v2's standard retryer (3 attempts, b·min(1s·2^(k−1), 20s) backoff) spends its " +
	"retry quota of 500 tokens, 5 a throttled retry, on the first 100 retries and from 11.8s on gives up at once: " +
	"384 requests fail at their first attempt, and the outage costs 1.05 attempts per request (2,058 for 1,958). " +
	"The same retryer without the quota retries 878 times (1.45 per request) and saves only 63 more requests. " +
	"go-retryablehttp (5 attempts, 1s, 2s, 4s, 8s: 15s of backoff) outlasts the outage and saves every request, " +
	"at 1,300 retries (1.66 per request) and up to 15s of waiting. The quota is a circuit breaker: cheap for " +
	"the service when it is down, and refilled by 1 token per first-time success once it is back."

const leakyQueueDescription = "The leaky bucket two ways, at 10/s (T = 100ms), on bursts of 8 requests at once at " +
	"0, 1.5s and 3s. As a meter that drops (ratelab's default) it admits the first of each burst and refuses the " +
	"other 7: 3 of 24. As a queue (max_wait: a request waits its turn and leaves one per T, the textbook " +
	"picture of water dripping from a bucket), with at most 500ms of waiting each burst leaves at 0, 100ms, …, " +
	"500ms: 6 of 8, while the 7th and 8th, which would wait 600 and 700ms, are refused: 18 of 24. With 1s of " +
	"waiting all 24 pass, the last of each burst after 700ms. A token bucket of capacity 8 admits all 24 too, but " +
	"at once: the queue smooths a burst to the rate, the bucket passes it on."

// peersLanes are one intent, "100 per second, bursts of 20", in each library's own terms,
// beside ratelab's kinds nearest to them.
var peersLanes = []string{
	"token-bucket:capacity=20,rate=100/1s",
	"x-time-rate:rate=100/1s,burst=20",
	"nginx:rate=100r/s,burst=19,delay=nodelay",
	"uber:rate=100/1s,slack=19",
	"guava-bursty:rate=100/1s",
	"fixed-window:limit=100,window=1s",
	"flash5-fixed:limit=100,window=1s",
	"sliding-window:limit=100,window=1s,slots=10",
}

const peersDescription = "One intent, 100 per second with bursts of 20, in each library's own terms: " +
	"x/time/rate burst=20, NGINX burst=19 nodelay (it passes burst + 1), uber slack=19, Guava (whose burst is " +
	"fixed at 1s of rate: it cannot say 20), and windows of 100 per second, beside ratelab's token bucket " +
	"(capacity 20). The traffic: 30 at once at 0; one every 5ms (twice the rate) from 1s to 2s; silence; 30 at " +
	"once at 5s; 100 at 6.999s and 100 at 7s. The token bucket, x/time/rate and NGINX decide alike: 20 of " +
	"the first 30, 119 of the 200 (20 stored + 99 refilled), 20 at 5s, 20 at 6.999s and none at 7s: 179 in " +
	"all. Guava starts empty: 1 of the first 30, then 199 of the 200 (it stored 99 in the first second), 30 at " +
	"5s, and 101 within 1ms at 7s (100 stored permits, and one more whose cost falls on the next caller). uber " +
	"never refuses: every call waits, up to 999ms, and the first 30 get no slack. The fixed windows (ratelab's " +
	"and Flash5's) admit all 30 twice, 100 of the 200, and 200 within 1ms at the boundary; the sliding window " +
	"100 there, never more than 100 in a second."

// peersScript is the peers scenario's traffic: 30 at once at 0 (the first requests), one
// every 5ms (twice the rate) from 1s to 2s, silence, 30 at once at 5s (after idle), and 100
// just before and 100 at the boundary of the second at 6.999s and 7s.
func peersScript() []engine.Arrival {
	var script []engine.Arrival
	burst := func(at time.Duration, n int) {
		for range n {
			script = append(script, engine.Arrival{At: at})
		}
	}
	burst(0, 30)
	for k := range 200 {
		script = append(script, engine.Arrival{At: s + time.Duration(k)*5*ms})
	}
	burst(5*s, 30)
	burst(7*s-ms, 100)
	burst(7*s, 100)
	return script
}

// prepayScript is guava-prepay's traffic: a batch of 10 permits at 0, one request every
// 100ms from 100ms to 3s, and 15 at once at 5s.
func prepayScript() []engine.Arrival {
	script := []engine.Arrival{{At: 0, Permits: 10}}
	for k := 1; k <= 30; k++ {
		script = append(script, engine.Arrival{At: time.Duration(k) * 100 * ms})
	}
	for range 15 {
		script = append(script, engine.Arrival{At: 5 * s})
	}
	return script
}

func mustStack(text string) []limiters.Spec { return lanes(text)[0].Stack }

// Names lists the built-in scenarios in catalogue order.
func Names() []string {
	var names []string
	for _, sc := range catalogue() {
		names = append(names, sc.Name)
	}
	return names
}

// All returns every built-in scenario, in catalogue order.
func All() []*engine.Scenario { return catalogue() }

// Get returns a fresh copy of the built-in scenario called name.
func Get(name string) (*engine.Scenario, error) {
	for _, sc := range catalogue() {
		if sc.Name == name {
			return sc, nil
		}
	}
	names := Names()
	sort.Strings(names)
	return nil, fmt.Errorf("no built-in scenario %q (known: %s)", name, strings.Join(names, ", "))
}
