package engine

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLittlesLawIsExactOnEveryLane checks L = λ·W as the identity it is on a sample path: the
// busy area the recorder sums over time (busy × the gap between events) equals the sum over
// requests of each one's time in service, to the nanosecond, on downstreams with a pool,
// without one, with every service distribution, phases, queueing and retrying clients, and
// read mid-run (RunUntil) as well as at the horizon.
func TestLittlesLawIsExactOnEveryLane(t *testing.T) {
	exp := Distribution{Kind: DistExponential, Mean: 30 * ms}
	downstreams := map[string]*Downstream{
		"pool of 3, exponential": {Pool: 3, Phases: []Phase{{Service: exp}}},
		"unlimited, lognormal":   {Phases: []Phase{{Service: Distribution{Kind: DistLogNormal, Mean: 20 * ms, Sigma: 1.5}}}},
		"pool of 8, phases": {Pool: 8, Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: 10 * ms}},
			{From: 2 * sec, Service: Distribution{Kind: DistUniform, Min: 50 * ms, Max: 400 * ms}}}},
	}
	clients := []Client{{Policy: PolicyDrop}, {Policy: PolicyQueue, QueueSize: 20, Timeout: 100 * ms},
		{Policy: PolicyRetry, MaxAttempts: 3, Delay: 5 * ms}}
	for name, ds := range downstreams {
		for _, c := range clients {
			sc := &Scenario{Name: "little", Seed: 7, Horizon: 4 * sec, Client: c, Downstream: ds,
				Sources: []Source{{Kind: SourcePoisson, Rate: 150}},
				Lanes:   stacks(t, "token-bucket:capacity=10,rate=100/1s", "concurrency:max=4", "leaky-bucket:rate=80/1s")}
			require.NoError(t, sc.Validate())
			for i := range sc.Lanes {
				l, err := NewLane(sc, i)
				require.NoError(t, err)
				for _, at := range []time.Duration{1234567 * time.Microsecond, sc.Horizon} {
					require.NoError(t, l.RunUntil(at))
					checkLittle(t, l, name+" "+string(c.Policy)+" "+l.spec.Label()+" at "+at.String())
				}
			}
		}
	}
}

func checkLittle(t *testing.T, l *Lane, what string) {
	t.Helper()
	res := l.Result()
	s := res.Service
	require.NotNil(t, s, what)
	var residual wideSum
	for i := range l.reqs {
		if r := &l.reqs[i]; r.state == reqInService {
			residual.add(l.now-r.started, 1)
		}
	}
	m := l.rec.svc
	require.Equal(t, m.busyArea, m.served.plus(m.abandoned).plus(residual), "%s: busy area ≠ Σ time in service", what)
	require.Equal(t, res.Totals.Completed, m.completed, what)
	require.Equal(t, s.Started, s.StillInService+res.Totals.Completed+res.Totals.ServerTimeouts,
		"%s: started = completed + timed out at the server + still in service", what)
	require.Equal(t, int64(l.InFlight()), s.StillInService, what)
	require.Positive(t, s.Started, what)
	lambdaW := s.ArrivalRate * s.MeanTime.Seconds()
	require.InEpsilon(t, s.MeanInService, lambdaW, 1e-6, "%s: L = %g, λW = %g", what, s.MeanInService, lambdaW)
}

// TestServiceIsAbsentWithoutADownstream: nothing to measure, nothing reported.
func TestServiceIsAbsentWithoutADownstream(t *testing.T) {
	sc := &Scenario{Name: "none", Horizon: sec, Sources: []Source{{Kind: SourceConstant, Rate: 10}},
		Lanes: stacks(t, "token-bucket:capacity=1,rate=5/1s")}
	require.Nil(t, run(t, sc).Lanes[0].Service)
}

// TestServiceByHand pins Service on a run small enough to work out: constant 100ms service,
// requests at 0, 50ms and 500ms, horizon 520ms. In service: [0,100), [50,150), [500,520)
// so far: area 100+100+20 = 220ms over 520ms, L = 0.4231; λ = 3/0.52s; W = 220ms/3.
func TestServiceByHand(t *testing.T) {
	sc := &Scenario{Name: "hand", Horizon: 520 * ms, Sources: []Source{script(0, 50*ms, 500*ms)},
		Lanes:      stacks(t, "concurrency:max=10"),
		Downstream: &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: 100 * ms}}}}}
	s := run(t, sc).Lanes[0].Service
	require.Equal(t, int64(3), s.Started)
	require.Equal(t, int64(1), s.StillInService)
	require.InDelta(t, 220.0/520, s.MeanInService, 1e-12)
	require.InDelta(t, 3/0.52, s.ArrivalRate, 1e-9)
	require.Equal(t, 220*ms/3, s.MeanTime)
	require.Equal(t, 100*ms, s.MeanCompleted)
}

// TestWideSumIsExactPast64Bits: 3 requests for 2^62ns each overflow an int64; the sum does not.
func TestWideSumIsExactPast64Bits(t *testing.T) {
	var w wideSum
	for range 3 {
		w.add(1, 1<<62)
	}
	require.Equal(t, wideSum{hi: 0, lo: 3 << 62}, w)
	w.add(1<<62, 4)
	require.Equal(t, wideSum{hi: 1, lo: 3 << 62}, w)
	require.Equal(t, 7*math.Pow(2, 62), w.float())
}
