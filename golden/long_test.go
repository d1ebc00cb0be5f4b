package golden

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// longRun is one long randomized run: at least a million requests, seeded, through the
// engine, checked by the same checkers as the golden scenarios but without a golden file.
type longRun struct {
	spec    string
	sources []engine.Source
	horizon time.Duration
	ds      *engine.Downstream
	check   func(s limiters.Spec, adm []Admission, ledger *inFlightLedger, logf logFunc) error
}

type logFunc func(format string, args ...any)

func intervals(adm []Admission, logf logFunc, bound func(L time.Duration) int64, formula string, lengths ...time.Duration) error {
	for _, L := range lengths {
		w, err := CheckInterval(adm, L, bound(L), formula)
		if err != nil {
			return err
		}
		logf("L=%-14s worst %d, bound %d", ms(L), w.Count, bound(L))
	}
	return nil
}

// mixed is Poisson single-permit traffic at rate plus 3-permit requests at rate/10 and an
// on-off source that bursts at 3×rate for 200ms every 2s: clusters, idles and multi-permit
// requests.
func mixed(rate float64) []engine.Source {
	return []engine.Source{
		{Kind: engine.SourcePoisson, Rate: rate},
		{Kind: engine.SourcePoisson, Rate: rate / 10, Permits: 3},
		{Kind: engine.SourceOnOff, Rate: 3 * rate, On: 200 * msec, Off: 1800 * msec, Poisson: true},
	}
}

// checkAs adapts a check of one spec type to longRun.check.
func checkAs[T limiters.Spec](check func(s T, adm []Admission, ledger *inFlightLedger, logf logFunc) error) func(limiters.Spec, []Admission, *inFlightLedger, logFunc) error {
	return func(s limiters.Spec, adm []Admission, ledger *inFlightLedger, logf logFunc) error {
		t, ok := s.(T)
		if !ok {
			return fmt.Errorf("%s is not a %T", s, t)
		}
		return check(t, adm, ledger, logf)
	}
}

var longRuns = []longRun{
	{spec: "token-bucket:capacity=50,rate=1000/1s", sources: mixed(1500), horizon: 500 * sec,
		check: checkAs(func(s limiters.TokenBucketSpec, adm []Admission, _ *inFlightLedger, logf logFunc) error {
			T := emissionInterval(s.Rate.Permits, s.Rate.Window)
			return intervals(adm, logf, func(L time.Duration) int64 { return tokenBucketBound(s.Capacity, T, L) }, "capacity + ⌈L/T⌉ − 1",
				ns, msec, 10*msec, 100*msec, sec, 10*sec)
		})},
	{spec: "leaky-bucket:rate=1000/1s", sources: mixed(1500), horizon: 500 * sec,
		check: checkAs(func(s limiters.LeakyBucketSpec, adm []Admission, _ *inFlightLedger, logf logFunc) error {
			T := emissionInterval(s.Rate.Permits, s.Rate.Window)
			if _, err := CheckSpacing(adm, T); err != nil {
				return err
			}
			return intervals(adm, logf, func(L time.Duration) int64 { return ceilDiv(int64(L), int64(T)) }, "⌈L/T⌉", msec, 100*msec, sec)
		})},
	{spec: "sliding-window:limit=500,window=1s,slots=10", sources: mixed(1500), horizon: 500 * sec,
		check: checkAs(func(s limiters.SlidingWindowSpec, adm []Admission, _ *inFlightLedger, logf logFunc) error {
			slot := s.Window / time.Duration(s.Slots)
			return intervals(adm, logf, func(L time.Duration) int64 { return slidingBound(s.Limit, s.Slots, s.Window, L) }, "limit·⌈k/slots⌉",
				10*msec, s.Window-slot, s.Window-slot+ns, s.Window, 2*s.Window)
		})},
	{spec: "fixed-window:limit=500,window=1s", sources: mixed(1500), horizon: 500 * sec,
		check: checkAs(func(s limiters.FixedWindowSpec, adm []Admission, _ *inFlightLedger, logf logFunc) error {
			if _, err := CheckAligned(adm, s.Window, int64(s.Limit)); err != nil {
				return err
			}
			return intervals(adm, logf, func(L time.Duration) int64 {
				return int64(s.Limit) * (ceilDiv(int64(L)-1, int64(s.Window)) + 1)
			}, "limit·(⌈(L−1ns)/window⌉ + 1)", 10*msec, s.Window, 2*s.Window)
		})},
	{spec: "warm-up:capacity=50,rate=1000/1s,warmup=100s", sources: mixed(1500), horizon: 500 * sec,
		check: checkAs(func(s limiters.WarmUpSpec, adm []Admission, _ *inFlightLedger, logf logFunc) error {
			T := emissionInterval(s.Rate.Permits, s.Rate.Window)
			err := intervals(adm, logf, func(L time.Duration) int64 { return tokenBucketBound(s.Capacity, T, L) }, "capacity + ⌈L/T⌉ − 1",
				ns, msec, 100*msec, sec, 10*sec)
			if err != nil {
				return err
			}
			// While cold it never beats the curve: admitted in [0, a) <= cold burst + ∫ da/I + 1.
			P := s.WarmUp
			for a := 10 * sec; a <= P; a += 10 * sec {
				limit := float64(s.Capacity/3) + warmIntegral(T, P, 0, a) + 1
				if got := Count(adm, 0, a); float64(got) > limit {
					return fmt.Errorf("%d admitted in [0, %s): over the curve's cold burst + ∫ da/I(a) + 1 = %.2f", got, ms(a), limit)
				}
			}
			return nil
		})},
	{spec: "concurrency:max=50", sources: mixed(1500), horizon: 500 * sec,
		ds: &engine.Downstream{Phases: []engine.Phase{{Service: engine.Distribution{Kind: engine.DistExponential, Mean: 40 * msec}}}},
		check: checkAs(func(s limiters.ConcurrencySpec, _ []Admission, ledger *inFlightLedger, logf logFunc) error {
			logf("decisions %d, most in flight %d (bound %d)", ledger.decisions, ledger.most, s.Max)
			return ledger.err
		})},
}

