// Package translate says one intent — "100 per second, bursts of 20" — in every library's
// own terms, and proves each translation by running it.
//
// The intent is ratelab's token-bucket:capacity=20,rate=100/1s (T = 10ms): 20 at once after
// an idle of 200ms, one every 10ms under load. Each library calls its burst something else:
//
//	library                 parameters for 100/s, bursts of 20           fit
//	x/time/rate             rate.NewLimiter(100, 20)                      exact (float64: up to 1ns early)
//	NGINX limit_req         rate=100r/s burst=19 nodelay                  exact on whole-ms arrivals
//	                        (burst counts the requests beyond the first)
//	Flash5 TOKEN_BUCKET     limit 20 per 200ms: refill ⌊20·1000/200⌋ =    exact on whole-ms arrivals
//	                        100 milli-tokens per ms
//	Sentinel                Throttling, MaxQueueingTimeMs 190 (19 × T)    the same requests, each at its turn
//	ratelab leaky-bucket    rate=100/1s, callers waiting up to 190ms      the same requests, each at its turn
//	uber                    ratelimit.New(100, WithSlack(19))             never refuses: the waiting bucket,
//	                                                                      but no slack at first
//	Guava                   RateLimiter.create(100): cannot say 20        stores 1s of permits: 101 after idle,
//	                        (maxBurstSeconds is fixed at 1.0)             1 at first
//	resilience4j, Flash5    20 per 200ms cycle/window                     windows: 40 within 1ms at a boundary
//	FIXED_WINDOW, fixed-
//	window, two-counter,
//	sliding-window
//	redis-cell, redis_rate, max_burst=19, Burst=20, MaxBurst=19           not modelled: listed, not run
//	throttled
//
// Translate builds that table for any intent, with the numbers worked out and each
// translation's Fit (exact, the same requests later, closest, cannot, not modelled) and its
// conditions. Run runs every translation that can run as a lane of the same traffic — the
// Probe (the first requests, twice the rate, a burst after idle, a window boundary), a
// scenario, or a trace — open loop, and compares each lane with the reference request for
// request: identical, or the first request it decides otherwise, at what time, with both
// limiters' own sentences for why. A library that never refuses (uber) is compared wait for
// wait with the waiting reference, the same bucket whose callers wait as long as it takes.
//
// The tests hold the table to the kinds: every spec parses and builds at awkward intents; the
// exact translations decide as the reference on random traffic (on whole milliseconds where
// the library's clock is ms); uber is the waiting bucket once both are full; and each
// difference the table states (uber's start, Guava's 1 and 101, the windows' 2 × burst,
// nginx's and Flash5's ms clock, x/time/rate's sub-ns admissions) is pinned on the probe or
// on a few requests.
package translate
