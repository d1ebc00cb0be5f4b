package fit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/trace"
)

// keyedCSV is trace with each row's key drawn from keys clients.
func keyedCSV(rng *rand.Rand, reqs []req, clients int) string {
	var b strings.Builder
	b.WriteString("t_ns,permits,key\n")
	for _, r := range reqs {
		fmt.Fprintf(&b, "%d,%d,c%d\n", r.at, r.n, rng.IntN(clients))
	}
	return b.String()
}

// The table's passes answer what reading the trace again answers: the whole report, as
// JSON, with the table and with a memory bound of one row (which streams every pass).
func TestTableFitIsTheStreamedFit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 30 {
		reqs := randomTrace(rng, 1+rng.IntN(3000), int64(1+rng.IntN(5_000_000)), 1+rng.IntN(4))
		src := Text(fmt.Sprintf("trace%d.csv", i), csvOf(reqs))
		opt := Options{RefusePPM: int64(rng.IntN(3)) * 5000, Steps: 5 + rng.IntN(20)}
		if rng.IntN(3) == 0 {
			opt.RefusePPM = -1
		}
		requireStreamedIsInMemory(t, i, func(streamed bool) (any, error) {
			if streamed {
				opt.MaxMemory = 1
			}
			return Fit(context.Background(), src, opt)
		})
	}
}

// requireStreamedIsInMemory requires run(true), the fit streamed pass by pass under a memory
// bound of one row, to answer as run(false), the fit over the table in memory: the same
// report as JSON, or the same error.
func requireStreamedIsInMemory(t *testing.T, trace int, run func(streamed bool) (any, error)) {
	t.Helper()
	inMemory, errMem := run(false)
	streamed, errStream := run(true)
	if errStream != nil {
		require.EqualError(t, errMem, errStream.Error(), "trace %d", trace)
		return
	}
	require.NoError(t, errMem, "trace %d", trace)
	want, _ := json.Marshal(streamed)
	got, _ := json.Marshal(inMemory)
	require.Equal(t, string(want), string(got), "trace %d", trace)
}

// The per-client fit over the table answers what the streamed one does.
func TestTablePerClientIsTheStreamedPerClient(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for i := range 20 {
		reqs := randomTrace(rng, 2+rng.IntN(3000), int64(1+rng.IntN(5_000_000)), 1+rng.IntN(4))
		src := Text(fmt.Sprintf("keyed%d.csv", i), keyedCSV(rng, reqs, 1+rng.IntN(40)))
		opt := PerClientOptions{Steps: 5 + rng.IntN(20), ClientsPPM: int64(500000 + rng.IntN(500001))}
		if rng.IntN(2) == 0 {
			opt.Protect = limiters.PerSecond(50 + rng.IntN(5000))
		}
		requireStreamedIsInMemory(t, i, func(streamed bool) (any, error) {
			if streamed {
				opt.MaxMemory = 1
			}
			return FitPerClient(context.Background(), src, opt)
		})
	}
}

// The table's replay decides as engine.Replay does: the same admissions for every kind of
// spec fit answers with, keyed ones too.
func TestTableReplayIsEngineReplay(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	specs := []string{
		"token-bucket:capacity=5,rate=100/1s",
		"token-bucket:capacity=1,rate=1000/1s",
		"sliding-window:limit=20,window=100ms",
		"fixed-window:limit=20,window=100ms",
		"leaky-bucket:rate=1/2ms",
		"keys(max=8,evict=lru):token-bucket:capacity=3,rate=50/1s",
		"keys(max=8,evict=lru):token-bucket:capacity=3,rate=50/1s+token-bucket:capacity=10,rate=200/1s",
	}
	for i := range 6 {
		reqs := randomTrace(rng, 500+rng.IntN(3000), int64(1+rng.IntN(4_000_000)), 1+rng.IntN(3))
		text := keyedCSV(rng, reqs, 1+rng.IntN(12))
		tb, err := load(context.Background(), Text("t.csv", text), newInterner("t.csv", 1<<20), DefaultMaxMemory,
			func(*table, *trace.Row, uint32) error { return nil })
		require.NoError(t, err)
		got, err := tb.replay(context.Background(), specs)
		require.NoError(t, err)
		var stacks [][]limiters.Spec
		for _, s := range specs {
			st, err := engine.ParseStack(s)
			require.NoError(t, err)
			stacks = append(stacks, st)
		}
		sum, err := engine.Replay(strings.NewReader(text), io.Discard, stacks)
		require.NoError(t, err)
		for j := range specs {
			assert.Equal(t, sum.Admitted[j], got[j].Admitted, "trace %d, %s", i, specs[j])
		}
		assert.Less(t, got[0].Admitted, int64(len(reqs)), "trace %d: the first spec refuses something, or the test tests little", i)
	}
}

