package limiters

// Differential tests: every rate limiter against a plain, obviously correct reference model
// written here (a mutex and exact arithmetic: math/big for the GCRA schedules, explicit
// per-window and per-slot counts for the windows), on seeded random traces of at least 100k
// operations each, with multi-permit requests, invalid and impossible sizes and idle gaps
// from 0 to years. Decisions, AvailableAt and RetryAfterAt must be identical, and on every
// rejection that is followed up, waiting exactly RetryAfterAt passes and 1ns less does not.

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratelab/ratelab/virtualclock"
	"github.com/stretchr/testify/require"
)

// model is a reference implementation of one rate limiter.
type model interface {
	acquire(now time.Duration, n int) Decision
	available(now time.Duration) int
	retryAfter(now time.Duration, n int) (time.Duration, bool)
}

func bigOf(v int64) *big.Int { return big.NewInt(v) }

// sizeOK classifies n like the limiters must: Invalid for n ≤ 0, Never above maxN.
func sizeOK(n, maxN int) Decision {
	switch {
	case n <= 0:
		return Invalid
	case n > maxN:
		return Never
	}
	return Admitted
}

// gcraModel is GCRA spelled out in math/big: admit n at now iff
// max(TAT, now) − now + n·T ≤ τ, then TAT = max(TAT, now) + n·T.
type gcraModel struct {
	mu   sync.Mutex
	tat  *big.Int
	t    *big.Int // T
	tol  *big.Int // τ
	maxN int
}

func newGCRAModel(rate Rate, capacity int) *gcraModel {
	// T = ⌈window / permits⌉, computed independently of Rate.Interval.
	t := new(big.Int).Add(bigOf(int64(rate.Window)), bigOf(int64(rate.Permits)-1))
	t.Quo(t, bigOf(int64(rate.Permits)))
	return &gcraModel{tat: bigOf(0), t: t, tol: new(big.Int).Mul(t, bigOf(int64(capacity))), maxN: capacity}
}

// backlog is max(TAT − now, 0).
func (m *gcraModel) backlog(now time.Duration) *big.Int {
	b := new(big.Int).Sub(m.tat, bigOf(int64(now)))
	if b.Sign() < 0 {
		b.SetInt64(0)
	}
	return b
}

func (m *gcraModel) fits(now time.Duration, n int) bool {
	need := new(big.Int).Mul(m.t, bigOf(int64(n)))
	return need.Add(need, m.backlog(now)).Cmp(m.tol) <= 0
}

func (m *gcraModel) acquire(now time.Duration, n int) Decision {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d := sizeOK(n, m.maxN); d != Admitted {
		return d
	}
	if !m.fits(now, n) {
		return Rejected
	}
	start := new(big.Int).Add(bigOf(int64(now)), m.backlog(now))
	m.tat = start.Add(start, new(big.Int).Mul(m.t, bigOf(int64(n))))
	return Admitted
}

func (m *gcraModel) available(now time.Duration) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	room := new(big.Int).Sub(m.tol, m.backlog(now))
	if room.Sign() <= 0 {
		return 0
	}
	return int(room.Quo(room, m.t).Int64())
}

// retryAfter: the backlog shrinks 1ns per ns, so the first t that fits is now plus the
// excess of backlog + n·T over τ.
func (m *gcraModel) retryAfter(now time.Duration, n int) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if sizeOK(n, m.maxN) != Admitted {
		return 0, false
	}
	excess := new(big.Int).Mul(m.t, bigOf(int64(n)))
	excess.Add(excess, m.backlog(now)).Sub(excess, m.tol)
	if excess.Sign() <= 0 {
		return 0, true
	}
	return time.Duration(excess.Int64()), true
}

// warmUpModel is the warm-up bucket in math/big: at age a the interval is
// I(a) = T + ⌊2T·(P − a)/P⌋ (3T before birth, T from P on), the tolerance max(capacity·T, I).
type warmUpModel struct {
	mu             sync.Mutex
	tat            *big.Int
	t, p, born, cp *big.Int
	capacity       int
}

