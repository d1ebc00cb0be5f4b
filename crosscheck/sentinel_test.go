// Package crosscheck compares ratelab's peer models with the real libraries they model, where
// a library's process-global state keeps it from being a lane. It is a module of its own, so
// that the main module does not carry the libraries' dependencies.
package crosscheck

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/alibaba/sentinel-golang/api"
	"github.com/alibaba/sentinel-golang/core/base"
	"github.com/alibaba/sentinel-golang/core/flow"
	"github.com/alibaba/sentinel-golang/logging"
	"github.com/alibaba/sentinel-golang/util"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// epoch is where every script's sentinel clock starts, before the spec's offset: a whole 10s
// of Unix time (2023-11-14), as a long-running process sees it — far past lastFilledTime 0.
const epoch = 1_700_000_000 * time.Second

// scriptClock is sentinel's clock (util.Clock) under the test's control: the driver sets it to
// each request's time; a request that sentinel makes wait sleeps by moving it on, so that its
// pass is counted when its wait ends, as a real caller's is. No real time passes.
type scriptClock struct {
	mu  sync.Mutex
	now time.Duration // since the Unix epoch
}

func (c *scriptClock) set(d time.Duration) { c.mu.Lock(); c.now = d; c.mu.Unlock() }
func (c *scriptClock) get() time.Duration  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *scriptClock) Now() time.Time { return time.Unix(0, int64(c.get())) }
func (c *scriptClock) Sleep(d time.Duration) {
	if d > 0 {
		c.mu.Lock()
		c.now += d
		c.mu.Unlock()
	}
}
func (c *scriptClock) CurrentTimeMillis() uint64 { return uint64(c.get() / time.Millisecond) }
func (c *scriptClock) CurrentTimeNano() uint64   { return uint64(c.get()) }

// sentinel's state is the process's: one clock and one rule set, so scripts run one at a time,
// each on a resource of its own (a fresh statistic node and a fresh rule).
var (
	clock     = &scriptClock{}
	serial    sync.Mutex
	resources int
)

func init() {
	util.SetClock(clock)
	_ = logging.ResetGlobalLogger(quiet{})
}

// quiet drops sentinel's logging (rule loads, warnings): the test reports what differs.
type quiet struct{}

func (quiet) Debug(string, ...interface{})        {}
func (quiet) DebugEnabled() bool                  { return false }
func (quiet) Info(string, ...interface{})         {}
func (quiet) InfoEnabled() bool                   { return false }
func (quiet) Warn(string, ...interface{})         {}
func (quiet) WarnEnabled() bool                   { return false }
func (quiet) Error(error, string, ...interface{}) {}
func (quiet) ErrorEnabled() bool                  { return false }

// step is one request of a script: n permits at run time at.
type step struct {
	at time.Duration
	n  int
}

// outcome is what a request got: admitted or not, and the wait before it went on.
type outcome struct {
	admitted bool
	wait     time.Duration
}

func (o outcome) String() string {
	if !o.admitted {
		return "blocked"
	}
	return "passed after " + o.wait.String()
}

// rule is the flow rule sentinel is given for spec.
func rule(resource string, s peers.SentinelSpec) *flow.Rule {
	r := &flow.Rule{Resource: resource, Threshold: s.Threshold, MaxQueueingTimeMs: uint32(s.MaxQueue / time.Millisecond)}
	if s.Strategy == peers.SentinelWarmUp {
		r.TokenCalculateStrategy = flow.WarmUp
		r.WarmUpPeriodSec = uint32(s.WarmUp / time.Second)
		r.WarmUpColdFactor = uint32(s.ColdFactor)
	}
	if s.Behavior == peers.SentinelThrottling {
		r.ControlBehavior = flow.Throttling
	}
	return r
}

// runSentinel drives the real library through a script: a fresh resource whose rule is
// loaded at run time 0, then each request through api.Entry at its time.
func runSentinel(t *testing.T, s peers.SentinelSpec, script []step) []outcome {
	t.Helper()
	serial.Lock()
	defer serial.Unlock()
	resources++
	resource := fmt.Sprintf("script-%d", resources)
	origin := epoch + s.Offset
	clock.set(origin)
	if _, err := flow.LoadRules([]*flow.Rule{rule(resource, s)}); err != nil {
		t.Fatalf("%s: sentinel refused the rule: %v", s, err)
	}
	if got := flow.GetRulesOfResource(resource); len(got) != 1 {
		t.Fatalf("%s: sentinel did not take the rule (it has %d for the resource)", s, len(got))
	}
	out := make([]outcome, len(script))
	for i, st := range script {
		at := origin + st.at
		clock.set(at)
		e, blocked := api.Entry(resource, api.WithTrafficType(base.Inbound), api.WithBatchCount(uint32(st.n)))
		out[i] = outcome{admitted: blocked == nil, wait: clock.get() - at}
		if e != nil && blocked == nil {
			e.Exit()
		}
	}
	return out
}

