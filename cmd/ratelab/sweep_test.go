package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/sweep"
)

var replaySweep = []string{"sweep", "replay", "--vary", "token-bucket.rate=100/1s..600/1s", "--vary", "token-bucket.capacity=10..450", "--steps", "6x5"}

// The table prints each metric as the heatmap reads it, the second --vary down from its
// largest value; the CSV has the stable columns, one row per cell.
func TestSweepTableAndCSV(t *testing.T) {
	out, stderr, err := ratelab(t, replaySweep...)
	require.NoError(t, err)
	assert.Empty(t, stderr)
	want := "replay: 30 cells = 1 lane × token-bucket.rate (6 values) × token-bucket.capacity (5 values); seed 1, 20s of virtual time\n\n" +
		"refused%: requests refused (not retried), % of offered\n" +
		"  capacity \\ rate  100/1s  200/1s  300/1s  400/1s  500/1s  600/1s\n" +
		"              450       0       0       0       0       0       0\n" +
		"              340     3.2       0       0       0       0       0\n" +
		"              230     9.0     2.0       0       0       0       0\n" +
		"              120    16.1     9.9     4.1     0.9     0.3       0\n" +
		"               10    33.2    27.1    21.3    15.4    11.8    11.2\n"
	assert.Equal(t, want, out)

	csvOut, _, err := ratelab(t, append(replaySweep, "--format", "csv")...)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(csvOut, "\n"), "\n")
	require.Len(t, lines, 31)
	assert.Equal(t, strings.Join(sweep.Header, ","), lines[0])
	rows, err := sweep.ReadCSV(strings.NewReader(csvOut), "out.csv")
	require.NoError(t, err)
	assert.Equal(t, "token-bucket:capacity=10,rate=100/1s", rows[0].Spec)
	assert.Equal(t, "token-bucket:capacity=450,rate=600/1s", rows[29].Spec)
	for _, r := range rows {
		assert.Equal(t, r.Offered, r.Admitted+r.Refused+r.TimedOut+r.GaveUp+r.Waiting)
	}

	// One dimension over the lanes it applies to: one column per lane.
	out, _, err = ratelab(t, "sweep", "retry-storm", "--vary", "token-bucket.capacity=1..100", "--steps", "3", "--metric", "not_admitted%", "--metric", "p99")
	require.NoError(t, err)
	assert.Contains(t, out, "retry-storm: 9 cells = 3 lanes × token-bucket.capacity (3 values)")
	assert.Contains(t, out, "token-bucket.capacity  immediate retry  backoff + jitter  retry-after hint\n")
	assert.Contains(t, out, "\np99: 99th percentile wait of admitted requests\n")
}

// The bytes do not depend on the cores: GOMAXPROCS 1 and 2, and any --jobs.
func TestSweepSameBytesWhateverGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var outs []string
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		for _, jobs := range []string{"", "1", "3"} {
			args := append(append([]string(nil), replaySweep...), "--format", "csv")
			if jobs != "" {
				args = append(args, "--jobs", jobs)
			}
			out, _, err := ratelab(t, args...)
			require.NoError(t, err)
			outs = append(outs, out)
		}
	}
	for _, o := range outs[1:] {
		assert.Equal(t, outs[0], o)
	}
}