func newWarmUpModel(rate Rate, capacity int, warmUp, born time.Duration) *warmUpModel {
	g := newGCRAModel(rate, capacity)
	return &warmUpModel{tat: bigOf(int64(born)), t: g.t, p: bigOf(int64(warmUp)), born: bigOf(int64(born)),
		cp: g.tol, capacity: capacity}
}

func (m *warmUpModel) interval(now time.Duration) *big.Int {
	age := new(big.Int).Sub(bigOf(int64(now)), m.born)
	if age.Cmp(m.p) >= 0 {
		return new(big.Int).Set(m.t)
	}
	if age.Sign() < 0 {
		age.SetInt64(0)
	}
	extra := new(big.Int).Sub(m.p, age)
	extra.Mul(extra, m.t).Mul(extra, bigOf(2)).Quo(extra, m.p) // ⌊2T(P−a)/P⌋, all ≥ 0
	return extra.Add(extra, m.t)
}

func (m *warmUpModel) tolerance(i *big.Int) *big.Int {
	if i.Cmp(m.cp) > 0 {
		return i
	}
	return m.cp
}

func (m *warmUpModel) backlog(now time.Duration) *big.Int {
	b := new(big.Int).Sub(m.tat, bigOf(int64(now)))
	if b.Sign() < 0 {
		b.SetInt64(0)
	}
	return b
}

func (m *warmUpModel) fits(now time.Duration, n int) bool {
	i := m.interval(now)
	need := new(big.Int).Mul(i, bigOf(int64(n)))
	return need.Add(need, m.backlog(now)).Cmp(m.tolerance(i)) <= 0
}

func (m *warmUpModel) acquire(now time.Duration, n int) Decision {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d := sizeOK(n, m.capacity); d != Admitted {
		return d
	}
	if !m.fits(now, n) {
		return Rejected
	}
	next := new(big.Int).Add(bigOf(int64(now)), m.backlog(now))
	m.tat = next.Add(next, new(big.Int).Mul(m.interval(now), bigOf(int64(n))))
	return Admitted
}

func (m *warmUpModel) available(now time.Duration) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := m.interval(now)
	room := new(big.Int).Sub(m.tolerance(i), m.backlog(now))
	if room.Sign() <= 0 {
		return 0
	}
	return int(room.Quo(room, i).Int64())
}

// retryAfter searches for the first t that fits by doubling and then bisecting, using only
// fits; it relies on fits being monotone in t, which TestWarmUpFitsMonotone checks.
func (m *warmUpModel) retryAfter(now time.Duration, n int) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if sizeOK(n, m.capacity) != Admitted {
		return 0, false
	}
	if m.fits(now, n) {
		return 0, true
	}
	lo, step := now, time.Duration(1)
	for !m.fits(lo+step, n) {
		lo += step
		step *= 2
	}
	hi := lo + step
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if m.fits(mid, n) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi - now, true
}

// fixedModel counts permits per aligned window index ⌊now / window⌋.
type fixedModel struct {
	mu     sync.Mutex
	window int64
	limit  int
	counts map[int64]int
}

func newFixedModel(limit int, window time.Duration) *fixedModel {
	return &fixedModel{window: int64(window), limit: limit, counts: map[int64]int{}}
}

func (m *fixedModel) acquire(now time.Duration, n int) Decision {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d := sizeOK(n, m.limit); d != Admitted {
		return d
	}
	i := int64(now) / m.window
	if m.counts[i]+n > m.limit {
		return Rejected
	}
	c := m.counts[i]
	clear(m.counts) // only the current window matters from now on (time is monotone here)
	m.counts[i] = c + n
	return Admitted
}

func (m *fixedModel) available(now time.Duration) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.limit - m.counts[int64(now)/m.window]
}

func (m *fixedModel) retryAfter(now time.Duration, n int) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if sizeOK(n, m.limit) != Admitted {
		return 0, false
	}
	if m.counts[int64(now)/m.window]+n <= m.limit {
		return 0, true
	}
	next := (int64(now)/m.window + 1) * m.window // the next window is empty
	return time.Duration(next) - now, true
}

