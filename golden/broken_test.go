package golden

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// Deliberately broken limiters. Each is plugged into the same harness as the real ones
// (through Factory, which reaches the simulator by engine.LaneSpec.Build) to prove that the
// checkers can fail, and that their message names the bound and where it broke.

// base gives a broken limiter the plain-clock forms of the interface.
type base struct {
	self  limiters.Limiter
	clock limiters.Clock
	spec  limiters.Spec
}

func (b *base) TryAcquireAt(now time.Duration, n int) bool {
	return b.self.AcquireAt(now, n) == limiters.Admitted
}
func (b *base) TryAcquire(n int) bool { return b.TryAcquireAt(b.clock.Now(), n) }
func (b *base) Available() int        { return b.self.AvailableAt(b.clock.Now()) }
func (b *base) Kind() limiters.Kind   { return b.spec.Kind() }
func (b *base) String() string        { return b.spec.String() }

// fixedNeverResets is a fixed window whose count never resets at a window boundary.
type fixedNeverResets struct {
	base
	cfg   limiters.FixedWindowSpec
	mu    sync.Mutex
	count int
}

func newFixedNeverResets(s limiters.FixedWindowSpec, clock limiters.Clock) *fixedNeverResets {
	f := &fixedNeverResets{base: base{clock: clock, spec: s}, cfg: s}
	f.self = f
	return f
}

func (f *fixedNeverResets) AcquireAt(_ time.Duration, n int) limiters.Decision {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.count+n > f.cfg.Limit {
		return limiters.Rejected
	}
	f.count += n
	return limiters.Admitted
}

func (f *fixedNeverResets) AvailableAt(time.Duration) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cfg.Limit - f.count
}
func (f *fixedNeverResets) MaxPermits() int { return f.cfg.Limit }
func (f *fixedNeverResets) Snapshot(now time.Duration) limiters.State {
	return limiters.State{Kind: f.spec.Kind(), At: now, Available: f.AvailableAt(now), MaxPermits: f.cfg.Limit,
		Limit: f.cfg.Limit, Count: f.cfg.Limit - f.AvailableAt(now), Window: f.cfg.Window}
}

// fixedLateResets is a fixed window that resets whenever the window index changes, backwards
// too: a late reading of the clock empties it.
type fixedLateResets struct {
	fixedNeverResets
	index int64
}

func newFixedLateResets(s limiters.FixedWindowSpec, clock limiters.Clock) *fixedLateResets {
	f := &fixedLateResets{fixedNeverResets: fixedNeverResets{base: base{clock: clock, spec: s}, cfg: s}, index: -1}
	f.self = f
	return f
}

func (f *fixedLateResets) AcquireAt(now time.Duration, n int) limiters.Decision {
	f.mu.Lock()
	if idx := int64(now / f.cfg.Window); idx != f.index {
		f.index, f.count = idx, 0
	}
	f.mu.Unlock()
	return f.fixedNeverResets.AcquireAt(now, n)
}

// slidingNoRollback is a sliding window that reserves first and checks after, as the real
// one does, but forgets to roll a refused reservation back.
type slidingNoRollback struct {
	base
	cfg   limiters.SlidingWindowSpec
	mu    sync.Mutex
	slot  time.Duration
	index []int64 // slot-index each bucket's count belongs to
	count []int
}

func newSlidingNoRollback(s limiters.SlidingWindowSpec, clock limiters.Clock) *slidingNoRollback {
	w := &slidingNoRollback{base: base{clock: clock, spec: s}, cfg: s, slot: s.Window / time.Duration(s.Slots),
		index: make([]int64, s.Slots), count: make([]int, s.Slots)}
	for i := range w.index {
		w.index[i] = -1
	}
	w.self = w
	return w
}

func (w *slidingNoRollback) sum(cur int64) int {
	total := 0
	for i, idx := range w.index {
		if idx > cur-int64(len(w.index)) && idx <= cur {
			total += w.count[i]
		}
	}
	return total
}

