package golden

import (
	"fmt"
	"runtime"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/failsafego"
	"github.com/ratelab/ratelab/virtualclock"
)

// rateSpecs are the time-based limiters at 100 permits per second.
var rateSpecs = []string{
	"token-bucket:capacity=3,rate=100/1s",
	"leaky-bucket:rate=100/1s",
	"sliding-window:limit=100,window=1s,slots=10",
	"fixed-window:limit=100,window=1s",
	"warm-up:capacity=3,rate=100/1s,warmup=1s",
}

// dueAfterDrain is when a limiter drained at t (a whole second) next admits a permit: one
// emission interval later for the schedule kinds, at the next window for the window kinds (the
// sliding window's slot of t leaves the window one window later).
func dueAfterDrain(s limiters.Spec, t time.Duration) time.Duration {
	if info, _ := limiters.Lookup(s.Kind()); info.Shape == limiters.ShapeWindow || info.Shape == limiters.ShapeSlots {
		return t + s.NaturalWindow()
	}
	rate, _ := s.NominalRate()
	return t + emissionInterval(rate.Permits, rate.Window)
}

// fullBurst is what a limiter of s admits at once after any idle once warm: its bound for an
// interval of 1ns (capacity, 1 or limit).
func fullBurst(s limiters.Spec) int {
	n, _ := limiters.AdmissionBound(s, ns)
	return int(n)
}

var monotonicTime = &Guarantee{
	ID: "monotonic-time",
	Algorithms: []limiters.Kind{limiters.KindTokenBucket, limiters.KindLeakyBucket, limiters.KindSlidingWindow,
		limiters.KindFixedWindow, limiters.KindWarmUpTokenBucket},
	Claim: "time only moves forward: the virtual clock refuses to move backwards, and a limiter never grants a burst or " +
		"stalls because of how the clock is read (a late reading, a jump of a century)",
	Scenario: "virtualclock: Advance(−1ns) and AdvanceTo(999ms) at 1s; each limiter at 100/s (" +
		"token-bucket capacity 3, leaky-bucket, sliding-window 1s/10 slots, fixed-window 1s, warm-up capacity 3 over 1s) drained at 2s, " +
		"then asked at 2s − 1ns, 2s − 10ms and 2s − 500ms, then when next due; a limiter drained the same way asked again after 2^32 windows of idle " +
		"(where a 32-bit window index would wrap), another after 100 years; the real MonotonicClock read 100000 times",
	Bound: "the clock stays where it was; 0 permits for every late reading; exactly 1 when next due (T after, or the next window); " +
		"after each long idle exactly the full burst (capacity, 1 or limit), not one more; no real clock read goes backwards",
	Checker: "the clock's error and reading after each backwards move; admitted counts for late readings, at the due instant and after the jump",
	run: func(r *run) error {
		clock := virtualclock.New()
		if err := clock.AdvanceTo(sec); err != nil {
			return err
		}
		for _, move := range []struct {
			name string
			do   func() error
		}{
			{"Advance(-1ns)", func() error { return clock.Advance(-ns) }},
			{"AdvanceTo(999ms)", func() error { return clock.AdvanceTo(999 * msec) }},
		} {
			err := move.do()
			if err == nil || clock.Now() != sec {
				r.failf("virtual clock at 1s: %s returned %v and left the clock at %s: it must refuse and stay at 1s", move.name, err, ms(clock.Now()))
			}
			r.linef("clock at 1s, %s: %v; clock now %s", move.name, err, ms(clock.Now()))
		}
		real := limiters.NewMonotonicClock()
		prev, backwards := real.Now(), 0
		for range 100_000 {
			now := real.Now()
			if now < prev {
				backwards++
			}
			prev = now
		}
		if backwards > 0 {
			r.failf("the real MonotonicClock went backwards %d times in 100000 reads: it must never", backwards)
		}
		r.linef("real MonotonicClock: 100000 consecutive reads, %d went backwards", backwards)
		r.linef("")
		const drainedAt = 2 * sec
		century := 100 * 365 * 24 * hour
		r.linef("%-45s %7s %12s %12s %13s %13s", "limiter drained at 2s", "drained", "late reads", "when due", "after 2^32 w", "after 100y")
		for _, text := range rateSpecs {
			s := mustSpec(text)
			l, err := r.factory.build(s, fixedClock(0))
			if err != nil {
				return err
			}
			drained := drain(l, drainedAt)
			late := 0
			for _, back := range []time.Duration{ns, 10 * msec, 500 * msec} {
				if l.AcquireAt(drainedAt-back, 1) == limiters.Admitted {
					late++
					r.failf("%s drained at %s admitted a request read at %s: a late reading must not grant a burst (bound 0)", s, ms(drainedAt), ms(drainedAt-back))
				}
			}
			due := dueAfterDrain(s, drainedAt)
			atDue := 0
			if l.AcquireAt(due, 1) == limiters.Admitted {
				atDue++
			} else {
				r.failf("%s drained at %s refused a request at %s, when the next permit is due: the limiter stalled (bound: exactly 1)", s, ms(drainedAt), ms(due))
			}
			// 2^32 windows is where a 32-bit window index would wrap and find its stale count.
			var bursts []int
			for _, idle := range []time.Duration{time.Duration(1<<32) * s.NaturalWindow(), century} {
				// A fresh limiter, drained at 2s and next asked idle after its next permit was due.
				l, err := r.factory.build(s, fixedClock(0))
				if err != nil {
					return err
				}
				drain(l, drainedAt)
				burst := drain(l, due+idle)
				if want := fullBurst(s); burst != want {
					r.failf("%s after %s of idle admitted %d at once: the bound is exactly the full burst %d", s, idleName(idle, s), burst, want)
				}
				bursts = append(bursts, burst)
			}
			r.linef("%-45s %7d %12d %12s %13d %13d", s, drained, late, fmt.Sprintf("%d at %s", atDue, ms(due-drainedAt)), bursts[0], bursts[1])
		}
		return nil
	},
}

