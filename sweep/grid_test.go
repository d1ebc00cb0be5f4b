package sweep

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/fit"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/scenarios"
)

func scenario(t testing.TB, name string) *engine.Scenario {
	t.Helper()
	sc, err := scenarios.Get(name)
	require.NoError(t, err)
	return sc
}

func dims(t testing.TB, steps Steps, varies ...string) []Dimension {
	t.Helper()
	var out []Dimension
	for _, v := range varies {
		d, err := ParseDimension(v, steps)
		require.NoError(t, err, v)
		out = append(out, d)
	}
	return out
}

func grid(t testing.TB, sc *engine.Scenario, steps Steps, varies ...string) *Grid {
	t.Helper()
	g, err := New(sc, dims(t, steps, varies...))
	require.NoError(t, err)
	return g
}

func csvOf(t testing.TB, rows []Row) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, WriteCSV(&b, rows))
	return b.String()
}

// The documented layout: one template per lane the dimensions apply to, cells template by
// template, then by the first value, then the second.
func TestGridLayout(t *testing.T) {
	g := grid(t, scenario(t, "replay"), Steps{}, "token-bucket.capacity=1..100", "token-bucket.rate=50/1s..200/1s")
	require.Len(t, g.Lanes, 1, "replay has one lane with a token-bucket stage")
	require.Len(t, g.Cells, 100)
	spec := func(i int) string { return engine.StackString(g.Cells[i].Spec.Stack) }
	assert.Equal(t, "token-bucket:capacity=1,rate=50/1s", spec(0))
	assert.Equal(t, "token-bucket:capacity=1,rate=67/1s", spec(1))
	assert.Equal(t, "token-bucket:capacity=12,rate=50/1s", spec(10))
	assert.Equal(t, "token-bucket:capacity=100,rate=200/1s", spec(99))
	for i, c := range g.Cells {
		assert.Equal(t, i, c.Index)
		assert.Equal(t, []int{i / 10, i % 10}, c.At)
	}
	assert.Regexp(t, `^[0-9a-f]{16}$`, g.ID)
	assert.Equal(t, g.ID, grid(t, scenario(t, "replay"), Steps{}, "token-bucket.capacity=1..100", "token-bucket.rate=50/1s..200/1s").ID, "the ID is the grid's")
	assert.NotEqual(t, g.ID, grid(t, scenario(t, "replay"), Steps{N: 9}, "token-bucket.capacity=1..100", "token-bucket.rate=50/1s..200/1s").ID)

	// A kind names every lane with a stage of it: retry-storm's three token buckets, each with
	// its own client.
	g = grid(t, scenario(t, "retry-storm"), Steps{N: 3}, "token-bucket.capacity=5..25")
	require.Len(t, g.Lanes, 3)
	require.Len(t, g.Cells, 9)
	assert.Equal(t, "immediate retry", g.Cells[0].Spec.Name)
	assert.Equal(t, "backoff + jitter", g.Cells[3].Spec.Name)
	assert.NotNil(t, g.Cells[3].Spec.Client, "a template keeps its own client")
	assert.Equal(t, "token-bucket:capacity=15,rate=100/1s", engine.StackString(g.Cells[4].Spec.Stack))

	// A lane's name names that lane alone, in its stage that has the field.
	g = grid(t, scenario(t, "retry-storm"), Steps{N: 3}, "backoff + jitter.capacity=5..25")
	require.Len(t, g.Lanes, 1)
	assert.Equal(t, "backoff + jitter", g.Lanes[0].Name)
	// In a stack, the stage of the kind: slow-downstream's bucket + bulkhead lane.
	sc := scenario(t, "slow-downstream")
	g = grid(t, sc, Steps{N: 2}, "concurrency.max=5..20", "token-bucket.rate=5/1s..10/1s")
	for _, c := range g.Cells {
		assert.Len(t, c.Spec.Stack, 2, "only the stack that has both kinds")
	}
	assert.Equal(t, "token-bucket:capacity=10,rate=5/1s+concurrency:max=5", engine.StackString(g.Cells[0].Spec.Stack))
	// An optional field the spec left out is added.
	g = grid(t, scenario(t, "boundary-attack"), Steps{N: 2}, "sliding-window.slots=2..1000")
	assert.Equal(t, "sliding-window:limit=100,window=1s,slots=1000", engine.StackString(g.Cells[1].Spec.Stack))
}

