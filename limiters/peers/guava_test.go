package peers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"

	"github.com/ratelab/ratelab/virtualclock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// javaRateLimiter is Guava's RateLimiter written out in Guava's own terms, one Go line per
// line of the Java semantics (SmoothRateLimiter, SmoothBursty, SmoothWarmingUp and
// RateLimiter's tryAcquire/acquire), with Java's double arithmetic, its (long) cast and
// LongMath.saturatedAdd: the reference the kinds are held to, decision for decision and
// wait for wait. It is built as Guava builds one — new SmoothBursty(…) or SmoothWarmingUp(…),
// then setRate(permitsPerSecond) at stopwatch 0 — rather than from the kinds' initial state.
type javaRateLimiter struct {
	// SmoothRateLimiter
	storedPermits        float64
	maxPermits           float64
	stableIntervalMicros float64
	nextFreeTicketMicros int64
	// SmoothBursty
	maxBurstSeconds float64
	// SmoothWarmingUp
	warmingUp          bool
	warmupPeriodMicros int64
	slope              float64
	thresholdPermits   float64
	coldFactor         float64
}

// javaCast is Java's (long) of a double (JLS §5.1.3): NaN is 0, values beyond the long range
// are its ends, the rest are rounded towards zero.
func javaCast(d float64) int64 {
	if math.IsNaN(d) {
		return 0
	}
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}
	if d <= math.MinInt64 {
		return math.MinInt64
	}
	return int64(math.Trunc(d))
}

// javaSaturatedAdd is LongMath.saturatedAdd, bit for bit.
func javaSaturatedAdd(a, b int64) int64 {
	naiveSum := a + b
	if (a^b) < 0 || (a^naiveSum) >= 0 {
		return naiveSum
	}
	return math.MaxInt64 + int64(uint64(naiveSum)>>63^1)
}

func javaBursty(permitsPerSecond, maxBurstSeconds float64) *javaRateLimiter {
	r := &javaRateLimiter{maxBurstSeconds: maxBurstSeconds}
	r.setRate(permitsPerSecond, 0)
	return r
}

func javaWarmingUp(permitsPerSecond float64, warmupPeriodMicros int64, coldFactor float64) *javaRateLimiter {
	r := &javaRateLimiter{warmingUp: true, warmupPeriodMicros: warmupPeriodMicros, coldFactor: coldFactor}
	r.setRate(permitsPerSecond, 0)
	return r
}

// setRate is SmoothRateLimiter.doSetRate(double, long) and the subclass's doSetRate.
func (r *javaRateLimiter) setRate(permitsPerSecond float64, nowMicros int64) {
	r.resync(nowMicros)
	stableIntervalMicros := float64(int64(1_000_000)) / permitsPerSecond // SECONDS.toMicros(1L) / permitsPerSecond
	r.stableIntervalMicros = stableIntervalMicros
	oldMaxPermits := r.maxPermits
	if !r.warmingUp {
		r.maxPermits = r.maxBurstSeconds * permitsPerSecond
		switch {
		case math.IsInf(oldMaxPermits, 1):
			r.storedPermits = r.maxPermits
		case oldMaxPermits == 0.0:
			r.storedPermits = 0.0 // initial state
		default:
			r.storedPermits = r.storedPermits * r.maxPermits / oldMaxPermits
		}
		return
	}
	coldIntervalMicros := stableIntervalMicros * r.coldFactor
	r.thresholdPermits = 0.5 * float64(r.warmupPeriodMicros) / stableIntervalMicros
	r.maxPermits = r.thresholdPermits + 2.0*float64(r.warmupPeriodMicros)/(stableIntervalMicros+coldIntervalMicros)
	r.slope = (coldIntervalMicros - stableIntervalMicros) / (r.maxPermits - r.thresholdPermits)
	switch {
	case math.IsInf(oldMaxPermits, 1):
		r.storedPermits = 0.0
	case oldMaxPermits == 0.0:
		r.storedPermits = r.maxPermits // initial state is cold
	default:
		r.storedPermits = r.storedPermits * r.maxPermits / oldMaxPermits
	}
}

func (r *javaRateLimiter) coolDownIntervalMicros() float64 {
	if r.warmingUp {
		return float64(r.warmupPeriodMicros) / r.maxPermits
	}
	return r.stableIntervalMicros
}

func (r *javaRateLimiter) permitsToTime(permits float64) float64 {
	return r.stableIntervalMicros + float64(permits*r.slope) // no FMA: Java rounds the product
}

func (r *javaRateLimiter) storedPermitsToWaitTime(storedPermits, permitsToTake float64) int64 {
	if !r.warmingUp {
		return 0
	}
	availablePermitsAboveThreshold := storedPermits - r.thresholdPermits
	micros := int64(0)
	if availablePermitsAboveThreshold > 0.0 {
		permitsAboveThresholdToTake := math.Min(availablePermitsAboveThreshold, permitsToTake)
		length := r.permitsToTime(availablePermitsAboveThreshold) +
			r.permitsToTime(availablePermitsAboveThreshold-permitsAboveThresholdToTake)
		micros = javaCast(permitsAboveThresholdToTake * length / 2.0)
		permitsToTake -= permitsAboveThresholdToTake
	}
	micros += javaCast(r.stableIntervalMicros * permitsToTake)
	return micros
}

func (r *javaRateLimiter) resync(nowMicros int64) {
	if nowMicros > r.nextFreeTicketMicros {
		newPermits := float64(nowMicros-r.nextFreeTicketMicros) / r.coolDownIntervalMicros()
		r.storedPermits = math.Min(r.maxPermits, r.storedPermits+newPermits)
		r.nextFreeTicketMicros = nowMicros
	}
}

func (r *javaRateLimiter) reserveEarliestAvailable(requiredPermits int, nowMicros int64) int64 {
	r.resync(nowMicros)
	returnValue := r.nextFreeTicketMicros
	storedPermitsToSpend := math.Min(float64(requiredPermits), r.storedPermits)
	freshPermits := float64(requiredPermits) - storedPermitsToSpend
	waitMicros := r.storedPermitsToWaitTime(r.storedPermits, storedPermitsToSpend) +
		javaCast(freshPermits*r.stableIntervalMicros)
	r.nextFreeTicketMicros = javaSaturatedAdd(r.nextFreeTicketMicros, waitMicros)
	r.storedPermits -= storedPermitsToSpend
	return returnValue
}