// segmentedTable loads reqs into a table and cuts it into segments at a random rate of 50
// to 2,049/s, each of 1 to 64 rows at least: the table, the rate and its segments.
func segmentedTable(t *testing.T, rng *rand.Rand, reqs []req) (*table, limiters.Rate, *segments) {
	t.Helper()
	tb, err := load(context.Background(), Text("t.csv", csvOf(reqs)), nil, DefaultMaxMemory,
		func(*table, *trace.Row, uint32) error { return nil })
	require.NoError(t, err)
	basis := limiters.PerSecond(50 + rng.IntN(2000))
	seg := tb.segmentsAt(basis, int64(1+rng.IntN(64)))
	require.NotNil(t, seg)
	return tb, basis, seg
}

// σ over the segments of a lower rate is σ over the whole table, field by field, ties (the
// first row that needs the most) included, whatever the segments' length.
func TestCurveOverSegmentsIsTheCurve(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	for i := range 40 {
		reqs := randomTrace(rng, 1+rng.IntN(5000), int64(1+rng.IntN(3_000_000)), 1+rng.IntN(3))
		if i%2 == 0 { // the same traffic three times, an hour apart: three segments tie
			span := reqs[len(reqs)-1].at + int64(time.Hour)
			for _, r := range slices.Clone(reqs) {
				reqs = append(reqs, req{r.at + span, r.n})
			}
			for _, r := range reqs[:len(reqs)/2] {
				reqs = append(reqs, req{r.at + 2*span, r.n})
			}
		}
		tb, basis, seg := segmentedTable(t, rng, reqs)
		var rates []limiters.Rate
		for range 10 {
			rates = append(rates, limiters.PerSecond(basis.Permits+rng.IntN(3*basis.Permits)))
		}
		want, err := tb.curve(context.Background(), rates)
		require.NoError(t, err)
		got, err := tb.curveOver(context.Background(), seg, rates)
		require.NoError(t, err)
		require.Equal(t, want, got, "trace %d, basis %s, %d segments", i, basis, len(seg.start))
	}
}

// Refusals over the segments of the rate's unbounded bucket are the refusals of a replay of
// every row, whatever the segments' length.
func TestRefusalsOverSegmentsAreTheReplays(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	for i := range 40 {
		reqs := randomTrace(rng, 1+rng.IntN(5000), int64(1+rng.IntN(3_000_000)), 1+rng.IntN(4))
		tb, err := load(context.Background(), Text("t.csv", csvOf(reqs)), nil, DefaultMaxMemory,
			func(*table, *trace.Row, uint32) error { return nil })
		require.NoError(t, err)
		rate := limiters.PerSecond(50 + rng.IntN(3000))
		tb.refusalSegments = tb.segmentsAt(rate, int64(1+rng.IntN(64)))
		var caps []int64
		for range 8 {
			caps = append(caps, int64(1+rng.IntN(40)))
		}
		b := newBuckets(rate, caps)
		for _, r := range reqs {
			b.add(r.at, int64(r.n))
		}
		permits, requests, err := tb.refusals(context.Background(), rate, caps, -1)
		require.NoError(t, err)
		assert.Equal(t, b.refused, permits, "trace %d at %s, capacities %v", i, rate, caps)
		assert.Equal(t, b.requests, requests, "trace %d at %s, capacities %v", i, rate, caps)
		// With a limit, a count is exact or past the limit, as the exact one is.
		limit := rng.Int64N(max(slices.Max(b.refused), 1))
		limited, _, err := tb.refusals(context.Background(), rate, caps, limit)
		require.NoError(t, err)
		for j := range caps {
			if limited[j] != b.refused[j] {
				assert.True(t, limited[j] > limit && b.refused[j] > limit, "trace %d, capacity %d: %d of %d refused permits counted, limit %d",
					i, caps[j], limited[j], b.refused[j], limit)
			}
		}
	}
}

