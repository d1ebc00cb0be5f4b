package golden

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

const (
	ns   = time.Nanosecond
	msec = time.Millisecond
	sec  = time.Second
	hour = time.Hour
)

// pacedBurst is count requests at at, then one every 1ms for span: a burst after idle
// followed by demand dense enough to show the pace.
func pacedBurst(at time.Duration, count int, span time.Duration) []engine.Burst {
	return []engine.Burst{{At: at, Count: count}, {At: at + msec, Count: int(span/msec) - 1, Spread: span - msec}}
}

var tokenBucketBurst = &Guarantee{
	ID:         "token-bucket-burst",
	Chart:      "docs/img/burst-after-idle-timeline.png",
	Algorithms: []limiters.Kind{limiters.KindTokenBucket},
	Claim: "after idle a token bucket admits a burst of exactly capacity at once, then one permit per T; " +
		"its available permits never exceed capacity however long the idle",
	Scenario: "token-bucket:capacity=3,rate=100/1s (T=10ms); 5 requests at 50ms then one every 1ms to 100ms; " +
		"idle to 1h, the same again; available probed after 1h, 1 year and 100 years of idle",
	Bound:   "exactly 3 admitted at the burst instant, then exactly one at each +10ms; available <= 3 always, = 3 after any idle",
	Checker: "admission instants equal the schedule t0,t0,t0,t0+T,t0+2T,…; every decision's pre-decision available <= capacity",
	run: func(r *run) error {
		const spec = "token-bucket:capacity=3,rate=100/1s"
		s := specOf[limiters.TokenBucketSpec](spec)
		T := emissionInterval(s.Rate.Permits, s.Rate.Window)
		bursts := append(pacedBurst(50*msec, 5, 50*msec), pacedBurst(hour, 5, 50*msec)...)
		sc := &engine.Scenario{Name: "token-bucket-burst", Seed: 1, Horizon: hour + 100*msec, Bins: 1,
			Client: engine.Client{Policy: engine.PolicyDrop}, Lanes: []engine.LaneSpec{r.lane(spec)},
			Sources: []engine.Source{{Kind: engine.SourceBursts, Bursts: bursts}}}
		res, err := r.simulate(sc)
		if err != nil {
			return err
		}
		trace := res.Lanes[0].Trace
		adm := Admissions(trace)
		for _, t0 := range []time.Duration{50 * msec, hour} {
			want := []time.Duration{t0, t0, t0}
			for k := 1; t0+time.Duration(k)*T < t0+50*msec; k++ {
				want = append(want, t0+time.Duration(k)*T)
			}
			r.check(CheckSchedule(adm, t0, t0+50*msec, want,
				fmt.Sprintf("a burst of exactly capacity %d at %s, then one per T = %s", s.Capacity, ms(t0), ms(T))))
			r.linef("after idle, at %s: %d admitted at once (capacity %d), then one per T = %s:", ms(t0), Count(adm, t0, t0+1), s.Capacity, ms(T))
			r.writeTrace(trace, t0, t0+50*msec)
			r.linef("")
		}
		most := 0
		for _, rec := range trace {
			if rec.State != nil && rec.State.Available > s.Capacity {
				r.failf("at %s the bucket reported %d available before deciding: over the bound capacity = %d", ms(rec.At), rec.State.Available, s.Capacity)
				break
			}
			if rec.State != nil {
				most = max(most, rec.State.Available)
			}
		}
		r.linef("most available before any decision: %d (bound: capacity = %d)", most, s.Capacity)
		for _, idle := range []time.Duration{hour, 365 * 24 * hour, 100 * 365 * 24 * hour} {
			l, err := r.factory.build(s, fixedClock(0))
			if err != nil {
				return err
			}
			l.AcquireAt(0, s.Capacity)
			got := l.AvailableAt(idle)
			if got != s.Capacity {
				r.failf("after %s of idle the bucket reports %d available: the bound is exactly capacity = %d", ms(idle), got, s.Capacity)
			}
			r.linef("available after %s of idle: %d (bound: exactly capacity = %d)", ms(idle), got, s.Capacity)
		}
		return nil
	},
}

// fixedClock is a clock that always reads the same time, for probes that pass times explicitly.
type fixedClock time.Duration

func (c fixedClock) Now() time.Duration { return time.Duration(c) }

