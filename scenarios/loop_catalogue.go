package scenarios

import (
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// loopScenarios are the built-ins about the conversation between a limit's headers and the
// clients that read them (retry-herd and aws-quota-drain are in catalogue.go).
func loopScenarios() []*engine.Scenario {
	window := func() []limiters.Spec { return mustStack("fixed-window:limit=100,window=10s") }
	return []*engine.Scenario{
		{
			Name: "header-paced", Description: headerPacedDescription,
			Seed: 1, Horizon: 60 * s, Client: drop,
			Lanes: []engine.LaneSpec{
				{Name: "header-paced", Stack: window(),
					Client: &engine.Client{Policy: engine.PolicyHeaderPaced, Delay: s, MaxAttempts: 10}},
				{Name: "Retry-After obeyed", Stack: window(),
					Client: &engine.Client{Policy: engine.PolicyRetryAfterHeader, Delay: s, MaxAttempts: 10}},
				{Name: "backoff + jitter", Stack: window(),
					Client: &engine.Client{Policy: engine.PolicyBackoff, Delay: 100 * ms, MaxDelay: 10 * s, Jitter: true, MaxAttempts: 10}},
				{Name: "octokit", Stack: window(), Client: &engine.Client{Policy: engine.PolicyOctokit}},
			},
			Sources: []engine.Source{{Kind: engine.SourceBursts, Bursts: []engine.Burst{
				{At: 500 * ms, Count: 130, Spread: s}, {At: 15*s + 500*ms, Count: 130, Spread: s},
				{At: 30*s + 500*ms, Count: 130, Spread: s}, {At: 45*s + 500*ms, Count: 130, Spread: s}}}},
		},
	}
}

const headerPacedDescription = "Clients that read the limit's headers before they send. Bursts of 130 requests " +
	"(each spread over 1s, at 0.5s, 15.5s, 30.5s and 45.5s) against a fixed window of 100 per 10s, four clients. " +
	"The header-paced client reads X-RateLimit-Remaining and -Reset from every answer and, once they say 0 remain, " +
	"holds its requests until the reset they announced (whole seconds, rounded up): 520 attempts for 520 requests, " +
	"not one refused. The client that obeys Retry-After sends the same 30 per burst back at the next window, but " +
	"only after a 429 each: 700 attempts, 180 refused. octokit's throttling plugin, with its README's handler, " +
	"waits for X-RateLimit-Reset plus 1s and retries once: also 180 refused, and the latest admission 10s after " +
	"its arrival instead of 9s. Exponential backoff with full jitter from 100ms, deaf to the headers, " +
	"knocks 1,764 times, is refused 1,252 times and gives up on 8 requests after 10 attempts. Pacing costs the " +
	"client no latency the others do not pay (p99 8.99s against 9s): it only stops sending what the server " +
	"has said it will refuse."
