package golden

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// guavaReserver is what the Guava guarantees ask of a limiter beyond the core.
type guavaReserver interface {
	limiters.Limiter
	limiters.Reserver
	limiters.RetryAfter
}

// buildGuava builds spec with the run's factory at clock 0 and requires the reserve and
// retry-after capabilities, which every Guava kind has.
func (r *run) buildGuava(spec string) (guavaReserver, error) {
	l, err := r.factory.build(mustSpec(spec), fixedClock(0))
	if err != nil {
		return nil, err
	}
	g, ok := l.(guavaReserver)
	if !ok {
		return nil, fmt.Errorf("%s: %T cannot reserve and hint", spec, l)
	}
	return g, nil
}

var guavaPrepay = &Guarantee{
	ID:         "guava-prepay",
	Algorithms: []limiters.Kind{peers.KindGuavaBursty, limiters.KindTokenBucket},
	Claim: "Guava's SmoothBursty lets the next caller pay for a request: a request passes once the next free ticket " +
		"has come, whatever its size, and pushes the ticket on by its own cost; it starts empty, yet its first request " +
		"passes at once, and after an idle it lets its stored permits and one more through. ratelab's token bucket of " +
		"the same rate and capacity charges each request itself and starts full",
	Scenario: "(1) guava-bursty:rate=1/1s,mode=wait: acquire(10), acquire(1), acquire(1) at 0; (2) guava-bursty:rate=1/1s: " +
		"tryAcquire(10) at 0, tryAcquire(1) at 1s and at 9.999999s, tryAcquire(1000) at 10s, and the retry hint at 3s " +
		"for 1 and for 1000 permits; (3) 12 requests at 0, and on fresh limiters 12 at 2s, against guava-bursty:rate=10/1s " +
		"and token-bucket:capacity=10,rate=10/1s; (4) simulated, the same two: 10 permits at 0, then one request every " +
		"100ms from 100ms to 1.9s",
	Bound: "(1) waits of exactly 0, 10s and 11s; (2) admitted, refused, refused, admitted; a hint of exactly 7s for either " +
		"size; (3) at 0: Guava 1, the token bucket 10; after the idle: Guava 11 (10 stored + 1), the token bucket 10; " +
		"(4) the 10 permits pass in both; Guava then refuses the 9 requests before 1s and admits the 10 from 1s, the " +
		"token bucket admits all 19",
	Checker: "waits and decisions of direct ReserveAt/AcquireAt/RetryAfterAt calls; admitted counts from the simulator's traces",
	run: func(r *run) error {
		const wait = "guava-bursty:rate=1/1s,mode=wait"
		l, err := r.buildGuava(wait)
		if err != nil {
			return err
		}
		var waits []string
		for i, tc := range []struct {
			n    int
			want time.Duration
		}{{10, 0}, {1, 10 * sec}, {1, 11 * sec}} {
			res := l.ReserveAt(0, tc.n, limiters.MaxWaitForever)
			if res.Decision != limiters.Admitted || res.Wait != tc.want {
				r.failf("%s: acquire(%d) at 0 (call %d) got %s with a wait of %s: the bound is admitted with a wait of exactly %s "+
					"(a request's cost falls on the next caller)", wait, tc.n, i+1, res.Decision, ms(res.Wait), ms(tc.want))
			}
			waits = append(waits, fmt.Sprintf("acquire(%d): %s", tc.n, ms(res.Wait)))
		}
		r.linef("%s at 0: %s", wait, strings.Join(waits, ", "))

		const try = "guava-bursty:rate=1/1s"
		l, err = r.buildGuava(try)
		if err != nil {
			return err
		}
		var tries []string
		for _, tc := range []struct {
			at   time.Duration
			n    int
			want limiters.Decision
		}{{0, 10, limiters.Admitted}, {sec, 1, limiters.Rejected}, {10*sec - time.Microsecond, 1, limiters.Rejected}, {10 * sec, 1000, limiters.Admitted}} {
			if tc.at == 10*sec {
				for _, n := range []int{1, 1000} {
					hint, ok := l.RetryAfterAt(3*sec, n)
					if !ok || hint != 7*sec {
						r.failf("%s: the retry hint at 3s for %d permits is %s (ok %v): the bound is exactly 7s, for any size", try, n, ms(hint), ok)
					}
					tries = append(tries, fmt.Sprintf("hint at 3s for %d: %s", n, ms(hint)))
				}
			}
			d := l.AcquireAt(tc.at, tc.n)
			if d != tc.want {
				r.failf("%s: tryAcquire(%d) at %s got %s: the bound is %s", try, tc.n, ms(tc.at), d, tc.want)
			}
			tries = append(tries, fmt.Sprintf("tryAcquire(%d) at %s: %s", tc.n, ms(tc.at), d))
		}
		r.linef("%s: %s", try, strings.Join(tries, "; "))

		r.linef("%-40s %18s %26s", "12 one-permit requests at once", "fresh, at 0", "fresh, idle until 2s")
		for _, tc := range []struct {
			spec          string
			fresh, idle   int
			whyFresh, why string
		}{
			{"guava-bursty:rate=10/1s", 1, 11, "it starts empty, and the first passes at once", "10 stored permits and one more"},
			{"token-bucket:capacity=10,rate=10/1s", 10, 10, "it starts full", "its capacity"},
		} {
			var got [2]int
			for i, at := range []time.Duration{0, 2 * sec} {
				b, err := r.factory.build(mustSpec(tc.spec), fixedClock(0))
				if err != nil {
					return err
				}
				got[i] = burstAt(b, at, 12)
			}
			if got[0] != tc.fresh {
				r.failf("%s: %d of 12 at 0 were admitted: the bound is exactly %d (%s)", tc.spec, got[0], tc.fresh, tc.whyFresh)
			}
			if got[1] != tc.idle {
				r.failf("%s: %d of 12 at 2s were admitted: the bound is exactly %d (%s)", tc.spec, got[1], tc.idle, tc.why)
			}
			r.linef("%-40s %18d %26d", tc.spec, got[0], got[1])
		}

		script := []engine.Arrival{{At: 0, Permits: 10}}
		for k := 1; k <= 19; k++ {
			script = append(script, engine.Arrival{At: time.Duration(k) * 100 * msec, Permits: 1})
		}
		sc := &engine.Scenario{Name: "guava-prepay", Seed: 1, Horizon: 2 * sec, Bins: 1, Client: engine.Client{Policy: engine.PolicyDrop},
			Lanes:   []engine.LaneSpec{r.lane("guava-bursty:rate=10/1s"), r.lane("token-bucket:capacity=10,rate=10/1s")},
			Sources: []engine.Source{{Kind: engine.SourceScript, Script: script}}}
		res, err := r.simulate(sc)
		if err != nil {
			return err
		}
		for i, want := range []struct{ batch, before, after int64 }{{10, 0, 10}, {10, 9, 10}} {
			lane := res.Lanes[i]
			var batch, before, after int64
			for _, a := range Admissions(lane.Trace) {
				switch {
				case a.Permits == 10:
					batch += int64(a.Permits)
				case a.At < sec:
					before++
				default:
					after++
				}
			}
			if batch != want.batch || before != want.before || after != want.after {
				r.failf("%s: the 10 permits at 0: %d admitted; one-permit requests before 1s: %d of 9, from 1s: %d of 10: the bound is "+
					"exactly %d, %d and %d", lane.Name, batch, before, after, want.batch, want.before, want.after)
			}
			r.linef("simulated %-40s batch of 10 at 0: %2d admitted; 100ms..900ms: %d of 9; 1s..1.9s: %2d of 10", lane.Name, batch, before, after)
		}
		return nil
	},
}

