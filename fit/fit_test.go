package fit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

type req struct {
	at int64
	n  int
}

// randomTrace is n requests with gaps of 0 to maxGap ns (ties included) and 1 to maxN permits.
func randomTrace(rng *rand.Rand, n int, maxGap int64, maxN int) []req {
	out := make([]req, n)
	at := int64(0)
	for i := range out {
		if rng.IntN(4) > 0 {
			at += rng.Int64N(maxGap + 1)
		}
		out[i] = req{at: at, n: 1 + rng.IntN(maxN)}
	}
	return out
}

func csvOf(trace []req) string {
	var b strings.Builder
	b.WriteString("t_ns,permits\n")
	for _, r := range trace {
		fmt.Fprintf(&b, "%d,%d\n", r.at, r.n)
	}
	return b.String()
}

// points is σ at each rate, from one pass of the curve.
func points(t *testing.T, trace []req, rates ...limiters.Rate) []Point {
	t.Helper()
	c := newCurve(rates)
	for _, r := range trace {
		c.add(r.at, int64(r.n))
	}
	return c.points()
}

// bruteNeed is max over i ≤ j of A[i..j]·T − (t_j − t_i): every pair of requests, O(n²).
func bruteNeed(trace []req, T int64) int64 {
	best := int64(0)
	for i := range trace {
		sum := int64(0)
		for j := i; j < len(trace); j++ {
			sum += int64(trace[j].n)
			best = max(best, sum*T-(trace[j].at-trace[i].at))
		}
	}
	return best
}

// The package doc's example: 100/s, 5 requests at 0 and 3 at 15ms need σ = 7; σ* = 6.5.
func TestTheDocExample(t *testing.T) {
	trace := []req{{0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}, {15e6, 1}, {15e6, 1}, {15e6, 1}}
	p := points(t, trace, limiters.PerSecond(100))[0]
	assert.EqualValues(t, 7, p.Capacity)
	assert.Equal(t, 6.5, p.Burst)
	assert.Equal(t, 65*time.Millisecond, p.Need)
	assert.Equal(t, time.Duration(0), p.From)
	assert.Equal(t, 15*time.Millisecond, p.To)
	assert.EqualValues(t, 8, p.Permits)
}

// σ(ρ) equals the brute-force maximum over all pairs, on random traces and rates, including
// rates whose T is rounded up (3/1s: T = 333,333,334ns).
func TestSigmaIsTheBruteForceMaximum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rates := []limiters.Rate{limiters.PerSecond(3), limiters.PerSecond(100), {Permits: 7, Window: 100 * time.Millisecond},
		limiters.PerSecond(1000), {Permits: 1, Window: time.Nanosecond}, {Permits: 1, Window: time.Hour}}
	for trial := range 300 {
		trace := randomTrace(rng, 1+rng.IntN(60), int64(rng.IntN(4)+1)*int64(time.Millisecond)*int64(rng.IntN(50)+1), 1+rng.IntN(5))
		for _, p := range points(t, trace, rates...) {
			T := int64(p.Interval)
			need := bruteNeed(trace, T)
			require.Equal(t, time.Duration(need), p.Need, "trial %d at %s", trial, p.RateText)
			require.EqualValues(t, (need+T-1)/T, p.Capacity, "trial %d at %s", trial, p.RateText)
			// The worst burst's permits over its span are the need.
			require.Equal(t, p.Permits*T-int64(p.To-p.From), need, "trial %d at %s", trial, p.RateText)
		}
	}
}

