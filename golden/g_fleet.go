package golden

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// fleetBurst is n requests of key at once, at at.
func fleetBurst(at time.Duration, key string, n int) engine.Source {
	s := engine.Source{Kind: engine.SourceScript}
	for range n {
		s.Script = append(s.Script, engine.Arrival{At: at, Key: key})
	}
	return s
}

// fleetLane is a lane of stack on the scenario's fleet, coordinated by c, its limiters (one
// stack per instance, and the store's) from the run's factory. A split lane's instances get
// limiters.SplitSpec of each stage for n instances.
func (r *run) fleetLane(stack string, c engine.LaneFleet, n int) (engine.LaneSpec, error) {
	lane := r.lane(stack)
	lane.Fleet = &c
	if c.Model == engine.CoordSplit {
		split := make([]limiters.Spec, len(lane.Stack))
		for i, s := range lane.Stack {
			var err error
			if split[i], err = limiters.SplitSpec(s, n); err != nil {
				return lane, err
			}
		}
		inner := r.wrap(engine.LaneSpec{Stack: split})
		lane.Build = inner.Build
	}
	return lane, nil
}

// admittedAt counts a lane's admissions by time.
func admittedAt(l engine.LaneResult) map[time.Duration]int {
	at := map[time.Duration]int{}
	for _, a := range Admissions(l.Trace) {
		at[a.At]++
	}
	return at
}

var fleetLocal = &Guarantee{
	ID:         "fleet-local",
	Algorithms: []limiters.Kind{limiters.KindTokenBucket, limiters.KindFixedWindow},
	Claim: "N instances behind a balancer, each with its own limiter of the full limit L, admit N × L: " +
		"every instance is an independent limiter that sees its share of the traffic",
	Scenario: "3 instances, round-robin, local; 100 requests at once; token-bucket:capacity=10,rate=10/1h and " +
		"fixed-window:limit=10,window=1h (L = 10 at one instant: the spec's InitialPermits)",
	Bound: "round-robin gives each instance ⌈100/3⌉ or ⌊100/3⌋ ≥ 10 requests; an independent limiter admits " +
		"exactly L of a burst of at least L, so each admits exactly 10 and the fleet exactly 3 × 10 = 30, " +
		"against one process's 10",
	Checker: "the fleet lane's admitted total and each instance's admitted count, against N × L and L",
	run: func(r *run) error {
		const n, burst = 3, 100
		r.linef("%-36s %8s %10s %s", "spec", "one", "fleet", "instances")
		for _, text := range []string{"token-bucket:capacity=10,rate=10/1h", "fixed-window:limit=10,window=1h"} {
			L := mustSpec(text).InitialPermits()
			lane, err := r.fleetLane(text, engine.LaneFleet{Model: engine.CoordLocal}, n)
			if err != nil {
				return err
			}
			res, err := r.simulate(&engine.Scenario{Name: "fleet-local", Horizon: time.Second,
				Sources: []engine.Source{fleetBurst(0, "", burst)},
				Fleet:   &engine.Fleet{Instances: n, Balancer: engine.BalanceRoundRobin},
				Lanes:   []engine.LaneSpec{r.lane(text), lane}})
			if err != nil {
				return err
			}
			one, fleet := res.Lanes[0], res.Lanes[1]
			if fleet.Totals.Admitted != int64(n*L) {
				r.failf("%s: %d local instances admitted %d of %d at once: the bound is exactly N × L = %d", text, n, fleet.Totals.Admitted, burst, n*L)
			}
			var each []int64
			for k, in := range fleet.Fleet.Instances {
				each = append(each, in.Admitted)
				if in.Admitted != int64(L) {
					r.failf("%s: instance %d admitted %d: each independent limiter admits exactly L = %d", text, k, in.Admitted, L)
				}
			}
			r.linef("%-36s %8d %10d %v", text, one.Totals.Admitted, fleet.Totals.Admitted, each)
		}
		return nil
	},
}