func (w *slidingNoRollback) AcquireAt(now time.Duration, n int) limiters.Decision {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur := int64(now / w.slot)
	b := int(cur % int64(len(w.index)))
	if w.index[b] != cur {
		w.index[b], w.count[b] = cur, 0
	}
	w.count[b] += n // reserve
	if w.sum(cur) > w.cfg.Limit {
		return limiters.Rejected // the real one rolls the reservation back here
	}
	return limiters.Admitted
}

func (w *slidingNoRollback) AvailableAt(now time.Duration) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return max(w.cfg.Limit-w.sum(int64(now/w.slot)), 0)
}
func (w *slidingNoRollback) MaxPermits() int { return w.cfg.Limit }
func (w *slidingNoRollback) Snapshot(now time.Duration) limiters.State {
	w.mu.Lock()
	count := w.sum(int64(now / w.slot))
	w.mu.Unlock()
	return limiters.State{Kind: w.spec.Kind(), At: now, Available: max(w.cfg.Limit-count, 0), MaxPermits: w.cfg.Limit,
		Limit: w.cfg.Limit, Count: count, Window: w.cfg.Window, SlotLength: w.slot}
}

// leakyAdaptive is an adaptive limit that admits every 5th request it would refuse: it
// counts those permits itself (extra), so its in flight stays right and only the limit leaks.
type leakyAdaptive struct {
	*limiters.AdaptiveLimiter
	mu             sync.Mutex
	refused, extra int
}

func (a *leakyAdaptive) AcquireAt(now time.Duration, n int) limiters.Decision {
	d := a.AdaptiveLimiter.AcquireAt(now, n)
	if d != limiters.Rejected {
		return d
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.refused++
	if a.refused%5 == 0 {
		a.extra += n
		return limiters.Admitted
	}
	return d
}

func (a *leakyAdaptive) Release(n int) {
	a.mu.Lock()
	if a.extra >= n {
		a.extra -= n
		a.mu.Unlock()
		return
	}
	a.mu.Unlock()
	a.AdaptiveLimiter.Release(n)
}

func (a *leakyAdaptive) Snapshot(now time.Duration) limiters.State {
	st := a.AdaptiveLimiter.Snapshot(now)
	a.mu.Lock()
	st.InFlight += a.extra
	a.mu.Unlock()
	st.Available = max(st.Max-st.InFlight, 0)
	return st
}

// forgetfulConcurrency is a bulkhead that forgets every 7th release.
type forgetfulConcurrency struct {
	*limiters.Concurrency
	mu       sync.Mutex
	releases int
}

func (c *forgetfulConcurrency) Release(n int) {
	c.mu.Lock()
	c.releases++
	forget := c.releases%7 == 0
	c.mu.Unlock()
	if !forget {
		c.Concurrency.Release(n)
	}
}

// warmUpBroken is a warm-up bucket with a mutex, broken in one of two ways: byTraffic ramps by
// the permits it admitted (each one T of "warmth") instead of by age; noClamp drops the clamp
// of the tolerance to at least one current interval, so a small capacity starves while cold.
type warmUpBroken struct {
	base
	cfg                limiters.WarmUpSpec
	mu                 sync.Mutex
	tat, warmth        time.Duration
	T, tau             time.Duration
	byTraffic, noClamp bool
}

func newWarmUpBroken(s limiters.WarmUpSpec, clock limiters.Clock, byTraffic, noClamp bool) *warmUpBroken {
	T := s.Rate.Interval()
	w := &warmUpBroken{base: base{clock: clock, spec: s}, cfg: s, T: T, tau: time.Duration(s.Capacity) * T, byTraffic: byTraffic, noClamp: noClamp}
	w.self = w
	return w
}

func (w *warmUpBroken) interval(now time.Duration) time.Duration {
	age := now
	if w.byTraffic {
		age = w.warmth
	}
	if age >= w.cfg.WarmUp {
		return w.T
	}
	return w.T + time.Duration(float64(2*w.T)*float64(w.cfg.WarmUp-age)/float64(w.cfg.WarmUp))
}

func (w *warmUpBroken) tolerance(I time.Duration) time.Duration {
	if w.noClamp {
		return w.tau
	}
	return max(w.tau, I)
}

func (w *warmUpBroken) AcquireAt(now time.Duration, n int) limiters.Decision {
	w.mu.Lock()
	defer w.mu.Unlock()
	I := w.interval(now)
	backlog := max(w.tat-now, 0)
	if backlog+time.Duration(n)*I > w.tolerance(I) {
		return limiters.Rejected
	}
	w.tat = now + backlog + time.Duration(n)*I
	w.warmth += time.Duration(n) * w.T
	return limiters.Admitted
}

func (w *warmUpBroken) AvailableAt(now time.Duration) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	I := w.interval(now)
	return max(int((w.tolerance(I)-max(w.tat-now, 0))/I), 0)
}
func (w *warmUpBroken) MaxPermits() int { return w.cfg.Capacity }
func (w *warmUpBroken) Snapshot(now time.Duration) limiters.State {
	w.mu.Lock()
	I := w.interval(now)
	tat := w.tat
	w.mu.Unlock()
	return limiters.State{Kind: w.spec.Kind(), At: now, Available: w.AvailableAt(now), MaxPermits: w.cfg.Capacity,
		Arrival: tat, Interval: I, Tolerance: w.tolerance(I), SteadyInterval: w.T, Age: now, WarmUp: w.cfg.WarmUp}
}