// Replayed through ratelab's own token bucket (engine.Replay), capacity σ admits every request
// and capacity σ − 1 refuses at least one.
func TestReplayAdmitsAllAtSigmaAndRefusesBelow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rates := []limiters.Rate{limiters.PerSecond(3), limiters.PerSecond(50), limiters.PerSecond(333), {Permits: 9, Window: 70 * time.Millisecond}}
	checked := 0
	for trial := range 100 {
		trace := randomTrace(rng, 1+rng.IntN(300), int64(rng.IntN(40)+1)*int64(time.Millisecond), 1+rng.IntN(4))
		data := csvOf(trace)
		for _, p := range points(t, trace, rates...) {
			var stacks [][]limiters.Spec
			texts := []string{fmt.Sprintf("token-bucket:capacity=%d,rate=%s", p.Capacity, p.RateText)}
			if p.Capacity > 1 {
				texts = append(texts, fmt.Sprintf("token-bucket:capacity=%d,rate=%s", p.Capacity-1, p.RateText))
			}
			for _, text := range texts {
				st, err := engine.ParseStack(text)
				require.NoError(t, err)
				stacks = append(stacks, st)
			}
			sum, err := engine.Replay(strings.NewReader(data), io.Discard, stacks)
			require.NoError(t, err)
			require.Equal(t, sum.Rows, sum.Admitted[0], "trial %d: %s admits everything", trial, texts[0])
			if len(texts) > 1 {
				require.Less(t, sum.Admitted[1], sum.Rows, "trial %d: %s refuses something", trial, texts[1])
				checked++
			}
		}
	}
	assert.Greater(t, checked, 300)
}

// σ*(ρ), the real-valued burst, is convex and non-increasing in ρ = 1/T (checked exactly, in
// rationals); the capacity σ = ⌈σ*⌉ is non-increasing but, being a ceiling, not always
// convex: the test finds a trace where it is not.
func TestSigmaIsConvexAndNonIncreasing(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var rates []limiters.Rate
	for p := 20; p <= 2000; p += 37 {
		rates = append(rates, limiters.PerSecond(p))
	}
	rates = append(rates, limiters.PerSecond(3), limiters.PerSecond(7), limiters.Rate{Permits: 1, Window: 3 * time.Millisecond})
	nonConvexCeiling := 0
	for trial := range 40 {
		trace := randomTrace(rng, 50+rng.IntN(400), int64(rng.IntN(20)+1)*int64(time.Millisecond), 1+rng.IntN(3))
		rep, err := Fit(context.Background(), Text("random", csvOf(trace)), Options{Steps: 5, RefusePPM: -1})
		require.NoError(t, err)
		curve := rep.Curve
		curve = append(curve, points(t, trace, rates...)...)
		sortByRate(curve)
		rho := func(p Point) *big.Rat { return big.NewRat(1, int64(p.Interval)) }
		burst := func(p Point) *big.Rat { return big.NewRat(int64(p.Need), int64(p.Interval)) }
		for i := 1; i < len(curve); i++ {
			a, b := curve[i-1], curve[i]
			if a.Interval == b.Interval {
				continue
			}
			require.GreaterOrEqual(t, a.Capacity, b.Capacity, "trial %d: σ(%s) ≥ σ(%s)", trial, a.RateText, b.RateText)
			require.True(t, burst(a).Cmp(burst(b)) >= 0, "trial %d: σ*(%s) ≥ σ*(%s)", trial, a.RateText, b.RateText)
		}
		for i := 2; i < len(curve); i++ {
			a, b, c := curve[i-2], curve[i-1], curve[i]
			if a.Interval == b.Interval || b.Interval == c.Interval {
				continue
			}
			// σ*(b) ≤ σ*(a)·(ρc − ρb)/(ρc − ρa) + σ*(c)·(ρb − ρa)/(ρc − ρa)
			span := new(big.Rat).Sub(rho(c), rho(a))
			wa := new(big.Rat).Quo(new(big.Rat).Sub(rho(c), rho(b)), span)
			wc := new(big.Rat).Quo(new(big.Rat).Sub(rho(b), rho(a)), span)
			chord := new(big.Rat).Add(new(big.Rat).Mul(wa, burst(a)), new(big.Rat).Mul(wc, burst(c)))
			require.True(t, burst(b).Cmp(chord) <= 0, "trial %d: σ* convex at %s", trial, b.RateText)
			ceilChord := new(big.Rat).Add(new(big.Rat).Mul(wa, new(big.Rat).SetInt64(a.Capacity)), new(big.Rat).Mul(wc, new(big.Rat).SetInt64(c.Capacity)))
			if new(big.Rat).SetInt64(b.Capacity).Cmp(ceilChord) > 0 {
				nonConvexCeiling++
			}
		}
	}
	assert.Greater(t, nonConvexCeiling, 0, "the integer capacity, a ceiling of a convex curve, is not convex everywhere")
}

