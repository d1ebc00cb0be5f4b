// Package redislanes runs the simulator's lanes against a real Redis: the glue between
// package engine's lanes and package redislimit's limiters, for `ratelab replay --redis` and
// `ratelab run --redis`. Dependencies point one way: the command line imports this package,
// which imports redislimit, engine and limiters; none of them imports it.
//
// A replay's lane (ParseLane) is a stack whose stages may be written redis/SPEC: such a stage
// keeps its state in one Redis key, PREFIX + lane + ":" + stage + ":" + SPEC (the keys of lane
// 2's first stage start "ratelab:replay:2:1:"), emptied before the replay so that it starts
// as fresh as the in-process stage beside it, decided at the trace's times
// (redislimit.CallerClock) behind a failure policy (redislimit.Guarded). Replay.Replay writes
// exactly engine.ReplayStacks' bytes; when every lane is one redis/ stage or plain in-process
// stages, it keeps 64 decisions on the wire at once (replayDepth: 32 rows a batch for two
// redis/ lanes), one write each way per batch, and writes the rows in trace order.
//
// A run (StartRun) makes the scenario's fleet keep every central lane's store in Redis: one
// key per store limiter, PREFIX + lane + ":" + SPEC [":window=" W under the caller's clock]
// [":key=" K for a keyed lane], emptied before its first use, expiring an hour (runKeyTTL)
// after its last decision should the run be killed, and deleted by Finish or Close. A decision
// Redis does not make within the timeout is the lane's on_failure policy's, counted per lane
// and reported by Finish.
//
// Flags, dialling and the command line's own errors stay in cmd/ratelab; the errors here
// name the lane or stage and leave the flag ("--redis ADDR: ") to the caller.
package redislanes
