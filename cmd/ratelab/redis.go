package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/redislimit"
	"github.com/ratelab/ratelab/redislimit/redislanes"
)

// The --redis flags of replay and run, and the client they dial; the lanes that run in Redis
// are package redislanes'.

// redisSettings are replay's --redis flags.
type redisSettings struct {
	addr      string
	onFailure string
	timeout   time.Duration
	keyPrefix string
}

// dialRedis makes a client of pool connections and checks that Redis answers PING within
// the timeout.
func dialRedis(ctx context.Context, s redisSettings, pool int) (*redislimit.Client, error) {
	c, err := redislimit.NewClient(redislimit.ClientOptions{Addr: s.addr, PoolSize: pool, Timeout: s.timeout})
	if err != nil {
		return nil, usageErrorf("--redis %s: %v", s.addr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := c.Ping(ctx); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("--redis %s: no answer to PING within %s: %v", s.addr, limiters.FormatDuration(s.timeout), err)
	}
	return c, nil
}

// connectRedis makes replay's client, checks that Redis answers within the timeout, and
// returns the replay its redis/ stages share.
func connectRedis(ctx context.Context, s redisSettings) (*redislanes.Replay, error) {
	mode, err := limiters.ParseFailureMode(s.onFailure)
	if err != nil {
		return nil, usageErrorf("--redis-on-failure: %v", err)
	}
	c, err := dialRedis(ctx, s, 1)
	if err != nil {
		return nil, err
	}
	return redislanes.NewReplay(c, redislanes.ReplayOptions{Addr: s.addr, KeyPrefix: s.keyPrefix, Timeout: s.timeout, OnFailure: mode}), nil
}

// redisRunFlags are run's --redis flags.
type redisRunFlags struct {
	addr, prefix string
	timeout      time.Duration
}

func (f *redisRunFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "redis", "", "the Redis `ADDR` (host:port) where every central fleet lane keeps its shared store (token-bucket, leaky-bucket, fixed-window, keyed or not), "+
		"decided at the run's virtual times, so the results are those of the in-process store; the simulated faults stay simulated. "+
		"A decision Redis does not make within --redis-timeout is the lane's on_failure policy's, and the run then prints its results, says how many there were and exits 1")
	fs.StringVar(&f.prefix, "redis-prefix", "", "the `PREFIX` of the central stores' keys, each emptied before its first use and deleted after the run "+
		"(default ratelab:run:SCENARIO:SEED:RANDOM:, unique to the run)")
	fs.DurationVar(&f.timeout, "redis-timeout", time.Second, "the longest a central lane waits for Redis per decision, in real time (the scenario's own timeout is simulated)")
}

// startRedisRun connects to Redis and sets sc's fleet to keep its central stores there.
func startRedisRun(ctx context.Context, sc *engine.Scenario, f redisRunFlags) (*redislanes.Run, error) {
	if f.timeout <= 0 {
		return nil, usageErrorf("--redis-timeout %s: must be positive", limiters.FormatDuration(f.timeout))
	}
	if err := redislanes.CheckScenario(sc); err != nil {
		return nil, usageErrorf("--redis %s: %v", f.addr, err)
	}
	s := redisSettings{addr: f.addr, timeout: f.timeout}
	c, err := dialRedis(ctx, s, redislanes.CentralLanes(sc)) // the lanes run in parallel, one decision at a time each
	if err != nil {
		return nil, err
	}
	return redislanes.StartRun(ctx, c, sc, redislanes.RunOptions{Addr: f.addr, Prefix: f.prefix, Timeout: f.timeout}), nil
}