// allocating wraps a limiter and allocates on every decision.
type allocating struct{ limiters.Limiter }

var sink []byte

func (a allocating) AcquireAt(now time.Duration, n int) limiters.Decision {
	sink = make([]byte, 16+n)
	return a.Limiter.AcquireAt(now, n)
}

// neverAsRejected answers a request that can never pass "rejected" (retry later) instead of
// "never".
type neverAsRejected struct{ limiters.Limiter }

func (l neverAsRejected) AcquireAt(now time.Duration, n int) limiters.Decision {
	if d := l.Limiter.AcquireAt(now, n); d != limiters.Never {
		return d
	}
	return limiters.Rejected
}

// only returns a factory that builds broken(spec) for specs of type T and the real limiter
// for every other spec.
func only[T limiters.Spec](broken func(s T, c limiters.Clock) (limiters.Limiter, error)) Factory {
	return func(s limiters.Spec, c limiters.Clock) (limiters.Limiter, error) {
		if t, ok := s.(T); ok {
			return broken(t, c)
		}
		return s.New(c)
	}
}

// guavaSelfPaying is Guava's SmoothBursty made to charge each caller for its own request: the
// caller waits until the ticket its own permits push on (the real one waits only for the
// ticket as it found it), and tryAcquire admits only if that is within its timeout.
type guavaSelfPaying struct{ *peers.GuavaBursty }

func (g guavaSelfPaying) ReserveAt(now time.Duration, n int, maxWait time.Duration) limiters.Reservation {
	r := g.GuavaBursty.ReserveAt(now, n, limiters.MaxWaitForever)
	if r.Decision != limiters.Admitted {
		return r
	}
	r.Wait, _ = g.GuavaBursty.RetryAfterAt(now, n) // the ticket after its own cost
	if maxWait < limiters.MaxWaitForever && r.Wait > maxWait {
		g.GuavaBursty.CancelAt(now, r) // undone exactly: the same instant
		r.Decision = limiters.Rejected
	}
	return r
}

func (g guavaSelfPaying) AcquireAt(now time.Duration, n int) limiters.Decision {
	return g.ReserveAt(now, n, 0).Decision
}

// tauTooLarge builds token and leaky buckets whose tolerance is one emission interval too
// large: capacity+1 intervals (a leaky bucket: 2).
var tauTooLarge Factory = func(s limiters.Spec, c limiters.Clock) (limiters.Limiter, error) {
	switch s := s.(type) {
	case limiters.TokenBucketSpec:
		return limiters.NewTokenBucket(s.Capacity+1, s.Rate, c)
	case limiters.LeakyBucketSpec:
		return limiters.NewTokenBucket(2, s.Rate, c)
	}
	return s.New(c)
}