// runModel drives ratelab's model through the same script, each caller waiting as long as
// the rule lets it (the spec's CallerWait), as the simulator does.
func runModel(t *testing.T, s peers.SentinelSpec, script []step) []outcome {
	t.Helper()
	l, err := peers.NewSentinel(s, limiters.NewMonotonicClock())
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	out := make([]outcome, len(script))
	for i, st := range script {
		r := l.ReserveAt(st.at, st.n, s.CallerWait())
		out[i] = outcome{admitted: r.Decision == limiters.Admitted, wait: r.Wait}
		if !out[i].admitted {
			out[i].wait = 0
		}
	}
	return out
}

// compare requires the model's outcome of every request to be sentinel's, and the script to
// have exercised both sides (some passed, some blocked or waited) so that equality means
// something.
func compare(t *testing.T, spec string, script []step) {
	t.Helper()
	parsed, err := limiters.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	s := parsed.(peers.SentinelSpec)
	real, model := runSentinel(t, s, script), runModel(t, s, script)
	passed, refusedOrWaited, differ := 0, 0, 0
	for i := range script {
		if real[i].admitted {
			passed++
		}
		if !real[i].admitted || real[i].wait > 0 {
			refusedOrWaited++
		}
		if real[i] != model[i] {
			if differ < 5 {
				t.Errorf("%s: request %d (n=%d at %v): sentinel %v, the model %v", spec, i, script[i].n, script[i].at, real[i], model[i])
			}
			differ++
		}
	}
	if differ > 0 {
		t.Errorf("%s: %d of %d decisions differ", spec, differ, len(script))
	}
	if passed == 0 || refusedOrWaited == 0 {
		t.Errorf("%s: the script is one-sided (%d passed, %d blocked or waited of %d): it proves nothing", spec, passed, refusedOrWaited, len(script))
	}
	t.Logf("%s: %d requests, %d passed, %d blocked or waited: every decision and wait equal", spec, len(script), passed, refusedOrWaited)
}

// every is count requests of n, gap apart from start.
func every(start, gap time.Duration, count, n int) []step {
	out := make([]step, count)
	for i := range out {
		out[i] = step{at: start + time.Duration(i)*gap, n: n}
	}
	return out
}

// burst is count requests of n at one instant.
func burst(at time.Duration, count, n int) []step { return every(at, 0, count, n) }

// random is count requests with seeded random gaps (bursts at one instant, short and long
// gaps, now and then an idle of up to idle) and sizes 1 to maxN.
func random(seed uint64, count int, gap, idle time.Duration, maxN int) []step {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]step, count)
	now := time.Duration(0)
	for i := range out {
		switch p := r.IntN(20); {
		case p < 6: // the same instant
		case p < 19:
			now += time.Duration(r.Int64N(int64(gap) + 1))
		default:
			now += time.Duration(r.Int64N(int64(idle) + 1))
		}
		n := 1
		if r.IntN(5) == 0 {
			n = 1 + r.IntN(maxN)
		}
		out[i] = step{at: now, n: n}
	}
	return out
}