func sortByRate(curve []Point) {
	for i := 1; i < len(curve); i++ {
		for j := i; j > 0 && curve[j].Interval > curve[j-1].Interval; j-- {
			curve[j], curve[j-1] = curve[j-1], curve[j]
		}
	}
}

// With one permit per request, refusals never grow with capacity (a larger bucket's schedule
// stays at most one T ahead of a smaller one's), which makes the relaxed search's answer the
// smallest. With larger requests they can: a larger bucket admits a small request that a
// smaller one refuses, and its schedule then refuses a larger one that the smaller admits. The
// test finds such traces, in permits and in requests, so that the claim stays honest.
func TestRefusalsFallWithCapacity(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	rises := map[string]int{}
	for trial := range 400 {
		maxN := 1 + trial%2*rng.IntN(6)
		trace := randomTrace(rng, 1+rng.IntN(200), int64(rng.IntN(30)+1)*int64(time.Millisecond), maxN)
		rate := limiters.PerSecond(20 + rng.IntN(300))
		p := points(t, trace, rate)[0]
		var caps []int64
		for c := int64(1); c <= p.Capacity; c++ {
			caps = append(caps, c)
		}
		refused, requests, err := Refusals(context.Background(), Text("random", csvOf(trace)), rate, caps)
		require.NoError(t, err)
		for i := 1; i < len(refused); i++ {
			if maxN == 1 {
				require.LessOrEqual(t, refused[i], refused[i-1], "trial %d at %s: capacity %d refuses more than %d", trial, rate, caps[i], caps[i-1])
			}
			if refused[i] > refused[i-1] {
				rises["permits"]++
			}
			if requests[i] > requests[i-1] {
				rises["requests"]++
			}
		}
		require.Zero(t, refused[len(refused)-1], "σ refuses nothing")
	}
	assert.Positive(t, rises["permits"], "with requests of several permits, a larger bucket can refuse more permits")
	assert.Positive(t, rises["requests"], "and more requests")
}

// The relaxed search's capacity is within the target and the one below it is not; with one
// permit per request (refusals monotone) it is the brute-force smallest over every capacity.
// The replay agrees with its count.
func TestRelaxedIsTheSmallestWithinTheTarget(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 80 {
		maxN := 1 + trial%2*2
		trace := randomTrace(rng, 20+rng.IntN(400), int64(rng.IntN(10)+1)*int64(time.Millisecond), maxN)
		ppm := []int64{0, 1000, 10000, 50000, 250000}[trial%5]
		src := Text("random", csvOf(trace))
		rep, err := Fit(context.Background(), src, Options{RefusePPM: ppm, Steps: 8})
		require.NoError(t, err)
		p, r := rep.Recommended(), rep.Relaxed
		var caps []int64
		for c := int64(1); c <= p.Capacity; c++ {
			caps = append(caps, c)
		}
		refused, _, err := Refusals(context.Background(), src, p.Rate, caps)
		require.NoError(t, err)
		require.True(t, within(refused[r.Capacity-1], rep.Stats.Permits, ppm))
		require.Equal(t, refused[r.Capacity-1], r.RefusedPermits)
		if r.Capacity > 1 {
			require.Equal(t, refused[r.Capacity-2], r.BelowPermits)
			require.False(t, within(r.BelowPermits, rep.Stats.Permits, ppm), "trial %d: capacity %d − 1 is not within", trial, r.Capacity)
		}
		if maxN == 1 {
			want := p.Capacity
			for i, c := range caps {
				if within(refused[i], rep.Stats.Permits, ppm) {
					want = c
					break
				}
			}
			require.Equal(t, want, r.Capacity, "trial %d, %d ppm at %s", trial, ppm, p.RateText)
		}
	}
}