// drain takes single permits at t until the limiter refuses (at most 1001) and says how many.
func drain(l limiters.Limiter, t time.Duration) int {
	n := 0
	for n <= 1_000 && l.AcquireAt(t, 1) == limiters.Admitted {
		n++
	}
	return n
}

// idleName names an idle span of the monotonic-time table.
func idleName(idle time.Duration, s limiters.Spec) string {
	if idle == time.Duration(1<<32)*s.NaturalWindow() {
		return "2^32 windows (" + ms(idle) + ")"
	}
	return "100 years"
}

var lowRate = &Guarantee{
	ID:         "low-rate",
	Algorithms: []limiters.Kind{limiters.KindTokenBucket, limiters.KindLeakyBucket},
	Claim:      "very low rates are enforced to within a tick: 1 permit per hour admits exactly one per hour",
	Scenario: "token-bucket:capacity=1,rate=1/1h and leaky-bucket:rate=1/1h offered a request every second (the tick) " +
		"from 0 to 3h inclusive (10801 requests)",
	Bound:   "admissions exactly at 0, 1h, 2h, 3h: consecutive admissions >= 1h and <= 1h + 1s apart, 4 in all",
	Checker: "smallest and largest gap between consecutive admissions, and the count",
	run: func(r *run) error {
		sc := &engine.Scenario{Name: "low-rate", Seed: 1, Horizon: 3*hour + sec, Bins: 1,
			Client: engine.Client{Policy: engine.PolicyDrop},
			Lanes:  []engine.LaneSpec{r.lane("token-bucket:capacity=1,rate=1/1h"), r.lane("leaky-bucket:rate=1/1h")},
			Sources: []engine.Source{{Kind: engine.SourceBursts, Bursts: []engine.Burst{
				{At: 0, Count: 10801, Spread: 3*hour + sec}}}}}
		res, err := r.simulate(sc)
		if err != nil {
			return err
		}
		for _, lane := range res.Lanes {
			adm := Admissions(lane.Trace)
			least, err := CheckSpacing(adm, hour)
			if err != nil {
				r.failf("%s: %v", lane.Name, err)
			}
			for i := 1; i < len(adm); i++ {
				if gap := adm[i].At - adm[i-1].At; gap > hour+sec {
					r.failf("%s: admissions at %s and %s are %s apart: the bound is one hour plus one tick (1s)", lane.Name, ms(adm[i-1].At), ms(adm[i].At), ms(gap))
				}
			}
			if _, err := CheckExact(adm, 0, sc.Horizon, 4, "what 1 per hour admits in [0, 3h] with a request every second"); err != nil {
				r.failf("%s: %v", lane.Name, err)
			}
			line := fmt.Sprintf("%s: offered %d, admitted at", lane.Name, lane.Totals.Offered)
			for _, a := range adm {
				line += " " + ms(a.At)
			}
			r.linef("%s; smallest gap %s", line, ms(least))
		}
		return nil
	},
}

