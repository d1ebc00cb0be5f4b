// Package peers holds the limiters of the products people run, beside ratelab's own six in
// package limiters, behind the same Limiter contract and on the same injected clock:
//
//	kind           what it is
//	flash5-fixed   Flash5's FIXED_WINDOW (a model)
//	flash5-token   Flash5's TOKEN_BUCKET (a model)
//	x-time-rate    golang.org/x/time/rate itself, at virtual time
//	uber           go.uber.org/ratelimit itself, on a lock-free virtual clock
//	nginx          NGINX's limit_req (a model of ngx_http_limit_req_module, checked against
//	               a real nginx)
//	guava-bursty   Guava's SmoothBursty (checked against the real Guava 31.1)
//	guava-warmup   Guava's SmoothWarmingUp
//	sentinel       Sentinel's flow rule (checked against sentinel-golang in crosscheck/)
//	resilience4j   resilience4j's AtomicRateLimiter
//	two-counter    the two-counter sliding estimate (Cloudflare's, HAProxy's)
//	haproxy        HAProxy's stick-table http_req_rate limit (a model of its freq_ctr,
//	               checked against a real HAProxy 2.6)
//
// Importing the package registers them all (limiters.Register), in that order, after
// ratelab's own: a program that names them in specs imports it, often for that alone:
//
//	import _ "github.com/ratelab/ratelab/limiters/peers"
//
// Each peer's file holds its algorithm, its spec and its registry entry, and its doc comment
// says, with numbers, where it decides differently from ratelab's kinds. The real libraries
// (x/time/rate, uber's ratelimit and its clock) are dependencies of this package, not of
// limiters.
package peers
