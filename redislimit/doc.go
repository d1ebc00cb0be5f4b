// Package redislimit keeps a limiter's state in Redis, so that every instance of a service
// behind a load balancer shares one limit: a token bucket or leaky bucket (GCRA) or a fixed
// window, each decided by a Lua script that Redis runs atomically. Decisions are package
// limiters' own, decision for decision: the same T (window / permits, rounded up to a whole
// ns), the same τ = capacity·T, the same windows aligned to the clock's origin.
//
//	GCRA          KEYS[1] = TAT as decimal ns ("1751712345678901234")
//	              admit when max(TAT, now) − now + n·T ≤ τ; then TAT = max(TAT, now) + n·T
//	fixed window  KEYS[1] = hash {w: window index, c: permits used}
//	              admit when used + n ≤ limit (used = 0 in a window newer than w); HSET, PEXPIRE
//
// 100/s with capacity 3 against one key from four instances: T = 10ms, τ = 30ms, three
// requests pass at once across all of them, the fourth is refused with RetryAfter 10ms, and
// from then on one passes every 10ms fleet-wide — not one per instance.
//
// # Time
//
// ServerClock (the default) reads Redis's TIME inside the script: one clock for every
// instance, so an instance whose clock is 300ms off cannot open a fixed window early or
// refill a bucket late. CallerClock takes the caller's time (AcquireAt), in ns from an origin
// the callers share: the simulator's virtual time, so a run against a real server decides
// exactly as the in-process lanes beside it.
//
// # Exact arithmetic in doubles
//
// Redis's Lua numbers are IEEE doubles, exact for integers up to 2^53 ≈ 9.0·10^15. The Unix
// time in ns is ≈ 1.75·10^18, past 2^60, where a double holds only multiples of 256ns; near
// 2^62 (the last time package limiters accepts) multiples of 1024ns. A script that kept TAT
// in one number would misjudge any decision that falls within that rounding of τ: a client
// retrying exactly at its RetryAfter is refused 134 times in 200 at the Unix epoch's ns
// (precision_test.go). So every time and span is a pair (s, ns) = s·10^9 + ns: s < 4.7·10^9,
// ns < 10^9, their sums and differences below 2^34, all exact; Lua only adds, subtracts and
// compares pairs, and Go forms every product (n·T, τ − n·T, the caller's window index) in
// int64. A TAT is stored as its full decimal count of ns and split at the ninth digit from the
// right, so redis-cli shows the true value. With ServerClock the fixed window's index is
// ⌊now_µs / window_µs⌋ (TIME has µs resolution, so the window must be whole µs): µs since the
// epoch are ≈ 1.75·10^15, exact until 2255.
//
// Storing µs instead would have been one number, but not exact: 3/1s has T = 333,333,334ns,
// which µs would round to 333,334µs — 666ns more per permit, 0.0002% fewer admitted, and
// decisions that differ from the in-process limiter's near every boundary.
//
// # Expiry
//
// With ServerClock a bucket's key expires when TAT passes and a window's when the window ends
// (rounded up to a whole ms): then a missing key and the stored one decide alike, so expiry
// frees memory and never changes a decision. Redis expires by its own clock, which knows
// nothing of a caller's, so with CallerClock a key lives Options.CallerKeyTTL (default 24h)
// of real time after its last decision.
//
// # Scripts and round trips
//
// A decision sends EVALSHA with the script's SHA-1; a server that does not hold the script
// (restarted, failed over, SCRIPT FLUSH) answers NOSCRIPT, and the script is sent with SCRIPT
// LOAD and the decision again. One decision is one round trip; AcquireBatch pipelines many in
// one, and Batch pipelines the decisions of several Guarded limiters on one Client (replay
// --redis, 64 deep). Requests for n ≤ 0 or n > MaxPermits are Invalid or Never without a
// round trip.
//
// The connection is the package's own (Client: RESP2 over TCP, a small pool): a decision
// writes its EVALSHA into a reused buffer and parses the integer reply in place, allocating
// nothing, where go-redis v9 allocated 20 times. Against redis-benchmark sending the same
// EVALSHA to the same server over one connection (bench_test.go) it runs at about
// redis-benchmark's rate one at a time and 64 deep; docs/FLEET.md has the measured ratios.
//
// # Failures
//
// Every store error is returned (a *StoreError naming the kind, the key and the cause:
// "the server closed the connection (EOF)", "no answer in time (…)"). Guarded adds a
// limiters.FailurePolicy — fail open, fail closed, or a local in-process limiter — applied
// when the store gives no decision within the policy's timeout, and returns the store's error
// beside the policy's decision; the fleet simulation models the same policies.
package redislimit