func (r *javaRateLimiter) reserveAndGetWaitLength(permits int, nowMicros int64) int64 {
	momentAvailable := r.reserveEarliestAvailable(permits, nowMicros)
	return max(momentAvailable-nowMicros, 0)
}

func (r *javaRateLimiter) canAcquire(nowMicros, timeoutMicros int64) bool {
	return r.nextFreeTicketMicros-timeoutMicros <= nowMicros // queryEarliestAvailable − timeout ≤ now
}

// tryAcquire is tryAcquire(permits, timeout, MICROSECONDS): whether it got them and the µs
// it then sleeps.
func (r *javaRateLimiter) tryAcquire(permits int, timeoutMicros, nowMicros int64) (bool, int64) {
	timeoutMicros = max(timeoutMicros, 0)
	if !r.canAcquire(nowMicros, timeoutMicros) {
		return false, 0
	}
	return true, r.reserveAndGetWaitLength(permits, nowMicros)
}

// acquire is acquire(permits): the µs it sleeps.
func (r *javaRateLimiter) acquire(permits int, nowMicros int64) int64 {
	return r.reserveAndGetWaitLength(permits, nowMicros)
}

// readMicros is the stopwatch of a limiter made at born, read at the caller's now:
// NANOSECONDS.toMicros of the elapsed nanoseconds.
func readMicros(born, now time.Duration) int64 { return max(int64(now-born), 0) / 1000 }

// guavaCase is one configuration under test: the spec and Guava's limiter for it.
type guavaCase struct {
	spec string
	java func() *javaRateLimiter
}

var guavaCases = []guavaCase{
	{"guava-bursty:rate=100/1s", func() *javaRateLimiter { return javaBursty(100.0, 1.0) }},
	{"guava-bursty:rate=1/3s", func() *javaRateLimiter { return javaBursty(1.0/3, 1.0) }},
	{"guava-bursty:rate=7/100ms,max_burst=2500ms", func() *javaRateLimiter { return javaBursty(70.0, 2.5) }},
	{"guava-bursty:rate=3/1s,max_burst=10s", func() *javaRateLimiter { return javaBursty(3.0, 10.0) }},
	{"guava-bursty:rate=250000/1s", func() *javaRateLimiter { return javaBursty(250000.0, 1.0) }},
	{"guava-bursty:rate=1/1h,max_burst=3h", func() *javaRateLimiter { return javaBursty(1.0/3600, 10800.0) }},
	{"guava-warmup:rate=100/1s,warmup=1s", func() *javaRateLimiter { return javaWarmingUp(100.0, 1_000_000, 3.0) }},
	{"guava-warmup:rate=2/1s,warmup=4s", func() *javaRateLimiter { return javaWarmingUp(2.0, 4_000_000, 3.0) }},
	{"guava-warmup:rate=5/1s,warmup=4s,cold_factor=10", func() *javaRateLimiter { return javaWarmingUp(5.0, 4_000_000, 10.0) }},
	{"guava-warmup:rate=5/1s,warmup=4s,cold_factor=1", func() *javaRateLimiter { return javaWarmingUp(5.0, 4_000_000, 1.0) }},
	{"guava-warmup:rate=1/3s,warmup=10s,cold_factor=2.5", func() *javaRateLimiter { return javaWarmingUp(1.0/3, 10_000_000, 2.5) }},
	{"guava-warmup:rate=1000/1s,warmup=1500us", func() *javaRateLimiter { return javaWarmingUp(1000.0, 1500, 3.0) }},
}

// guavaModel is what both kinds offer.
type guavaModel interface {
	limiters.RateLimiter
	limiters.Reserver
	stateOf() (stored float64, next int64)
}

func (g *guava) stateOf() (float64, int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stored, g.next
}

// unitsAt is, on a copy of Guava's state, how many tryAcquire(1) pass at nowMicros one after
// another (at most limit).
func (r *javaRateLimiter) unitsAt(nowMicros int64, limit int) int {
	c := *r
	n := 0
	for n < limit {
		if ok, _ := c.tryAcquire(1, 0, nowMicros); !ok {
			break
		}
		n++
	}
	return n
}

