package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
)

func TestHistogramQuantilesWithinBucketPrecision(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	for round := range 20 {
		var h histogram
		n := 1 + rng.IntN(5000)
		vals := make([]int64, n)
		for i := range vals {
			switch round % 3 {
			case 0:
				vals[i] = rng.Int64N(100)
			case 1:
				vals[i] = int64(rng.ExpFloat64() * 1e7)
			default:
				vals[i] = rng.Int64N(1 << 40)
			}
			h.add(vals[i])
		}
		slices.Sort(vals)
		for _, q := range []float64{0, 0.01, 0.5, 0.9, 0.99, 0.999, 1} {
			rank := max(int(q*float64(n)+0.999999999), 1) // ⌈q·n⌉, at least 1
			exact := vals[min(rank, n)-1]
			got := int64(h.quantile(q))
			assert.GreaterOrEqual(t, got, exact, "q=%v n=%d", q, n)
			assert.LessOrEqual(t, float64(got), float64(exact)*1.0625+1e-9, "q=%v n=%d: more than 6.25%% above the exact %d", q, n, exact)
			assert.LessOrEqual(t, got, vals[n-1], "never above the maximum")
		}
		assert.Equal(t, vals[n-1], h.max)
	}
	var empty histogram
	assert.Zero(t, empty.quantile(0.5))
}

// A histogram reset and filled again, as a bin's is at every bin's end, reads as a fresh one
// with the same values: it clears only the buckets it counted in (lo to hi), and those are
// all it reads.
func TestHistogramResetIsFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var reused histogram
	for round := range 200 {
		var fresh histogram
		for range rng.IntN(300) {
			v := int64(rng.ExpFloat64() * float64(int64(1)<<rng.IntN(40)))
			reused.add(v)
			fresh.add(v)
		}
		require.Equal(t, fresh, reused, "round %d", round)
		for _, q := range []float64{0.5, 0.99, 1} {
			require.Equal(t, fresh.quantile(q), reused.quantile(q))
		}
		require.Equal(t, fresh.buckets(), reused.buckets())
		reused.reset()
		require.Equal(t, histogram{}, reused, "round %d: reset leaves a counted bucket", round)
	}
}

func TestHistogramBuckets(t *testing.T) {
	for v := int64(0); v < 100_000; v++ {
		b := bucketOf(v)
		require.LessOrEqual(t, v, bucketTop(b), "v=%d", v)
		if b > 0 {
			require.Greater(t, v, bucketTop(b-1), "v=%d", v)
		}
	}
	assert.Less(t, bucketOf(1<<62+12345), 1024)
}

// The exported buckets cover every value once: each value lies in its bucket's [From, To],
// the counts sum to the total, and the buckets are increasing and disjoint.
func TestHistogramExportedBuckets(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var h histogram
	vals := []int64{0, 0, 31, 32, 1024, 1087, 1088}
	for range 3000 {
		vals = append(vals, int64(rng.ExpFloat64()*1e6))
	}
	for _, v := range vals {
		h.add(v)
	}
	bs := h.buckets()
	var sum uint64
	for i, b := range bs {
		require.LessOrEqual(t, b.From, b.To)
		if i > 0 {
			require.Greater(t, b.From, bs[i-1].To, "bucket %d overlaps the one before", i)
		}
		sum += b.Count
	}
	assert.Equal(t, h.total, sum)
	for _, v := range vals {
		i, found := slices.BinarySearchFunc(bs, time.Duration(v), func(b WaitBucket, d time.Duration) int {
			switch {
			case b.To < d:
				return -1
			case b.From > d:
				return 1
			}
			return 0
		})
		require.True(t, found, "value %d is in no bucket", v)
		require.Equal(t, bucketOf(v), bucketOf(int64(bs[i].From)))
	}
	assert.Equal(t, WaitBucket{From: 0, To: 0, Count: 2}, bs[0])
	k := slices.IndexFunc(bs, func(b WaitBucket) bool { return b.From == 1024 })
	require.GreaterOrEqual(t, k, 0, "no bucket starts at 1024")
	assert.Equal(t, time.Duration(1087), bs[k].To, "1024 and 1087 share the bucket [1024, 1087]")
	assert.Equal(t, time.Duration(1088), bs[k+1].From)
	var empty histogram
	assert.Nil(t, empty.buckets())
}

