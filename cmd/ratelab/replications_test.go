package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/replicate"
)

// The table: a title naming the seeds and the interval, and every cell mean ± half-width.
func TestReplicationsTable(t *testing.T) {
	out, _, err := ratelab(t, "run", "poisson", "--replications", "4", "--horizon", "5s")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Equal(t, "poisson — 4 replications (seeds 1…4), 5s of virtual time each; mean ± 95% interval (Student t, 3 degrees of freedom)", lines[0])
	require.Len(t, lines, 2+6, out)
	assert.Contains(t, lines[1], "admitted")
	for _, l := range lines[2:] {
		assert.Equal(t, 9, strings.Count(l, " ± "), l) // every column but the limiter
	}
	one, _, err := ratelab(t, "run", "poisson", "--replications", "1", "--horizon", "5s", "--seed", "9")
	require.NoError(t, err)
	assert.Contains(t, one, "poisson — 1 replication (seed 9), 5s of virtual time each; no interval: 1 replication")
	assert.NotContains(t, one, "±")
}

// The CSV: stable NAME_mean, NAME_ci95 columns for every metric; the outcome means add up;
// with K = 1 the ci95 cells are empty; the first replication's means are the plain run's.
func TestReplicationsCSV(t *testing.T) {
	out, _, err := ratelab(t, "run", "retry-storm", "--replications", "3", "--format", "csv")
	require.NoError(t, err)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	header := rows[0]
	require.Equal(t, []string{"limiter", "replications", "seed_first", "offered_mean", "offered_ci95", "admitted_mean", "admitted_ci95"}, header[:7])
	require.Len(t, header, 3+2*len(replicate.Metrics))
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, name := range []string{"wait_p99_ns_mean", "mean_in_service_ci95", "max_in_window_mean", "admit_ratio_ci95"} {
		require.Contains(t, col, name)
	}
	value := func(row []string, name string) float64 {
		v, err := strconv.ParseFloat(row[col[name]], 64)
		require.NoError(t, err, name)
		return v
	}
	for _, row := range rows[1:] {
		assert.Equal(t, "3", row[1])
		sum := 0.0
		for _, n := range []string{"admitted", "refused", "timed_out", "gave_up", "waiting"} {
			sum += value(row, n+"_mean")
		}
		assert.InDelta(t, value(row, "offered_mean"), sum, 1e-6, "offered = admitted + refused + timed_out + gave_up + waiting")
		assert.Positive(t, value(row, "offered_ci95"), "Poisson arrivals differ by seed")
		assert.Empty(t, row[col["mean_in_service_mean"]], "no downstream, nothing measured")
	}
	single, _, err := ratelab(t, "run", "retry-storm", "--replications", "1", "--format", "csv")
	require.NoError(t, err)
	rows1, err := csv.NewReader(strings.NewReader(single)).ReadAll()
	require.NoError(t, err)
	plain, _, err := ratelab(t, "run", "retry-storm", "--format", "csv")
	require.NoError(t, err)
	plainRows, err := csv.NewReader(strings.NewReader(plain)).ReadAll()
	require.NoError(t, err)
	for i, row := range rows1[1:] {
		assert.Empty(t, row[col["admitted_ci95"]])
		assert.Equal(t, plainRows[i+1][3], row[col["admitted_mean"]], "K = 1 is the plain run")
	}
}

// The JSON: the run's facts, then per lane NAME_mean and NAME_ci95 (null when there is
// none), identical whatever GOMAXPROCS.
func TestReplicationsJSONIsStableAcrossGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var outs []string
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		out, _, err := ratelab(t, "run", "slow-downstream", "--replications", "5", "--horizon", "10s", "--format", "json")
		require.NoError(t, err)
		outs = append(outs, out)
	}
	require.Equal(t, outs[0], outs[1])
	require.Equal(t, outs[0], outs[2])
	var doc struct {
		Scenario     string                   `json:"scenario"`
		Replications int                      `json:"replications"`
		SeedFirst    uint64                   `json:"seed_first"`
		SeedLast     uint64                   `json:"seed_last"`
		Lanes        []map[string]interface{} `json:"lanes"`
	}
	require.NoError(t, json.Unmarshal([]byte(outs[0]), &doc))
	assert.Equal(t, "slow-downstream", doc.Scenario)
	assert.Equal(t, 5, doc.Replications)
	assert.Equal(t, []uint64{1, 5}, []uint64{doc.SeedFirst, doc.SeedLast})
	require.Len(t, doc.Lanes, 3)
	for _, l := range doc.Lanes {
		for _, m := range replicate.Metrics {
			assert.Contains(t, l, m.Name+"_mean")
			assert.Contains(t, l, m.Name+"_ci95")
		}
		assert.Positive(t, l["mean_in_service_mean"], "slow-downstream has a downstream")
	}
	assert.Less(t, strings.Index(outs[0], `"offered_mean"`), strings.Index(outs[0], `"admitted_mean"`), "keys in Metrics order")
}

// plot --replications K writes the rate chart with its band: a PNG named for K.
func TestPlotReplicationsWritesTheBandChart(t *testing.T) {
	dir := t.TempDir()
	out, _, err := ratelab(t, "plot", "poisson", "--replications", "3", "--horizon", "2s", "--out", dir)
	require.NoError(t, err)
	path := filepath.Join(dir, "poisson-rate-3x.png")
	assert.Equal(t, path+"\n", out)
	img, err := os.ReadFile(path)
	require.NoError(t, err)
	_, err = png.Decode(bytes.NewReader(img))
	require.NoError(t, err)
	svg, _, err := ratelab(t, "plot", "poisson", "--replications", "3", "--horizon", "2s", "--chart", "rate", "--format", "svg", "--out", "-")
	require.NoError(t, err)
	assert.Contains(t, svg, "95% interval of admitted over 3 seeds")
}

func TestPlusMinus(t *testing.T) {
	for _, c := range []struct {
		mean, half float64
		want       string
	}{
		{1003.4, 12.1, "1003 ± 12"},
		{0.50072, 0.00252, "0.5007 ± 0.0025"},
		{5006, 20.08, "5006 ± 20"},
		{96.7234, 0.5311, "96.72 ± 0.53"},
		{150, 0, "150 ± 0"},
		{72.666666, 0, "72.67 ± 0"},
		{45.5, 0, "45.5 ± 0"},
		{1e-7, 0, "0.0000001 ± 0"},
		{2936.2, math.NaN(), "2936"},
		{0.5007123, math.NaN(), "0.5007"},
		{math.NaN(), math.NaN(), "-"},
	} {
		assert.Equal(t, c.want, plusMinus(c.mean, c.half), "%g ± %g", c.mean, c.half)
	}
	for _, c := range []struct {
		mean, half float64
		want       string
	}{
		{18.4e6, 0.31e6, "18.40ms ± 0.31ms"},
		{0, 0, "0s ± 0"},
		{49.92e6, 0, "49.92ms ± 0"},
		{0, math.NaN(), "0s"},
		{2.5e9, 1.2e8, "2.50s ± 0.12s"},
		{0, 4e3, "0.0µs ± 4.0µs"},
		{950, 12, "950ns ± 12ns"},
	} {
		assert.Equal(t, c.want, durationPlusMinus(c.mean, c.half), "%g ± %g", c.mean, c.half)
	}
}