// The kinds decide as Guava does, on random traffic: tryAcquire(n) (AcquireAt),
// tryAcquire(n, timeout) and acquire(n) (ReserveAt), with sizes from 1 to thousands, times
// in ns with sub-µs parts, bursts at one instant, long idles and late readings — the
// decision, the wait (µs), the stored permits (to the bit) and the next free ticket after
// every call, and Available and RetryAfterAt against Guava's queries, 60,000 calls per
// configuration.
func TestGuavaMatchesTheReference(t *testing.T) {
	calls := scaled(60_000)
	total := 0
	for ci, tc := range guavaCases {
		t.Run(tc.spec, func(t *testing.T) {
			born := time.Duration(ci) * 1234567 // a clock that did not start at the limiter
			clock, err := virtualclock.NewAt(born)
			require.NoError(t, err)
			l, err := limiters.Parse(tc.spec, clock)
			require.NoError(t, err)
			m := l.(guavaModel)
			ref := tc.java()
			spec, _ := limiters.ParseSpec(tc.spec)
			rate, _ := spec.NominalRate()
			T := rate.Interval()
			rng := rand.New(rand.NewPCG(uint64(ci), 77))
			now := born
			counts := map[string]int{}
			for i := range calls {
				switch r := rng.IntN(100); {
				case r < 5: // a long idle: up to 5 bursts' worth
					now += time.Duration(rng.Int64N(int64(5 * max(time.Second, 20*T))))
				case r < 15: // the same instant
				case r < 18: // a late reading
					now = max(now-time.Duration(rng.Int64N(int64(2*T))), born)
				default:
					now += time.Duration(rng.Int64N(int64(3*T) + 1))
				}
				at := now
				if rng.IntN(10) == 0 {
					at = max(now-time.Duration(rng.Int64N(int64(T))), 0) // one caller behind the others
				}
				n := 1
				switch r := rng.IntN(2000); {
				case r == 0:
					n = 1 + rng.IntN(5000)
				case r < 10:
					n = 1 + rng.IntN(200)
				case r < 300:
					n = 2 + rng.IntN(2)
				}
				μ := readMicros(born, at)
				if i%7 == 0 {
					c := *ref
					if c.resync(μ); c.storedPermits < 1000 { // the reference counts one by one
						require.Equal(t, ref.unitsAt(μ, 1_000_000), l.AvailableAt(at), "%s: call %d: available at %s", tc.spec, i, at)
						counts["available"]++
					}
					wait, ok := m.RetryAfterAt(at, n)
					require.True(t, ok)
					due := born + time.Duration(ref.nextFreeTicketMicros)*time.Microsecond
					require.Equal(t, max(due-at, 0), wait, "%s: call %d: retry after at %s", tc.spec, i, at)
				}
				var got limiters.Reservation
				var wantOK bool
				var wantWait int64
				var op string
				switch r := rng.IntN(20); {
				case r < 12:
					op = "tryAcquire(n)"
					wantOK, wantWait = ref.tryAcquire(n, 0, μ)
					got = limiters.Reservation{Decision: l.AcquireAt(at, n)}
				case r < 18: // the timeout in ns, floored to µs as TimeUnit does
					op = "tryAcquire(n, timeout)"
					timeout := time.Duration(rng.Int64N(int64(3*T) + 1))
					wantOK, wantWait = ref.tryAcquire(n, int64(timeout)/1000, μ)
					got = m.ReserveAt(at, n, timeout)
				default:
					op = "acquire(n)"
					wantOK, wantWait = true, ref.acquire(n, μ)
					got = m.ReserveAt(at, n, limiters.MaxWaitForever)
				}
				counts[op]++
				want := limiters.Rejected
				if wantOK {
					want = limiters.Admitted
				}
				require.Equal(t, want, got.Decision, "%s: call %d (n=%d at %s, µs %d)", tc.spec, i, n, at, μ)
				if wantOK {
					require.Equal(t, time.Duration(wantWait)*time.Microsecond, got.Wait, "%s: call %d: the wait", tc.spec, i)
					counts["admitted"]++
					counts[op+" admitted"]++
					if wantWait > 0 {
						counts[op+" waited"]++
					}
				}
				stored, next := m.stateOf()
				require.Equal(t, math.Float64bits(ref.storedPermits), math.Float64bits(stored),
					"%s: call %d: stored permits %v, Guava %v", tc.spec, i, stored, ref.storedPermits)
				require.Equal(t, ref.nextFreeTicketMicros, next, "%s: call %d: next free ticket", tc.spec, i)
			}
			t.Logf("%s: %v", tc.spec, counts)
			assert.Greater(t, counts["tryAcquire(n) admitted"], counts["tryAcquire(n)"]/10, "tries that pass")
			assert.Less(t, counts["tryAcquire(n) admitted"], counts["tryAcquire(n)"]*49/50, "and tries that are refused")
			assert.Greater(t, counts["tryAcquire(n, timeout) waited"], counts["tryAcquire(n, timeout)"]/50, "timeouts that wait")
			total += calls
		})
	}
	t.Logf("%d calls compared", total)
}

// replayAcquires is Guava's FakeStopwatch test style: each acquire(n) sleeps its wait (the
// virtual time moves on by it), a negative entry sleeps that many ms; the waits, in µs.
func replayAcquires(t *testing.T, l limiters.Limiter, steps []int) []int64 {
	t.Helper()
	r := l.(limiters.Reserver)
	now := time.Duration(0)
	var waits []int64
	for _, n := range steps {
		if n < 0 {
			now += time.Duration(-n) * time.Millisecond
			continue
		}
		res := r.ReserveAt(now, n, limiters.MaxWaitForever)
		require.Equal(t, limiters.Admitted, res.Decision)
		waits = append(waits, int64(res.Wait/time.Microsecond))
		now += res.Wait
	}
	return waits
}

// guavaEvents prints waits as Guava's RateLimiterTest does: String.format("R%3.2f") of the
// seconds, which rounds half up (1.125s is "R1.13"), where Go's %f rounds half to even.
func guavaEvents(waits []int64) []string {
	out := make([]string, len(waits))
	for i, w := range waits {
		cs := (w + 5000) / 10000 // hundredths of a second, half up
		out[i] = fmt.Sprintf("R%d.%02d", cs/100, cs%100)
	}
	return out
}