type admission struct{ at, n int64 }

// bruteWindow is the O(n²) reference: the most permits in any [a, a+L), and the first
// admission after which some interval of length L ending there holds more than bound.
func bruteWindow(adm []admission, L, bound int64) (maxSum, firstExceeded int64) {
	firstExceeded = -1
	for i := range adm {
		var sum int64
		for j := i; j < len(adm) && adm[j].at < adm[i].at+L; j++ {
			sum += adm[j].n
		}
		maxSum = max(maxSum, sum)
	}
	for k := range adm {
		var sum int64
		for j := 0; j <= k; j++ {
			if adm[j].at > adm[k].at-L {
				sum += adm[j].n
			}
		}
		if bound >= 0 && sum > bound {
			return maxSum, adm[k].at
		}
	}
	return maxSum, firstExceeded
}

func TestAdmissionWindowMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 7))
	for round := range 300 {
		L := 1 + rng.Int64N(1000)
		n := rng.IntN(400)
		adm := make([]admission, n)
		at := int64(0)
		for i := range adm {
			if rng.IntN(4) != 0 { // some admissions share an instant
				at += rng.Int64N(L/4*3 + 2)
			}
			adm[i] = admission{at: at, n: 1 + rng.Int64N(3)}
		}
		bound := rng.Int64N(40) - 1
		w := newAdmissionWindow(time.Duration(L), bound)
		for _, a := range adm {
			w.admit(a.at, a.n)
		}
		wantMax, wantFirst := bruteWindow(adm, L, bound)
		require.Equal(t, wantMax, w.MaxAdmitted, "round %d L=%d", round, L)
		require.Equal(t, time.Duration(wantFirst), w.FirstExceeded, "round %d L=%d bound=%d", round, L, bound)
		if n > 0 {
			// From and To delimit an interval shorter than L that holds MaxAdmitted.
			assert.Less(t, int64(w.To-w.From), L)
			var sum int64
			for _, a := range adm {
				if a.at >= int64(w.From) && a.at <= int64(w.To) {
					sum += a.n
				}
			}
			assert.GreaterOrEqual(t, sum, w.MaxAdmitted)
		}
	}
}

func TestMinSpacingAndWindowsInALane(t *testing.T) {
	sc := &Scenario{Horizon: sec, Client: Client{Policy: PolicyDrop}, Lanes: stacks(t, "concurrency:max=10"),
		Windows: []time.Duration{10 * ms}, Sources: []Source{script(0, 30*ms, 33*ms, 40*ms, 41*ms, 90*ms)}}
	lane := run(t, sc).Lanes[0]
	assert.Equal(t, ms, lane.MinSpacing)
	require.Len(t, lane.Windows, 1)
	assert.Equal(t, int64(3), lane.Windows[0].MaxAdmitted, "33, 40, 41ms within 10ms")
	assert.Equal(t, 33*ms, lane.Windows[0].From)
	assert.Equal(t, 41*ms, lane.Windows[0].To)
	assert.Equal(t, int64(-1), lane.Windows[0].Bound, "concurrency promises no count per time")
	assert.Equal(t, time.Duration(-1), lane.Windows[0].FirstExceeded)

	sc.Sources = []Source{script(5 * ms)}
	assert.Equal(t, time.Duration(-1), run(t, sc).Lanes[0].MinSpacing, "fewer than two admissions")
}