func join(parts ...[]step) []step {
	var out []step
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// Direct + reject: passes in the current and the previous 500ms bucket, against the threshold.
func TestDirectRejectIsSentinels(t *testing.T) {
	t.Run("steady", func(t *testing.T) {
		compare(t, "sentinel:threshold=100", every(0, 7*time.Millisecond, 600, 1))
		compare(t, "sentinel:threshold=100,offset=250ms", every(3*time.Millisecond, 7*time.Millisecond, 600, 1))
	})
	t.Run("bursts", func(t *testing.T) {
		compare(t, "sentinel:threshold=100", join(
			burst(700*time.Millisecond, 120, 1), burst(1200*time.Millisecond, 5, 1), burst(1499*time.Millisecond, 5, 1),
			burst(1500*time.Millisecond, 120, 1), burst(2499*time.Millisecond, 60, 1), burst(3000*time.Millisecond, 110, 1),
			burst(3999*time.Millisecond, 30, 3)))
		compare(t, "sentinel:threshold=2.5,offset=730ms", join(burst(0, 4, 1), burst(269*time.Millisecond, 3, 1),
			burst(270*time.Millisecond, 3, 1), burst(770*time.Millisecond, 3, 2), burst(1270*time.Millisecond, 3, 1)))
	})
	t.Run("idle gaps", func(t *testing.T) {
		compare(t, "sentinel:threshold=50", join(burst(0, 60, 1), burst(12*time.Second, 60, 2), burst(12400*time.Millisecond, 40, 1),
			burst(31*time.Second+999*time.Millisecond, 70, 1), burst(32*time.Second, 70, 1)))
		compare(t, "sentinel:threshold=20", random(1, 4000, 15*time.Millisecond, 15*time.Second, 6))
		compare(t, "sentinel:threshold=7.125,offset=9s", random(2, 3000, 40*time.Millisecond, 3*time.Second, 3))
	})
}

// Warm-up + reject: the cold start from maxToken, the once-a-second sync from the previous
// QPS, cooling down again after an idle.
func TestWarmUpIsSentinels(t *testing.T) {
	t.Run("cold start", func(t *testing.T) {
		compare(t, "sentinel:threshold=100,strategy=warmup,warmup=10s", every(0, 2*time.Millisecond, 10000, 1))
		compare(t, "sentinel:threshold=100,strategy=warmup,warmup=5s,cold_factor=5", every(0, 3*time.Millisecond, 4000, 1))
	})
	t.Run("syncing in the second half of a second", func(t *testing.T) {
		// The first request of each second comes at .7s: its "previous QPS" is the
		// buckets [−0.5s, +0.5s) around the second's start, not the second before.
		compare(t, "sentinel:threshold=60,strategy=warmup,warmup=4s,offset=300ms", every(400*time.Millisecond, 4*time.Millisecond, 3000, 1))
	})
	t.Run("cooling after idle", func(t *testing.T) {
		compare(t, "sentinel:threshold=40,strategy=warmup,warmup=3s", join(every(0, 5*time.Millisecond, 2000, 1),
			every(25*time.Second, 5*time.Millisecond, 1000, 1), every(31*time.Second, 40*time.Millisecond, 200, 1),
			every(40*time.Second, 2*time.Millisecond, 1500, 2)))
	})
	t.Run("random", func(t *testing.T) {
		compare(t, "sentinel:threshold=30,strategy=warmup,warmup=6s,cold_factor=4", random(3, 6000, 12*time.Millisecond, 8*time.Second, 4))
	})
}

// Throttling: one interval apart on sentinel's ns clock, queued up to max_queue, wait for wait.
func TestThrottlingIsSentinels(t *testing.T) {
	t.Run("a queue", func(t *testing.T) {
		compare(t, "sentinel:threshold=10,behavior=throttling,max_queue=500ms", join(burst(0, 10, 1), burst(250*time.Millisecond, 4, 1),
			burst(2*time.Second, 10, 2), burst(5*time.Second, 3, 1)))
		compare(t, "sentinel:threshold=3,behavior=throttling,max_queue=1s", join(burst(0, 5, 1), burst(3*time.Second, 2, 3)))
	})
	t.Run("no queue", func(t *testing.T) {
		compare(t, "sentinel:threshold=100,behavior=throttling", every(0, 7*time.Millisecond, 800, 1))
	})
	t.Run("random", func(t *testing.T) {
		compare(t, "sentinel:threshold=25,behavior=throttling,max_queue=300ms", random(4, 4000, 30*time.Millisecond, 2*time.Second, 5))
		compare(t, "sentinel:threshold=7.5,behavior=throttling,max_queue=2s", random(5, 3000, 80*time.Millisecond, 5*time.Second, 7))
	})
	t.Run("warm-up", func(t *testing.T) {
		compare(t, "sentinel:threshold=50,strategy=warmup,warmup=5s,behavior=throttling,max_queue=2s", every(0, 3*time.Millisecond, 6000, 1))
		compare(t, "sentinel:threshold=20,strategy=warmup,warmup=3s,behavior=throttling,max_queue=800ms,offset=600ms",
			random(6, 4000, 25*time.Millisecond, 6*time.Second, 12))
	})
}

// The warm-ups ratelab refuses: with threshold × warmup too small for the cold factor,
// sentinel's warning and max tokens coincide, its slope is 1/0, its QPS NaN, and a cold rule
// admits every request — which is why Validate refuses threshold=1,warmup=1s.
func TestSentinelAdmitsEverythingWhenItsSlopeIsInfinite(t *testing.T) {
	s := peers.SentinelSpec{Threshold: 1, Strategy: peers.SentinelWarmUp, WarmUp: time.Second, ColdFactor: 3}
	if err := s.Validate(); err == nil {
		t.Fatalf("%s: ratelab accepts it", s)
	}
	real := runSentinel(t, s, burst(0, 1000, 1))
	for i, o := range real {
		if !o.admitted {
			t.Fatalf("request %d of 1000 at once was blocked: sentinel does limit %s", i, s)
		}
	}
}