// Guava's own RateLimiterTest expectations, as it prints them ("R0.20": slept 0.20s), and
// the exact µs behind them.
func TestGuavaDocumentedExamples(t *testing.T) {
	build := func(text string) limiters.Limiter {
		l, err := limiters.Parse(text, zeroClock{})
		require.NoError(t, err)
		return l
	}
	// testSimple, testSimpleWithWait: 5 per second, 200ms apart; a request 200ms after the
	// first goes at once.
	assert.Equal(t, []int64{0, 200_000, 200_000}, replayAcquires(t, build("guava-bursty:rate=5/1s"), []int{1, 1, 1}))
	assert.Equal(t, []int64{0, 0, 200_000}, replayAcquires(t, build("guava-bursty:rate=5/1s"), []int{1, -200, 1, 1}))
	// testOneSecondBurst: after 2s idle, 1+1+3+1 permits at once (5 stored and one more), then 0.2s.
	assert.Equal(t, []string{"R0.00", "R0.00", "R0.00", "R0.00", "R0.20"},
		guavaEvents(replayAcquires(t, build("guava-bursty:rate=5/1s"), []int{-1000, -1000, 1, 1, 3, 1, 1})))
	// testSimpleWeights: each request pays for the previous one's size.
	assert.Equal(t, []int64{0, 1e6, 1e6, 2e6, 4e6, 8e6}, replayAcquires(t, build("guava-bursty:rate=1/1s"), []int{1, 1, 2, 4, 8, 1}))
	// The class comment's example: 1 per second, 10s unused (max_burst 10s): acquire(3) from
	// the 10 stored, acquire(10) from the 7 left and 3 fresh — both at once — and the next
	// waits the 3s of fresh permits.
	assert.Equal(t, []int64{0, 0, 3e6}, replayAcquires(t, build("guava-bursty:rate=1/1s,max_burst=10s"), []int{-10000, 3, 10, 1}))

	// testWarmUp: 2 per second, 4s warm-up: from cold the waits fall along the trapezoid to
	// the stable 0.5s; 4.5s idle makes it cold again; 2.5s does not.
	cold := []string{"R0.00", "R1.38", "R1.13", "R0.88", "R0.63", "R0.50", "R0.50", "R0.50"}
	warm := []string{"R0.00", "R0.50", "R0.50", "R0.50", "R0.50", "R0.50", "R0.50", "R0.50"}
	eight := []int{1, 1, 1, 1, 1, 1, 1, 1}
	steps := slices.Concat(eight, []int{-500, -4000}, eight, []int{-500, -2000}, eight)
	waits := replayAcquires(t, build("guava-warmup:rate=2/1s,warmup=4s"), steps)
	assert.Equal(t, slices.Concat(cold, cold, warm), guavaEvents(waits))
	assert.Equal(t, []int64{0, 1_375_000, 1_125_000, 875_000, 625_000, 500_000, 500_000, 500_000}, waits[:8],
		"the trapezoid: (T + slope·(s − threshold − ½)) for s = 8 … 5, T = 0.5s, slope 0.25s")
	// testWarmUpWithColdFactor: 5 per second, 4s, cold factor 10.
	cold = []string{"R0.00", "R1.75", "R1.26", "R0.76", "R0.30", "R0.20", "R0.20", "R0.20"}
	warm = []string{"R0.00", "R0.20", "R0.20", "R0.20", "R0.20", "R0.20", "R0.20", "R0.20"}
	steps = slices.Concat(eight, []int{-200, -4000}, eight, []int{-200, -1000}, eight)
	assert.Equal(t, slices.Concat(cold, cold, warm), guavaEvents(replayAcquires(t, build("guava-warmup:rate=5/1s,warmup=4s,cold_factor=10"), steps)))
	// testWarmUpWithColdFactor1: a cold factor of 1 is no warm-up at all.
	warm = []string{"R0.00", "R0.20", "R0.20", "R0.20", "R0.20", "R0.20", "R0.20", "R0.20"}
	assert.Equal(t, slices.Concat(warm, warm), guavaEvents(replayAcquires(t, build("guava-warmup:rate=5/1s,warmup=4s,cold_factor=1"),
		slices.Concat(eight, []int{-340}, eight))))

	// testImmediateTryAcquire, testTryAcquire_noWaitAllowed, testTryAcquire_someWaitAllowed.
	l := build("guava-bursty:rate=5/1s").(*GuavaBursty)
	assert.Equal(t, limiters.Admitted, l.AcquireAt(0, 1), "the first permit, though nothing is stored")
	assert.Equal(t, limiters.Rejected, l.AcquireAt(0, 1))
	assert.Equal(t, limiters.Rejected, l.AcquireAt(100*time.Millisecond, 1))
	l = build("guava-bursty:rate=5/1s").(*GuavaBursty)
	assert.Equal(t, limiters.Admitted, l.AcquireAt(0, 1))
	r := l.ReserveAt(0, 1, 200*time.Millisecond)
	assert.Equal(t, limiters.Admitted, r.Decision)
	assert.Equal(t, 200*time.Millisecond, r.Wait, "and the caller sleeps until 200ms")
	assert.Equal(t, limiters.Rejected, l.ReserveAt(200*time.Millisecond, 1, 100*time.Millisecond).Decision, "the next is at 400ms")
	assert.Equal(t, limiters.Admitted, l.ReserveAt(300*time.Millisecond, 1, 100*time.Millisecond).Decision, "testTryAcquire_someWaitAllowed")
	// testTryAcquire_negative: tryAcquire(5) at once, then nothing until its 1s is paid.
	l = build("guava-bursty:rate=5/1s").(*GuavaBursty)
	assert.Equal(t, limiters.Admitted, l.AcquireAt(0, 5))
	assert.Equal(t, limiters.Rejected, l.AcquireAt(900*time.Millisecond, 1))
	assert.Equal(t, limiters.Admitted, l.AcquireAt(time.Second, 1))
}

// The seed's numbers: RateLimiter.create(10) keeps at most 10 permits (maxBurstSeconds 1),
// refills one per 100ms, and acquire(n) returns the previous request's cost: 3, 7, 12 and 1
// permits in a row wait 0, 0.3s, 0.7s and 1.2s. The seed's program draws n from
// nextInt(20), which can be 0: Guava throws IllegalArgumentException for acquire(0), ratelab
// answers Invalid and takes nothing.
func TestGuavaSeedExamples(t *testing.T) {
	l := must(NewGuavaBursty(GuavaBurstySpec{Rate: limiters.PerSecond(10), MaxBurst: time.Second}, zeroClock{}))
	assert.Equal(t, []int64{0, 300_000, 700_000, 1_200_000}, replayAcquires(t, l, []int{3, 7, 12, 1}))
	assert.Equal(t, limiters.Invalid, l.ReserveAt(0, 0, limiters.MaxWaitForever).Decision)
	assert.Equal(t, limiters.Invalid, l.AcquireAt(0, 0))

	l = must(NewGuavaBursty(GuavaBurstySpec{Rate: limiters.PerSecond(10), MaxBurst: time.Second}, zeroClock{}))
	st := l.Snapshot(5 * time.Second)
	assert.Equal(t, 10.0, st.Level, "resync: 5s of idle stores at most maxPermits = 10")
	assert.Equal(t, 10.0, st.LevelMax)
	assert.Equal(t, 11, st.Available, "the 10 stored and one more")
	assert.Equal(t, 0.5, l.Snapshot(50*time.Millisecond).Level, "50ms of 100ms: half a permit")
	assert.Equal(t, 100000.0, l.stable, "stableIntervalMicros = 1e6 / 10")
}