// The fixed window exceeds its own 1s limit across a boundary; its meter must say when.
func TestFirstExceededInALane(t *testing.T) {
	src := Source{Kind: SourceBursts, Bursts: []Burst{{At: 990 * ms, Count: 100, Spread: 10 * ms}, {At: sec, Count: 100, Spread: 10 * ms}}}
	sc := &Scenario{Horizon: 3 * sec, Client: Client{Policy: PolicyDrop}, Sources: []Source{src},
		Lanes: stacks(t, "fixed-window:limit=100,window=1s", "sliding-window:limit=100,window=1s,slots=10")}
	res := run(t, sc)
	fixed, sliding := res.Lanes[0], res.Lanes[1]
	require.Len(t, fixed.Windows, 1)
	assert.Equal(t, int64(200), fixed.Windows[0].MaxAdmitted)
	assert.Equal(t, int64(200), fixed.Windows[0].Bound, "the least bound any stage promises for 1s: 2×limit for a fixed window")
	assert.Equal(t, time.Duration(-1), fixed.Windows[0].FirstExceeded)
	assert.Equal(t, int64(100), sliding.Windows[0].MaxAdmitted)

	// A broken limiter (admits everything) under a token bucket's stated bound is caught.
	sc.Lanes = []LaneSpec{{Stack: stacks(t, "token-bucket:capacity=10,rate=100/1s")[0].Stack,
		Build: func(limiters.Clock) ([]limiters.Limiter, error) {
			c, err := limiters.NewConcurrency(1000)
			return []limiters.Limiter{c}, err
		}}}
	lane := run(t, sc).Lanes[0]
	assert.Equal(t, int64(200), lane.Windows[0].MaxAdmitted)
	assert.Equal(t, int64(109), lane.Windows[0].Bound)
	assert.Equal(t, 990*ms+time.Duration(109)*100*time.Microsecond, lane.Windows[0].FirstExceeded, "the 110th admission")
}

func binSums(bins []Bin) (t Totals) {
	for _, b := range bins {
		t.Offered += b.Offered
		t.Attempts += b.Attempts
		t.Retried += b.Retried
		t.Admitted += b.Admitted
		t.RefusedAttempts += b.RefusedAttempts
		t.Refused += b.Refused
		t.TimedOut += b.TimedOut
		t.GaveUp += b.GaveUp
		t.Completed += b.Completed
		t.Failed += b.Failed
		t.MaxInFlight = max(t.MaxInFlight, b.MaxInFlight)
		t.MaxQueue = max(t.MaxQueue, b.MaxQueue)
	}
	return t
}

func TestBinsSumToTotals(t *testing.T) {
	ds := &Downstream{Pool: 8, Phases: []Phase{{Service: Distribution{Kind: DistExponential, Mean: 40 * ms}}}}
	lanes := stacks(t, "token-bucket:capacity=10,rate=100/1s", "leaky-bucket:rate=100/1s", "concurrency:max=4",
		"sliding-window:limit=100,window=1s+concurrency:max=6")
	lanes[1].Client = &Client{Policy: PolicyBackoff, Delay: 5 * ms, MaxDelay: 100 * ms, Jitter: true, MaxAttempts: 4}
	lanes[2].Client = &Client{Policy: PolicyQueue, QueueSize: 20, Timeout: 50 * ms}
	lanes[3].Client = &Client{Policy: PolicyRetryAfter, Delay: 5 * ms, MaxAttempts: 3}
	sc := &Scenario{Horizon: 10 * sec, Bins: 37, Client: Client{Policy: PolicyDrop}, Lanes: lanes, Downstream: ds,
		Sources: []Source{{Kind: SourcePoisson, Rate: 150}, {Kind: SourceBursts, Bursts: []Burst{{At: 3 * sec, Count: 80}}}}}
	res := run(t, sc)
	for _, lane := range res.Lanes {
		s := binSums(lane.Bins)
		tot := lane.Totals
		assert.Equal(t, tot.Offered, s.Offered, lane.Name)
		assert.Equal(t, tot.Attempts, s.Attempts, lane.Name)
		assert.Equal(t, tot.Retried, s.Retried, lane.Name)
		assert.Equal(t, tot.Admitted, s.Admitted, lane.Name)
		assert.Equal(t, tot.RefusedAttempts, s.RefusedAttempts, lane.Name)
		assert.Equal(t, tot.Refused, s.Refused, lane.Name)
		assert.Equal(t, tot.TimedOut, s.TimedOut, lane.Name)
		assert.Equal(t, tot.GaveUp, s.GaveUp, lane.Name)
		assert.Equal(t, tot.Completed, s.Completed, lane.Name)
		assert.Equal(t, tot.Failed, s.Failed, lane.Name)
		assert.Equal(t, tot.MaxInFlight, s.MaxInFlight, lane.Name)
		assert.Equal(t, tot.MaxQueue, s.MaxQueue, lane.Name)
		assert.Greater(t, tot.RefusedAttempts, int64(0), lane.Name)
		// Every offered request ends as exactly one outcome or is still waiting at the horizon.
		assert.Equal(t, tot.Offered, tot.Ended()+tot.Waiting, lane.Name)
		assert.Equal(t, tot.Attempts, tot.Offered+tot.Retried, lane.Name)
	}
	drop := res.Lanes[0].Totals
	assert.Equal(t, drop.Offered, drop.Admitted+drop.Refused, "a dropping client leaves nothing pending")
	assert.Zero(t, drop.GaveUp+drop.TimedOut+drop.Waiting)
	assert.Greater(t, res.Lanes[1].Totals.GaveUp, int64(0), "backoff spends its attempts")
	assert.Equal(t, drop.Offered, res.Lanes[1].Totals.Offered)
	assert.Greater(t, res.Lanes[0].Totals.Failed, int64(0))
	assert.Greater(t, res.Lanes[2].Totals.TimedOut, int64(0))
}

