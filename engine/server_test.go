package engine

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
)

func constant(d time.Duration) Distribution { return Distribution{Kind: DistConstant, Mean: d} }

// serverScenario is requests at the given times through an unlimited bulkhead to a server.
func serverScenario(srv Server, phases []Phase, horizon time.Duration, times ...time.Duration) *Scenario {
	return &Scenario{Name: "server", Seed: 1, Horizon: horizon, Sources: []Source{script(times...)},
		Lanes:      []LaneSpec{{Stack: mustParse("concurrency:max=1000000")}},
		Downstream: &Downstream{Server: &srv, Phases: phases}}
}

func mustParse(text string) []limiters.Spec {
	st, err := ParseStack(text)
	if err != nil {
		panic(err)
	}
	return st
}

// completions is when each traced request completed or failed, by request number.
func completions(t *testing.T, sc *Scenario) map[uint64]string {
	recs, _ := traced(t, sc, 0)
	out := map[uint64]string{}
	for _, r := range recs {
		switch r.Outcome {
		case OutcomeCompleted:
			out[r.Request] = "done " + r.At.String()
		case OutcomeFailed:
			out[r.Request] = "failed " + r.At.String()
		}
	}
	return out
}

// TestServerByHand pins each discipline on requests small enough to work out.
func TestServerByHand(t *testing.T) {
	ten := []Phase{{Service: constant(10 * ms)}}
	cases := []struct {
		name  string
		srv   Server
		times []time.Duration
		want  map[uint64]string
	}{
		// Two requests of 10ms on one core share it: each gets half, both finish at 20ms.
		{"ps shares", Server{Cores: 1}, []time.Duration{0, 0}, map[uint64]string{1: "done 20ms", 2: "done 20ms"}},
		// FIFO: the first has the core for 10ms, the second waits for it.
		{"fifo queues", Server{Cores: 1, Discipline: DisciplineFIFO}, []time.Duration{0, 0},
			map[uint64]string{1: "done 10ms", 2: "done 20ms"}},
		// Two cores, two requests: no sharing.
		{"ps two cores", Server{Cores: 2}, []time.Duration{0, 0}, map[uint64]string{1: "done 10ms", 2: "done 10ms"}},
		// The second arrives at 5ms: the first has 5ms of work left, now at half speed → 15ms;
		// the second then has 5 of 10 done and the core alone → 20ms.
		{"ps overlap", Server{Cores: 1}, []time.Duration{0, 5 * ms}, map[uint64]string{1: "done 15ms", 2: "done 20ms"}},
		// Network: +4ms on every answer.
		{"network", Server{Cores: 1, Network: 4 * ms}, []time.Duration{0, 0}, map[uint64]string{1: "done 24ms", 2: "done 24ms"}},
		// Timeout 15ms: sharing makes both need 20ms; both fail at 15ms.
		{"timeout", Server{Cores: 1, Timeout: 15 * ms}, []time.Duration{0, 0}, map[uint64]string{1: "failed 15ms", 2: "failed 15ms"}},
		// FIFO with a 15ms timeout: the first is answered at 10ms, the second fails at 15ms.
		{"fifo timeout", Server{Cores: 1, Discipline: DisciplineFIFO, Timeout: 15 * ms}, []time.Duration{0, 0},
			map[uint64]string{1: "done 10ms", 2: "failed 15ms"}},
		// Answered at 10ms, but 10ms + a network of 6ms passes a 15ms deadline: it fails at 15ms.
		{"late answer", Server{Cores: 1, Network: 6 * ms, Timeout: 15 * ms}, []time.Duration{0},
			map[uint64]string{1: "failed 15ms"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := serverScenario(c.srv, ten, sec, c.times...)
			require.NoError(t, sc.Validate())
			require.Equal(t, c.want, completions(t, sc))
		})
	}
}

