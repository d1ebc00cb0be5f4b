package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/replicate"
)

// replicationsUsage is the --replications flag's help, shared by run and plot.
const replicationsUsage = "run `K` replications, seeds SEED, SEED+1, …, SEED+K−1, in parallel, and report every metric as mean ± 95% confidence interval (Student t, K−1 degrees of freedom; with K = 1 the values stand alone, without an interval) (default: one run)"

// checkReplications refuses a K out of range; 0 means the flag was not given.
func checkReplications(k int, set bool) error {
	if set && (k < 1 || k > replicate.MaxReplications) {
		return usageErrorf("--replications %d: must be 1 to %d", k, replicate.MaxReplications)
	}
	return nil
}

// replicateWithProgress runs k replications of sc, with a progress bar on a terminal.
func replicateWithProgress(ctx context.Context, e *env, sc *engine.Scenario, k int) (*replicate.Set, error) {
	if err := checkBudgetOf(e, sc, k); err != nil {
		return nil, err
	}
	progress := replicate.NewProgress(k)
	var set *replicate.Set
	err := withProgressBar(e, fmt.Sprintf("%s ×%d", sc.Name, k), progress.Fraction, func() error {
		var err error
		set, err = replicate.Run(ctx, sc, k, progress)
		return err
	})
	return set, err
}

// replicationsTitle names the scenario, the seeds and the interval.
func replicationsTitle(set *replicate.Set) string {
	k := set.K()
	seeds := fmt.Sprintf("seeds %d…%d", set.Seeds[0], set.Seeds[k-1])
	what := fmt.Sprintf("mean ± 95%% interval (Student t, %d degrees of freedom)", k-1)
	if k == 1 {
		seeds, what = fmt.Sprintf("seed %d", set.Seeds[0]), "no interval: 1 replication"
	}
	return fmt.Sprintf("%s — %d replication%s (%s), %s of virtual time each; %s", set.First.Scenario, k,
		map[bool]string{true: "", false: "s"}[k == 1], seeds, limiters.FormatDuration(set.Horizon()), what)
}

// plusMinus prints mean ± half to the precision the half-width warrants: two significant
// digits of it, and the mean to the same decimal place (1003.4 ± 12.1 → "1003 ± 12",
// 0.50072 ± 0.00252 → "0.5007 ± 0.0025"). A zero half-width (every seed agrees) prints
// the mean to four significant digits (fourDigits); NaN (one replication) prints the mean
// alone so.
func plusMinus(mean, half float64) string {
	if math.IsNaN(mean) {
		return "-"
	}
	if math.IsNaN(half) {
		return fourDigits(mean)
	}
	if half == 0 {
		return fourDigits(mean) + " ± 0"
	}
	decimals := max(1-int(math.Floor(math.Log10(half))), 0)
	return strconv.FormatFloat(mean, 'f', decimals, 64) + " ± " + strconv.FormatFloat(half, 'f', decimals, 64)
}

// fourDigits prints v exactly when it is whole, else to four significant digits in fixed
// notation without trailing zeros: 150, 72.67, 45.5, 0.5007.
func fourDigits(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	text := strconv.FormatFloat(v, 'f', max(3-int(math.Floor(math.Log10(math.Abs(v)))), 0), 64)
	if strings.Contains(text, ".") {
		text = strings.TrimRight(strings.TrimRight(text, "0"), ".")
	}
	return text
}

// durationPlusMinus is plusMinus for nanoseconds, in the largest unit (h, m, s, ms, µs, ns)
// the mean or the half-width reaches: 18.40ms ± 0.31ms, 49.92ms ± 0, 0s ± 0.
func durationPlusMinus(mean, half float64) string {
	if math.IsNaN(mean) {
		return "-"
	}
	ref := math.Abs(mean)
	if !math.IsNaN(half) {
		ref = max(ref, half)
	}
	if ref == 0 {
		return strings.Replace(plusMinus(0, half), "0", "0s", 1)
	}
	units := []struct {
		d    time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "µs"}, {time.Nanosecond, "ns"}}
	u := units[len(units)-1]
	for _, c := range units {
		if ref >= float64(c.d) {
			u = c
			break
		}
	}
	text := plusMinus(mean/float64(u.d), half/float64(u.d))
	if i := strings.Index(text, " ± "); i >= 0 && half == 0 {
		return text[:i] + u.name + " ± 0"
	} else if i >= 0 {
		return text[:i] + u.name + " ± " + text[i+len(" ± "):] + u.name
	}
	return text + u.name
}

// replicationColumn is one column of the replications table: a metric, how it prints.
type replicationColumn struct {
	header, metric string
	format         func(mean, half float64) string
	optional       bool // shown only when some lane's mean is not zero
}

func ratioPercent(mean, half float64) string { return plusMinus(100*mean, 100*half) }