// Each kind's answer admits everything when replayed, and is the least: one permit less (the
// window kinds' limit, the leaky bucket's T one ns longer) refuses something.
func TestEveryAnswerAdmitsAllAndIsTheLeast(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	leakyApplied := 0
	defer func() { assert.GreaterOrEqual(t, leakyApplied, 5, "the leaky bucket's answer was checked") }()
	for trial := range 60 {
		maxN := 1 + rng.IntN(3)
		if trial%3 == 0 {
			maxN = 1
		}
		trace := randomTrace(rng, 20+rng.IntN(500), int64(rng.IntN(40)+1)*int64(time.Millisecond), maxN)
		if trial%3 == 0 { // no ties, one permit each, at least g/2 apart: the leaky bucket applies
			g := int64(rng.IntN(40)+1) * int64(time.Millisecond)
			for i := range trace {
				trace[i].at = int64(i)*g + rng.Int64N(g/2)
			}
		}
		src := Text("random", csvOf(trace))
		rep, err := Fit(context.Background(), src, Options{RefusePPM: -1, Steps: 6})
		require.NoError(t, err)
		var tighter []string
		for _, a := range rep.Specs {
			if !a.Applies {
				continue
			}
			require.Equal(t, rep.Stats.Requests, a.Admitted, "trial %d: %s", trial, a.Spec)
			parsed, err := limiters.ParseSpec(a.Spec)
			require.NoError(t, err, a.Spec)
			require.Equal(t, a.Spec, parsed.String(), "the spec round-trips")
			switch s := parsed.(type) {
			case limiters.SlidingWindowSpec:
				s.Limit--
				if s.Limit > 0 {
					tighter = append(tighter, s.String())
				}
			case limiters.FixedWindowSpec:
				s.Limit--
				if s.Limit > 0 {
					tighter = append(tighter, s.String())
				}
			case limiters.LeakyBucketSpec:
				s.Rate.Window++
				tighter = append(tighter, s.String())
			}
		}
		if trial%3 == 0 {
			// No ties, one permit each: the leaky bucket applies, unless the rate that admits
			// the closest two is more than 10× the recommended one, which it says.
			if rep.Specs[3].Applies {
				leakyApplied++
			} else {
				require.Contains(t, rep.Specs[3].Note, "it would not limit anything else", "trial %d", trial)
			}
		}
		got, err := Replay(context.Background(), src, tighter)
		require.NoError(t, err)
		for _, g := range got {
			require.Less(t, g.Admitted, rep.Stats.Requests, "trial %d: %s refuses something", trial, g.Spec)
		}
	}
}

// The peak is the brute-force most permits in any (t − W, t].
func TestPeakIsTheMostInAnyWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := range 100 {
		trace := randomTrace(rng, 1+rng.IntN(200), int64(rng.IntN(30)+1)*int64(time.Millisecond), 3)
		W := time.Duration(1+rng.IntN(500)) * time.Millisecond
		st, err := statistics(context.Background(), Text("random", csvOf(trace)), W, 10)
		require.NoError(t, err)
		best := int64(0)
		for _, end := range trace {
			sum := int64(0)
			for _, r := range trace {
				if r.at > end.at-int64(W) && r.at <= end.at {
					sum += int64(r.n)
				}
			}
			best = max(best, sum)
		}
		require.Equal(t, best, st.Peak, "trial %d, W = %s", trial, W)
	}
}