// slidingModel counts permits per slot index ⌊now / slotLength⌋ and admits n when the slots
// cur−slots+1 … cur hold at most limit − n.
type slidingModel struct {
	mu           sync.Mutex
	slot         int64
	slots, limit int
	counts       map[int64]int
}

func newSlidingModel(limit int, window time.Duration, slots int) *slidingModel {
	return &slidingModel{slot: int64(window) / int64(slots), slots: slots, limit: limit, counts: map[int64]int{}}
}

// used sums the counts of slots cur−slots+1 … cur (the map holds only slots that can still
// be live, at most slots of them).
func (m *slidingModel) used(cur int64) int {
	total := 0
	for g, c := range m.counts {
		if g > cur-int64(m.slots) && g <= cur {
			total += c
		}
	}
	return total
}

func (m *slidingModel) acquire(now time.Duration, n int) Decision {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d := sizeOK(n, m.limit); d != Admitted {
		return d
	}
	cur := int64(now) / m.slot
	if m.used(cur)+n > m.limit {
		return Rejected
	}
	m.counts[cur] += n
	for g := range m.counts {
		if g <= cur-int64(m.slots) {
			delete(m.counts, g)
		}
	}
	return Admitted
}

func (m *slidingModel) available(now time.Duration) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.limit - m.used(int64(now)/m.slot)
}

// retryAfter tries now, then each instant at which a counted slot expires (slot g expires
// when slot g+slots begins), earliest first, until n fit.
func (m *slidingModel) retryAfter(now time.Duration, n int) (time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if sizeOK(n, m.limit) != Admitted {
		return 0, false
	}
	cur := int64(now) / m.slot
	if m.used(cur)+n <= m.limit {
		return 0, true
	}
	expiries := make([]int64, 0, len(m.counts))
	for g := range m.counts {
		if g+int64(m.slots) > cur {
			expiries = append(expiries, g+int64(m.slots))
		}
	}
	slices.Sort(expiries)
	for _, e := range expiries {
		if m.used(e)+n <= m.limit {
			return time.Duration(e*m.slot) - now, true
		}
	}
	panic("unreachable: once every slot has expired the window is empty")
}

// ---- traces ----

// config is one limiter configuration with its model.
type config struct {
	name  string
	scale time.Duration // T or the window: what idle gaps are measured in
	maxN  int
	make  func(clock *virtualclock.Clock) (RateLimiter, model)
	// retryEvery > 1 compares RetryAfterAt with the model on every retryEvery-th operation
	// only (the warm-up model bisects in math/big, which is slow under -race); the
	// limiter's own answer is still followed up on rejections.
	retryEvery int
}

func tokenBucketConfig(capacity int, rate Rate) config {
	return config{fmt.Sprintf("token-bucket:capacity=%d,rate=%s", capacity, rate), rate.Interval(), capacity,
		func(c *virtualclock.Clock) (RateLimiter, model) {
			l, err := NewTokenBucket(capacity, rate, c)
			if err != nil {
				panic(err)
			}
			return l, newGCRAModel(rate, capacity)
		}, 1}
}

func leakyBucketConfig(rate Rate) config {
	return config{"leaky-bucket:rate=" + rate.String(), rate.Interval(), 1,
		func(c *virtualclock.Clock) (RateLimiter, model) {
			l, err := NewLeakyBucket(rate, c)
			if err != nil {
				panic(err)
			}
			return l, newGCRAModel(rate, 1)
		}, 1}
}

func warmUpConfig(capacity int, rate Rate, warmUp time.Duration) config {
	return config{fmt.Sprintf("warm-up:capacity=%d,rate=%s,warmup=%s", capacity, rate, FormatDuration(warmUp)),
		rate.Interval(), capacity,
		func(c *virtualclock.Clock) (RateLimiter, model) {
			l, err := NewWarmUpTokenBucket(capacity, rate, warmUp, c)
			if err != nil {
				panic(err)
			}
			return l, newWarmUpModel(rate, capacity, warmUp, c.Now())
		}, 4}
}