// brokenCases lists each broken variant, the guarantees whose checker it must break, and what
// the first failure message must name (the bound, and the interval or instant).
type brokenCase struct {
	name       string
	factory    Factory
	guarantees map[string][]string
}

var brokenCases = []brokenCase{
	{"τ one interval too large", tauTooLarge, map[string][]string{
		"token-bucket-burst":          {"admission 4 was at 50ms, expected at 60ms", "a burst of exactly capacity 3 at 50ms, then one per T = 10ms"},
		"token-bucket-interval-bound": {"4 admitted in [", "over the bound capacity + ⌈L/T⌉ − 1 = 3 for intervals of length 1ns"},
		"token-bucket-no-drift":       {"10803 admitted in [0, 1h0m0.000000001s)", "over the bound capacity + ⌈L/T⌉ − 1 = 10802"},
		"leaky-bucket-pacing":         {"admissions at 50ms and 50ms are 0s apart", "under the bound of one emission interval T = 10ms"},
		"races-exact":                 {"were granted 21: the bound is exactly 20"},
		"monotonic-time":              {"after 2^32 windows (1193046h28m16s) of idle admitted 4 at once: the bound is exactly the full burst 3"},
		"low-rate":                    {"token-bucket:capacity=1,rate=1/1h: admissions at 0s and 1s are 1s apart: under the bound of one emission interval T = 1h"},
	}},
	{"fixed window that never resets", only(func(s limiters.FixedWindowSpec, c limiters.Clock) (limiters.Limiter, error) {
		return newFixedNeverResets(s, c), nil
	}), map[string][]string{
		"fixed-window-boundary": {"100 admitted in [990ms, 1.01s)", "the boundary attack's take, 2·limit, is exactly 200"},
		"monotonic-time":        {"refused a request at 3s, when the next permit is due: the limiter stalled"},
	}},
	{"fixed window reset by a late clock reading", only(func(s limiters.FixedWindowSpec, c limiters.Clock) (limiters.Limiter, error) {
		return newFixedLateResets(s, c), nil
	}), map[string][]string{
		"monotonic-time": {"admitted a request read at 1.999999999s: a late reading must not grant a burst (bound 0)"},
	}},
	{"sliding window without rollback", only(func(s limiters.SlidingWindowSpec, c limiters.Clock) (limiters.Limiter, error) {
		return newSlidingNoRollback(s, c), nil
	}), map[string][]string{
		"sliding-window-fails-closed": {"the window counts 36 after granting 20 and refusing 16", "pushed the count past the limit 20"},
	}},
	{"sliding window that forgets the previous window (a fixed window)", only(func(s limiters.SlidingWindowSpec, c limiters.Clock) (limiters.Limiter, error) {
		return limiters.NewFixedWindow(s.Limit, s.Window, c)
	}), map[string][]string{
		"sliding-window-boundary":  {"200 admitted in [990ms, 1.01s)", "over the bound limit·⌈k/slots⌉ = 100 for intervals of length 20ms"},
		"sliding-window-slot-edge": {"200 admitted in [99.999999ms, 1.099s)", "over the bound limit·⌈k/slots⌉ = 100 for intervals of length 999.000001ms"},
	}},
	{"concurrency limiter that forgets a release", only(func(s limiters.ConcurrencySpec, c limiters.Clock) (limiters.Limiter, error) {
		inner, err := limiters.NewConcurrency(s.Max)
		return &forgetfulConcurrency{Concurrency: inner}, err
	}), map[string][]string{
		"concurrency-in-flight": {"the limiter counts", "in flight must be exactly what was admitted and not released"},
		"slow-downstream":       {"concurrency:max=20: at", "in flight must be exactly what was admitted and not released"},
	}},
	{"warm-up that ramps by traffic instead of age", only(func(s limiters.WarmUpSpec, c limiters.Clock) (limiters.Limiter, error) {
		return newWarmUpBroken(s, c, true, false), nil
	}), map[string][]string{
		"warm-up-curve":         {"admitted in [2s, 3s): the curve admits 40.02 there (±2)"},
		"warm-up-burst-and-age": {"admitted at once at age 5s: the burst at that age is exactly ⌊τ/I(a)⌋ = ⌊100ms/20ms⌋ = 5"},
		"monotonic-time":        {"warm-up:capacity=3,rate=100/1s,warmup=1s drained at 2s refused a request at 2.01s, when the next permit is due: the limiter stalled"},
	}},
	{"warm-up without the one-interval clamp", only(func(s limiters.WarmUpSpec, c limiters.Clock) (limiters.Limiter, error) {
		return newWarmUpBroken(s, c, false, true), nil
	}), map[string][]string{
		"warm-up-capacity-one": {"the first request at 0 was not admitted", "bound: first admission at 0"},
	}},
	{"a token bucket that answers an impossible size rejected instead of never", only(func(s limiters.TokenBucketSpec, c limiters.Clock) (limiters.Limiter, error) {
		l, err := s.New(c)
		return neverAsRejected{l}, err
	}), map[string][]string{
		"request-sizes": {"token-bucket:capacity=3,rate=100/1s: a request for MaxPermits+1 = 4 got rejected after 3 attempts: the bound is never, in exactly 1 attempt"},
	}},
	{"Flash5's fixed window with a 64-bit epoch (ratelab's fixed window)", only(func(s peers.Flash5FixedSpec, c limiters.Clock) (limiters.Limiter, error) {
		return limiters.NewFixedWindow(s.Limit, s.Window, c)
	}), map[string][]string{
		"flash5-epoch-wrap": {"flash5-fixed:limit=3,window=1ms after exactly 2^32 windows admitted 3 of 4: the bound is exactly 0"},
	}},
	{"ratelab's exact token bucket in place of x/time/rate", only(func(s peers.XTimeRateSpec, c limiters.Clock) (limiters.Limiter, error) {
		return limiters.NewTokenBucket(s.Burst, s.Rate, c)
	}), map[string][]string{
		"x-time-rate-library": {"x-time-rate:rate=3/1s,burst=1 admitted requests [1 3 5 7 9] of 10 every 333,333,333ns: the bound is exactly [1 2 3 4 6 7 8 9]"},
	}},
	{"a full token bucket of capacity slack + 1 in place of uber", only(func(s peers.UberSpec, c limiters.Clock) (limiters.Limiter, error) {
		return limiters.NewTokenBucket(s.Slack+1, s.Rate, c)
	}), map[string][]string{
		"uber-slack": {"uber:rate=100/1s: 12 Takes at 0 wait [0s 0s 0s 0s 0s 0s 0s 0s 0s 0s 0s 10ms]: the first calls get no slack: the bound is exactly [0s 10ms 20ms"},
	}},
	{"a token bucket of capacity 2 in place of uber without slack", only(func(s peers.UberSpec, c limiters.Clock) (limiters.Limiter, error) {
		return limiters.NewTokenBucket(s.Slack+2, s.Rate, c)
	}), map[string][]string{
		"uber-slack": {"uber:rate=100/1s,slack=0: 3 Takes at 1s, after idle, wait [0s 0s 10ms]: the bound is exactly [0s 10ms 20ms]",
			"uber:rate=100/1s,slack=0: admissions at"},
	}},
	{"nginx as a textbook leaky bucket (every request adds 1000 after the drain)", only(func(s peers.NginxSpec, c limiters.Clock) (limiters.Limiter, error) {
		return newTextbookNginx(s, c, true)
	}), map[string][]string{
		"nginx-burst": {
			"nginx:rate=10r/s,burst=5,delay=2: 10 at 0s: served with holds [0s 0s 100ms 200ms 300ms] and refused 5: the bound is exactly holds [0s 0s 0s 100ms 200ms 300ms] and 4 refused",
			"nginx:rate=10r/s,burst=5,delay=nodelay: 7 at 10s: served with holds [0s 0s 0s 0s 0s] and refused 2",
			"nginx:rate=1r/m: a request at 0s was rejected: the bound is admitted",
		},
	}},
	{"nginx with an exact rate (1r/m as one per 60s)", only(func(s peers.NginxSpec, c limiters.Clock) (limiters.Limiter, error) {
		return newTextbookNginx(s, c, false)
	}), map[string][]string{
		"nginx-burst": {"nginx:rate=1r/m: a request at 1m was admitted: the bound is rejected (1r/m is 16 milli-requests per second: one every 62.5s)"},
	}},
	{"a token bucket that cannot refund", only(func(s limiters.TokenBucketSpec, c limiters.Clock) (limiters.Limiter, error) {
		l, err := s.New(c)
		return struct{ limiters.Clocked }{l.(limiters.Clocked)}, err // hides RefundAt
	}), map[string][]string{
		"stack-refunds": {"refund: 1 admitted at 1s: the bound is exactly 2"},
	}},
	{"a Guava that charges the caller itself (SmoothBursty waiting for its own cost)", only(func(s peers.GuavaBurstySpec, c limiters.Clock) (limiters.Limiter, error) {
		l, err := peers.NewGuavaBursty(s, c)
		return guavaSelfPaying{l}, err
	}), map[string][]string{
		"guava-prepay": {
			"guava-bursty:rate=1/1s,mode=wait: acquire(10) at 0 (call 1) got admitted with a wait of 10s: the bound is admitted with a wait of exactly 0s",
			"guava-bursty:rate=1/1s: tryAcquire(10) at 0s got rejected: the bound is admitted",
			"guava-bursty:rate=10/1s: 0 of 12 at 0 were admitted: the bound is exactly 1 (it starts empty, and the first passes at once)",
		},
	}},
	{"a Guava warm-up that starts warm (no cold interval: cold_factor=1)", only(func(s peers.GuavaWarmUpSpec, c limiters.Clock) (limiters.Limiter, error) {
		s.ColdFactor = 1
		return peers.NewGuavaWarmingUp(s, c)
	}), map[string][]string{
		"guava-warmup-never-warms": {
			"guava-warmup:rate=100/1s,warmup=1s: 100 admitted in second 0: the bound is exactly 34",
			"guava-warmup:rate=100/1s,warmup=1s,cold_factor=2: 100 admitted in second 0: the bound is exactly 50",
			"guava-warmup:rate=100/1s,warmup=1s,mode=wait: acquire(1) at 500ms waited 0s: the bound is exactly 500ms from the 51st request on",
		},
	}},
	{"a fixed 1s window in place of sentinel's two 500ms buckets", only(func(s peers.SentinelSpec, c limiters.Clock) (limiters.Limiter, error) {
		if s.Strategy != peers.SentinelDirect || s.Behavior != peers.SentinelReject {
			return s.New(c)
		}
		l, err := limiters.NewFixedWindow(int(s.Threshold), time.Second, c)
		return reserving{l}, err
	}), map[string][]string{
		"sentinel-flow": {"sentinel:threshold=100: 1 admitted of 1 at 1.2s: the bound is exactly 0 (two 500ms buckets)"},
	}},
	{"a sentinel warm-up that starts warm", only(func(s peers.SentinelSpec, c limiters.Clock) (limiters.Limiter, error) {
		if s.Strategy == peers.SentinelWarmUp {
			s.Strategy, s.WarmUp, s.ColdFactor = peers.SentinelDirect, 0, 3
		}
		return s.New(c)
	}), map[string][]string{
		"sentinel-flow": {"sentinel:threshold=100,strategy=warmup,warmup=10s: admitted [100 100 100 100 100 100 100 100 100 100 100 100 100] " +
			"in seconds 0 to 12 of saturating demand: the bound is exactly [33 34 36"},
	}},
	{"a sentinel throttling on an exact interval (1s/QPS truncated, not ⌈n/QPS·1s⌉)", only(func(s peers.SentinelSpec, c limiters.Clock) (limiters.Limiter, error) {
		l, err := s.New(c)
		if err != nil || s.Behavior != peers.SentinelThrottling {
			return l, err
		}
		return &exactPacer{Limiter: l, interval: int64(float64(time.Second) / s.Threshold), maxQueue: int64(s.MaxQueue)}, nil
	}), map[string][]string{
		"sentinel-flow": {"sentinel:threshold=3,behavior=throttling,max_queue=1s: 4 at 0 waited [0s 333.333333ms 666.666666ms 999.999999ms] " +
			"and 0 were blocked: the bound is exactly waits [0s 333.333334ms 666.666668ms] and 1 blocked"},
	}},
	{"an adaptive limit that lets every 5th refused request through anyway", func(s limiters.Spec, c limiters.Clock) (limiters.Limiter, error) {
		l, err := s.New(c)
		if a, ok := l.(*limiters.AdaptiveLimiter); ok {
			return &leakyAdaptive{AdaptiveLimiter: a}, err
		}
		return l, err
	}, map[string][]string{
		"adaptive-limit-holds": {"aimd:initial=20,min=20,max=200: at", "in flight + n must not pass the limit"},
	}},
	{"a limiter that allocates per decision", func(s limiters.Spec, c limiters.Clock) (limiters.Limiter, error) {
		l, err := s.New(c)
		return allocating{l}, err
	}, map[string][]string{
		"no-alloc": {"token-bucket:capacity=3,rate=100/1s: AcquireAt allocates 1.00 times per call: the bound is 0"},
	}},
}