// Each client's largest need over the segments of a slower rate is its largest need over all
// its rows, whatever the segments' length.
func TestClientNeedsOverSegmentsAreTheNeeds(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	for i := range 30 {
		reqs := randomTrace(rng, 2+rng.IntN(5000), int64(1+rng.IntN(3_000_000)), 1+rng.IntN(4))
		tb, err := load(context.Background(), Text("t.csv", keyedCSV(rng, reqs, 1+rng.IntN(20))), newInterner("t.csv", 1<<20),
			DefaultMaxMemory, func(*table, *trace.Row, uint32) error { return nil })
		require.NoError(t, err)
		g := tb.groupByClient()
		basis := limiters.PerSecond(5 + rng.IntN(200))
		seg := g.segmentsAt(int64(basis.Interval()), int64(1+rng.IntN(32)))
		require.NotNil(t, seg)
		var intervals []int64
		for range 6 {
			intervals = append(intervals, int64(limiters.PerSecond(basis.Permits+rng.IntN(3*basis.Permits)).Interval()))
		}
		clients := len(tb.keys)
		tat, want := make([]int64, clients*len(intervals)), make([]int64, clients*len(intervals))
		require.NoError(t, g.needs(context.Background(), intervals, tat, want))
		got := make([]int64, len(want))
		require.NoError(t, g.needsOver(context.Background(), seg, intervals, got))
		require.Equal(t, want, got, "trace %d, basis %s, %d segments for %d clients", i, basis, len(seg.segs), clients)
	}
}

// The interner numbers a key the same whether the row's text is the string it holds (as
// trace.Reader hands out a trace's first 4096 keys) or a copy, past 4096 keys too.
func TestInternerNumbersEachKeyOnce(t *testing.T) {
	in := newInterner("t.csv", 1<<20)
	rng := rand.New(rand.NewPCG(13, 13))
	held := map[string]string{} // the first string of each text, as a reader's intern table
	want := map[string]uint32{}
	for line := range 50_000 {
		text := fmt.Sprintf("client-%d", rng.IntN(6000))
		key := strings.Clone(text)
		if h, ok := held[text]; ok && rng.IntN(4) > 0 {
			key = h
		} else if !ok {
			held[text] = key
		}
		id, err := in.id(&trace.Row{Line: line + 2, Key: key})
		require.NoError(t, err)
		if w, ok := want[text]; ok {
			require.Equal(t, w, id, "line %d: %s", line+2, text)
		} else {
			require.Equal(t, uint32(len(want)), id, "line %d: %s is new", line+2, text)
			want[text] = id
		}
	}
	require.Equal(t, len(want), len(in.keys))
	small := newInterner("t.csv", 2)
	for i, k := range []string{"a", "b", "a"} {
		_, err := small.id(&trace.Row{Line: i + 2, Key: k})
		require.NoError(t, err)
	}
	_, err := small.id(&trace.Row{Line: 5, Key: "c"})
	require.EqualError(t, err, "t.csv: line 5: more than 2 distinct keys; a per-client fit holds every client's curve in memory")
}