// TestServerPhasesByHand: a brown-out, a black hole and recovery, worked out.
func TestServerPhasesByHand(t *testing.T) {
	// Two cores until 100ms, then one (brown-out): two 40ms requests at 80ms have 20ms of
	// work each by 100ms, then share one core: 20ms each at half speed → 140ms.
	sc := serverScenario(Server{Cores: 2}, []Phase{{Service: constant(40 * ms)}, {From: 100 * ms, Cores: 1, Service: constant(40 * ms)}},
		sec, 80*ms, 80*ms)
	require.Equal(t, map[uint64]string{1: "done 140ms", 2: "done 140ms"}, completions(t, sc))

	// A black hole from 5ms to 30ms freezes the work: a 10ms request at 0 has 5ms done at
	// 5ms; one arriving at 10ms (inside the hole) waits there with it. From 30ms they share
	// the core: the first's 5ms left take 10ms → 40ms; the second has 5ms done by then and
	// the core alone for its other 5ms → 45ms, inside its 50ms timeout.
	phases := []Phase{{Service: constant(10 * ms)}, {From: 5 * ms, BlackHole: true, Service: constant(10 * ms)},
		{From: 30 * ms, Service: constant(10 * ms)}}
	sc = serverScenario(Server{Cores: 1, Timeout: 50 * ms}, phases, sec, 0, 10*ms)
	require.Equal(t, map[uint64]string{1: "done 40ms", 2: "done 45ms"}, completions(t, sc))
	// The same hole with a 20ms timeout: both callers give up inside it.
	sc = serverScenario(Server{Cores: 1, Timeout: 20 * ms}, phases, sec, 0, 10*ms)
	require.Equal(t, map[uint64]string{1: "failed 20ms", 2: "failed 30ms"}, completions(t, sc))
}

// mm is an open Poisson stream at lambda per second into a server with exponential (or given)
// demand, every request admitted: a queueing-theory check.
func mm(srv Server, lambda float64, service Distribution, horizon time.Duration, seed uint64) *Scenario {
	return &Scenario{Name: "mm", Seed: seed, Horizon: horizon, Bins: 1,
		Sources:    []Source{{Kind: SourcePoisson, Rate: lambda}},
		Lanes:      []LaneSpec{{Stack: mustParse("concurrency:max=1000000")}},
		Downstream: &Downstream{Server: &srv, Phases: []Phase{{Service: service}}}}
}

// TestServerMatchesQueueingTheory runs long seeded open streams against the closed forms:
//
//	M/M/1-PS and M/M/1-FIFO, λ = 80/s, μ = 100/s:  W = 1/(μ−λ) = 50ms
//	M/D/1-PS (PS is insensitive to the demand's distribution): W = S/(1−ρ) = 50ms
//	M/M/2-FIFO, λ = 150/s, μ = 100/s per core:      W = 1/μ + C(2, 1.5)/(2μ−λ) = 22.857ms
//	                                                 (Erlang C: C = 0.642857)
//
// over 3 seeds of 20,000s each (1.6M to 3M requests per run; about 14s in all). At ρ = 0.8
// the sample mean of a response time is autocorrelated over many busy periods (over 2,000s
// runs the error reached 4%): over 20,000s the twelve runs land within 1.44% of the formula
// (M/M/1-PS: −1.40%, −0.03%, −0.59%; M/M/1-FIFO −1.42% to +0.11%; M/D/1-PS −1.44% to
// +0.38%; M/M/2-FIFO −0.63% to +0.01%); the test allows 2%. Little's law holds on each run
// exactly (checkLittle). Under -race the runs are 500s and only the identities are checked.
func TestServerMatchesQueueingTheory(t *testing.T) {
	if testing.Short() {
		t.Skip("long runs")
	}
	const tolerance = 0.02
	exp := Distribution{Kind: DistExponential, Mean: 10 * ms}
	erlangC := 0.642857142857 // c = 2, a = λ/μ = 1.5: (a²/2!)(1/(1−ρ)) / (1 + a + (a²/2!)(1/(1−ρ))), ρ = 0.75
	cases := []struct {
		name   string
		srv    Server
		lambda float64
		dist   Distribution
		want   float64 // seconds
	}{
		{"M/M/1-PS", Server{Cores: 1}, 80, exp, 1.0 / (100 - 80)},
		{"M/M/1-FIFO", Server{Cores: 1, Discipline: DisciplineFIFO}, 80, exp, 1.0 / (100 - 80)},
		{"M/D/1-PS", Server{Cores: 1}, 80, constant(10 * ms), 0.010 / (1 - 0.8)},
		{"M/M/2-FIFO", Server{Cores: 2, Discipline: DisciplineFIFO}, 150, exp, 0.010 + erlangC/(200-150)},
	}
	horizon := 20000 * sec
	if raceDetector {
		horizon = 500 * sec // the claim is checked without -race; under it, the code paths
	}
	for _, c := range cases {
		for seed := uint64(1); seed <= 3; seed++ {
			sc := mm(c.srv, c.lambda, c.dist, horizon, seed)
			require.NoError(t, sc.Validate())
			l, err := NewLane(sc, 0)
			require.NoError(t, err)
			require.NoError(t, l.RunUntil(sc.Horizon))
			checkLittle(t, l, fmt.Sprintf("%s seed %d", c.name, seed))
			got := l.Result().Service.MeanCompleted.Seconds()
			rel := (got - c.want) / c.want
			t.Logf("%-10s seed %d: W = %.3fms, theory %.3fms, error %+.2f%%", c.name, seed, got*1e3, c.want*1e3, 100*rel)
			if !raceDetector {
				require.Less(t, math.Abs(rel), tolerance, "%s seed %d: W = %v, theory %v", c.name, seed, got, c.want)
			}
		}
	}
}