// TestCheckersCatchBrokenLimiters runs guarantees with broken limiters: every checker must
// fail, naming the bound and the interval (or instant) that broke it.
func TestCheckersCatchBrokenLimiters(t *testing.T) {
	for _, c := range brokenCases {
		for id, wants := range c.guarantees {
			t.Run(c.name+"/"+id, func(t *testing.T) {
				g, err := Get(id)
				require.NoError(t, err)
				if !g.serial {
					t.Parallel()
				}
				v, err := g.Run(context.Background(), c.factory)
				require.NoError(t, err)
				require.False(t, v.OK(), "the %s passed %s: its checker cannot fail", c.name, id)
				all := strings.Join(v.Failures, "\n")
				for _, want := range wants {
					assert.Contains(t, all, want)
				}
				t.Logf("%s", all)
				require.Error(t, v.Err())
			})
		}
	}
}

// Every guarantee's checker is proven able to fail by at least one broken variant.
func TestEveryGuaranteeHasABrokenVariant(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range brokenCases {
		for id := range c.guarantees {
			covered[id] = true
		}
	}
	for _, g := range Catalogue() {
		assert.True(t, covered[g.ID], "no broken limiter proves that %s's checker can fail", g.ID)
	}
}

// textbookNginx is limit_req with the rate exact, where nginx truncates it to whole
// milli-requests per second (1r/m: 16, one per 62.5s), and, when textbook, as a textbook
// leaky bucket has it: excess' = max(0, excess − drained) + 1000 for every request, where
// nginx floors after adding the request's own 1000 (so that the first request of a drained
// key is free and burst + 1 pass).
type textbookNginx struct {
	limiters.Limiter           // the real one, for what the checker does not ask
	rate, burst, delay float64 // milli-requests per ms; milli-requests
	textbook           bool
	excess             float64 // −1: a key not seen yet
	last               time.Duration
}

