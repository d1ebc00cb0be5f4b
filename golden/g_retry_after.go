package golden

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ratelab/ratelab/headers"
	"github.com/ratelab/ratelab/limiters"
)

// retryAfterSpecs are the specs the retry-after guarantee runs besides every kind's example:
// windows of seconds, so that waits are seconds long and the header's rounding up matters.
var retryAfterSpecs = []string{
	"token-bucket:capacity=3,rate=1/7s",
	"leaky-bucket:rate=2/5s",
	"fixed-window:limit=5,window=7s",
	"sliding-window:limit=5,window=7s,slots=7",
	"warm-up:capacity=4,rate=1/3s,warmup=20s",
	"two-counter:limit=4,window=5s",
	"flash5-fixed:limit=3,window=4s",
	"flash5-token:limit=3,window=4s",
	"resilience4j:limit=2,period=3s",
	"guava-bursty:rate=1/3s",
	"guava-warmup:rate=1/1s,warmup=6s",
	"nginx:rate=12r/m,burst=3,delay=nodelay",
	"nginx:rate=1r/s,burst=5,delay=2",
	"x-time-rate:rate=2/7s,burst=3",
	"sentinel:threshold=3",
	"sentinel:threshold=20,strategy=warmup,warmup=10s",
}

var retryAfterAdmits = &Guarantee{
	ID:         "retry-after-admits",
	Algorithms: retryAfterKinds(),
	Claim: "a client that waits exactly what the limiter says (RetryAfterAt, the Retry-After a server sends) is admitted, " +
		"if nobody else takes permits meanwhile; the exact wait is the first instant it passes, and the header's whole " +
		"seconds, rounded up and never 0, admit it too",
	Scenario: "every kind that can say when (capability retry-after), at its example spec and at one with windows of " +
		"seconds; 400 requests of 1 to 3 permits, now and then a burst of the spec's initial permits (at most 100) at one instant, gaps drawn from 0, up to W/50 and W/10 to 3W for the spec's natural window W (seed 1); at each refusal, " +
		"a fresh limiter replays everything up to it and asks again after the wait",
	Bound: "every refused request passes at refusal + wait and at refusal + Retry-After seconds; it is refused at " +
		"refusal + wait − 1ns when the wait is not 0",
	Checker: "replays of each refusal's prefix on fresh limiters built by the factory",
	run: func(r *run) error {
		var texts []string
		for _, kind := range retryAfterKinds() {
			info, _ := limiters.Lookup(kind)
			texts = append(texts, info.Example)
		}
		texts = append(texts, retryAfterSpecs...)
		for _, text := range texts {
			if err := r.retryAfter(mustSpec(text)); err != nil {
				return err
			}
		}
		return nil
	},
}

func retryAfterKinds() []limiters.Kind {
	var kinds []limiters.Kind
	for _, info := range limiters.Kinds() {
		if slices.Contains(info.Capabilities, limiters.CapRetryAfter) {
			kinds = append(kinds, info.Kind)
		}
	}
	return kinds
}

type raRequest struct {
	at time.Duration
	n  int
}

// retryAfter runs the retry-after check on one spec.
func (r *run) retryAfter(spec limiters.Spec) error {
	rng := rand.New(rand.NewPCG(1, 0))
	clock := &stepClock{}
	live, err := r.factory.build(spec, clock)
	if err != nil {
		return err
	}
	ra, ok := live.(limiters.RetryAfter)
	if !ok {
		r.failf("%s: cannot say when a refused request would pass (no RetryAfterAt): the bound is that it can", spec)
		return nil
	}
	maxN := min(3, live.MaxPermits())
	unit := max(spec.NaturalWindow(), time.Second)
	var reqs []raRequest
	var at time.Duration
	refused, failures := 0, 0
	var longest time.Duration
	secondsSeen := map[int64]int{}
	burst := 0 // requests left in a burst at one instant
	for i := range 400 {
		switch {
		case burst > 0:
			burst--
		case rng.IntN(25) == 0:
			burst = min(spec.InitialPermits(), 100)
		}
		gap := rng.IntN(3)
		if burst > 0 {
			gap = 0
		}
		switch gap {
		case 1:
			at += 1 + time.Duration(rng.Int64N(int64(unit/50)))
		case 2:
			at += unit/10 + time.Duration(rng.Int64N(int64(3*unit-unit/10)))
		}
		n := 1 + rng.IntN(maxN)
		clock.now = at
		reqs = append(reqs, raRequest{at, n})
		if live.AcquireAt(at, n) != limiters.Rejected {
			continue
		}
		refused++
		wait, ok := ra.RetryAfterAt(at, n)
		if !ok {
			r.failf("%s: request %d (%d at %s) refused, and RetryAfterAt cannot say when: the bound is a wait", spec, i+1, n, ms(at))
			failures++
			continue
		}
		longest = max(longest, wait)
		secs := headers.RetryAfterSeconds(wait)
		secondsSeen[secs]++
		for _, probe := range []struct {
			after time.Duration
			want  limiters.Decision
			what  string
		}{
			{wait, limiters.Admitted, "the wait"},
			{time.Duration(secs) * time.Second, limiters.Admitted, fmt.Sprintf("Retry-After: %d", secs)},
			{wait - 1, limiters.Rejected, "1ns before the wait"},
		} {
			if probe.after < 0 || (probe.want == limiters.Rejected && wait == 0) {
				continue
			}
			got, err := r.replayThen(spec, reqs, at+probe.after, n)
			if err != nil {
				return err
			}
			if got != probe.want && failures < 5 {
				r.failf("%s: request %d (%d at %s) refused with a wait of %s; asked again after %s (%s) it was %s: the bound is %s",
					spec, i+1, n, ms(at), wait, probe.what, probe.after, got, probe.want)
			}
			if got != probe.want {
				failures++
			}
		}
	}
	var secs []int64
	for s := range secondsSeen {
		secs = append(secs, s)
	}
	slices.Sort(secs)
	hist := ""
	for _, s := range secs {
		hist += fmt.Sprintf(" %ds×%d", s, secondsSeen[s])
	}
	r.linef("%-44s %3d refused of 400, longest wait %-12s Retry-After%s", spec, refused, longest, hist)
	return nil
}

// replayThen builds a fresh limiter of spec, makes reqs on it, and asks for n at then.
func (r *run) replayThen(spec limiters.Spec, reqs []raRequest, then time.Duration, n int) (limiters.Decision, error) {
	clock := &stepClock{}
	l, err := r.factory.build(spec, clock)
	if err != nil {
		return 0, err
	}
	for _, q := range reqs {
		clock.now = q.at
		l.AcquireAt(q.at, q.n)
	}
	clock.now = then
	return l.AcquireAt(then, n), nil
}

// stepClock is a clock the check sets before each call.
type stepClock struct{ now time.Duration }

func (c *stepClock) Now() time.Duration { return c.now }