func fixedWindowConfig(limit int, window time.Duration) config {
	return config{fmt.Sprintf("fixed-window:limit=%d,window=%s", limit, FormatDuration(window)),
		window / time.Duration(limit), limit,
		func(c *virtualclock.Clock) (RateLimiter, model) {
			l, err := NewFixedWindow(limit, window, c)
			if err != nil {
				panic(err)
			}
			return l, newFixedModel(limit, window)
		}, 1}
}

func slidingWindowConfig(limit int, window time.Duration, slots int) config {
	return config{fmt.Sprintf("sliding-window:limit=%d,window=%s,slots=%d", limit, FormatDuration(window), slots),
		window / time.Duration(limit), limit,
		func(c *virtualclock.Clock) (RateLimiter, model) {
			l, err := NewSlidingWindow(limit, window, slots, c)
			if err != nil {
				panic(err)
			}
			return l, newSlidingModel(limit, window, slots)
		}, 1}
}

// gap draws an idle gap: often none or a fraction of the scale, sometimes a few scales,
// rarely a long idle (up to 10⁴ scales or, once in a while, up to a year).
func gap(r *rand.Rand, scale time.Duration) time.Duration {
	s := int64(max(scale, 1))
	switch p := r.IntN(100); {
	case p < 25:
		return 0
	case p < 55:
		return time.Duration(r.Int64N(s + 1))
	case p < 70:
		return time.Duration(s + r.Int64N(3) - 1) // T−1, T, T+1
	case p < 92:
		return time.Duration(r.Int64N(4*s + 1))
	case p < 99:
		return time.Duration(r.Int64N(min(10_000*s, int64(time.Hour)*24*365) + 1))
	default:
		return time.Duration(r.Int64N(int64(365 * 24 * time.Hour)))
	}
}

// size draws a request size: mostly 1, often up to maxN, sometimes invalid or too large.
func size(r *rand.Rand, maxN int) int {
	switch p := r.IntN(100); {
	case p < 55:
		return 1
	case p < 90:
		return 1 + r.IntN(maxN)
	case p < 93:
		return -r.IntN(2) // 0 or −1
	case p < 96:
		return maxN + 1 + r.IntN(3)
	default:
		return maxN
	}
}

// runTrace drives a limiter and its model through ops random operations from start and
// requires them to agree on everything.
func runTrace(t *testing.T, cfg config, seed uint64, start time.Duration, ops int) {
	t.Helper()
	clock, err := virtualclock.NewAt(start)
	require.NoError(t, err)
	lim, ref := cfg.make(clock)
	r := rand.New(rand.NewPCG(seed, uint64(len(cfg.name))))
	now := start
	for op := 0; op < ops; op++ {
		g := gap(r, cfg.scale)
		if now-start+g > 20*year { // keep long traces within 20 years of their start
			g %= max(cfg.scale, 1)
		}
		now += g
		n := size(r, cfg.maxN)
		// Before deciding: what is available, and when would n pass.
		if got, want := lim.AvailableAt(now), ref.available(now); got != want {
			require.Equal(t, want, got, "%s seed %d op %d: AvailableAt(%v)", cfg.name, seed, op, now)
		}
		gw, gok := lim.RetryAfterAt(now, n)
		if cfg.retryEvery <= 1 || op%cfg.retryEvery == 0 {
			ww, wok := ref.retryAfter(now, n)
			if gw != ww || gok != wok {
				require.Equal(t, fmt.Sprint(ww, wok), fmt.Sprint(gw, gok), "%s seed %d op %d: RetryAfterAt(%v, %d)", cfg.name, seed, op, now, n)
			}
		}
		got, want := lim.AcquireAt(now, n), ref.acquire(now, n)
		if got != want {
			require.Equal(t, want, got, "%s seed %d op %d: AcquireAt(%v, %d)", cfg.name, seed, op, now, n)
		}
		if got == Rejected && r.IntN(4) == 0 {
			// Follow the Retry-After: 1ns earlier is still too early, exactly then it passes.
			require.Positive(t, gw, "%s: rejected, yet RetryAfterAt says now", cfg.name)
			require.Equal(t, Rejected, lim.AcquireAt(now+gw-1, n), "%s seed %d op %d: 1ns before RetryAfterAt", cfg.name, seed, op)
			require.Equal(t, Rejected, ref.acquire(now+gw-1, n))
			now += gw
			require.Equal(t, Admitted, lim.AcquireAt(now, n), "%s seed %d op %d: at RetryAfterAt=%v", cfg.name, seed, op, gw)
			require.Equal(t, Admitted, ref.acquire(now, n))
		}
		if op%4096 == 0 {
			// Snapshot agrees with AvailableAt.
			require.Equal(t, lim.AvailableAt(now), lim.Snapshot(now).Available, "%s: Snapshot(%v).Available", cfg.name, now)
		}
	}
	require.Less(t, now, time.Duration(MaxSpan), "the trace must stay within the documented range")
}