// σ over the table is curve.add's, row by row, for rates whose need passes 2⁶² ns part way
// through the trace (a rate of 1 per 2⁶¹ns: the third request at one instant needs more)
// beside rates that live, in every pairing the table's loop makes.
func TestTableCurveIsCurveAddWhenRatesDie(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 14))
	// Three requests at one instant: the slow rate dies at the third, where the other needs
	// the most it ever will; a trace that goes on after it.
	slow := limiters.Rate{Permits: 1, Window: 1 << 61}
	for _, reqs := range [][]req{{{0, 1}, {0, 1}, {0, 1}}, {{0, 1}, {0, 1}, {0, 1}, {5, 1}, {9, 1}}} {
		for _, rates := range [][]limiters.Rate{{slow, limiters.PerSecond(100)}, {limiters.PerSecond(100), slow}} {
			tb, err := load(context.Background(), Text("t.csv", csvOf(reqs)), nil, DefaultMaxMemory,
				func(*table, *trace.Row, uint32) error { return nil })
			require.NoError(t, err)
			got, err := tb.curve(context.Background(), rates)
			require.NoError(t, err)
			require.Equal(t, points(t, reqs, rates...), got, "rates %v", rates)
		}
	}
	for i := range 40 {
		reqs := randomTrace(rng, 1+rng.IntN(5000), int64(1+rng.IntN(2_000_000)), 1+rng.IntN(2))
		tb, err := load(context.Background(), Text("t.csv", csvOf(reqs)), nil, DefaultMaxMemory,
			func(*table, *trace.Row, uint32) error { return nil })
		require.NoError(t, err)
		var rates []limiters.Rate
		for range 1 + rng.IntN(6) {
			if rng.IntN(2) == 0 {
				rates = append(rates, limiters.Rate{Permits: 1, Window: time.Duration(1<<60 + rng.Int64N(1<<60))})
			} else {
				rates = append(rates, limiters.PerSecond(1+rng.IntN(5000)))
			}
		}
		want := points(t, reqs, rates...)
		got, err := tb.curve(context.Background(), rates)
		require.NoError(t, err)
		require.Equal(t, want, got, "trace %d, rates %v", i, rates)
	}
}

// Each client's σ over the grouped rows is clientCurves' over the trace read again, for rates
// at which some clients' needs pass 2⁶² ns part way (1 per 2⁵⁰ns: after about 4096 requests
// close together; 1 per 2⁶¹ns: at the third at one instant).
func TestClientCurvesWhenClientsDie(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 15))
	for i := range 12 {
		reqs := randomTrace(rng, 9000+rng.IntN(6000), int64(1+rng.IntN(1000)), 1+rng.IntN(2))
		text := keyedCSV(rng, reqs, 1+i%3)
		src := Text("t.csv", text)
		in := newInterner("t.csv", 1<<20)
		tb, err := load(context.Background(), src, in, DefaultMaxMemory, func(*table, *trace.Row, uint32) error { return nil })
		require.NoError(t, err)
		rates := []limiters.Rate{{Permits: 1, Window: 1 << 50}, {Permits: 1, Window: 1 << 61}, limiters.PerSecond(1 + rng.IntN(1000))}
		want, err := clientCurves(context.Background(), src, nil, nil, in.index, rates)
		require.NoError(t, err)
		got, err := clientCurves(context.Background(), src, tb.groupByClient(), nil, in.index, rates)
		require.NoError(t, err)
		require.Equal(t, want, got, "trace %d", i)
		dead := 0
		for _, s := range want {
			if s == 0 {
				dead++
			}
		}
		if i == 0 {
			require.Positive(t, dead, "some client's σ passes 2⁶² ns, or the test tests little")
		}
	}
}

// mostWithin is the largest count within: one more is not.
func TestMostWithinIsTheLargestWithin(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 16))
	for range 10000 {
		total := rng.Int64N(1 << 62)
		if rng.IntN(2) == 0 {
			total = rng.Int64N(10_000_000)
		}
		ppm := rng.Int64N(1_000_001)
		m := mostWithin(total, ppm)
		require.True(t, within(m, total, ppm), "total %d, ppm %d: %d", total, ppm, m)
		require.False(t, within(m+1, total, ppm), "total %d, ppm %d: %d", total, ppm, m+1)
	}
}