var fleetSplit = &Guarantee{
	ID:         "fleet-split",
	Algorithms: []limiters.Kind{limiters.KindTokenBucket, limiters.KindFixedWindow},
	Claim: "split gives each of N instances L / N: spread evenly the fleet admits L, but a key that the balancer " +
		"puts on one instance is refused at L / N while the global count is still below L",
	Scenario: "3 instances, split of token-bucket:capacity=30,rate=30/1h (each capacity=10,rate=10/1h) and " +
		"fixed-window:limit=30,window=1h (each limit=10); 100 requests at once: of one key through hash, or of " +
		"100 keys through round-robin",
	Bound: "one key through hash reaches one instance, which admits exactly L / N = 10 and refuses the other 90 " +
		"while the fleet has admitted 10 < L = 30; round-robin gives each instance ≥ 33 ≥ 10: exactly 3 × 10 = 30 = L",
	Checker: "admitted and refused totals of the skewed and the even lane, against L / N and L",
	run: func(r *run) error {
		const n, burst = 3, 100
		r.linef("%-36s %14s %14s", "spec (global L = 30)", "one key, hash", "even, rr")
		for _, text := range []string{"token-bucket:capacity=30,rate=30/1h", "fixed-window:limit=30,window=1h"} {
			L := mustSpec(text).InitialPermits()
			var got [2]engine.LaneResult
			for i, b := range []engine.Balancer{engine.BalanceHash, engine.BalanceRoundRobin} {
				lane, err := r.fleetLane(text, engine.LaneFleet{Model: engine.CoordSplit}, n)
				if err != nil {
					return err
				}
				src := fleetBurst(0, "hot", burst)
				if b == engine.BalanceRoundRobin {
					src.Keys = &engine.KeyPopulation{Kind: engine.PopulationUniform, Clients: burst}
				}
				res, err := r.simulate(&engine.Scenario{Name: "fleet-split", Horizon: time.Second, Seed: 1,
					Sources: []engine.Source{src}, Fleet: &engine.Fleet{Instances: n, Balancer: b},
					Lanes: []engine.LaneSpec{lane}})
				if err != nil {
					return err
				}
				got[i] = res.Lanes[0]
			}
			skew, even := got[0].Totals, got[1].Totals
			if skew.Admitted != int64(L/n) || skew.Refused != int64(burst-L/n) {
				r.failf("%s: one key on one instance: admitted %d, refused %d: the bound is exactly L/N = %d admitted, %d refused, with the fleet below L = %d",
					text, skew.Admitted, skew.Refused, L/n, burst-L/n, L)
			}
			if even.Admitted != int64(L) {
				r.failf("%s: spread evenly the split fleet admitted %d: exactly L = %d", text, even.Admitted, L)
			}
			r.linef("%-36s %14s %14s", text, fmt.Sprintf("%d/%d", skew.Admitted, burst), fmt.Sprintf("%d/%d", even.Admitted, burst))
		}
		return nil
	},
}