func differentialConfigs() map[string][]config {
	return map[string][]config{
		"token-bucket": {
			tokenBucketConfig(3, PerSecond(100)),
			tokenBucketConfig(10, Rate{7, 100 * time.Millisecond}), // T not a whole number of ns
			tokenBucketConfig(1, PerSecond(3)),
		},
		"leaky-bucket": {
			leakyBucketConfig(PerSecond(100)),
			leakyBucketConfig(Rate{7, 100 * time.Millisecond}),
		},
		"warm-up": {
			warmUpConfig(10, PerSecond(100), 10*time.Second),
			warmUpConfig(2, Rate{7, 100 * time.Millisecond}, time.Minute), // capacity < cold factor
			warmUpConfig(50, PerSecond(1000), 3*time.Hour),                // warming for most of the trace
		},
		"fixed-window": {
			fixedWindowConfig(100, time.Second),
			fixedWindowConfig(7, 100*time.Millisecond),
		},
		"sliding-window": {
			slidingWindowConfig(100, time.Second, 10),
			slidingWindowConfig(7, 100*time.Millisecond, 4),
			slidingWindowConfig(20, time.Second, 1),
		},
	}
}

// TestDifferential runs ≥ 100k operations per limiter kind against its model.
func TestDifferential(t *testing.T) {
	const opsPerKind = 100_000
	for kind, cfgs := range differentialConfigs() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			for i, cfg := range cfgs {
				runTrace(t, cfg, uint64(i+1), 0, opsPerKind/len(cfgs)+1)
			}
		})
	}
}

// TestDifferentialTimes runs short traces from 0, 1h, 1 year and 100 years, at very low
// (1 per hour) and very high (1e8 per second) rates: the limiters must be right at any
// virtual time below 2^62 ns.
func TestDifferentialTimes(t *testing.T) {
	cfgs := []config{
		tokenBucketConfig(5, Rate{1, time.Hour}),
		tokenBucketConfig(1000, PerSecond(100_000_000)),
		leakyBucketConfig(Rate{1, time.Hour}),
		leakyBucketConfig(PerSecond(100_000_000)),
		warmUpConfig(4, Rate{1, time.Hour}, 24*time.Hour),
		warmUpConfig(1000, PerSecond(100_000_000), time.Millisecond),
		fixedWindowConfig(1, time.Hour),
		fixedWindowConfig(100_000_000, time.Second),
		slidingWindowConfig(2, time.Hour, 4),
		slidingWindowConfig(100_000_000, time.Second, 1000),
		slidingWindowConfig(100_000, time.Millisecond, 10), // 1e8/s in 100µs slots
	}
	for _, start := range []time.Duration{0, time.Hour, year, 100 * year} {
		for i, cfg := range cfgs {
			t.Run(fmt.Sprintf("start=%s/%s", FormatDuration(start), cfg.name), func(t *testing.T) {
				runTrace(t, cfg, uint64(i+100), start, 1500)
			})
		}
	}
}