// The prepay, with the numbers: at 1 per second acquire(10) at 0 waits 0 and the
// next acquire(1) waits 10s; tryAcquire is refused until 10s, whatever its size; RetryAfter
// says 10s for any size.
func TestGuavaTheNextCallerPays(t *testing.T) {
	l := must(NewGuavaBursty(GuavaBurstySpec{Rate: limiters.PerSecond(1), MaxBurst: time.Second}, zeroClock{}))
	r := l.ReserveAt(0, 10, limiters.MaxWaitForever)
	require.Equal(t, limiters.Admitted, r.Decision)
	assert.Zero(t, r.Wait, "a request is never delayed by its own size")
	wait, ok := l.RetryAfterAt(0, 1)
	assert.True(t, ok)
	assert.Equal(t, 10*time.Second, wait)
	wait, _ = l.RetryAfterAt(3*time.Second, 1000)
	assert.Equal(t, 7*time.Second, wait, "the same for any size")
	for _, at := range []time.Duration{time.Second, 9 * time.Second, 10*time.Second - time.Microsecond} {
		assert.Equal(t, limiters.Rejected, l.AcquireAt(at, 1), "tryAcquire at %s", at)
	}
	assert.Equal(t, limiters.Admitted, l.AcquireAt(10*time.Second-time.Nanosecond+time.Nanosecond, 1000),
		"at 10s a request of any size passes, and pushes the ticket 1000s on")
	r = l.ReserveAt(10*time.Second, 1, limiters.MaxWaitForever)
	assert.Equal(t, 1000*time.Second, r.Wait)

	// The token bucket of the same rate and capacity charges the request itself.
	b := must(limiters.NewTokenBucket(1, limiters.PerSecond(1), zeroClock{}))
	assert.Equal(t, limiters.Never, b.AcquireAt(0, 10), "10 > capacity: never")
}

// Microseconds: Guava's clock is the caller's time floored to µs since the limiter was made,
// and a wait is whole µs.
func TestGuavaMicroseconds(t *testing.T) {
	clock, _ := virtualclock.NewAt(500 * time.Nanosecond)
	l := must(NewGuavaBursty(GuavaBurstySpec{Rate: limiters.PerSecond(100), MaxBurst: time.Second}, clock))
	require.Equal(t, limiters.Admitted, l.AcquireAt(0, 1), "a reading before the limiter was made is its µs 0")
	due := 500*time.Nanosecond + 10*time.Millisecond
	assert.Equal(t, limiters.Rejected, l.AcquireAt(due-time.Nanosecond, 1), "µs 9999")
	wait, _ := l.RetryAfterAt(3*time.Millisecond+700, 1)
	assert.Equal(t, due-(3*time.Millisecond+700), wait, "to the ns at which the reading is µs 10000")
	r := l.ReserveAt(3*time.Millisecond+700, 1, time.Second)
	assert.Equal(t, 7*time.Millisecond, r.Wait, "Guava's wait: from µs 3000 to µs 10000")
	assert.Equal(t, "guava-bursty:rate=100/1s", l.String())
}

// A reservation cancelled in its own microsecond, with nothing in between, is undone to the
// bit; later, or after another call, nothing comes back (Guava cannot cancel).
func TestGuavaCancel(t *testing.T) {
	for _, text := range []string{"guava-bursty:rate=100/1s", "guava-warmup:rate=100/1s,warmup=1s"} {
		twin, _ := limiters.Parse(text, zeroClock{})
		l, _ := limiters.Parse(text, zeroClock{})
		rng := rand.New(rand.NewPCG(9, 10))
		now := time.Duration(0)
		cancelled := 0
		for i := range 20000 {
			now += time.Duration(rng.Int64N(int64(15 * time.Millisecond)))
			if rng.IntN(3) == 0 {
				r := l.(limiters.Reserver).ReserveAt(now, 1+rng.IntN(20), limiters.MaxWaitForever)
				l.(limiters.Reserver).CancelAt(now+time.Duration(rng.Int64N(int64(1000-now%1000))), r) // the same µs
				cancelled++
			}
			require.Equal(t, twin.AcquireAt(now, 1), l.AcquireAt(now, 1), "%s: step %d", text, i)
			ts, tn := twin.(guavaModel).stateOf()
			ls, ln := l.(guavaModel).stateOf()
			require.Equal(t, math.Float64bits(ts), math.Float64bits(ls), "%s: step %d", text, i)
			require.Equal(t, tn, ln, "%s: step %d", text, i)
		}
		assert.Greater(t, cancelled, 5000, text)

		l, _ = limiters.Parse(text, zeroClock{})
		r := l.(limiters.Reserver).ReserveAt(0, 50, limiters.MaxWaitForever)
		_, next := l.(guavaModel).stateOf()
		l.(limiters.Reserver).CancelAt(time.Microsecond, r)
		_, after := l.(guavaModel).stateOf()
		assert.Equal(t, next, after, "%s: a µs later nothing comes back", text)
		r = l.(limiters.Reserver).ReserveAt(time.Second, 1, limiters.MaxWaitForever)
		l.(limiters.Reserver).ReserveAt(time.Second, 2, limiters.MaxWaitForever)
		s0, n0 := l.(guavaModel).stateOf()
		l.(limiters.Reserver).CancelAt(time.Second, r)
		s1, n1 := l.(guavaModel).stateOf()
		assert.Equal(t, [2]any{s0, n0}, [2]any{s1, n1}, "%s: another call came in between", text)
		l.(limiters.Reserver).CancelAt(time.Second, limiters.Reservation{Decision: limiters.Rejected, Permits: 1, At: time.Second})
	}
}

