package golden

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// nginxBurstAt sends n requests at t to an nginx limiter whose callers wait as nginx holds
// them (ReserveAt with the spec's CallerWait) and returns the holds of those it served and
// how many it refused (503).
func nginxBurstAt(l limiters.Limiter, s limiters.Spec, t time.Duration, n int) (holds []time.Duration, refused int, err error) {
	rs, ok := l.(limiters.Reserver)
	if !ok {
		return nil, 0, fmt.Errorf("%s cannot hold requests (no reserve capability)", s)
	}
	wait := time.Duration(0)
	if w, ok := s.(limiters.Waiting); ok {
		wait = w.CallerWait()
	}
	for range n {
		if r := rs.ReserveAt(t, 1, wait); r.Decision == limiters.Admitted {
			holds = append(holds, r.Wait)
		} else {
			refused++
		}
	}
	return holds, refused, nil
}

func msList(d []time.Duration) string {
	parts := make([]string, len(d))
	for i, v := range d {
		parts[i] = ms(v)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

var nginxBurst = &Guarantee{
	ID:         "nginx-burst",
	Algorithms: []limiters.Kind{peers.KindNginx},
	Claim: "NGINX limit_req at 10r/s, burst=5: of ten requests at once, with delay=2 three pass at once, three are held " +
		"100, 200 and 300ms and four get 503; with nodelay six (burst + 1) pass and four get 503; after an idle that drains " +
		"the excess exactly burst + 1 pass at once again, then one per 100ms; and 1r/m is kept as 16 milli-requests per " +
		"second, one request every 62.5s, not 60s",
	Scenario: "direct calls, each caller waiting as long as nginx holds it (ReserveAt with the spec's CallerWait): " +
		"nginx:rate=10r/s,burst=5,delay=2 and nginx:rate=10r/s,burst=5,delay=nodelay, 10 requests at 0; the nodelay one again " +
		"7 at 10s and 2 at 10.1s; nginx:rate=1r/m: one request at 0, then one at 60s, 62.499s and 62.5s",
	Bound: "delay=2: holds exactly [0 0 0 100ms 200ms 300ms], 4 refused; nodelay: 6 at once, 4 refused; after 10s idle: " +
		"6 at once, 1 refused; at 10.1s: 1 at once, 1 refused; 1r/m: refused at 60s and 62.499s, admitted at 62.5s",
	Checker: "the holds and refusals of each burst, and each 1r/m decision, against the bound",
	run: func(r *run) error {
		type burst struct {
			at     time.Duration
			n      int
			holds  []time.Duration
			refuse int
		}
		for _, tc := range []struct {
			spec    string
			bursts  []burst
			meaning string
		}{
			{"nginx:rate=10r/s,burst=5,delay=2", []burst{
				{0, 10, []time.Duration{0, 0, 0, 100 * msec, 200 * msec, 300 * msec}, 4}}, "delay=2"},
			{"nginx:rate=10r/s,burst=5,delay=nodelay", []burst{
				{0, 10, []time.Duration{0, 0, 0, 0, 0, 0}, 4},
				{10 * sec, 7, []time.Duration{0, 0, 0, 0, 0, 0}, 1},
				{10*sec + 100*msec, 2, []time.Duration{0}, 1}}, "nodelay"},
		} {
			s := mustSpec(tc.spec)
			l, err := r.factory.build(s, fixedClock(0))
			if err != nil {
				return err
			}
			for _, b := range tc.bursts {
				holds, refused, err := nginxBurstAt(l, s, b.at, b.n)
				if err != nil {
					return err
				}
				if msList(holds) != msList(b.holds) || refused != b.refuse {
					r.failf("%s: %d at %s: served with holds %s and refused %d: the bound is exactly holds %s and %d refused",
						s, b.n, ms(b.at), msList(holds), refused, msList(b.holds), b.refuse)
				}
				r.linef("%-40s %2d at %-8s served %d, holds %s, refused %d", s, b.n, ms(b.at), len(holds), msList(holds), refused)
			}
		}
		const slow = "nginx:rate=1r/m"
		s := mustSpec(slow)
		l, err := r.factory.build(s, fixedClock(0))
		if err != nil {
			return err
		}
		var got []string
		for _, step := range []struct {
			at   time.Duration
			want limiters.Decision
		}{{0, limiters.Admitted}, {60 * sec, limiters.Rejected}, {62499 * msec, limiters.Rejected}, {62500 * msec, limiters.Admitted}} {
			d := l.AcquireAt(step.at, 1)
			if d != step.want {
				r.failf("%s: a request at %s was %s: the bound is %s (1r/m is 16 milli-requests per second: one every 62.5s)", s, ms(step.at), d, step.want)
			}
			got = append(got, fmt.Sprintf("%s %s", ms(step.at), d))
		}
		r.linef("%-40s %s", s, strings.Join(got, ", "))
		return nil
	},
}