func newTextbookNginx(s peers.NginxSpec, c limiters.Clock, textbook bool) (limiters.Limiter, error) {
	real, err := s.New(c)
	delay := float64(s.Delay) * 1000
	if s.NoDelay {
		delay = math.Inf(1)
	}
	return &textbookNginx{Limiter: real, rate: float64(s.Rate.Permits) / s.Rate.Window.Seconds(),
		burst: float64(s.Burst) * 1000, delay: delay, textbook: textbook, excess: -1}, err
}

func (b *textbookNginx) AcquireAt(now time.Duration, n int) limiters.Decision {
	return b.ReserveAt(now, n, 0).Decision
}

func (b *textbookNginx) ReserveAt(now time.Duration, n int, maxWait time.Duration) limiters.Reservation {
	r := limiters.Reservation{Decision: limiters.Rejected, Permits: n, At: now}
	drained := b.rate * float64(now-b.last) / float64(time.Millisecond)
	excess := math.Max(0, b.excess-drained+1000) + float64(n-1)*1000
	switch {
	case b.textbook:
		excess = math.Max(0, b.excess-drained) + float64(n)*1000
	case b.excess < 0: // a key not seen yet
		excess = float64(n-1) * 1000
	}
	if excess > b.burst {
		return r
	}
	if excess > b.delay {
		r.Wait = time.Duration((excess - b.delay) / b.rate * float64(time.Millisecond))
	}
	if r.Wait > maxWait {
		return r
	}
	b.excess, b.last, r.Decision = excess, now, limiters.Admitted
	return r
}