var fleetAsync = &Guarantee{
	ID:         "fleet-async",
	Algorithms: []limiters.Kind{limiters.KindTokenBucket},
	Claim: "async (gubernator's GLOBAL): before a sync each instance decides on its own, so the k instances that get " +
		"traffic admit up to k × L within one sync; once synced each holds what the owner had left, r, and may spend " +
		"it: k × r more, which is 0 (at most L in all) only when the owner's count has reached L",
	Scenario: "3 instances, sticky (key a on instance 0, b on 1), owner 2, sync 100ms, messages 1ms; " +
		"token-bucket:capacity=10,rate=10/1h; hits to a and b at 0, 1s, 2s: 15/15 then 5/5, and 4/3, 5/5, 5/5",
	Bound: "a non-owner hears the owner 2 × sync + 2 × 1ms = 202ms after its first hit: saturated, 2 × 10 = 20 at 0 " +
		"(owner r = max(0, 10 − 30) = 0), then 0; partial, 7 at 0, the owner counts 7 and broadcasts r = 3, which " +
		"each non-owner spends: 2 × 3 = 6 at 1s (13 in all against 10), then r = 0: 0",
	Checker: "admissions per phase from the trace, against k × L, k × r and the exact counts " +
		"(crosscheck/gubernator_test.go finds the same counts in a real gubernator v2.13.0 cluster)",
	run: func(r *run) error {
		const text = "token-bucket:capacity=10,rate=10/1h"
		type phase struct{ a, b int }
		r.linef("%-28s %s", "hits per phase (a, b)", "admitted per phase")
		for _, c := range []struct {
			phases []phase
			want   []int
		}{{[]phase{{15, 15}, {5, 5}}, []int{20, 0}}, {[]phase{{4, 3}, {5, 5}, {5, 5}}, []int{7, 6, 0}}} {
			var sources []engine.Source
			for i, p := range c.phases {
				at := time.Duration(i) * time.Second
				sources = append(sources, fleetBurst(at, "a", p.a), fleetBurst(at, "b", p.b))
			}
			lane, err := r.fleetLane(text, engine.LaneFleet{Model: engine.CoordAsync, Sync: 100 * time.Millisecond, Owner: 2,
				Latency: engine.Distribution{Kind: engine.DistConstant, Mean: time.Millisecond}}, 3)
			if err != nil {
				return err
			}
			res, err := r.simulate(&engine.Scenario{Name: "fleet-async", Horizon: time.Duration(len(c.phases)) * time.Second,
				Sources: sources, Fleet: &engine.Fleet{Instances: 3, Balancer: engine.BalanceSticky}, Lanes: []engine.LaneSpec{lane}})
			if err != nil {
				return err
			}
			at := admittedAt(res.Lanes[0])
			got := make([]int, len(c.phases))
			for i := range got {
				got[i] = at[time.Duration(i)*time.Second]
			}
			// The bounds, phase by phase: k × L before any sync, k × r after.
			const k, L = 2, 10
			left := L
			for i, p := range c.phases {
				bound := k * left
				if got[i] > bound {
					r.failf("hits %v: phase %d admitted %d: the bound is k × %d = %d", c.phases, i+1, got[i], left, bound)
				}
				left = max(0, left-p.a-p.b)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				r.failf("hits %v: admitted %v per phase: the model gives exactly %v", c.phases, got, c.want)
			}
			r.linef("%-28s %v", fmt.Sprint(c.phases), got)
		}
		return nil
	},
}

var fleetClockSkew = &Guarantee{
	ID:         "fleet-clock-skew",
	Algorithms: []limiters.Kind{limiters.KindFixedWindow},
	Claim: "a fixed window kept in a central store but named by each caller's clock (INCR key:{now/window}) admits " +
		"2L in one instant when one instance's clock is δ ahead: during the δ before each boundary, that instance " +
		"already fills the next window while the others fill the current one",
	Scenario: "2 instances, round-robin, central store with clock: caller, fixed-window:limit=10,window=1s; instance 1 " +
		"δ = 100ms ahead (and, for contrast, δ = 0); a burst of 40 at one instant t, t = 899ms or 900ms",
	Bound: "the burst at t counts in window ⌊(t + δᵢ)/1s⌋ for instance i: t = 900ms, δ = 100ms: instance 0 window 0, " +
		"instance 1 window 1, each fresh: exactly 2L = 20; t = 899ms < 1s − δ: both window 0: exactly L = 10; " +
		"δ = 0: L = 10 at either t",
	Checker: "admitted totals of each burst, against 2L inside [1s − δ, 1s) and L outside it",
	run: func(r *run) error {
		const text = "fixed-window:limit=10,window=1s"
		r.linef("%-8s %-8s %s", "offset", "burst at", "admitted of 40")
		for _, c := range []struct {
			offset, at time.Duration
			want       int64
		}{{100 * msec, 900 * msec, 20}, {100 * msec, 899 * msec, 10}, {0, 900 * msec, 10}, {0, 899 * msec, 10}} {
			lane, err := r.fleetLane(text, engine.LaneFleet{Model: engine.CoordCentral, Clock: engine.ClockCaller,
				OnFailure: limiters.FailClosed, Timeout: 50 * msec}, 2)
			if err != nil {
				return err
			}
			res, err := r.simulate(&engine.Scenario{Name: "fleet-clock-skew", Horizon: 2 * sec,
				Sources: []engine.Source{fleetBurst(c.at, "", 40)}, Fleet: &engine.Fleet{Instances: 2, Balancer: engine.BalanceRoundRobin},
				Faults: []engine.Fault{{Kind: engine.FaultClock, Instance: 1, Offset: c.offset}}, Lanes: []engine.LaneSpec{lane}})
			if err != nil {
				return err
			}
			if got := res.Lanes[0].Totals.Admitted; got != c.want {
				r.failf("offset %s, a burst of 40 at %s: admitted %d: the bound is exactly %d", ms(c.offset), ms(c.at), got, c.want)
			}
			r.linef("%-8s %-8s %d", ms(c.offset), ms(c.at), res.Lanes[0].Totals.Admitted)
		}
		return nil
	},
}

