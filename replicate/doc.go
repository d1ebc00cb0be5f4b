// Package replicate runs a scenario K times with different seeds and reports every metric as
// a mean with its 95% confidence interval, so that a number from a random scenario comes
// with how far another seed could move it.
//
// Replication i (0-based) runs with seed base+i: seeds 7, 8, 9 for --seed 7 and K = 3, so
// the first replication is the single run of the same seed. Replications run in parallel
// on every core; each is a whole engine run that shares nothing with the others, its
// results land in its own slot, and the summary is computed in replication order, so the
// output is byte-identical whatever GOMAXPROCS.
//
// The interval is Student's t: mean ± t(0.975, K−1)·s/√K, with s the sample standard
// deviation. It assumes the K values are independent draws from one distribution that is
// close enough to normal; a count over a run of many requests is. Admitted out of 10 000
// Poisson requests with K = 5 replications giving 5012, 4987, 5030, 4998, 5003: mean 5006,
// s = 16.2, t(0.975, 4) = 2.776, so 5006 ± 20.1. With K = 1 there is no interval (one value
// says nothing about spread): the value is reported alone and its half-width is NaN, which
// the CLI writes as null (JSON), an empty cell (CSV) and "(no interval: 1 replication)"
// (table). A deterministic scenario gives s = 0 and an interval of ±0: every seed agrees.
//
// The test suite checks the machinery against queueing theory (analytic_test.go): a leaky
// bucket fed Poisson arrivals is a loss system with one deterministic server, a pool with
// exponential service is Erlang's loss system, and the intervals cover the exact answers in
// 95% of 200 independent experiments.
package replicate