func (b *textbookNginx) CancelAt(time.Duration, limiters.Reservation) {}

// reserving gives a limiter without the reserve capability the form a caller that cannot wait
// uses: admitted at once, or rejected.
type reserving struct{ limiters.Limiter }

func (r reserving) ReserveAt(now time.Duration, n int, _ time.Duration) limiters.Reservation {
	return limiters.Reservation{Decision: r.AcquireAt(now, n), Permits: n, At: now}
}

func (reserving) CancelAt(time.Duration, limiters.Reservation) {}

// exactPacer is sentinel's throttling with the interval 1s/QPS truncated to whole ns, where
// sentinel rounds n/QPS·1s up: 3/s paces 333,333,333ns apart instead of 333,333,334ns.
type exactPacer struct {
	limiters.Limiter
	interval, maxQueue int64
	last               int64
	passed             bool
}

func (p *exactPacer) AcquireAt(now time.Duration, n int) limiters.Decision {
	return p.ReserveAt(now, n, 0).Decision
}

func (p *exactPacer) ReserveAt(now time.Duration, n int, maxWait time.Duration) limiters.Reservation {
	r := limiters.Reservation{Decision: limiters.Rejected, Permits: n, At: now}
	interval := p.interval * int64(n)
	if !p.passed || p.last+interval <= int64(now) {
		p.last, p.passed, r.Decision = int64(now), true, limiters.Admitted
		return r
	}
	wait := p.last + interval - int64(now)
	if wait > p.maxQueue || wait > int64(maxWait) {
		return r
	}
	p.last += interval
	r.Decision, r.Wait = limiters.Admitted, time.Duration(wait)
	return r
}