var fleetFailure = &Guarantee{
	ID:         "fleet-failure-policy",
	Algorithms: []limiters.Kind{limiters.KindTokenBucket},
	Claim: "while the store is unreachable, fail-open admits every request, fail-closed none, and local lets each " +
		"instance decide alone with the full limit (N × L)",
	Scenario: "3 instances, round-robin, central token-bucket:capacity=10,rate=1/1h, 2ms round trip, timeout 50ms; " +
		"the store down from 1s to 2s; 50 requests at 0 and 50 at 1.001s",
	Bound: "at 0 the store admits exactly L = 10; during the outage: fail-open exactly 50 of 50, fail-closed exactly " +
		"0, local exactly 3 × 10 = 30 (each instance's own fresh bucket); every outage request is a store failure",
	Checker: "admissions during the outage from the trace, and the store failure count, against the policy's number",
	run: func(r *run) error {
		const text = "token-bucket:capacity=10,rate=1/1h"
		outage := engine.Fault{Kind: engine.FaultOutage, From: sec, Until: 2 * sec}
		r.linef("%-12s %8s %10s %9s", "on failure", "at 0", "in outage", "failures")
		for _, c := range []struct {
			mode limiters.FailureMode
			want int
		}{{limiters.FailOpen, 50}, {limiters.FailClosed, 0}, {limiters.FailLocal, 30}} {
			lane, err := r.fleetLane(text, engine.LaneFleet{Model: engine.CoordCentral, OnFailure: c.mode, Timeout: 50 * msec,
				Latency: engine.Distribution{Kind: engine.DistConstant, Mean: 2 * msec}}, 3)
			if err != nil {
				return err
			}
			res, err := r.simulate(&engine.Scenario{Name: "fleet-failure", Horizon: 2 * sec,
				Sources: []engine.Source{fleetBurst(0, "", 50), fleetBurst(sec+msec, "", 50)},
				Fleet:   &engine.Fleet{Instances: 3, Balancer: engine.BalanceRoundRobin},
				Faults:  []engine.Fault{outage}, Lanes: []engine.LaneSpec{lane}})
			if err != nil {
				return err
			}
			at := admittedAt(res.Lanes[0])
			if at[0] != 10 {
				r.failf("%s: the store admitted %d of 50 at 0: exactly L = 10", c.mode, at[0])
			}
			if at[sec+msec] != c.want {
				r.failf("%s: admitted %d of 50 during the outage: the policy's bound is exactly %d", c.mode, at[sec+msec], c.want)
			}
			if f := res.Lanes[0].Fleet.StoreFailures; f != 50 {
				r.failf("%s: %d store failures: every one of the 50 outage requests is one", c.mode, f)
			}
			r.linef("%-12s %8d %10d %9d", c.mode, at[0], at[sec+msec], res.Lanes[0].Fleet.StoreFailures)
		}
		return nil
	},
}