// What a --vary names must be there, once, and its values must make specs the kind accepts;
// each mistake names the --vary and what there is instead.
func TestGridMistakesAreExplained(t *testing.T) {
	for _, tc := range []struct {
		scenario string
		varies   []string
		want     string
	}{
		{"replay", []string{"token-bukcet.capacity=1..9"}, `"token-bukcet" is neither a limiter kind nor a lane of replay (did you mean token-bucket?) (kinds: token-bucket, leaky-bucket,`},
		{"retry-storm", []string{"backof + jitter.capacity=1..9"}, `(did you mean backoff + jitter?)`},
		{"replay", []string{"nginx.burst=1..9"}, "no lane of replay has a nginx stage (lanes: token-bucket:capacity=10,rate=100/1s; leaky-bucket:rate=100/1s;"},
		{"retry-storm", []string{"immediate retry.capcity=1..9"}, `no stage of lane immediate retry has a field "capcity" (did you mean capacity?) (fields: capacity, rate)`},
		{"replay", []string{"token-bucket.capacity=0..9"}, "vary token-bucket.capacity=0..9: capacity=0 in lane token-bucket:capacity=10,rate=100/1s: limiter spec \"token-bucket:capacity=0,rate=100/1s\": capacity=0: must be at least 1"},
		{"replay", []string{"token-bucket.rate=1/1ns..2/1ns"}, "emission interval"},
		{"replay", []string{"token-bucket.capacity=1..9", "token-bucket.capacity=2..5"}, "token-bucket.capacity is already varied by token-bucket.capacity=1..9"},
		{"replay", []string{"token-bucket.capacity=1..9", "sliding-window.limit=1..9"}, "no lane of replay has a stage for every --vary (token-bucket and sliding-window)"},
		{"replay", []string{"token-bucket.capacity=1..9", "token-bucket.rate=1/1s..9/1s", "leaky-bucket.rate=1/1s..2/1s"}, "a sweep varies at most 2 fields"},
		{"replay", []string{"x-time-rate.mode=try,wait"}, "no lane of replay has a x-time-rate stage"},
	} {
		_, err := New(scenario(t, tc.scenario), dims(t, Steps{}, tc.varies...))
		require.Error(t, err, "%v", tc.varies)
		assert.Contains(t, err.Error(), tc.want, "%v", tc.varies)
	}
	two := scenario(t, "replay")
	stack, err := engine.ParseStack("token-bucket:capacity=1,rate=1/1s+token-bucket:capacity=60,rate=60/1m")
	require.NoError(t, err)
	two.Lanes = []engine.LaneSpec{{Stack: stack}}
	_, err = New(two, dims(t, Steps{}, "token-bucket.capacity=1..9"))
	assert.ErrorContains(t, err, "has 2 token-bucket stages: name the lane (NAME=SPEC) and vary NAME.capacity")
	_, err = New(two, dims(t, Steps{}, two.Lanes[0].Label()+".capacity=1..9"))
	assert.ErrorContains(t, err, "2 stages of lane")
	var ve *VaryError
	_, err = New(scenario(t, "replay"), dims(t, Steps{}, "nginx.burst=1..9"))
	assert.True(t, errors.As(err, &ve))
}

// A cell's numbers are `ratelab run`'s for the same lane: a cell runs alone, and a lane of a
// scenario does not depend on the others.
func TestACellIsTheRunOfItsLane(t *testing.T) {
	for _, name := range []string{"replay", "retry-storm", "slow-downstream", "poisson", "diurnal"} {
		sc := scenario(t, name)
		res, err := engine.Run(context.Background(), sc, nil)
		require.NoError(t, err)
		// The template's own values: the grid's cell is the scenario's lane.
		g := grid(t, sc, Steps{}, "token-bucket.capacity=10,20", "token-bucket.rate=100/1s,10/1s")
		rows, err := Run(context.Background(), g, Options{})
		require.NoError(t, err)
		matched := 0
		for i, lane := range sc.Lanes {
			for j, c := range g.Cells {
				if engine.StackString(c.Spec.Stack) == engine.StackString(lane.Stack) && c.Spec.Label() == lane.Label() {
					want := measure(lane, res.Lanes[i])
					assert.Equal(t, want, rows[j].Metrics, "%s: %s", name, lane.Label())
					matched++
				}
			}
		}
		assert.Positive(t, matched, name)
	}
}

// The rows are the same bytes whatever GOMAXPROCS and however many workers run them.
func TestSameBytesWhateverTheCores(t *testing.T) {
	g := grid(t, scenario(t, "retry-storm"), Steps{N: 4}, "token-bucket.capacity=1..40", "token-bucket.rate=50/1s..200/1s")
	var outs []string
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		for _, workers := range []int{0, 1, 3, 7} {
			rows, err := Run(context.Background(), g, Options{Workers: workers})
			require.NoError(t, err)
			outs = append(outs, csvOf(t, rows))
		}
	}
	for _, o := range outs[1:] {
		assert.Equal(t, outs[0], o)
	}
	assert.Equal(t, 1+48, strings.Count(outs[0], "\n"))
}

