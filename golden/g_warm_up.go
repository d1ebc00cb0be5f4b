package golden

import (
	"fmt"
	"math"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// warmInterval is the documented warm-up interval I(a) = T·(3 − 2a/P) for a < P, T after.
func warmInterval(T, P, a time.Duration) float64 {
	if a >= P {
		return float64(T)
	}
	return float64(T) * (3 - 2*float64(a)/float64(P))
}

// warmIntegral is ∫ da / I(a) over [a0, a1): the permits the documented curve admits under
// saturating demand. Inside the ramp it is (P / 2T)·ln(I(a0)/I(a1)); after it, (a1 − a0)/T.
func warmIntegral(T, P, a0, a1 time.Duration) float64 {
	var sum float64
	if a0 < P {
		end := min(a1, P)
		sum += float64(P) / (2 * float64(T)) * math.Log(warmInterval(T, P, a0)/warmInterval(T, P, end))
	}
	if a1 > P {
		sum += float64(a1-max(a0, P)) / float64(T)
	}
	return sum
}

// warmCurveTolerance is how far the admitted count of one bin may stray from the curve's
// integral: one permit for the fractional permit carried over each bin edge, and one for the
// 5ms arrival grid (an admission waits up to 5ms for the next arrival).
const warmCurveTolerance = 2.0

var warmUpCurve = &Guarantee{
	ID:         "warm-up-curve",
	Chart:      "docs/img/cold-start-warmup.png",
	Algorithms: []limiters.Kind{limiters.KindWarmUpTokenBucket},
	Claim: "a warm-up bucket's admission rate follows the documented curve: the interval falls linearly from 3T to T " +
		"over the warm-up period, the rate is 1/I(a), and the warm-up admits (ln 3 / 2)·rate·P plus the cold burst",
	Scenario: "warm-up:capacity=10,rate=100/1s,warmup=10s (T=10ms, P=10s, cold burst ⌊10/3⌋ = 3) offered 200 requests per second " +
		"(every 5ms) from age 0 to 12s; per-second bins",
	Bound: "each bin within ±2 of ∫ da / I(a) (the cold burst added to the first); the warm-up period [0, 10s) within ±2 of " +
		"3 + (ln 3 / 2)·100·10 = 552.31",
	Checker: "per-bin admitted count against the integral of the curve, and the total over the warm-up period",
	run: func(r *run) error {
		const spec = "warm-up:capacity=10,rate=100/1s,warmup=10s"
		s := specOf[limiters.WarmUpSpec](spec)
		T := emissionInterval(s.Rate.Permits, s.Rate.Window)
		P := s.WarmUp
		burst := s.Capacity / 3
		sc := &engine.Scenario{Name: "warm-up-curve", Seed: 1, Horizon: 12 * sec, Bins: 1,
			Client: engine.Client{Policy: engine.PolicyDrop}, Lanes: []engine.LaneSpec{r.lane(spec)},
			Sources: []engine.Source{{Kind: engine.SourceConstant, Rate: 200}}}
		res, err := r.simulate(sc)
		if err != nil {
			return err
		}
		adm := Admissions(res.Lanes[0].Trace)
		r.linef("%-12s %-8s %-8s %s", "age", "I(a)", "expected", "admitted")
		for a := time.Duration(0); a < sc.Horizon; a += sec {
			want := warmIntegral(T, P, a, a+sec)
			if a == 0 {
				want += float64(burst)
			}
			got := Count(adm, a, a+sec)
			if math.Abs(float64(got)-want) > warmCurveTolerance {
				r.failf("%d admitted in [%s, %s): the curve admits %.2f there (±%.0f); the rate is not following I(a) = T·(3 − 2a/P)",
					got, ms(a), ms(a+sec), want, warmCurveTolerance)
			}
			r.linef("%-12s %-8s %-8.2f %d", "["+ms(a)+", "+ms(a+sec)+")", ms(time.Duration(warmInterval(T, P, a))), want, got)
		}
		want := float64(burst) + math.Log(3)/2*float64(s.Rate.Permits)/s.Rate.Window.Seconds()*P.Seconds()
		got := Count(adm, 0, P)
		if math.Abs(float64(got)-want) > warmCurveTolerance {
			r.failf("%d admitted during the warm-up [0, %s): the curve admits cold burst + (ln 3 / 2)·rate·P = %.2f (±%.0f)", got, ms(P), want, warmCurveTolerance)
		}
		r.linef("warm-up period [0, %s): admitted %d, curve %.2f (a straight rate ramp would give %.0f)", ms(P), got, want,
			float64(burst)+2.0/3*float64(s.Rate.Permits)*P.Seconds())
		return nil
	},
}

var warmUpBurst = &Guarantee{
	ID:         "warm-up-burst-and-age",
	Algorithms: []limiters.Kind{limiters.KindWarmUpTokenBucket},
	Claim: "a warm-up bucket's burst goes from ⌊capacity/3⌋ cold to capacity warm, following the limiter's age: " +
		"a limiter idle past its warm-up period is warm although it served almost nothing",
	Scenario: "warm-up:capacity=10,rate=100/1s,warmup=10s (T=10ms); 20 requests at once at age 0, at 5s and at 12s " +
		"(after 7s of idle), then one every 1ms for 100ms",
	Bound:   "exactly ⌊τ/I(a)⌋ at once: 3 at 0 (I=30ms), 5 at 5s (I=20ms), 10 at 12s (I=T), then one per T = 10ms",
	Checker: "exact count admitted at each burst instant against ⌊τ/I(a)⌋; once warm, the exact instants: capacity at once, then one per T",
	run: func(r *run) error {
		const spec = "warm-up:capacity=10,rate=100/1s,warmup=10s"
		s := specOf[limiters.WarmUpSpec](spec)
		T := emissionInterval(s.Rate.Permits, s.Rate.Window)
		tau := time.Duration(s.Capacity) * T
		var bursts []engine.Burst
		starts := []time.Duration{0, 5 * sec, 12 * sec}
		for _, t0 := range starts {
			bursts = append(bursts, engine.Burst{At: t0, Count: 20})
			bursts = append(bursts, engine.Burst{At: t0 + msec, Count: 99, Spread: 99 * msec})
		}
		sc := &engine.Scenario{Name: "warm-up-burst-and-age", Seed: 1, Horizon: 13 * sec, Bins: 1,
			Client: engine.Client{Policy: engine.PolicyDrop}, Lanes: []engine.LaneSpec{r.lane(spec)},
			Sources: []engine.Source{{Kind: engine.SourceBursts, Bursts: bursts}}}
		res, err := r.simulate(sc)
		if err != nil {
			return err
		}
		trace := res.Lanes[0].Trace
		adm := Admissions(trace)
		for _, t0 := range starts {
			I := time.Duration(warmInterval(T, s.WarmUp, t0))
			n := int(tau / I)
			got := Count(adm, t0, t0+ns)
			if got != int64(n) {
				r.failf("%d admitted at once at age %s: the burst at that age is exactly ⌊τ/I(a)⌋ = ⌊%s/%s⌋ = %d",
					got, ms(t0), ms(tau), ms(I), n)
			}
			r.linef("age %s: I(a) = %s, burst ⌊%s/%s⌋ = %d, admitted at once: %d", ms(t0), ms(I), ms(tau), ms(I), n, got)
			if t0 >= s.WarmUp {
				want := make([]time.Duration, 0, 20)
				for range n {
					want = append(want, t0)
				}
				for k := 1; time.Duration(k)*T < 100*msec; k++ {
					want = append(want, t0+time.Duration(k)*T)
				}
				r.check(CheckSchedule(adm, t0, t0+100*msec, want,
					fmt.Sprintf("warm by age at %s: a burst of capacity %d, then one per T = %s", ms(t0), s.Capacity, ms(T))))
			}
			r.writeTrace(trace, t0, t0+40*msec)
		}
		return nil
	},
}

var warmUpCapacityOne = &Guarantee{
	ID:         "warm-up-capacity-one",
	Algorithms: []limiters.Kind{limiters.KindWarmUpTokenBucket},
	Claim: "a warm-up bucket of capacity 1 (no burst) is not starved while cold: it admits one permit at a time " +
		"at the cold interval from its first instant",
	Scenario: "warm-up:capacity=1,rate=100/1s,warmup=10s (T=10ms, cold interval 3T=30ms) offered a request every 1ms " +
		"for the first second",
	Bound:   "the first request (at 0) admitted; no gap between admissions longer than 3T + 1ms = 31ms; none shorter than T",
	Checker: "first admission instant, largest and smallest gap between consecutive admissions",
	run: func(r *run) error {
		const spec = "warm-up:capacity=1,rate=100/1s,warmup=10s"
		s := specOf[limiters.WarmUpSpec](spec)
		T := emissionInterval(s.Rate.Permits, s.Rate.Window)
		sc := &engine.Scenario{Name: "warm-up-capacity-one", Seed: 1, Horizon: sec, Bins: 1,
			Client: engine.Client{Policy: engine.PolicyDrop}, Lanes: []engine.LaneSpec{r.lane(spec)},
			Sources: []engine.Source{{Kind: engine.SourceConstant, Rate: 1000}}}
		res, err := r.simulate(sc)
		if err != nil {
			return err
		}
		trace := res.Lanes[0].Trace
		adm := Admissions(trace)
		longest := 3*T + msec
		if len(adm) == 0 || adm[0].At != 0 {
			r.failf("the first request at 0 was not admitted: a cold bucket of capacity 1 must admit one permit at a time (bound: first admission at 0)")
		}
		least, err := CheckSpacing(adm, T)
		r.check(err)
		most := time.Duration(0)
		prev := time.Duration(0)
		for _, a := range append(adm, Admission{At: sc.Horizon}) {
			if gap := a.At - prev; gap > longest {
				r.failf("no admission in (%s, %s), %s: a cold bucket of capacity 1 admits at least once per 3T + 1ms = %s", ms(prev), ms(a.At), ms(gap), ms(longest))
				break
			} else {
				most = max(most, gap)
			}
			prev = a.At
		}
		r.linef("admitted %d of %d in the first second; gaps between admissions from %s to %s (bounds: >= %s, <= %s)",
			len(adm), res.Lanes[0].Totals.Offered, ms(least), ms(most), ms(T), ms(longest))
		r.writeTrace(trace, 0, 100*msec)
		return nil
	},
}