// A bad row is an error naming the source and the line; an empty trace says there is nothing.
func TestBadInputNamesTheLine(t *testing.T) {
	for _, c := range []struct{ csv, want string }{
		{"t_ns,permits\n10,1\n20,x\n", `trace.csv: line 3: permits "x" is not a whole number >= 1`},
		{"t_ns,permits\n10,1\n5,1\n", "trace.csv: line 3: time 5ns is before the previous row's 10ns"},
		{"t_ns,permits\n", "trace.csv: no requests"},
		{"time,permits\n1,1\n", "trace.csv: line 1: the header"},
		{"", "trace.csv: line 1: empty trace"},
	} {
		_, err := Fit(context.Background(), Text("trace.csv", c.csv), Options{RefusePPM: -1})
		require.Error(t, err, c.csv)
		assert.Contains(t, err.Error(), c.want)
	}
}

// Fitting a scenario fits its offered traffic: the same report as for that traffic written
// out as a trace.
func TestAScenarioFitsItsArrivals(t *testing.T) {
	sc := &engine.Scenario{Name: "mix", Seed: 3, Horizon: 5 * time.Second, Sources: []engine.Source{
		{Kind: engine.SourcePoisson, Rate: 80},
		{Kind: engine.SourceBursts, Bursts: []engine.Burst{{At: 2 * time.Second, Count: 60, Spread: 20 * time.Millisecond}}, Permits: 2},
	}, Lanes: []engine.LaneSpec{{Stack: []limiters.Spec{limiters.TokenBucketSpec{Capacity: 1, Rate: limiters.PerSecond(1)}}}}}
	a, err := engine.NewArrivals(sc)
	require.NoError(t, err)
	var b bytes.Buffer
	b.WriteString("t_ns,permits\n")
	for {
		row, err := a.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		fmt.Fprintf(&b, "%d,%d\n", row.At, row.Permits)
	}
	a.Close()
	opt := Options{RefusePPM: 5000}
	fromScenario, err := Fit(context.Background(), Scenario(sc), opt)
	require.NoError(t, err)
	fromTrace, err := Fit(context.Background(), Text("x", b.String()), opt)
	require.NoError(t, err)
	fromTrace.Source = fromScenario.Source
	assert.Equal(t, fromTrace, fromScenario)
	assert.Equal(t, "scenario mix", fromScenario.Source)
}

// The knee is a property of the curve, not of the grid: 6, 12, 24 and 48 steps recommend the
// same rate, on the shipped gateway trace, the noisy-neighbour scenario's traffic and random
// traces (it was 334/1s at 12 steps and 349/1s at 24 on one of them).
func TestKneeDoesNotDependOnTheGrid(t *testing.T) {
	srcs := []Source{File("../scenarios/traces/api-gateway.csv", "api-gateway.csv")}
	rng := rand.New(rand.NewPCG(11, 0))
	for trial := range 6 {
		var b strings.Builder
		b.WriteString("t_ns,permits\n")
		var at time.Duration
		for range 3000 {
			if rng.IntN(10) == 0 {
				at += time.Duration(rng.Int64N(int64(200 * time.Millisecond)))
			} else {
				at += time.Duration(rng.Int64N(int64(4 * time.Millisecond)))
			}
			fmt.Fprintf(&b, "%d,%d\n", at, 1+rng.IntN(2))
		}
		srcs = append(srcs, Text(fmt.Sprintf("random-%d", trial), b.String()))
	}
	for _, src := range srcs {
		var rates []string
		for _, steps := range []int{6, 12, 24, 48} {
			rep, err := Fit(context.Background(), src, Options{Steps: steps, RefusePPM: -1})
			require.NoError(t, err)
			rates = append(rates, rep.Recommended().RateText+" capacity "+fmt.Sprint(rep.Recommended().Capacity))
		}
		for _, r := range rates[1:] {
			assert.Equal(t, rates[0], r, "%s: the knee at 6, 12, 24, 48 steps: %v", src.Name(), rates)
		}
		t.Logf("%s: %s", src.Name(), rates[0])
	}
}