// runLong runs lr over its horizon divided by scale, with limiters from factory, and returns
// the lane's result and what the recorder saw.
func runLong(lr longRun, factory Factory, scale time.Duration) (*engine.Results, *recorder, error) {
	s := mustSpec(lr.spec)
	sc := &engine.Scenario{Name: "long " + lr.spec, Seed: 42, Horizon: lr.horizon / scale, Bins: 1,
		Client: engine.Client{Policy: engine.PolicyDrop}, Sources: lr.sources, Downstream: lr.ds,
		Lanes: []engine.LaneSpec{{Stack: []limiters.Spec{s}}}, Windows: []time.Duration{10 * msec, 900 * msec, sec}}
	rec := &recorder{}
	if c, ok := s.(limiters.ConcurrencySpec); ok {
		rec.ledger.max = c.Max
	}
	sc.Lanes[0].Build = func(clock limiters.Clock) ([]limiters.Limiter, error) {
		l, err := factory.build(s, clock)
		if err != nil {
			return nil, err
		}
		rec.Limiter = l
		if c, ok := l.(concurrencyLimiter); ok {
			return []limiters.Limiter{&recordingBulkhead{recorder: rec, c: c, ledger: &rec.ledger}}, nil
		}
		return []limiters.Limiter{rec}, nil
	}
	res, err := engine.Run(context.Background(), sc, nil)
	return res, rec, err
}

// TestLongRandomizedRuns runs every algorithm for at least a million requests of mixed
// random traffic (seeded) and applies the guarantees' checkers to everything it admitted.
// Under -race, where every simulated event costs about 20 times more, the runs are a tenth as
// long (at least 100,000 requests) so that the package stays within seconds; `go test
// ./golden` without -race runs them in full.
func TestLongRandomizedRuns(t *testing.T) {
	scale, least := time.Duration(1), int64(1_000_000)
	if raceDetector {
		scale, least = 10, 100_000
	}
	for _, lr := range longRuns {
		t.Run(lr.spec, func(t *testing.T) {
			t.Parallel()
			res, rec, err := runLong(lr, nil, scale)
			require.NoError(t, err)
			tot := res.Lanes[0].Totals
			require.GreaterOrEqual(t, tot.Offered, least, "a long run offers at least a million requests (a tenth under -race)")
			t.Logf("%s: offered %d, admitted %d", lr.spec, tot.Offered, tot.Admitted)
			require.Equal(t, tot.AdmittedPermits, rec.permits, "the recorder saw every admission")
			require.NoError(t, lr.check(mustSpec(lr.spec), rec.adm, &rec.ledger, t.Logf))
			// The engine's own streaming meters must agree with the checkers' sweep.
			for _, m := range res.Lanes[0].Windows {
				w := WorstInterval(rec.adm, m.Length)
				require.Equal(t, w.Count, m.MaxAdmitted, "engine meter for L=%s vs the checker's %s", ms(m.Length), w)
				require.Equal(t, time.Duration(-1), m.FirstExceeded, "engine meter for L=%s: bound %d exceeded", ms(m.Length), m.Bound)
			}
		})
	}
}