var replicationColumns = []replicationColumn{
	{"offered", "offered", plusMinus, false},
	{"admitted", "admitted", plusMinus, false},
	{"refused", "refused", plusMinus, false},
	{"timed out", "timed_out", plusMinus, true},
	{"gave up", "gave_up", plusMinus, true},
	{"waiting", "waiting", plusMinus, true},
	{"admit %", "admit_ratio", ratioPercent, false},
	{"max in window", "max_in_window", plusMinus, false},
	{"max in flight", "max_in_flight", plusMinus, false},
	{"ds failures", "failed", plusMinus, false},
	{"p50 wait", "wait_p50_ns", durationPlusMinus, false},
	{"p99 wait", "wait_p99_ns", durationPlusMinus, false},
}

// replicationRows are the table's header and one row per lane: the columns that apply
// (the optional ones only when some lane's mean is not zero), every cell mean ± half-width.
func replicationRows(set *replicate.Set) [][]string {
	var cols []replicationColumn
	for _, c := range replicationColumns {
		keep := !c.optional
		for _, l := range set.Lanes {
			keep = keep || l.Estimate(replicate.MetricIndex(c.metric)).Mean != 0
		}
		if keep {
			cols = append(cols, c)
		}
	}
	rows := [][]string{{"limiter"}}
	for _, c := range cols {
		rows[0] = append(rows[0], c.header)
	}
	for _, l := range set.Lanes {
		row := []string{l.Name}
		for _, c := range cols {
			iv := l.Estimate(replicate.MetricIndex(c.metric))
			row = append(row, c.format(iv.Mean, iv.HalfWidth))
		}
		rows = append(rows, row)
	}
	return rows
}

// replicationsTable is the table of means and intervals, one row per lane, in the stable
// plain layout (numbers right-aligned).
func replicationsTable(set *replicate.Set) (string, error) {
	rows := replicationRows(set)
	width := 0
	for _, r := range rows {
		width = max(width, len([]rune(r[0])))
	}
	var b bytes.Buffer
	b.WriteString(replicationsTitle(set) + "\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, r := range rows {
		r[0] += strings.Repeat(" ", width-len([]rune(r[0])))
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return "", err
	}
	return b.String(), nil
}

// ciName and meanName are a metric's CSV columns and JSON keys.
func meanName(m replicate.Metric) string { return m.Name + "_mean" }
func ciName(m replicate.Metric) string   { return m.Name + "_ci95" }

// number is v for CSV: shortest exact decimal; "" for NaN (nothing measured, or no interval).
func number(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// writeReplicationsCSV prints one row per lane: limiter, replications, then every metric's
// mean and interval half-width (NAME_mean, NAME_ci95), durations in nanoseconds. Empty
// cells: the lane has nothing to measure (no downstream), or K = 1 (no interval).
func writeReplicationsCSV(w io.Writer, set *replicate.Set) error {
	cw := csv.NewWriter(w)
	header := []string{"limiter", "replications", "seed_first"}
	for _, m := range replicate.Metrics {
		header = append(header, meanName(m), ciName(m))
	}
	cw.Write(header)
	for _, l := range set.Lanes {
		row := []string{l.Name, strconv.Itoa(set.K()), strconv.FormatUint(set.Seeds[0], 10)}
		for m := range replicate.Metrics {
			iv := l.Estimate(m)
			row = append(row, number(iv.Mean), number(iv.HalfWidth))
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// writeReplicationsJSON prints the summary with keys in a stable order: the run's facts, then
// a lane object per lane with NAME_mean and NAME_ci95 for every metric (null: nothing
// measured, or no interval with K = 1).
func writeReplicationsJSON(w io.Writer, set *replicate.Set) error {
	var b bytes.Buffer
	field := func(indent, key string, v any, last bool) error {
		enc, err := json.Marshal(v)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s%q: %s%s\n", indent, key, enc, map[bool]string{true: "", false: ","}[last])
		return nil
	}
	orNull := func(v float64) any {
		if math.IsNaN(v) {
			return nil
		}
		return v
	}
	b.WriteString("{\n")
	for _, f := range []struct {
		key string
		v   any
	}{{"scenario", set.First.Scenario}, {"replications", set.K()}, {"seed_first", set.Seeds[0]},
		{"seed_last", set.Seeds[set.K()-1]}, {"horizon_ns", set.Horizon()}, {"confidence", 0.95},
		{"interval", "student-t"}} {
		if err := field("  ", f.key, f.v, false); err != nil {
			return err
		}
	}
	b.WriteString("  \"lanes\": [\n")
	for i, l := range set.Lanes {
		b.WriteString("    {\n")
		if err := field("      ", "name", l.Name, false); err != nil {
			return err
		}
		if err := field("      ", "stack", l.Stack, false); err != nil {
			return err
		}
		for m, metric := range replicate.Metrics {
			iv := l.Estimate(m)
			if err := field("      ", meanName(metric), orNull(iv.Mean), false); err != nil {
				return err
			}
			if err := field("      ", ciName(metric), orNull(iv.HalfWidth), m == len(replicate.Metrics)-1); err != nil {
				return err
			}
		}
		b.WriteString("    }" + map[bool]string{true: "", false: ","}[i == len(set.Lanes)-1] + "\n")
	}
	b.WriteString("  ]\n}\n")
	_, err := w.Write(b.Bytes())
	return err
}