// Shards written to files and merged, in any order, are the one-machine CSV byte for byte, and
// the figures drawn from the merge are the one-machine figures (no σ(ρ) on either: poisson is
// no trace).
func TestSweepShardsMergeToTheOneMachineRun(t *testing.T) {
	dir := t.TempDir()
	base := []string{"sweep", "poisson", "--horizon", "10s", "--vary", "token-bucket.capacity=1..50", "--vary", "token-bucket.rate=80/1s..120/1s", "--steps", "4x3"}
	whole, _, err := ratelab(t, append(base, "--format", "csv", "--out", filepath.Join(dir, "one"), "--metric", "refused%", "--metric", "rate_overshoot")...)
	require.NoError(t, err)
	var files []string
	for _, shard := range []string{"2/3", "0/3", "1/3"} {
		out, _, err := ratelab(t, append(base, "--shard", shard)...)
		require.NoError(t, err)
		assert.Less(t, len(out), len(whole))
		path := filepath.Join(dir, "shard-"+shard[:1]+".csv")
		require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
		files = append(files, path)
	}
	merged, stderr, err := ratelab(t, append(append([]string{"sweep", "merge"}, files...), "--out", filepath.Join(dir, "merged"), "--metric", "refused%", "--metric", "rate_overshoot")...)
	require.NoError(t, err)
	assert.Equal(t, whole, merged)
	assert.Equal(t, filepath.Join(dir, "merged", "poisson-sweep-refused-pct.png")+"\n"+filepath.Join(dir, "merged", "poisson-sweep-rate-overshoot.png")+"\n", stderr)
	for _, name := range []string{"poisson-sweep-refused-pct.png", "poisson-sweep-rate-overshoot.png"} {
		one, err := os.ReadFile(filepath.Join(dir, "one", name))
		require.NoError(t, err)
		two, err := os.ReadFile(filepath.Join(dir, "merged", name))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(one, two), "%s: the merged figure is the one-machine figure", name)
		_, err = png.Decode(bytes.NewReader(one))
		require.NoError(t, err)
	}
	// The table of a merge is the sweep's table.
	table, _, err := ratelab(t, base...)
	require.NoError(t, err)
	mergedTable, _, err := ratelab(t, append(append([]string{"sweep", "merge"}, files...), "--format", "table")...)
	require.NoError(t, err)
	assert.Equal(t, table, mergedTable)
	// A shard left out, or given twice, is a failure naming the cells or the file.
	_, _, err = ratelab(t, "sweep", "merge", files[0], files[1])
	require.Error(t, err)
	assert.False(t, isUsage(err))
	assert.Equal(t, "sweep merge: 8 of 12 cells, missing 1, 4, 7, 10: a shard left out?", err.Error())
	_, _, err = ratelab(t, "sweep", "merge", files[0], files[1], files[2], files[2])
	require.Error(t, err)
	assert.Equal(t, "sweep merge: "+files[2]+" and "+files[2]+" are the same file: give each shard once", err.Error())
	// One shard may come from standard input.
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	fromStdin, _, err := ratelabIn(t, string(data), "sweep", "merge", "-", files[1], files[2])
	require.NoError(t, err)
	assert.Equal(t, whole, fromStdin)
}