func (p *exactPacer) CancelAt(time.Duration, limiters.Reservation) {}

// halfWait is a limiter that tells a refused client half the wait it needs.
type halfWait struct{ limiters.Limiter }

func (h halfWait) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	wait, ok := h.Limiter.(limiters.RetryAfter).RetryAfterAt(now, n)
	return wait / 2, ok
}

// lateWait is a limiter that tells a refused client 1ms more than the wait it needs.
type lateWait struct{ limiters.Limiter }

func (l lateWait) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	wait, ok := l.Limiter.(limiters.RetryAfter).RetryAfterAt(now, n)
	return wait + time.Millisecond, ok
}

func init() {
	brokenCases = append(brokenCases,
		brokenCase{"a limiter whose Retry-After is half the wait", func(s limiters.Spec, c limiters.Clock) (limiters.Limiter, error) {
			l, err := s.New(c)
			if _, ok := l.(limiters.RetryAfter); !ok || err != nil {
				return l, err
			}
			return halfWait{l}, nil
		}, map[string][]string{
			"retry-after-admits": {"token-bucket:capacity=3,rate=1/7s: request 2 (2 at 0s) refused with a wait of 7s; " +
				"asked again after the wait (7s) it was rejected: the bound is admitted"},
		}},
		brokenCase{"a limiter whose Retry-After is 1ms late", func(s limiters.Spec, c limiters.Clock) (limiters.Limiter, error) {
			l, err := s.New(c)
			if _, ok := l.(limiters.RetryAfter); !ok || err != nil {
				return l, err
			}
			return lateWait{l}, nil
		}, map[string][]string{
			"retry-after-admits": {"fixed-window:limit=5,window=7s: request 3 (2 at 0s) refused with a wait of 7.001s; " +
				"asked again after 1ns before the wait (7.000999999s) it was admitted: the bound is rejected"},
		}})
}
