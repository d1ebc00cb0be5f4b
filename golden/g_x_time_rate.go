package golden

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// decisions asks l for one permit at each time and returns the decisions.
func decisions(l limiters.Limiter, times []time.Duration, n int) []limiters.Decision {
	out := make([]limiters.Decision, len(times))
	for i, t := range times {
		out[i] = l.AcquireAt(t, n)
	}
	return out
}

// admittedIndexes is the 1-based positions of the admitted decisions.
func admittedIndexes(ds []limiters.Decision) []int {
	var out []int
	for i, d := range ds {
		if d == limiters.Admitted {
			out = append(out, i+1)
		}
	}
	return out
}

func decisionList(ds []limiters.Decision) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, " ")
}

var xTimeRateLibrary = &Guarantee{
	ID:         "x-time-rate-library",
	Algorithms: []limiters.Kind{peers.KindXTimeRate, limiters.KindTokenBucket},
	Claim: "golang.org/x/time/rate, the real library driven at virtual time, starts full (burst requests pass at once, then one per " +
		"1/rate), refuses AllowN(n > burst) forever, makes waiting callers (mode=wait) wait for the tokens they borrow; and its float " +
		"arithmetic admits what exact arithmetic refuses: a request short of a token by less than 1ns of refill waits \"0\" and passes, " +
		"so at 3/1s with burst 1 four requests pass within one second, where ratelab's token bucket of the same spec admits two",
	Scenario: "x-time-rate:rate=100/1s,burst=3: 4 requests at 0, 2 at 10ms, 1 at 20ms, a request for 4 at 20ms and after 1h of idle, " +
		"a request for 3 then; x-time-rate:rate=100/1s,burst=3,mode=wait: 5 reservations at 0; x-time-rate:rate=3/1s,burst=1 beside " +
		"token-bucket:capacity=1,rate=3/1s: 10 requests, one every 333,333,333ns from 0 (the token interval is 333,333,333.3ns)",
	Bound: "3 of 4 at 0, 1 of 2 at 10ms, 1 at 20ms; n = 4: never, at 20ms and after 1h; n = 3 after 1h: admitted; waits exactly " +
		"0, 0, 0, 10ms, 20ms and tokens −2 after them; 3/1s: x-time-rate admits exactly requests 1–4 and 6–9 (4 in [0, 1s)), the " +
		"token bucket (T rounded up to 333,333,334ns) exactly 1, 3, 5, 7, 9",
	Checker: "decisions and waits of direct AcquireAt and ReserveAt calls, against the exact lists",
	run: func(r *run) error {
		l, err := r.factory.build(mustSpec("x-time-rate:rate=100/1s,burst=3"), fixedClock(0))
		if err != nil {
			return err
		}
		type ask struct {
			at   time.Duration
			n    int
			want limiters.Decision
		}
		asks := []ask{{0, 1, limiters.Admitted}, {0, 1, limiters.Admitted}, {0, 1, limiters.Admitted}, {0, 1, limiters.Rejected},
			{10 * msec, 1, limiters.Admitted}, {10 * msec, 1, limiters.Rejected}, {20 * msec, 1, limiters.Admitted},
			{20 * msec, 4, limiters.Never}, {hour, 4, limiters.Never}, {hour, 3, limiters.Admitted}}
		var got []string
		for _, a := range asks {
			d := l.AcquireAt(a.at, a.n)
			if d != a.want {
				r.failf("x-time-rate:rate=100/1s,burst=3: AcquireAt(%s, %d) = %s: the bound is %s", ms(a.at), a.n, d, a.want)
			}
			got = append(got, fmt.Sprintf("%s n=%d %s", ms(a.at), a.n, d))
		}
		r.linef("x-time-rate:rate=100/1s,burst=3 (AllowN): %s", strings.Join(got, "; "))

		w, err := r.factory.build(mustSpec("x-time-rate:rate=100/1s,burst=3,mode=wait"), fixedClock(0))
		if err != nil {
			return err
		}
		rs, ok := w.(limiters.Reserver)
		if !ok {
			r.failf("x-time-rate:rate=100/1s,burst=3,mode=wait cannot reserve: the bound is waits 0, 0, 0, 10ms, 20ms")
		} else {
			var waits []time.Duration
			for range 5 {
				res := rs.ReserveAt(0, 1, limiters.MaxWaitForever)
				if res.Decision != limiters.Admitted {
					r.failf("x-time-rate:rate=100/1s,burst=3,mode=wait: reservation %d %s: mode=wait admits with a wait", len(waits)+1, res.Decision)
				}
				waits = append(waits, res.Wait)
			}
			want := []time.Duration{0, 0, 0, 10 * msec, 20 * msec}
			if !slices.Equal(waits, want) {
				r.failf("x-time-rate:rate=100/1s,burst=3,mode=wait: 5 reservations at 0 wait %v: the bound is exactly %v", waits, want)
			}
			st := w.Snapshot(0)
			if st.Level < -2-1e-9 || st.Level > -2+1e-9 {
				r.failf("x-time-rate:rate=100/1s,burst=3,mode=wait: %g tokens after 5 reservations: the bound is −2 (two borrowed)", st.Level)
			}
			r.linef("x-time-rate:rate=100/1s,burst=3,mode=wait (ReserveN): 5 at 0 wait %v; %s %g of %g, next free at %s",
				waits, st.LevelName, st.Level, st.LevelMax, ms(st.NextFree))
		}

		var times []time.Duration
		for k := range 10 {
			times = append(times, time.Duration(k)*333_333_333)
		}
		r.linef("")
		r.linef("10 requests, one every 333,333,333ns (rate 3/1s: a token every 333,333,333.3ns), burst 1:")
		for _, tc := range []struct {
			spec string
			want []int
		}{
			{"x-time-rate:rate=3/1s,burst=1", []int{1, 2, 3, 4, 6, 7, 8, 9}},
			{"token-bucket:capacity=1,rate=3/1s", []int{1, 3, 5, 7, 9}},
		} {
			l, err := r.factory.build(mustSpec(tc.spec), fixedClock(0))
			if err != nil {
				return err
			}
			var levels []string
			if tc.spec[0] == 'x' {
				for _, t := range times[:5] {
					levels = append(levels, fmt.Sprintf("%.10g", l.Snapshot(t).Level))
					l.AcquireAt(t, 1)
				}
				l, _ = r.factory.build(mustSpec(tc.spec), fixedClock(0))
			}
			ds := decisions(l, times, 1)
			got := admittedIndexes(ds)
			if !slices.Equal(got, tc.want) {
				r.failf("%s admitted requests %v of 10 every 333,333,333ns: the bound is exactly %v", tc.spec, got, tc.want)
			}
			inSecond := 0
			for i, d := range ds {
				if d == limiters.Admitted && times[i] < sec {
					inSecond++
				}
			}
			r.linef("  %-34s %s: %d admitted, %d in [0, 1s)", tc.spec, decisionList(ds), len(got), inSecond)
			if len(levels) > 0 {
				r.linef("  %-34s tokens before requests 1–5: %s (a deficit under 1ns of refill waits 0)", "", strings.Join(levels, ", "))
			}
		}
		return nil
	},
}