// Shards are every n-th cell; merged, in any order, they are the one-machine CSV byte for byte.
func TestShardsMergeToTheWholeSweep(t *testing.T) {
	g := grid(t, scenario(t, "replay"), Steps{N: 5}, "token-bucket.capacity=1..40", "token-bucket.rate=50/1s..200/1s")
	rows, err := Run(context.Background(), g, Options{})
	require.NoError(t, err)
	whole := csvOf(t, rows)
	for _, n := range []int{1, 2, 3, 7, 25, 40} {
		var parts []Part
		seen := 0
		for i := n - 1; i >= 0; i-- { // backwards: the order of the inputs does not matter
			shard, err := Run(context.Background(), g, Options{Shard: i, Shards: n})
			require.NoError(t, err)
			seen += len(shard)
			for _, r := range shard {
				assert.Equal(t, i, r.Cell%n)
			}
			text := csvOf(t, shard)
			back, err := ReadCSV(strings.NewReader(text), "shard.csv")
			require.NoError(t, err)
			assert.Equal(t, text, csvOf(t, back), "a shard's CSV reads back to itself")
			parts = append(parts, Part{Name: "shard", Rows: back})
		}
		assert.Equal(t, 25, seen, "n=%d: every cell once", n)
		merged, err := Merge(parts)
		require.NoError(t, err, "n=%d", n)
		assert.Equal(t, whole, csvOf(t, merged), "n=%d", n)
	}

	half := func(i int) Part {
		shard, err := Run(context.Background(), g, Options{Shard: i, Shards: 2})
		require.NoError(t, err)
		return Part{Name: []string{"a.csv", "b.csv"}[i], Rows: shard}
	}
	_, err = Merge([]Part{half(0)})
	assert.EqualError(t, err, "sweep merge: 13 of 25 cells, missing 1, 3, 5, 7, 9, …: a shard left out?")
	_, err = Merge([]Part{half(0), half(1), half(1)})
	assert.EqualError(t, err, "sweep merge: cell 1 is in b.csv and in b.csv: a shard given twice, or shards of different --shard counts")
	other := grid(t, scenario(t, "replay"), Steps{N: 5}, "token-bucket.capacity=2..40", "token-bucket.rate=50/1s..200/1s")
	theirs, err := Run(context.Background(), other, Options{Shard: 1, Shards: 2})
	require.NoError(t, err)
	_, err = Merge([]Part{half(0), {Name: "c.csv", Rows: theirs}})
	assert.ErrorContains(t, err, "shards of different sweeps")
	_, err = Run(context.Background(), g, Options{Shard: 2, Shards: 2})
	assert.EqualError(t, err, "sweep: shard 2 of 2: the index is 0 to 1")
}

// A CSV that is not a sweep's, or was edited so that it no longer adds up, is refused with
// its file, line, column and column name.
func TestReadCSVNamesTheBadField(t *testing.T) {
	g := grid(t, scenario(t, "replay"), Steps{N: 2}, "token-bucket.capacity=1..40")
	rows, err := Run(context.Background(), g, Options{})
	require.NoError(t, err)
	good := csvOf(t, rows)
	lines := strings.SplitAfter(good, "\n")
	edit := func(line int, from, to string) string {
		out := append([]string(nil), lines...)
		out[line] = strings.Replace(out[line], from, to, 1)
		return strings.Join(out, "")
	}
	for _, tc := range []struct{ text, want string }{
		{"", "x.csv: empty: not a sweep CSV"},
		{"t_ns\n0\n", "x.csv:1: not a sweep CSV"},
		{edit(2, ",1919,", ",x,"), `x.csv:3:`},
		{edit(2, ",1919,", ",1918,"), "offered: 1918 offered is not admitted + refused + timed_out + gave_up + waiting = 1919"},
		{edit(1, ",0,2,", ",5,2,"), "cell: cell 5 of a grid of 2"},
		{editField(lines, 1, derivedColumn, "49.000000"), "refused_pct: \"49.000000\" does not follow from the counts"},
		{editField(lines, 1, 26, "1.5"), `fairness: "1.5" is not a fairness index, a number in (0, 1]`},
		{editField(lines, 1, 26, ""), `fairness: "" is not a fairness index, a number in (0, 1]`},
		{editField(lines, 1, 25, "0"), `for no keys: a cell without keys has no fairness`},
		{editField(lines, 1, 25, "-1"), `keys: "-1" is not a whole number of at least 0`},
	} {
		_, err := ReadCSV(strings.NewReader(tc.text), "x.csv")
		require.Error(t, err, tc.want)
		assert.Contains(t, err.Error(), tc.want)
	}
	_, err = ReadCSV(strings.NewReader(edit(2, ",1919,", ",x,")), "x.csv")
	assert.Regexp(t, `^x\.csv:3:\d+: offered: "x" is not a whole number of at least 0$`, err.Error())
}