// TestLittlesLawOnServers: the identity holds on servers of every discipline, with
// timeouts, a black hole, an error burst and a network, read mid-run and at the horizon.
func TestLittlesLawOnServers(t *testing.T) {
	exp := Distribution{Kind: DistExponential, Mean: 8 * ms}
	phases := []Phase{{Service: exp}, {From: sec, Cores: 1, Service: exp}, {From: 2 * sec, BlackHole: true, Service: exp},
		{From: 2500 * ms, Errors: 0.3, Service: Distribution{Kind: DistLogNormal, Mean: 5 * ms, Sigma: 1}}, {From: 3 * sec, Service: exp}}
	for _, srv := range []Server{{Cores: 2, Timeout: 200 * ms}, {Cores: 2, Discipline: DisciplineFIFO, Timeout: 150 * ms, Network: 3 * ms},
		{Cores: 3, Timeout: 80 * ms, Network: 20 * ms}} {
		sc := &Scenario{Name: "little", Seed: 3, Horizon: 4 * sec, Client: Client{Policy: PolicyQueue, QueueSize: 10, Timeout: 50 * ms},
			Sources: []Source{{Kind: SourcePoisson, Rate: 300}},
			Lanes:   stacks(t, "concurrency:max=12", "concurrency:max=100000"), Downstream: &Downstream{Server: &srv, Phases: phases}}
		require.NoError(t, sc.Validate())
		for i := range sc.Lanes {
			l, err := NewLane(sc, i)
			require.NoError(t, err)
			for _, at := range []time.Duration{2100 * ms, 2700 * ms, sc.Horizon} {
				require.NoError(t, l.RunUntil(at))
				checkLittle(t, l, fmt.Sprintf("%+v lane %d at %v", srv, i, at))
			}
			tot := l.Result().Totals
			require.Positive(t, tot.ServerTimeouts, "the black hole times requests out")
			require.Positive(t, tot.ServerErrors, "the error burst fails some")
			require.Equal(t, tot.Failed, tot.ServerTimeouts+tot.ServerErrors)
		}
	}
}

// TestServerErrorBurstFraction: 30% of the requests admitted in an error burst fail at once.
func TestServerErrorBurstFraction(t *testing.T) {
	sc := mm(Server{Cores: 4}, 1000, constant(ms), 10*sec, 1)
	sc.Downstream.Phases[0].Errors = 0.3
	res := run(t, sc).Lanes[0]
	frac := float64(res.Totals.ServerErrors) / float64(res.Totals.Admitted)
	require.InDelta(t, 0.3, frac, 0.01, "%d of %d", res.Totals.ServerErrors, res.Totals.Admitted)
}