// The long runs' checkers fail too, on broken limiters (at a tenth of the length).
func TestLongRunCheckersCatchBrokenLimiters(t *testing.T) {
	noRamp := only(func(s limiters.WarmUpSpec, c limiters.Clock) (limiters.Limiter, error) {
		return limiters.NewTokenBucket(s.Capacity, s.Rate, c) // warm from the start: no ramp at all
	})
	forgetful := only(func(s limiters.ConcurrencySpec, c limiters.Clock) (limiters.Limiter, error) {
		inner, err := limiters.NewConcurrency(s.Max)
		return &forgetfulConcurrency{Concurrency: inner}, err
	})
	asFixed := only(func(s limiters.SlidingWindowSpec, c limiters.Clock) (limiters.Limiter, error) {
		return limiters.NewFixedWindow(s.Limit, s.Window, c)
	})
	cases := map[string]struct {
		factory Factory
		want    string
	}{
		"token-bucket:capacity=50,rate=1000/1s":        {tauTooLarge, "over the bound capacity + ⌈L/T⌉ − 1 = 149 for intervals of length 100ms"},
		"leaky-bucket:rate=1000/1s":                    {tauTooLarge, "under the bound of one emission interval T = 1ms"},
		"sliding-window:limit=500,window=1s,slots=10":  {asFixed, "over the bound limit·⌈k/slots⌉ = 500 for intervals of length 900ms"},
		"warm-up:capacity=50,rate=1000/1s,warmup=100s": {noRamp, "over the curve's cold burst + ∫ da/I(a) + 1"},
		"concurrency:max=50":                           {forgetful, "in flight but"},
	}
	for _, lr := range longRuns {
		c, ok := cases[lr.spec]
		if !ok {
			continue
		}
		t.Run(lr.spec, func(t *testing.T) {
			t.Parallel()
			_, rec, err := runLong(lr, c.factory, 10)
			require.NoError(t, err)
			err = lr.check(mustSpec(lr.spec), rec.adm, &rec.ledger, func(string, ...any) {})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			t.Log(err)
		})
	}
}

// concurrencyLimiter is what the recording bulkhead needs of a concurrency limiter.
type concurrencyLimiter interface {
	limiters.Clocked
	Release(n int)
	InFlight() int
}

// recorder wraps a single-stage lane's limiter and records every admission, without the
// trace's per-decision snapshot and sentence: the long runs' checkers read it.
type recorder struct {
	limiters.Limiter
	adm     []Admission
	permits int64
	ledger  inFlightLedger
}

func (r *recorder) AcquireAt(now time.Duration, n int) limiters.Decision {
	d := r.Limiter.AcquireAt(now, n)
	if d == limiters.Admitted {
		if k := len(r.adm); k > 0 && r.adm[k-1].At == now {
			r.adm[k-1].Permits += n
		} else {
			r.adm = append(r.adm, Admission{now, n})
		}
		r.permits += int64(n)
	}
	return d
}

// recordingBulkhead is a recorder for a concurrency limiter: it forwards Release, and checks
// at every decision that the limiter's own in flight is what it was handed and not given back.
type recordingBulkhead struct {
	*recorder
	c      concurrencyLimiter
	ledger *inFlightLedger
	held   int
}

func (b *recordingBulkhead) AcquireAt(now time.Duration, n int) limiters.Decision {
	l := b.ledger
	l.decisions++
	if got := b.c.InFlight(); got != b.held && l.err == nil {
		l.err = fmt.Errorf("at %s the limiter counts %d in flight but %d were admitted and not released", ms(now), got, b.held)
	}
	if got := b.c.Available(); got != l.max-b.held && l.err == nil {
		l.err = fmt.Errorf("at %s the limiter reports %d available with %d in flight: the bound is max − in flight = %d", ms(now), got, b.held, l.max-b.held)
	}
	d := b.recorder.AcquireAt(now, n)
	if d == limiters.Admitted {
		b.held += n
		l.most = max(l.most, b.held)
		if b.held > l.max && l.err == nil {
			l.err = fmt.Errorf("at %s %d in flight: over the bound max = %d", ms(now), b.held, l.max)
		}
	}
	return d
}

func (b *recordingBulkhead) Release(n int) {
	b.c.Release(n)
	b.held -= n
}