var tokenBucketInterval = &Guarantee{
	ID:         "token-bucket-interval-bound",
	Algorithms: []limiters.Kind{limiters.KindTokenBucket},
	Claim:      "in any half-open interval of length L a token bucket admits at most capacity + ⌈L/T⌉ − 1 permits",
	Scenario: "token-bucket:capacity=3,rate=100/1s (T=10ms) against Poisson arrivals at 400/s for 3s with 200ms of " +
		"silence at 1s and 5 requests at once at 1.2s (seed 1); L = 1ns, 10ms, 25ms, 100ms, 1s",
	Bound:   "capacity + ⌈L/T⌉ − 1: 3, 3, 5, 12, 102",
	Checker: "the exact worst half-open interval of each length (two-pointer sweep over the admissions) against the bound",
	run: func(r *run) error {
		const spec = "token-bucket:capacity=3,rate=100/1s"
		s := specOf[limiters.TokenBucketSpec](spec)
		T := emissionInterval(s.Rate.Permits, s.Rate.Window)
		sc := &engine.Scenario{Name: "token-bucket-interval-bound", Seed: 1, Horizon: 3 * sec, Bins: 1,
			Client: engine.Client{Policy: engine.PolicyDrop}, Lanes: []engine.LaneSpec{r.lane(spec)},
			Sources: []engine.Source{
				{Kind: engine.SourcePoisson, Rate: 400, Until: sec},
				{Kind: engine.SourceBursts, Bursts: []engine.Burst{{At: 1200 * msec, Count: 5}}},
				{Kind: engine.SourcePoisson, Rate: 400, From: 1200 * msec},
			}}
		res, err := r.simulate(sc)
		if err != nil {
			return err
		}
		adm := Admissions(res.Lanes[0].Trace)
		t := res.Lanes[0].Totals
		r.linef("offered %d, admitted %d", t.Offered, t.Admitted)
		r.linef("%-6s  %-5s  %s", "L", "bound", "worst interval")
		for _, L := range []time.Duration{ns, 10 * msec, 25 * msec, 100 * msec, sec} {
			bound := tokenBucketBound(s.Capacity, T, L)
			w, err := CheckInterval(adm, L, bound, "capacity + ⌈L/T⌉ − 1")
			r.check(err)
			r.linef("%-6s  %-5d  %s %s bound", ms(L), bound, w, within(w.Count, bound))
		}
		return nil
	},
}

var tokenBucketNoDrift = &Guarantee{
	ID:         "token-bucket-no-drift",
	Algorithms: []limiters.Kind{limiters.KindTokenBucket},
	Claim: "when T is not a whole number of nanoseconds it is rounded up, so over an hour of saturating demand " +
		"a token bucket admits exactly capacity + ⌈L/T⌉ − 1 — one fewer than rate × hour after the burst, never one more",
	Scenario: "token-bucket:capacity=3,rate=3/1s (T = 1s/3 rounded up = 333.333334ms); a request every 100ms " +
		"from 0 to 1h inclusive (36001 requests); L = 1h + 1ns",
	Bound:   "capacity + ⌈L/T⌉ − 1 = 3 + 10800 − 1 = 10802 at most; and no fewer than capacity + ⌈(L − 100ms)/T⌉ − 1 = 10802 (no stall)",
	Checker: "the admitted count over the whole hour equals both bounds; the worst 1s interval <= capacity + ⌈1s/T⌉ − 1",
	run: func(r *run) error {
		const spec = "token-bucket:capacity=3,rate=3/1s"
		s := specOf[limiters.TokenBucketSpec](spec)
		T := emissionInterval(s.Rate.Permits, s.Rate.Window)
		H := hour + ns
		gap := 100 * msec
		sc := &engine.Scenario{Name: "token-bucket-no-drift", Seed: 1, Horizon: H, Bins: 1,
			Client: engine.Client{Policy: engine.PolicyDrop}, Lanes: []engine.LaneSpec{r.lane(spec)},
			Sources: []engine.Source{{Kind: engine.SourceBursts, Bursts: []engine.Burst{{At: 0, Count: 36001, Spread: hour + gap}}}}}
		res, err := r.simulate(sc)
		if err != nil {
			return err
		}
		adm := Admissions(res.Lanes[0].Trace)
		upper := tokenBucketBound(s.Capacity, T, H)
		lower := tokenBucketBound(s.Capacity, T, H-gap)
		got := Count(adm, 0, H)
		r.linef("T = %s (1s/3 = 333.333333…ms, rounded up)", ms(T))
		r.linef("offered %d, admitted %d in [0, %s)", res.Lanes[0].Totals.Offered, got, ms(H))
		r.linef("bound: %d <= admitted <= %d; rate × hour + capacity would be %d", lower, upper, int64(s.Rate.Permits)*3600+int64(s.Capacity))
		if got > upper {
			r.failf("%d admitted in [0, %s): over the bound capacity + ⌈L/T⌉ − 1 = %d for L = %s (the schedule drifted ahead of the rate)", got, ms(H), upper, ms(H))
		}
		if got < lower {
			r.failf("%d admitted in [0, %s): under the floor capacity + ⌈(L − %s)/T⌉ − 1 = %d for saturating demand every %s (the schedule fell behind)", got, ms(H), ms(gap), lower, ms(gap))
		}
		w, err := CheckInterval(adm, sec, tokenBucketBound(s.Capacity, T, sec), "capacity + ⌈L/T⌉ − 1")
		r.check(err)
		r.linef("worst 1s interval: %s (bound %d)", w, tokenBucketBound(s.Capacity, T, sec))
		r.linef("first admissions:")
		for _, a := range adm[:6] {
			r.linef("  %s", ms(a.At))
		}
		r.linef("last admissions (the %dth after the burst is due at %d·T = %s):", len(adm)-s.Capacity, len(adm)-s.Capacity, ms(time.Duration(len(adm)-s.Capacity)*T))
		for _, a := range adm[len(adm)-3:] {
			r.linef("  %s", ms(a.At))
		}
		r.linef("next due at %d·T = %s, after the horizon", len(adm)-s.Capacity+1, ms(time.Duration(len(adm)-s.Capacity+1)*T))
		return nil
	},
}