// editField is lines with field col of line replaced by value.
func editField(lines []string, line, col int, value string) string {
	out := append([]string(nil), lines...)
	rec, err := csv.NewReader(strings.NewReader(out[line])).Read()
	if err != nil {
		panic(err)
	}
	rec[col] = value
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(rec)
	w.Flush()
	out[line] = b.String()
	return strings.Join(out, "")
}

// Assemble lays rows out as their grid, for one dimension or two, from a run or a merge alike.
func TestAssemble(t *testing.T) {
	g := grid(t, scenario(t, "retry-storm"), Steps{N: 3}, "token-bucket.capacity=1..40", "token-bucket.rate=50/1s..200/1s")
	rows, err := Run(context.Background(), g, Options{})
	require.NoError(t, err)
	res, err := Assemble(rows)
	require.NoError(t, err)
	assert.Equal(t, []string{"immediate retry", "backoff + jitter", "retry-after hint"}, res.Lanes)
	require.Len(t, res.Dims, 2)
	assert.Equal(t, "1 21 40", texts(res.Dims[0]), "20.5 rounds away from zero")
	assert.Equal(t, "50/1s 125/1s 200/1s", texts(res.Dims[1]))
	assert.Equal(t, "token-bucket:capacity=21,rate=200/1s", res.At(1, 1, 2).Spec)
	assert.Equal(t, "backoff + jitter", res.At(1, 1, 2).Lane)

	g = grid(t, scenario(t, "replay"), Steps{N: 4}, "token-bucket.capacity=1..40")
	rows, err = Run(context.Background(), g, Options{})
	require.NoError(t, err)
	res, err = Assemble(rows)
	require.NoError(t, err)
	require.Len(t, res.Dims, 1)
	assert.Equal(t, "token-bucket", string(res.Dims[0].Kind))
	assert.Equal(t, "token-bucket:capacity=27,rate=100/1s", res.At(0, 2).Spec)
	_, err = Assemble(rows[:3])
	assert.ErrorContains(t, err, "3 of 4 cells")
}

// The sweep and the fit agree, exactly: with a dropping client, a token bucket over a trace
// refuses nothing at capacity σ(ρ) and above, and something below it.
func TestSweepAgreesWithTheBurstinessCurve(t *testing.T) {
	sc := scenario(t, "replay")
	sc.Lanes = sc.Lanes[:1]
	g := grid(t, sc, Steps{N: 16}, "token-bucket.rate=100/1s..600/1s", "token-bucket.capacity=1..450")
	rows, err := Run(context.Background(), g, Options{})
	require.NoError(t, err)
	res, err := Assemble(rows)
	require.NoError(t, err)
	var rates []limiters.Rate
	for _, v := range res.Dims[0].Values {
		r, err := limiters.ParseRate(v.Text)
		require.NoError(t, err)
		rates = append(rates, r)
	}
	curve, err := fit.Curve(context.Background(), fit.Scenario(sc), rates)
	require.NoError(t, err)
	both := 0
	for i, p := range curve {
		for j, v := range res.Dims[1].Values {
			capacity := int64(v.Num)
			refused := res.At(0, i, j).Refused
			if capacity >= p.Capacity {
				assert.Zero(t, refused, "rate %s capacity %d ≥ σ = %d", p.RateText, capacity, p.Capacity)
			} else {
				assert.Positive(t, refused, "rate %s capacity %d < σ = %d", p.RateText, capacity, p.Capacity)
			}
			if j > 0 && int64(res.Dims[1].Values[j-1].Num) < p.Capacity && capacity >= p.Capacity {
				both++
			}
		}
	}
	assert.Positive(t, both, "the grid crosses the curve")
}

// Cancelling stops a sweep promptly with ctx's error and no rows.
func TestCancelStopsTheSweep(t *testing.T) {
	sc := scenario(t, "poisson")
	sc.Horizon = 1000 * time.Hour
	g := grid(t, sc, Steps{N: 3}, "token-bucket.capacity=1..40")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	var p Progress
	rows, err := Run(ctx, g, Options{Progress: &p})
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, rows)
	done, total := p.Done()
	assert.Equal(t, int64(3), total)
	assert.Less(t, done, int64(4))
}