// A trace scenario swept over a token bucket's rate and capacity gets σ(ρ) over its heatmap;
// --image both writes PNG and SVG.
func TestSweepFiguresDrawSigmaOverATrace(t *testing.T) {
	dir := t.TempDir()
	_, stderr, err := ratelab(t, append(replaySweep, "--out", dir, "--image", "both")...)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "replay-sweep-refused-pct.png")+"\n"+filepath.Join(dir, "replay-sweep-refused-pct.svg")+"\n", stderr)
	svg, err := os.ReadFile(filepath.Join(dir, "replay-sweep-refused-pct.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "σ(ρ): the least capacity that admits every request")
	assert.Contains(t, string(svg), "% of offered", "the colour bar names its unit")
	// One dimension draws a line chart.
	_, _, err = ratelab(t, "sweep", "retry-storm", "--vary", "token-bucket.capacity=1..100", "--steps", "3", "--out", dir, "--image", "svg")
	require.NoError(t, err)
	svg, err = os.ReadFile(filepath.Join(dir, "retry-storm-sweep-refused-pct.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "retry-storm: refused % by token-bucket.capacity")
}

// Every mistake is a usage error of one line that says what is wrong, before anything runs.
func TestSweepUsageErrors(t *testing.T) {
	v := "token-bucket.capacity=1..9"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "replay"}, "sweep: --vary TARGET.FIELD=VALUES is required, e.g. --vary token-bucket.capacity=1..100 (once, or twice for a heatmap)"},
		{[]string{"sweep", "replay", "--vary", "token-bukcet.capacity=1..9"}, `--vary token-bukcet.capacity=1..9: "token-bukcet" is neither a limiter kind nor a lane of replay (did you mean token-bucket?)`},
		{[]string{"sweep", "replay", "--vary", "token-bucket.capcity=1..9"}, `--vary token-bucket.capcity=1..9: token-bucket has no field "capcity" (did you mean capacity?) (fields: capacity, rate)`},
		{[]string{"sweep", "replay", "--vary", "nginx.burst=1..9"}, "--vary nginx.burst=1..9: no lane of replay has a nginx stage"},
		{[]string{"sweep", "replay", "--vary", "token-bucket.capacity=0..9"}, "--vary token-bucket.capacity=0..9: capacity=0 in lane token-bucket:capacity=10,rate=100/1s: "},
		{[]string{"sweep", "replay", "--vary", v, "--vary", v}, "--vary token-bucket.capacity=1..9: token-bucket.capacity is already varied by token-bucket.capacity=1..9"},
		{[]string{"sweep", "replay", "--vary", v, "--vary", v, "--vary", v}, "--vary token-bucket.capacity=1..9: a sweep varies at most 2 fields"},
		{[]string{"sweep", "replay", "--vary", v, "--steps", "1"}, "--steps 1: a range takes 2 to 1000 values"},
		{[]string{"sweep", "replay", "--vary", v, "--steps", "4x4"}, "--steps 4x4: give N, or NxM with one N per --vary (1 here)"},
		{[]string{"sweep", "replay", "--vary", v, "--steps", "many"}, `--steps many: "many" is not a whole number`},
		{[]string{"sweep", "replay", "--vary", v, "--scale", "logarithmic"}, "--scale logarithmic: not linear or log"},
		{[]string{"sweep", "replay", "--vary", v, "--scale", "lg"}, "--scale lg: not linear or log (did you mean log?)"},
		{[]string{"sweep", "replay", "--vary", v, "--metric", "refused"}, "--metric refused: no such metric (did you mean refused%?) (metrics: refused%, not_admitted%, admitted%, p50, p99, rate_overshoot, overshoot, fairness, failed)"},
		{[]string{"sweep", "replay", "--vary", v, "--format", "json"}, "--format json: not table or csv"},
		{[]string{"sweep", "replay", "--vary", v, "--image", "gif"}, "--image gif: not png, svg or both"},
		{[]string{"sweep", "replay", "--vary", v, "--shard", "3/3"}, "--shard 3/3: I runs from 0 to 2 (N−1), as Kubernetes' JOB_COMPLETION_INDEX does"},
		{[]string{"sweep", "replay", "--vary", v, "--shard", "1"}, "--shard 1: not I/N, e.g. 0/4 (shard I of N, I from 0 to N−1)"},
		{[]string{"sweep", "replay", "--vary", v, "--shard", "0/0"}, "--shard 0/0: N must be at least 1"},
		{[]string{"sweep", "replay", "--vary", v, "--shard", "0/2", "--format", "table"}, "sweep: --shard writes CSV for ratelab sweep merge, not --format table"},
		{[]string{"sweep", "replay", "--vary", v, "--shard", "0/2", "--out", "x"}, "sweep: --out draws every cell; a shard has a part of them: draw the figures with ratelab sweep merge SHARDS… --out DIR"},
		{[]string{"sweep", "replay", "--vary", v, "--jobs", "0"}, "--jobs 0: must be at least 1"},
		{[]string{"sweep", "replay", "--vary", v, "--out", "-"}, "--out -: the figures are files"},
		{[]string{"sweep", "replay", "--vary", v, "--vary", "sliding-window.limit=1..9"}, "no lane of replay has a stage for every --vary (token-bucket and sliding-window); lanes: "},
		{[]string{"sweep", "replay", "--vray", v}, "sweep: unknown flag --vray (did you mean --vary?)"},
		{[]string{"sweep", "merge"}, "sweep merge: give the shards' CSV files, e.g. ratelab sweep merge shard-*.csv"},
		{[]string{"sweep", "merge", "-", "-"}, "sweep merge: - (standard input) given twice"},
	} {
		_, _, err := ratelab(t, tc.args...)
		require.Error(t, err, "%v", tc.args)
		assert.True(t, isUsage(err), "%v: %v is a usage error (exit 2)", tc.args, err)
		assert.True(t, strings.HasPrefix(err.Error(), tc.want), "%v:\n got %s\nwant %s", tc.args, err, tc.want)
		assert.NotContains(t, err.Error(), "\n", "one line")
	}
	// A file that is not a sweep's CSV is a failure naming it.
	dir := t.TempDir()
	path := filepath.Join(dir, "x.csv")
	require.NoError(t, os.WriteFile(path, []byte("t_ns\n0\n"), 0o644))
	_, _, err := ratelab(t, "sweep", "merge", path)
	require.Error(t, err)
	assert.False(t, isUsage(err))
	assert.Equal(t, path+":1: not a sweep CSV: the header is not ratelab sweep's (sweep,scenario,seed,horizon_ns,…)", err.Error())
}

