package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/redislimit"
)

// redisPrefix marks a stage of a --limiter that runs against the real Redis of --redis:
// "redis/token-bucket:capacity=3,rate=100/1s", or one stage of a stack,
// "redis/token-bucket:capacity=3,rate=100/1s+concurrency:max=20".
const redisPrefix = "redis/"

// redisSettings are replay's --redis flags.
type redisSettings struct {
	addr      string
	onFailure string
	timeout   time.Duration
	keyPrefix string
}

// replayLane is one --limiter of replay: its stages' specs, and which of them run in Redis.
type replayLane struct {
	text   string // as given
	specs  []limiters.Spec
	remote []bool // remote[k]: stage k is a redis/ stage
}

func (l replayLane) hasRemote() bool {
	for _, r := range l.remote {
		if r {
			return true
		}
	}
	return false
}

// parseReplayLane reads a --limiter: a stack whose stages may carry the redis/ prefix.
func parseReplayLane(text string) (replayLane, error) {
	lane := replayLane{text: text}
	parts, empty := limiters.SplitList(text, "+", "stage")
	if empty != "" || len(parts) == 0 {
		_, err := engine.ParseStack(text) // the same words as every other --limiter
		return lane, err
	}
	for _, part := range parts {
		rest, remote := strings.CutPrefix(part, redisPrefix)
		spec, err := limiters.ParseSpec(rest)
		if err != nil {
			return lane, err
		}
		if remote {
			switch spec.Kind() {
			case limiters.KindTokenBucket, limiters.KindLeakyBucket, limiters.KindFixedWindow:
			default:
				return lane, fmt.Errorf("%s: kind %s cannot run in Redis (token-bucket, leaky-bucket and fixed-window can)", part, spec.Kind())
			}
		}
		lane.specs = append(lane.specs, spec)
		lane.remote = append(lane.remote, remote)
	}
	return lane, nil
}

// name is the lane's column header: its stages, a redis/ stage with its prefix.
func (l replayLane) name() string {
	parts := make([]string, len(l.specs))
	for k, s := range l.specs {
		parts[k] = s.String()
		if l.remote[k] {
			parts[k] = redisPrefix + parts[k]
		}
	}
	return strings.Join(parts, "+")
}

// redisReplay holds what the redis/ stages of a replay share: the client and every guarded
// stage, to report their failures.
type redisReplay struct {
	settings redisSettings
	client   *redis.Client
	guarded  []*redislimit.Guarded
	lanes    []int // guarded[i] is a stage of lane lanes[i]
}

// connect makes the client and checks that Redis answers within the timeout.
func connectRedis(ctx context.Context, s redisSettings) (*redisReplay, error) {
	c := redis.NewClient(&redis.Options{Addr: s.addr, ContextTimeoutEnabled: true, MaxRetries: -1,
		DialTimeout: s.timeout, ReadTimeout: s.timeout, WriteTimeout: s.timeout, PoolSize: 1,
		DialerRetries: 1}) // one dial per decision: a refused connection is reported as such, not as a deadline
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("--redis %s: no answer to PING within %s: %v", s.addr, limiters.FormatDuration(s.timeout), err)
	}
	return &redisReplay{settings: s, client: c}, nil
}

// build makes a lane's stack: in-process stages on the replay's virtual clock, redis/ stages
// keyed PREFIX + lane + ":" + stage + ":" + spec, on the trace's times (the caller's clock),
// emptied first so that the replay starts from fresh limiters as the in-process ones do.
func (r *redisReplay) build(ctx context.Context, index int, lane replayLane, clock limiters.Clock) (*engine.Stack, error) {
	mode, err := limiters.ParseFailureMode(r.settings.onFailure)
	if err != nil {
		return nil, usageErrorf("--redis-on-failure: %v", err)
	}
	stages := make([]limiters.Limiter, len(lane.specs))
	for k, spec := range lane.specs {
		local, err := spec.New(clock)
		if err != nil {
			return nil, fmt.Errorf("limiter %d: %w", index+1, err)
		}
		if !lane.remote[k] {
			stages[k] = local
			continue
		}
		key := r.settings.keyPrefix + strconv.Itoa(index+1) + ":" + strconv.Itoa(k+1) + ":" + spec.String()
		remote, err := redislimit.New(r.client, key, spec, redislimit.Options{Clock: redislimit.CallerClock})
		if err != nil {
			return nil, fmt.Errorf("limiter %d: %w", index+1, err)
		}
		resetCtx, cancel := context.WithTimeout(ctx, r.settings.timeout)
		err = remote.Reset(resetCtx)
		cancel()
		if err != nil {
			return nil, err
		}
		policy := limiters.FailurePolicy{Mode: mode, Timeout: r.settings.timeout}
		if mode == limiters.FailLocal {
			policy.Local = local
		}
		g, err := redislimit.NewGuarded(remote, policy)
		if err != nil {
			return nil, err
		}
		r.guarded, r.lanes = append(r.guarded, g), append(r.lanes, index)
		stages[k] = g
	}
	st := engine.StackOf(stages)
	if st.SetWaits(lane.specs, 0) { // an in-process stage whose callers wait decides by reservation
		if err := st.CanReserve(); err != nil {
			return nil, fmt.Errorf("limiter %d: %w", index+1, err)
		}
	}
	return st, nil
}

// failures is one line per redis/ stage the store failed, and an error when any did.
func (r *redisReplay) failures() (lines []string, err error) {
	var total int64
	var first error
	for i, g := range r.guarded {
		n, e := g.Failures()
		if n == 0 {
			continue
		}
		total += n
		if first == nil {
			first = e
		}
		lines = append(lines, fmt.Sprintf("  limiter %d: %d decisions Redis did not make, decided %s instead", r.lanes[i]+1, n, g.Policy().Mode))
	}
	if total > 0 {
		err = fmt.Errorf("--redis %s: %d decisions failed; the first: %v", r.settings.addr, total, first)
	}
	return lines, err
}

func (r *redisReplay) Close() error { return r.client.Close() }