// Validation names the field.
func TestGuavaValidate(t *testing.T) {
	for _, tc := range []struct{ text, field string }{
		{"guava-bursty:rate=250001/1s", "rate"},
		{"guava-bursty:rate=1/3us", "rate"},
		{"guava-bursty:rate=100/1s,mode=wait,timeout=10ms", "timeout"},
		{"guava-warmup:rate=100/1s,warmup=1500ns", "warmup"},
		{"guava-warmup:rate=100/1s,warmup=1s,cold_factor=0.5", "cold_factor"},
		{"guava-warmup:rate=100/1s,warmup=1s,cold_factor=NaN", "cold_factor"},
		{"guava-warmup:rate=100/1s,warmup=1s,cold_factor=+Inf", "cold_factor"},
		{"guava-warmup:rate=300000/1s,warmup=1s", "rate"},
		{"guava-warmup:rate=100/1s,warmup=1s,mode=wait,timeout=1s", "timeout"},
		// MaxWaitForever, which ReserveAt takes for acquire: the real Guava's tryAcquire with
		// it refuses a ticket further away (testdata/guava/bursty-longest-timeout.script).
		{"guava-bursty:rate=1/1h,timeout=4611686018427387904ns", "timeout"},
		{"guava-warmup:rate=1/1h,warmup=1s,timeout=4611686018427387904ns", "timeout"},
	} {
		spec, err := limiters.ParseSpec(tc.text)
		require.NoError(t, err, tc.text)
		vErr := spec.Validate()
		var ce *limiters.ConfigError
		require.ErrorAs(t, vErr, &ce, tc.text)
		assert.Equal(t, tc.field, ce.Field, tc.text)
		_, newErr := spec.New(zeroClock{})
		assert.Equal(t, vErr.Error(), newErr.Error(), tc.text)
	}
	for _, text := range []string{"guava-bursty:rate=100/1s,mode=later", "guava-bursty:rate=100/1s,timeout=-1s",
		"guava-bursty:rate=100/1s,max_burst=0s", "guava-warmup:rate=100/1s", "guava-warmup:rate=100/1s,warmup=1s,cold_factor=three"} {
		_, err := limiters.ParseSpec(text)
		assert.Error(t, err, text)
	}
	for _, s := range []limiters.Spec{GuavaBurstySpec{Rate: limiters.PerSecond(1)}, GuavaBurstySpec{Rate: limiters.PerSecond(1), MaxBurst: time.Second, Mode: "later"},
		GuavaWarmUpSpec{Rate: limiters.PerSecond(1), ColdFactor: 3}, GuavaBurstySpec{Rate: limiters.PerSecond(1), MaxBurst: time.Second, Timeout: -1}} {
		assert.Error(t, s.Validate(), "%#v", s)
	}
	assert.Equal(t, "limiters: guava-bursty: rate=250001/1s: above 250000 per second: Guava charges whole microseconds, and below 4µs "+
		"per permit the cut loses a quarter of a permit's cost or more (below 1µs a permit costs 0µs and every request passes)",
		GuavaBurstySpec{Rate: limiters.PerSecond(250001), MaxBurst: time.Second}.Validate().Error())
	// Defaults are left out when printed; the rest print back.
	for _, text := range []string{"guava-bursty:rate=100/1s,max_burst=2s,mode=wait", "guava-bursty:rate=3/1s,timeout=50ms",
		"guava-warmup:rate=100/1s,warmup=1s,cold_factor=2.5,mode=try,timeout=1ms"} {
		spec, err := limiters.ParseSpec(text)
		require.NoError(t, err)
		again, err := limiters.ParseSpec(spec.String())
		require.NoError(t, err)
		assert.Equal(t, spec, again, text)
	}
	spec, _ := limiters.ParseSpec("guava-bursty:rate=100/1s,max_burst=1s,mode=try,timeout=0s")
	assert.Equal(t, "guava-bursty:rate=100/1s", spec.String())
	assert.Equal(t, limiters.MaxWaitForever, GuavaBurstySpec{Mode: GuavaWait}.CallerWait())
	assert.Equal(t, 50*time.Millisecond, GuavaWarmUpSpec{Timeout: 50 * time.Millisecond}.CallerWait())
	assert.Zero(t, GuavaBurstySpec{}.CallerWait())
	longest := GuavaBurstySpec{Rate: limiters.PerSecond(1), MaxBurst: time.Second, Timeout: limiters.MaxWaitForever - 1}
	require.NoError(t, longest.Validate())
	assert.Less(t, longest.CallerWait(), limiters.MaxWaitForever, "a try never becomes an acquire")
}

// Guava's permitsPerSecond is the double nearest the spec's rate: what a Java caller writes.
func TestGuavaRateIsTheNearestDouble(t *testing.T) {
	for _, tc := range []struct {
		rate limiters.Rate
		want float64
	}{
		{limiters.PerSecond(100), 100.0}, {limiters.Rate{Permits: 1, Window: 3 * time.Second}, 1.0 / 3}, {limiters.Rate{Permits: 7, Window: 100 * time.Millisecond}, 70.0},
		{limiters.Rate{Permits: 1, Window: time.Hour}, 1.0 / 3600}, {limiters.Rate{Permits: 3, Window: 7 * time.Millisecond}, 3000.0 / 7},
	} {
		assert.Equal(t, tc.want, guavaPermitsPerSecond(tc.rate), "%s", tc.rate)
	}
	assert.Equal(t, 2.5, guavaSeconds(2500*time.Millisecond))
}

// Java's (long) cast and LongMath.saturatedAdd, at their edges.
func TestGuavaJavaArithmetic(t *testing.T) {
	for _, x := range []float64{0, 0.9, -0.9, 1.5, -1.5, 1e18, 9.3e18, -9.3e18, math.Inf(1), math.Inf(-1), math.NaN(), 1 << 63, -(1 << 63)} {
		assert.Equal(t, javaCast(x), javaLong(x), "%v", x)
	}
	for _, c := range [][2]int64{{1, 2}, {math.MaxInt64, 1}, {math.MinInt64, -1}, {math.MaxInt64, math.MinInt64}, {-5, 3}, {math.MaxInt64 - 3, 3}} {
		assert.Equal(t, javaSaturatedAdd(c[0], c[1]), saturatedAdd(c[0], c[1]), "%v", c)
	}
}