// atOrNever prints an instant, or "never" for −1.
func atOrNever(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return ms(d)
}

// guavaThreshold is SmoothWarmingUp's thresholdPermits for a spec: 0.5 × warmup / stable
// interval, in Guava's doubles.
func guavaThreshold(s peers.GuavaWarmUpSpec) float64 {
	stable := 1e6 / (float64(s.Rate.Permits) / s.Rate.Window.Seconds())
	return 0.5 * float64(s.WarmUp/time.Microsecond) / stable
}

var guavaWarmupNeverWarms = &Guarantee{
	ID:         "guava-warmup-never-warms",
	Algorithms: []limiters.Kind{peers.KindGuavaWarmUp},
	Claim: "Guava's SmoothWarmingUp warms up by spending its stored permits, which only demand above what tryAcquire lets " +
		"through does: with tryAcquire traffic at exactly the stable rate each admission from cold costs more than the time " +
		"to the next request, that request is refused, and the idle after it stores permits back. With cold factor 2 it " +
		"never warms up (the stored permits settle above the threshold and it admits one request in two); with the default " +
		"3 it takes 24.8 warm-up periods, and gets there only through the cut of a cost to whole µs. A caller who waits " +
		"(acquire) warms it in half the warm-up period",
	Scenario: "one request every 10ms from the limiter's creation: guava-warmup:rate=100/1s,warmup=1s (threshold 50, max 100 " +
		"stored permits) and ...,cold_factor=2 (threshold 50, max 116.67) asked tryAcquire(1) for 1h (360000 requests); " +
		"guava-warmup:rate=100/1s,warmup=1s,mode=wait asked acquire(1) for 2s",
	Bound: "cold factor 3: per second 34, 33, 33, 34, 33, 33, 34, 46, then exactly 50 in each second from 8s to 23s, 59 in the " +
		"25th, and every request from 24.82s on (none refused after 24.81s); the stored permits first below the threshold " +
		"at 9.12s; cold factor 2: exactly 50 in every second of the hour (180000), the stored permits never below 59 after " +
		"an admission; acquire: waits rising below 500ms for the first 50 requests, then exactly 500ms for every later one",
	Checker: "the decision of each AcquireAt, counted per second, and the stored permits (Snapshot's level) after each; the waits of ReserveAt",
	run: func(r *run) error {
		const hour = 3600
		for _, tc := range []struct {
			spec        string
			perSecond   []int // the first seconds, exactly; every later second is last
			last        int
			lastRefused time.Duration // -1: refusals to the end
			below       time.Duration // first below the threshold; -1: never
			minStored   float64       // the least stored permits after an admission, at least
		}{
			{"guava-warmup:rate=100/1s,warmup=1s", []int{34, 33, 33, 34, 33, 33, 34, 46, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 59},
				100, 24810 * msec, 9120 * msec, 0},
			{"guava-warmup:rate=100/1s,warmup=1s,cold_factor=2", nil, 50, hour*sec - 10*msec, -1, 59},
		} {
			l, err := r.factory.build(mustSpec(tc.spec), fixedClock(0))
			if err != nil {
				return err
			}
			threshold := guavaThreshold(specOf[peers.GuavaWarmUpSpec](tc.spec))
			counts := make([]int, hour)
			lastRefused, below, least := time.Duration(-1), time.Duration(-1), 1e300
			for k := range hour * 100 {
				at := time.Duration(k) * 10 * msec
				if l.AcquireAt(at, 1) == limiters.Admitted {
					counts[k/100]++
					stored := l.Snapshot(at).Level
					least = min(least, stored)
					if below < 0 && stored < threshold {
						below = at
					}
				} else {
					lastRefused = at
				}
			}
			total := 0
			for s, got := range counts {
				total += got
				want := tc.last
				if s < len(tc.perSecond) {
					want = tc.perSecond[s]
				}
				if got != want {
					r.failf("%s: %d admitted in second %d: the bound is exactly %d", tc.spec, got, s, want)
					break
				}
			}
			if lastRefused != tc.lastRefused {
				r.failf("%s: the last refusal was at %s: the bound is exactly %s", tc.spec, atOrNever(lastRefused), atOrNever(tc.lastRefused))
			}
			if below != tc.below {
				r.failf("%s: the stored permits were first below the threshold %v at %s: the bound is exactly %s", tc.spec, threshold,
					atOrNever(below), atOrNever(tc.below))
			}
			if tc.minStored > 0 && least < tc.minStored {
				r.failf("%s: the stored permits fell to %.4f after an admission: the bound is at least %v, above the threshold %v", tc.spec, least, tc.minStored, threshold)
			}
			head := make([]string, 0, 26)
			for _, c := range counts[:26] {
				head = append(head, fmt.Sprint(c))
			}
			r.linef("%s (threshold %v): admitted per second %s …; %d in the hour; last refusal at %s; first below the threshold at %s; "+
				"least stored after an admission %.2f", tc.spec, threshold, strings.Join(head, " "), total, atOrNever(lastRefused), atOrNever(below), least)
		}

		const waits = "guava-warmup:rate=100/1s,warmup=1s,mode=wait"
		l, err := r.buildGuava(waits)
		if err != nil {
			return err
		}
		var got []string
		prev, failed := time.Duration(-1), len(r.failures)
		for k := range 200 {
			at := time.Duration(k) * 10 * msec
			res := l.ReserveAt(at, 1, limiters.MaxWaitForever)
			switch {
			case len(r.failures) > failed: // the first broken wait says it all
			case res.Decision != limiters.Admitted:
				r.failf("%s: acquire(1) at %s got %s: acquire always admits", waits, ms(at), res.Decision)
			case k >= 50 && res.Wait != 500*msec:
				r.failf("%s: acquire(1) at %s waited %s: the bound is exactly 500ms from the 51st request on", waits, ms(at), ms(res.Wait))
			case k < 50 && (res.Wait >= 500*msec || res.Wait < prev):
				r.failf("%s: acquire(1) at %s waited %s after %s: the bound is a rising wait below 500ms for the first 50", waits, ms(at), ms(res.Wait), ms(prev))
			}
			prev = res.Wait
			if k < 3 || k == 49 || k == 50 || k == 199 {
				got = append(got, fmt.Sprintf("#%d at %s: %s", k+1, ms(at), ms(res.Wait)))
			}
		}
		r.linef("%s: %s", waits, strings.Join(got, ", "))
		return nil
	},
}