// allocsPerRun is the average number of heap allocations of one call of f, measured like
// testing.AllocsPerRun: one warm-up call, then runs calls on one P.
func allocsPerRun(runs int, f func()) float64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(runs)
}

// allocSpecs are the limiters the no-alloc guarantee measures: each kind's AllocSpecs (its
// KindInfo.Checks.Allocs, else its Example), in registry order.
var allocSpecs = func() []string {
	var specs []string
	for _, info := range limiters.Kinds() {
		specs = append(specs, info.AllocSpecs()...)
	}
	return specs
}()

// libraryAllocs is, for a kind that runs a real library which allocates on its own (failsafe-go's
// adaptive limiter makes a permit per execution), the allocations of the library's own calls
// for one admission and its return, measured on a fresh library of the same spec: the bound
// for that kind's AcquireAt and Release columns (ratelab's drive may add none). Other kinds: 0.
func libraryAllocs(s limiters.Spec) float64 {
	fs, ok := s.(failsafego.AdaptiveSpec)
	if !ok {
		return 0
	}
	lib := fs.Builder().Build()
	return allocsPerRun(1000, func() {
		if p, ok := lib.TryAcquirePermit(); ok {
			p.Drop()
		}
	})
}

var noAlloc = &Guarantee{
	ID:         "no-alloc",
	Algorithms: kindsOf(allocSpecs),
	Claim:      "no limiter allocates per decision; failsafe-adaptive, a real library that makes a permit per execution, allocates no more than the library's own calls do",
	Scenario:   "one limiter of each kind at 100/s (concurrency: max 5; the adaptive kinds: a limit of 5; nginx: 100r/s, burst 20, delay 5; sentinel: reject, and warm-up throttling with a 500ms queue) asked 1000 times, on a time advancing 1ms per call, for AcquireAt, AvailableAt, RetryAfterAt (or Release)",
	Bound:      "0 allocations per call of each method; failsafe-adaptive's AcquireAt and Release columns: at most what TryAcquirePermit and Drop allocate on the library itself (1, its permit)",
	Checker:    "heap allocations per call counted like testing.AllocsPerRun (runtime.MemStats.Mallocs around 1000 calls on one P)",
	serial:     true,
	run: func(r *run) error {
		specs := allocSpecs
		r.linef("%-45s %9s %11s %s", "limiter", "AcquireAt", "AvailableAt", "RetryAfterAt/Release")
		for _, text := range specs {
			s := mustSpec(text)
			l, err := r.factory.build(s, fixedClock(0))
			if err != nil {
				return err
			}
			now := time.Duration(0)
			acquire := allocsPerRun(1000, func() { now += msec; l.AcquireAt(now, 1) })
			available := allocsPerRun(1000, func() { now += msec; l.AvailableAt(now) })
			var third float64
			if rl, ok := l.(limiters.RateLimiter); ok {
				third = allocsPerRun(1000, func() { now += msec; rl.RetryAfterAt(now, 1) })
			} else if rel, ok := l.(releaser); ok {
				third = allocsPerRun(1000, func() {
					if l.AcquireAt(now, 1) == limiters.Admitted {
						rel.Release(1)
					}
				})
			}
			own := libraryAllocs(s)
			for i, got := range []float64{acquire, available, third} {
				if bound := []float64{own, 0, own}[i]; got > bound {
					name := []string{"AcquireAt", "AvailableAt", "RetryAfterAt/Release"}[i]
					r.failf("%s: %s allocates %.2f times per call: the bound is %g", s, name, got, bound)
				}
			}
			r.linef("%-45s %9g %11g %g", s, acquire, available, third)
		}
		return nil
	},
}