// AdmissionBound is never exceeded on random traffic of any sizes, and the adversary of its
// doc comment reaches it exactly for guava-bursty:rate=100/1s (1ns and 1s) and warm
// guava-warmup:rate=100/1s over 1s.
func TestGuavaAdmissionBound(t *testing.T) {
	const big = guavaMaxPermits
	bursty, _ := limiters.ParseSpec("guava-bursty:rate=100/1s")
	b, _ := limiters.AdmissionBound(bursty, time.Nanosecond)
	assert.Equal(t, int64(100+big), b)
	b, _ = limiters.AdmissionBound(bursty, time.Second)
	assert.Equal(t, int64(200+big), b)
	warmup, _ := limiters.ParseSpec("guava-warmup:rate=100/1s,warmup=1s")
	b, _ = limiters.AdmissionBound(warmup, time.Nanosecond)
	assert.Equal(t, int64(big), b)
	b, _ = limiters.AdmissionBound(warmup, time.Second)
	assert.Equal(t, int64(100+big), b)

	// The adversary at 100/1s over [S, S + 1s), S = 10s + 999ns, whose floored readings span
	// D = 1e6 µs (10000000 … 11000000): 100 stored permits and a fresh one at S, then one
	// permit after each idle δ at which (1 − δ/T)·T rounds below T − δ, so that the cut gives
	// a µs and a request costs 9999µs of schedule; the last, at the last µs, asks for 2³¹−1.
	δ := int64(0)
	for d := int64(1); d < 10000; d++ {
		if javaLong(float64(1.0-float64(d)/10000.0)*10000.0) < 10000-d {
			δ = d
			break
		}
	}
	require.NotZero(t, δ, "an idle whose cut gives a µs")
	l := must(NewGuavaBursty(GuavaBurstySpec{Rate: limiters.PerSecond(100), MaxBurst: time.Second}, zeroClock{}))
	S := 10*time.Second + 999
	µs := func(m int64) time.Duration { return time.Duration(m) * time.Microsecond }
	admitted := int64(0)
	for range 101 {
		require.Equal(t, limiters.Admitted, l.AcquireAt(S, 1))
		admitted++
	}
	const last = 11_000_000 // the interval's last µs: S + 1s − 1ns is 11s + 998ns
	for {
		_, next := l.stateOf()
		if next+9999 > last {
			break
		}
		require.Equal(t, limiters.Admitted, l.AcquireAt(µs(next+δ), 1))
		admitted++
		_, after := l.stateOf()
		require.Equal(t, next+9999, after, "the request after an idle of %dµs costs %dµs", δ, 9999-δ)
	}
	_, next := l.stateOf()
	require.Equal(t, limiters.Admitted, l.AcquireAt(µs(next), big))
	require.Less(t, µs(next), S+time.Second)
	admitted += big
	b, _ = limiters.AdmissionBound(bursty, time.Second)
	assert.Equal(t, b, admitted, "the adversary reaches the bound within [S, S + 1s)")

	// Warm (the stored permits spent), a request every 10ms costs exactly 10ms: 100 in [S, S + 1s)
	// from S = 2.5s + 999ns, and the 101st, at the interval's last µs, of 2³¹−1 permits.
	w := must(NewGuavaWarmingUp(GuavaWarmUpSpec{Rate: limiters.PerSecond(100), WarmUp: time.Second, ColdFactor: 3}, zeroClock{}))
	w.ReserveAt(0, 200, limiters.MaxWaitForever) // 100 stored (1s + 0.5s) and 100 fresh (1s)
	stored, next := w.stateOf()
	require.Equal(t, [2]any{0.0, int64(2_500_000)}, [2]any{stored, next})
	S = 2500*time.Millisecond + 999
	admitted = 0
	for k := range 100 {
		require.Equal(t, limiters.Admitted, w.AcquireAt(S+time.Duration(k)*10*time.Millisecond, 1))
		admitted++
	}
	require.Equal(t, limiters.Admitted, w.AcquireAt(S+time.Second-time.Nanosecond, big))
	admitted += big
	b, _ = limiters.AdmissionBound(warmup, time.Second)
	assert.Equal(t, b, admitted, "the warm adversary reaches the bound within [S, S + 1s)")

	// Random traffic never exceeds the bound in any window of a few lengths.
	for _, tc := range guavaCases {
		spec, _ := limiters.ParseSpec(tc.spec)
		rate, _ := spec.NominalRate()
		T := rate.Interval()
		l, _ := spec.New(zeroClock{})
		rng := rand.New(rand.NewPCG(5, 5))
		type admission struct {
			at time.Duration
			n  int64
		}
		var log []admission
		now := time.Duration(0)
		for range 20000 {
			now += time.Duration(rng.Int64N(int64(T)/2 + 1))
			if rng.IntN(50) == 0 {
				now += 3 * time.Second
			}
			n := 1
			if rng.IntN(100) == 0 {
				n = 1 + rng.IntN(10)
			}
			r := l.(limiters.Reserver).ReserveAt(now, n, time.Duration(rng.Int64N(int64(T))))
			if r.Decision == limiters.Admitted {
				log = append(log, admission{now + r.Wait, int64(n)})
			}
		}
		slices.SortFunc(log, func(a, b admission) int { return int(a.at - b.at) })
		for _, L := range []time.Duration{time.Nanosecond, T, 10 * T, time.Second, 5 * time.Second} {
			bound, _ := limiters.AdmissionBound(spec, L)
			bound -= big // these requests are small: check the part before the last one
			j, sum := 0, int64(0)
			for i, a := range log {
				sum += a.n
				for log[j].at <= a.at-L {
					sum -= log[j].n
					j++
				}
				require.LessOrEqual(t, sum-a.n, bound, "%s: %d admitted in %s ending at %s (entry %d)", tc.spec, sum, L, a.at, i)
			}
		}
	}
}

