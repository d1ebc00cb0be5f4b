// Package engine simulates stacks of rate limiters in virtual time, deterministically.
//
// A Scenario names the traffic (Sources), what a refused caller does (Client), the limiter
// stacks to compare (Lanes, one LaneSpec each), the service behind them (Downstream), the
// horizon and a seed. Run validates it and runs every lane to the horizon on its own
// goroutine; every lane is offered the identical requests, so the lanes' Results compare the
// stacks and nothing else. A Lane can also be stepped one event at a time (Step) or to a time
// (RunUntil), as the TUI does. Replay streams a recorded CSV trace (read by package trace) through
// stacks open loop, without a client or a downstream.
//
// # The kernel
//
// Each lane is a discrete-event simulation on its own virtual clock. Pending events sit in
// two binary min-heaps of 32-byte, pointer-free events keyed by (time, seq): each source's
// next arrival in one (one event per source), every other event (a retry, a completion, a
// queue timeout, a queue wake, a delayed request's end of wait) in the other. seq is the
// lane's count of events scheduled so far, in both, stamped at scheduling, so no two keys are
// equal, events at the same instant run in the order they were scheduled, and the earlier of
// the two tops is the event a single heap of both would run. An arrival, the commonest event,
// is replaced at its heap's top by its source's next arrival: with one source, no sift at
// all. A flat-rate source (constant, poisson, on-off) is called without an interface, and a
// drop client's request before a stack that neither keys nor waits is decided at once,
// taking a request slot only when admitted (Lane.decideAtOnce). Once the heaps, the request
// slots and the window meters have grown to their working size, an event that is not traced
// allocates nothing (a trace source excepted: it parses CSV rows). What a lane writes at
// every event lies on cache lines no other lane's does (lines.go): lanes on other cores never
// contend for a line.
//
// # Where each concern lives
//
//	lane.go        Lane: the event loop (Step, RunUntil, NextEventAt, advance, finish),
//	               arrivals, request slots, a request's path (arrive, attempt, admitted, giveUp)
//	events.go      the event heap
//	lines.go       the lanes' per-event state on cache lines of their own
//	sources.go     the arrival processes, one stream per source
//	stack.go       Stack: the stages in order, what each can do (limiters.CapabilitiesOf), the
//	               one acquire-or-give-back pass that lanes and Replay both use (a refusal
//	               refunds or releases what earlier stages granted), the reserve pass of a
//	               shaping lane (max_wait, or a stage whose callers wait), completions with
//	               feedback
//	client.go      clientPolicy: the retry delays and give-ups (retry, backoff with jitter,
//	               retry-after, retry-after-header, header-paced; the libraries' rules from
//	               package clients: aws-standard with the lane's retry quota, aws-adaptive,
//	               retryablehttp, cenkalti-backoff, octokit, stripe), and the holds before an
//	               attempt (gate: aws-adaptive's token bucket, octokit's group spacing,
//	               header-paced's pacing)
//	queue.go       clientQueue: the queue policy's FIFO, its timeouts, wakes and draining
//	downstream.go  downstream: the pool, the service-time phases and their random stream
//	recorder.go    recorder: totals and bins, waits, window meters, least spacing, the trace;
//	               LaneResult, Record
//	metrics.go     Totals, Bin, Wait, WindowMeter and the histogram and window meter behind them
//	run.go         Run, Results, Progress, TraceWindow
//	scenario.go    Scenario and its validation
//	replay.go      Replay (the CSV codec is package trace); replay_rows.go: RowReader, ReplayRows
//
// # Determinism
//
// The same scenario and seed give byte-identical results on every run, whatever GOMAXPROCS:
//
//   - Time is virtual: nothing reads the wall clock, and each lane has its own clock and its
//     own limiters. Lanes share nothing but the read-only scenario.
//   - Every random draw comes from a PCG stream of the scenario's seed, one stream per
//     consumer: source k's (0x5eed0000+k), the client's backoff jitter and the libraries' draws (0xc11e47) and the
//     downstream's service times (0x5e41ce). A consumer's draws never shift another's, and
//     every lane builds the same source streams, so every lane is offered the same requests.
//   - Ties in time are broken by scheduling order (seq), never by heap position or map order.
//   - How a lane is driven does not change what it decides or measures: run to its horizon
//     by Run, or in slices by RunUntil (the TUI's frames), it ends the same.
//
// # What a request ends as
//
// A request is numbered in arrival order, across sources, the same in every lane. It is
// either admitted by every stage, at its first attempt, a retry or from the queue — at once,
// or, in a shaping lane, after its reservation's wait (Totals.Delayed; trace outcome delayed,
// then admitted when the wait ends) — and then
//
//   - completed: the downstream served it (at once when there is none), or
//   - failed: the downstream's pool was full; its permits come back;
//
// or it gives up (Totals.GaveUp, trace outcome gave-up or timed-out), because the client
// drops refused requests, its MaxAttempts are spent, the queue is full, it waited its
// Timeout in the queue (also TimedOut), or a stage can never grant it (also Never: more
// permits than the stage's MaxPermits). A request still retrying, queued or in service at the
// horizon (or still waiting out a reservation) has not ended, so Offered = Admitted + GaveUp + those still pending, and
// Admitted = Completed + Failed + those still in service. Rejected counts refusals, not
// requests: a retried request can be refused many times.
package engine
