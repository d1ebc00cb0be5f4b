// Package fit answers "what should rate and capacity be?" from a recorded trace (or a
// scenario's traffic), exactly, in ratelab's own limiter arithmetic.
//
// The burstiness curve σ(ρ) of a trace is, for each rate ρ, the smallest token-bucket capacity
// that admits every request. In real numbers it is
//
//	σ*(ρ) = max over s ≤ t of A[s, t] − ρ·(t − s)
//
// where A[s, t] is the permits asked for from s to t: the largest excess of the trace over the
// rate. σ* is a maximum of lines in ρ, so it is convex and non-increasing.
//
// ratelab's token bucket is GCRA with T = window/permits rounded up to a whole nanosecond and
// tolerance τ = capacity·T; a request for n permits at now is admitted when
// max(TAT − now, 0) + n·T ≤ τ. While nothing is refused, TAT follows the trace alone
// (TAT = max(TAT, now) + n·T, Lindley's recursion), so the request that needs the most
// tolerance needs need = max(TAT − now, 0) + n·T, and the answer is
//
//	σ(ρ) = ⌈max need / T⌉
//
// in integer nanoseconds, with no rounding anywhere but that one ceiling: capacity σ admits
// everything (the schedule is the same as with an unbounded bucket) and capacity σ − 1 refuses
// the request that needed the most (every request before it passed, so TAT was the same). The
// need is the same maximum as σ*: need/T = A[s, t] − (t − s)/T for the busy period s … t that
// ends at that request. 100/s (T = 10ms), 5 requests at 0 and 3 at 15ms: needs 10, 20, 30, 40,
// 50ms, then at 15ms the backlog is 35ms and the needs are 45, 55, 65ms: σ = 7, and σ* = 6.5
// (8 permits − 15ms·100/s), which no integer capacity can be.
//
// The input is read once, into columns of 12 bytes a row (28 with keys; table.go), computing
// its statistics on the way (the peak from the columns after); every later pass runs over the
// columns: σ for every rate of a grid (a 2048-row block at a time, each rate in its own loop;
// the grid's lower half over every row, 1.7-1.9 ns a rate and a row, its upper half over
// the segments of the trace that can hold the worst burst: on the 10M-row benchmark trace 48
// rates cost 0.58 ns a row more per rate than 24, 5.8 ms of CPU a rate); the knee's
// refinement over such segments too, cut again near the knee as it narrows; the relaxed
// question, the smallest capacity that refuses at most a fraction of the permits, a search
// over capacities (in batches, each replaying only the segments where a bucket of that
// capacity refuses something, until it refuses more than allowed); and the confirmation, a
// replay of the columns through ratelab's own limiters built from the recommended specs. A
// trace too long for Options.MaxMemory (1 GiB: 89M rows, 38M with keys) is read again for
// each pass instead, in memory independent of its length, about 6× slower.
package fit