// TestIdleAnyLength: after an idle of any length, from 1ns to 50 years, every limiter is
// where its model is.
func TestIdleAnyLength(t *testing.T) {
	cfgs := []config{
		tokenBucketConfig(3, PerSecond(100)),
		tokenBucketConfig(2, Rate{1, time.Hour}),
		leakyBucketConfig(Rate{7, 100 * time.Millisecond}),
		warmUpConfig(10, PerSecond(100), 10*time.Second),
		fixedWindowConfig(100, time.Second),
		fixedWindowConfig(100_000_000, time.Second),
		slidingWindowConfig(100, time.Second, 10),
		slidingWindowConfig(100_000_000, time.Second, 1000),
	}
	idles := []time.Duration{1, 2, time.Microsecond, 10*time.Millisecond - 1, 10 * time.Millisecond,
		10*time.Millisecond + 1, 99 * time.Millisecond, time.Second, time.Minute, time.Hour, 24 * time.Hour,
		year, 1<<35*time.Millisecond + 1, 10 * year, 50 * year}
	for _, cfg := range cfgs {
		for _, start := range []time.Duration{0, 100 * year} {
			clock, err := virtualclock.NewAt(start)
			require.NoError(t, err)
			lim, ref := cfg.make(clock)
			now := start
			for _, idle := range idles {
				// Spend everything, idle, then compare.
				for a := lim.AvailableAt(now); a > 0; a = lim.AvailableAt(now) {
					require.Equal(t, Admitted, lim.AcquireAt(now, a), cfg.name)
					require.Equal(t, Admitted, ref.acquire(now, a), cfg.name)
				}
				require.Equal(t, Rejected, ref.acquire(now, 1), cfg.name)
				now += idle
				require.Equal(t, ref.available(now), lim.AvailableAt(now), "%s: after idle %v from %v", cfg.name, idle, now-idle)
				gw, gok := lim.RetryAfterAt(now, cfg.maxN)
				ww, wok := ref.retryAfter(now, cfg.maxN)
				require.Equal(t, fmt.Sprint(ww, wok), fmt.Sprint(gw, gok), "%s: RetryAfterAt after idle %v", cfg.name, idle)
				require.Equal(t, ref.acquire(now, 1), lim.AcquireAt(now, 1), "%s: after idle %v", cfg.name, idle)
			}
		}
	}
}

// The warm-up model's retryAfter bisects, which needs fits(t) to be monotone: once a request
// fits it keeps fitting as time passes (the backlog drains, the interval shrinks). So does
// the limiter's RetryAfterAt.
func TestWarmUpFitsMonotone(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, capacity := range []int{1, 2, 3, 4, 10} {
		m := newWarmUpModel(PerSecond(100), capacity, time.Second, 0)
		now := time.Duration(0)
		for range 40 {
			now += time.Duration(r.Int64N(int64(40 * time.Millisecond)))
			m.acquire(now, 1+r.IntN(capacity))
			for n := 1; n <= capacity; n++ {
				fit := false
				for dt := time.Duration(0); dt < 2*time.Second; dt += time.Duration(1 + r.Int64N(int64(10*time.Millisecond))) {
					f := m.fits(now+dt, n)
					require.False(t, fit && !f, "capacity %d n %d: fits at an earlier time but not at %v", capacity, n, now+dt)
					fit = fit || f
				}
			}
		}
	}
}

// TestConcurrencyDifferential: the bulkhead against a counter, on a random trace of
// acquires and releases of varied sizes.
func TestConcurrencyDifferential(t *testing.T) {
	for _, max := range []int{1, 3, 20, math.MaxInt32} {
		c, err := NewConcurrency(max)
		require.NoError(t, err)
		r := rand.New(rand.NewPCG(uint64(max), 1))
		held := 0
		for op := range 25_000 {
			if r.IntN(2) == 0 && held > 0 {
				n := 1 + r.IntN(held)
				c.Release(n)
				held -= n
			} else {
				n := size(r, min(max, 8))
				if r.IntN(50) == 0 {
					n = max - r.IntN(2) // the largest requests, where int32 sums wrapped
				}
				want := sizeOK(n, max)
				if want == Admitted && n > max-held {
					want = Rejected
				}
				got := c.AcquireAt(time.Duration(op), n)
				require.Equal(t, want, got, "max %d held %d n %d", max, held, n)
				if got == Admitted {
					held += n
				}
			}
			require.Equal(t, held, c.InFlight())
			require.Equal(t, max-held, c.AvailableAt(0))
		}
	}
}