// TestServerIsDeterministic: a seed gives the same run twice.
func TestServerIsDeterministic(t *testing.T) {
	sc := func() *Scenario {
		s := mm(Server{Cores: 2, Timeout: 30 * ms}, 250, Distribution{Kind: DistLogNormal, Mean: 6 * ms, Sigma: 1}, 20*sec, 9)
		s.Downstream.Phases = append(s.Downstream.Phases, Phase{From: 5 * sec, Cores: 1, Service: constant(9 * ms)})
		return s
	}
	a, b := run(t, sc()).Lanes[0], run(t, sc()).Lanes[0]
	require.Equal(t, a.Totals, b.Totals)
	require.Equal(t, a.Service, b.Service)
}

// TestServerAllocatesNothingPerEvent: once its slices have grown, a server lane runs events
// without allocating.
func TestServerAllocatesNothingPerEvent(t *testing.T) {
	sc := mm(Server{Cores: 2, Timeout: 40 * ms, Network: ms}, 150, Distribution{Kind: DistExponential, Mean: 10 * ms}, 1000*sec, 2)
	sc.Downstream.Phases = append(sc.Downstream.Phases, Phase{From: 500 * sec, Service: constant(12 * ms)})
	l, err := NewLane(sc, 0)
	require.NoError(t, err)
	require.NoError(t, l.RunUntil(20*sec)) // warm up: the slices reach their size
	at := 20 * sec
	allocs := testing.AllocsPerRun(50, func() {
		at += sec
		_ = l.RunUntil(at)
	})
	require.Zero(t, allocs)
}

func TestServerValidation(t *testing.T) {
	ok := Phase{Service: constant(ms)}
	cases := []struct {
		ds   Downstream
		want string
	}{
		{Downstream{Server: &Server{}, Phases: []Phase{ok}}, "downstream.server.cores: must be at least 1"},
		{Downstream{Server: &Server{Cores: 1, Discipline: "lifo"}, Phases: []Phase{ok}}, `downstream.server.discipline: unknown discipline "lifo"`},
		{Downstream{Server: &Server{Cores: 1, Timeout: -1}, Phases: []Phase{ok}}, "downstream.server.timeout: must not be negative"},
		{Downstream{Server: &Server{Cores: 1}, Phases: []Phase{{BlackHole: true, Service: constant(ms)}}}, "downstream.phases[0].black_hole: needs downstream.server.timeout"},
		{Downstream{Server: &Server{Cores: 1}, Phases: []Phase{{Errors: 1.5, Service: constant(ms)}}}, "downstream.phases[0].errors: must be a fraction in [0, 1]"},
		{Downstream{Phases: []Phase{{Cores: 2, Service: constant(ms)}}}, "downstream.phases[0].cores: is for a server downstream"},
	}
	for _, c := range cases {
		sc := mm(Server{Cores: 1}, 10, constant(ms), sec, 1)
		ds := c.ds
		sc.Downstream = &ds
		err := sc.Validate()
		require.Error(t, err)
		require.Contains(t, err.Error(), c.want)
	}
}

// TestReferenceConcurrency: c·(S + network)/S per phase.
func TestReferenceConcurrency(t *testing.T) {
	d := &Downstream{Server: &Server{Cores: 4, Network: 10 * ms}, Phases: []Phase{{Service: constant(10 * ms)},
		{From: sec, Cores: 2, Service: constant(40 * ms)}, {From: 2 * sec, BlackHole: true, Service: constant(ms)}}}
	require.InDelta(t, 8.0, d.ReferenceConcurrency(0), 1e-9)                 // 4·(10+10)/10
	require.InDelta(t, 2.5, d.ReferenceConcurrency(sec), 1e-9)               // 2·(40+10)/40
	require.Zero(t, d.ReferenceConcurrency(3*sec))                           // no answers
	require.Zero(t, (&Downstream{Phases: d.Phases}).ReferenceConcurrency(0)) // a pool has no reference
}