// Each bin's Available is the limiter's AvailableAt at the bin's end: replaying the lane's
// admissions on a fresh limiter gives the same numbers.
func TestAvailablePerBinIsAvailableAtBinEnd(t *testing.T) {
	specs := []string{"token-bucket:capacity=10,rate=100/1s", "leaky-bucket:rate=100/1s", "sliding-window:limit=100,window=1s,slots=10",
		"fixed-window:limit=100,window=1s", "warm-up:capacity=10,rate=100/1s,warmup=2s"}
	sc := &Scenario{Horizon: 5 * sec, Bins: 53, Client: Client{Policy: PolicyDrop}, Lanes: stacks(t, specs...),
		Sources: []Source{{Kind: SourcePoisson, Rate: 140}}}
	sc.Trace = true
	res := run(t, sc)
	for i, lane := range res.Lanes {
		lim, err := sc.Lanes[i].Stack[0].New(virtualclock.New())
		require.NoError(t, err)
		adm := filter(lane.Trace, OutcomeAdmitted)
		k := 0
		for _, b := range lane.Bins {
			end := min(b.Start+res.BinWidth, sc.Horizon)
			for k < len(adm) && adm[k].At < end {
				require.Equal(t, limiters.Admitted, lim.AcquireAt(adm[k].At, adm[k].Permits))
				k++
			}
			require.Equal(t, []int{lim.AvailableAt(end)}, b.Available, "%s bin at %v", lane.Name, b.Start)
		}
	}
}

// In steady state a lane allocates nothing per event when not tracing.
func TestStepDoesNotAllocate(t *testing.T) {
	lanes := stacks(t, "token-bucket:capacity=10,rate=100/1s", "sliding-window:limit=100,window=1s,slots=10",
		"warm-up:capacity=10,rate=100/1s,warmup=10s", "token-bucket:capacity=10,rate=100/1s+concurrency:max=5")
	lanes[1].Client = &Client{Policy: PolicyBackoff, Delay: 5 * ms, MaxDelay: 100 * ms, Jitter: true, MaxAttempts: 4}
	lanes[2].Client = &Client{Policy: PolicyQueue, QueueSize: 20, Timeout: 50 * ms}
	sc := &Scenario{Horizon: time.Hour, Client: Client{Policy: PolicyDrop}, Lanes: lanes,
		Downstream: &Downstream{Pool: 4, Phases: []Phase{{Service: Distribution{Kind: DistExponential, Mean: 50 * ms}}}},
		Sources:    []Source{{Kind: SourcePoisson, Rate: 120}}}
	require.NoError(t, sc.Validate())
	for i := range lanes {
		l, err := NewLane(sc, i)
		require.NoError(t, err)
		for range 100_000 { // warm up: every slice at its steady size
			_, err := l.Step()
			require.NoError(t, err)
		}
		allocs := testing.AllocsPerRun(20_000, func() {
			if _, err := l.Step(); err != nil {
				t.Fatal(err)
			}
		})
		assert.Zero(t, allocs, "lane %s", l.spec.Label())
	}
}