// 16 goroutines racing on a frozen clock get exactly what Guava's synchronized methods give
// one caller after another: after 2s of idle at 20 per second, the 20 stored permits and one
// more; a warming-up limiter, one. Reservations in mode=wait get each wait exactly once: 0,
// T, 2T, ….
func TestGuavaRaces(t *testing.T) {
	const goroutines = 16
	for round := range 50 {
		clock := virtualclock.New()
		b := must(NewGuavaBursty(GuavaBurstySpec{Rate: limiters.PerSecond(20), MaxBurst: time.Second}, clock))
		w := must(NewGuavaWarmingUp(GuavaWarmUpSpec{Rate: limiters.PerSecond(20), WarmUp: time.Second, ColdFactor: 3}, clock))
		require.NoError(t, clock.Advance(2*time.Second))
		clock.Freeze()
		require.Equal(t, 21, race(goroutines, b), "round %d", round)
		require.Equal(t, 1, race(goroutines, w), "round %d", round)
		require.Zero(t, b.Available())
	}
	b := must(NewGuavaBursty(GuavaBurstySpec{Rate: limiters.PerSecond(1000), MaxBurst: time.Second}, zeroClock{}))
	var (
		mu    sync.Mutex
		waits []time.Duration
		wg    sync.WaitGroup
		gate  = newStartGate(goroutines)
	)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gate.wait()
			for range 100 {
				r := b.ReserveAt(0, 1, limiters.MaxWaitForever)
				mu.Lock()
				waits = append(waits, r.Wait)
				mu.Unlock()
			}
		}()
	}
	gate.open()
	wg.Wait()
	slices.Sort(waits)
	for i, w := range waits {
		require.Equal(t, time.Duration(i)*time.Millisecond, w, "reservation %d", i)
	}
}

// The zero-value and snapshot shapes: the level is the stored permits of maxPermits, and
// the next free ticket is At when a request can go now.
func TestGuavaSnapshot(t *testing.T) {
	l := must(NewGuavaWarmingUp(GuavaWarmUpSpec{Rate: limiters.PerSecond(100), WarmUp: time.Second, ColdFactor: 3}, zeroClock{}))
	st := l.Snapshot(0)
	assert.Equal(t, limiters.State{Kind: KindGuavaWarmUp, At: 0, Available: 1, MaxPermits: math.MaxInt32, Level: 100, LevelMax: 100,
		LevelName: "stored permits", NextFree: 0}, st, "cold: full")
	require.Equal(t, limiters.Admitted, l.AcquireAt(0, 1))
	st = l.Snapshot(time.Millisecond)
	assert.Equal(t, 99.0, st.Level)
	assert.Equal(t, 29800*time.Microsecond, st.NextFree, "from cold the first permit costs (30ms + 29.6ms)/2")
	assert.Equal(t, 0, st.Available)
	assert.Contains(t, st.Explain(1, limiters.Rejected), "28.8ms away")
	assert.Contains(t, l.Snapshot(40*time.Millisecond).Explain(1, limiters.Admitted), "pass at once")
	assert.Equal(t, 50.0, l.threshold)
	assert.Equal(t, 400.0, l.slope)
	assert.Equal(t, 10000.0, l.coolDown, "cold factor 3: one stored permit per stable interval of idle")
}

// The claim, measured: on a Poisson trace at 3× the rate (300/s for 60s, five seeds)
// guava-bursty:rate=100/1s and token-bucket:capacity=100,rate=100/1s admit different sets of
// requests — about 31% of the decisions differ (20–37% by seed) — although after the first
// second both admit exactly 100 per second. Why:
//
//   - The bucket starts full and Guava empty: the first second alone holds 120–170 of the
//     differences (the bucket admits about 199 in it, Guava 100).
//   - Guava admits whenever its ticket has come, with no permit in hand (the next caller pays):
//     in steady traffic it is a bucket of one more permit that starts with one. Against
//     token-bucket:capacity=101 drained to one token at 0 only ~5.5% differ.
//   - Those that remain are swaps, Guava admitting a request the bucket refuses and refusing a
//     later one the bucket admits (as many each way): each reservation's cost is cut to whole µs,
//     so Guava's schedule runs up to a µs ahead of the bucket's after each request that spends a
//     fraction of a stored permit (the same with arrivals on whole µs).
func TestGuavaPoissonDiffersFromTheTokenBucket(t *testing.T) {
	var differ, total float64
	for seed := uint64(1); seed <= 5; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		g := must(NewGuavaBursty(GuavaBurstySpec{Rate: limiters.PerSecond(100), MaxBurst: time.Second}, zeroClock{}))
		b := must(limiters.NewTokenBucket(100, limiters.PerSecond(100), zeroClock{}))
		b1 := must(limiters.NewTokenBucket(101, limiters.PerSecond(100), zeroClock{}))
		require.Equal(t, limiters.Admitted, b1.AcquireAt(0, 100), "one token left, as Guava's one-permit credit")
		var n, diff, first, diff1, guavaOnly, admittedG, admittedB int
		for now := time.Duration(0); ; {
			now += time.Duration(rng.ExpFloat64() / 300 * 1e9)
			if now >= time.Minute {
				break
			}
			gd := g.AcquireAt(now, 1) == limiters.Admitted
			bd := b.AcquireAt(now, 1) == limiters.Admitted
			n++
			if gd != bd {
				diff++
				if now < time.Second {
					first++
				}
			}
			if b1d := b1.AcquireAt(now, 1) == limiters.Admitted; gd != b1d {
				diff1++
				if gd {
					guavaOnly++
				}
			}
			if gd {
				admittedG++
			}
			if bd {
				admittedB++
			}
		}
		frac := float64(diff) / float64(n)
		t.Logf("seed %d: %d requests; %d decisions differ from the token bucket (%.1f%%), %d of them in the first second; "+
			"admitted: Guava %d, bucket %d; against a bucket of 101 holding 1 token: %d differ (%.1f%%)",
			seed, n, diff, 100*frac, first, admittedG, admittedB, diff1, 100*float64(diff1)/float64(n))
		assert.InDelta(t, 0.3, frac, 0.12, "seed %d", seed)
		assert.Greater(t, first, 100, "seed %d: the full bucket's first second", seed)
		assert.Equal(t, 6000, admittedG, "seed %d: Guava admits exactly 100/s at 3× the rate", seed)
		assert.InDelta(t, 6099, admittedB, 1, "seed %d: the bucket its 100, then 100/s", seed)
		assert.Less(t, float64(diff1)/float64(n), 0.08, "seed %d", seed)
		assert.InDelta(t, diff1/2, guavaOnly, 1, "seed %d: swaps, as many each way", seed)
		differ += float64(diff)
		total += float64(n)
	}
	t.Logf("over five seeds %.1f%% of the decisions differ", 100*differ/total)
	assert.InDelta(t, 0.31, differ/total, 0.03)
}