// sweep merge has its own help, as `ratelab sweep merge -h` and `ratelab help sweep merge`.
func TestSweepMergeHelp(t *testing.T) {
	a, _, err := ratelab(t, "sweep", "merge", "-h")
	require.NoError(t, err)
	b, _, err := ratelab(t, "help", "sweep", "merge")
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.True(t, strings.HasPrefix(a, "Usage: ratelab sweep merge SHARD.csv... [flags]"), a)
	c, _, err := ratelab(t, "sweep", "-h")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(c, "Usage: ratelab sweep [SCENARIO"), c)
}

// --metric fairness is Jain's index over the keys, to 0.001; a scenario without keys is a
// usage error naming it, before any cell runs, and so is a merge of such a sweep's shards.
func TestSweepFairness(t *testing.T) {
	out, _, err := ratelab(t, "sweep", "noisy-neighbour", "--limiter", "keys(max=1000):token-bucket:capacity=20,rate=10/1s",
		"--vary", "token-bucket.capacity=1..100", "--steps", "2", "--metric", "fairness")
	require.NoError(t, err)
	assert.Equal(t, "noisy-neighbour: 2 cells = 1 lane × token-bucket.capacity (2 values); seed 1, 10s of virtual time\n\n"+
		"fairness: Jain's index of the permits each key was admitted, (Σx)²/(n·Σx²) over the n keys: 1 every key alike, 1/n one key got everything\n"+
		"  token-bucket.capacity  keys(max=1000,evict=lru):token-bucket:capacity=*,rate=10/1s\n"+
		"                      1                                                        0.933\n"+
		"                    100                                                        0.859\n", out)

	_, _, err = ratelab(t, "sweep", "steady", "--vary", "token-bucket.capacity=1..100", "--steps", "2", "--metric", "fairness")
	require.Error(t, err)
	assert.True(t, isUsage(err))
	assert.Equal(t, "--metric fairness: scenario steady has no keys: its requests all carry one key and no stage is keyed, so there is no per-key fairness to measure (sweep a scenario whose sources draw keys, such as noisy-neighbour)", err.Error())

	shard, _, err := ratelab(t, "sweep", "steady", "--vary", "token-bucket.capacity=1..100", "--steps", "2", "--shard", "0/1")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "shard.csv")
	require.NoError(t, os.WriteFile(path, []byte(shard), 0o644))
	_, _, err = ratelab(t, "sweep", "merge", path, "--format", "table", "--metric", "fairness")
	require.Error(t, err)
	assert.Equal(t, "--metric fairness: scenario steady has no keys: its requests all carry one key and no stage is keyed, so there is no per-key fairness to measure (sweep a scenario whose sources draw keys, such as noisy-neighbour)", err.Error())
}

// A sweep of 5000 cells, run on one machine and as 7 shards merged, is the same bytes: the
// merge streams the shards (sweep.MergeCSV) and writes each row as it comes, after a first
// pass that finds them whole. A shard left out writes nothing.
func TestSweepMergeOfManyCellsStreams(t *testing.T) {
	dir := t.TempDir()
	base := []string{"sweep", "steady", "--horizon", "50ms", "--vary", "token-bucket.capacity=1..100", "--vary", "token-bucket.rate=10/1s..1000/1s", "--steps", "100x50"}
	whole, _, err := ratelab(t, append(base, "--format", "csv")...)
	require.NoError(t, err)
	require.Equal(t, 5001, strings.Count(whole, "\n"))
	var files []string
	for i := range 7 {
		out, _, err := ratelab(t, append(base, "--shard", strconv.Itoa(i)+"/7")...)
		require.NoError(t, err)
		path := filepath.Join(dir, "shard-"+strconv.Itoa(i)+".csv")
		require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
		files = append(files, path)
	}
	merged, _, err := ratelab(t, append([]string{"sweep", "merge"}, files...)...)
	require.NoError(t, err)
	assert.True(t, merged == whole, "the merged CSV is the one-machine CSV, byte for byte")
	out, _, err := ratelab(t, append([]string{"sweep", "merge"}, files[1:]...)...)
	assert.EqualError(t, err, "sweep merge: 4285 of 5000 cells, missing 0, 7, 14, 21, 28, …: a shard left out?")
	assert.Empty(t, out, "nothing written from shards that are not a whole sweep")
}
