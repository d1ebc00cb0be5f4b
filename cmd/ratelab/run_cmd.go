package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/scenarios"
)

// scenarioFlags are the options every command that runs a scenario shares.
type scenarioFlags struct {
	limiters stringList
	seed     uint64
	horizon  time.Duration
	bins     int
}

func (f *scenarioFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.limiters, "limiter", "a limiter `SPEC`, repeatable, one lane each; stack with +, name a lane with NAME=SPEC; replaces the scenario's limiters (default: the scenario's)")
	fs.Uint64Var(&f.seed, "seed", 0, "the random seed, a whole number `N` (default: the scenario's)")
	fs.DurationVar(&f.horizon, "horizon", 0, "how much virtual time to simulate, a `DURATION` such as 30s (default: the scenario's)")
	fs.IntVar(&f.bins, "bins", 0, "the number `N` of time bins in the results (default: the scenario's, or 1000)")
}

// load resolves the positional argument (a built-in name, a scenario file, - for standard
// input; none: the default) and applies the flags. Bad flag values are usage errors; a bad
// scenario file is a failure.
func (f *scenarioFlags) load(ctx context.Context, e *env, fs *flag.FlagSet, positional []string) (*engine.Scenario, error) {
	if len(positional) > 1 {
		return nil, usageErrorf("%s: one scenario at most, got %d: %s", fs.Name(), len(positional), strings.Join(positional, " "))
	}
	name := scenarios.Default
	if len(positional) == 1 {
		name = positional[0]
	}
	sc, err := resolveScenario(ctx, e, name)
	if err != nil {
		return nil, err
	}
	if len(f.limiters) > 0 {
		sc.Lanes = nil
		named := map[string]bool{}
		for _, text := range f.limiters {
			lane, err := parseLane(text)
			if err != nil {
				return nil, err
			}
			if lane.Name != "" {
				if named[lane.Name] {
					return nil, usageErrorf("--limiter %s: two lanes are named %s", quoteArg(text), lane.Name)
				}
				named[lane.Name] = true
			}
			sc.Lanes = append(sc.Lanes, lane)
		}
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if set["seed"] {
		sc.Seed = f.seed
	}
	if set["horizon"] {
		if f.horizon <= 0 {
			return nil, usageErrorf("--horizon %v: must be positive", f.horizon)
		}
		if f.horizon >= engine.MaxTime {
			return nil, usageErrorf("--horizon %v: must be less than 2^62ns (about 146 years)", f.horizon)
		}
		sc.Horizon = f.horizon
	}
	if set["bins"] {
		if f.bins < 1 {
			return nil, usageErrorf("--bins %d: must be at least 1", f.bins)
		}
		sc.Bins = f.bins
	}
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	return sc, nil
}

// parseLane reads a --limiter value: a stack of specs joined with +, optionally named first,
// NAME=SPEC. The text before the first = is a name only when it holds no ":" (in a spec, a
// field's = always comes after its kind's colon), so every spec reads as it always did.
func parseLane(text string) (engine.LaneSpec, error) {
	name, spec, named := splitLaneName(text)
	if named {
		if name == "" {
			return engine.LaneSpec{}, usageErrorf("--limiter %s: the lane's name before = is empty", quoteArg(text))
		}
		for _, k := range limiters.Kinds() {
			if strings.EqualFold(string(k.Kind), name) {
				return engine.LaneSpec{}, usageErrorf("--limiter %s: %s is a limiter kind, not a lane's name; a spec is KIND:FIELD=VALUE,… (did you mean %s:%s?)",
					quoteArg(text), name, k.Kind, spec)
			}
		}
	}
	stack, err := engine.ParseStack(spec)
	if err != nil {
		return engine.LaneSpec{}, usageErrorf("--limiter: %v", err)
	}
	return engine.LaneSpec{Name: name, Stack: stack}, nil
}

// splitLaneName splits "NAME=SPEC" into its name and spec; named is false when text is only a
// spec.
func splitLaneName(text string) (name, spec string, named bool) {
	before, after, ok := strings.Cut(text, "=")
	if !ok || strings.Contains(before, ":") {
		return "", text, false
	}
	return strings.TrimSpace(before), after, true
}

func runCommand(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var sf scenarioFlags
	sf.register(fs)
	format := fs.String("format", "table", "the output `FORMAT`: table, json or csv")
	positional, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := checkChoice("format", *format, "table", "json", "csv"); err != nil {
		return err
	}
	sc, err := sf.load(ctx, e, fs, positional)
	if err != nil {
		return err
	}
	if *format != "json" {
		sc.Trace = false // a trace is only printed in JSON
	}
	res, err := runWithProgress(ctx, e, sc)
	if err != nil {
		return err
	}
	switch *format {
	case "json":
		return writeJSON(e.stdout, res)
	case "csv":
		return writeCSV(e.stdout, sc, res)
	}
	return writeTable(e, sc, res)
}

// runWithProgress runs sc, drawing a progress bar on stderr when it is a terminal and the
// run takes longer than a second. Wall-clock time paces only the bar, never the results.
func runWithProgress(ctx context.Context, e *env, sc *engine.Scenario) (*engine.Results, error) {
	progress := engine.NewProgress(sc)
	done := make(chan struct{})
	if e.stderrTTY {
		go func() {
			start := time.Now()
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			drawn := false
			for {
				select {
				case <-done:
					if drawn {
						fmt.Fprint(e.stderr, "\r\033[K")
					}
					return
				case <-tick.C:
					if time.Since(start) < time.Second {
						continue
					}
					drawn = true
					fmt.Fprint(e.stderr, "\r"+progressBar(sc.Name, progress.Fraction(), 30))
				}
			}
		}()
	}
	res, err := engine.Run(ctx, sc, progress)
	close(done)
	return res, err
}

func progressBar(label string, fraction float64, width int) string {
	filled := int(fraction * float64(width))
	filled = min(max(filled, 0), width)
	return fmt.Sprintf("%s [%s%s] %3.0f%%", label, strings.Repeat("█", filled), strings.Repeat("░", width-filled), fraction*100)
}

func writeJSON(w io.Writer, res *engine.Results) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// primaryWindow is the guarantee meter a table row shows: the lane's first stage's natural
// window if it has one, else the first meter.
func primaryWindow(lane engine.LaneSpec, r engine.LaneResult) (engine.WindowMeter, bool) {
	for _, s := range lane.Stack {
		if w := s.NaturalWindow(); w > 0 {
			for _, m := range r.Windows {
				if m.Length == w {
					return m, true
				}
			}
		}
	}
	if len(r.Windows) > 0 {
		return r.Windows[0], true
	}
	return engine.WindowMeter{}, false
}

// summaryRow is one lane's table or CSV row.
type summaryRow struct {
	limiter, offered, admitted, rejected, admitPct, window, maxInWindow, bound, maxInFlight, failed, p50, p99 string
}

var summaryHeader = summaryRow{"limiter", "offered", "admitted", "rejected", "admit %", "window", "max in window", "bound", "max in flight", "ds failures", "p50 wait", "p99 wait"}

func (r summaryRow) cells() []string {
	return []string{r.limiter, r.offered, r.admitted, r.rejected, r.admitPct, r.window, r.maxInWindow, r.bound, r.maxInFlight, r.failed, r.p50, r.p99}
}

func summarize(sc *engine.Scenario, res *engine.Results) []summaryRow {
	rows := make([]summaryRow, len(res.Lanes))
	for i, r := range res.Lanes {
		t := r.Totals
		row := summaryRow{
			limiter: r.Name, offered: fmt.Sprint(t.Offered), admitted: fmt.Sprint(t.Admitted),
			rejected: fmt.Sprint(t.Rejected), admitPct: fmt.Sprintf("%.1f", 100*t.AdmitRatio()),
			window: "-", maxInWindow: "-", bound: "-",
			maxInFlight: fmt.Sprint(t.MaxInFlight), failed: fmt.Sprint(t.Failed),
			p50: roundedDuration(r.Wait.P50), p99: roundedDuration(r.Wait.P99),
		}
		if m, ok := primaryWindow(sc.Lanes[i], r); ok {
			row.window = limiters.FormatDuration(m.Length)
			row.maxInWindow = fmt.Sprint(m.MaxAdmitted)
			if m.Bound >= 0 {
				row.bound = fmt.Sprint(m.Bound)
			}
		}
		rows[i] = row
	}
	return rows
}

func writeTable(e *env, sc *engine.Scenario, res *engine.Results) error {
	rows := summarize(sc, res)
	title := fmt.Sprintf("%s — seed %d, %s of virtual time", res.Scenario, res.Seed, limiters.FormatDuration(res.Horizon))
	if !e.stdoutTTY {
		fmt.Fprintln(e.stdout, title)
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		all := append([]summaryRow{summaryHeader}, rows...)
		width := 0
		for _, r := range all {
			width = max(width, len(r.limiter))
		}
		for _, r := range all {
			r.limiter = fmt.Sprintf("%-*s", width, r.limiter) // left-aligned, the numbers right-aligned
			fmt.Fprintln(tw, strings.Join(r.cells(), "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		_, err := io.WriteString(e.stdout, keySection(res))
		return err
	}
	_, err := io.WriteString(e.stdout, termTable(sc, res, e.width)+keySection(res))
	return err
}

// writeCSV prints one row per lane: the table's columns plus every total, raw numbers only
// (durations in nanoseconds), with a header. Column order is stable.
func writeCSV(w io.Writer, sc *engine.Scenario, res *engine.Results) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"limiter", "offered", "offered_permits", "attempts", "retried", "admitted", "admitted_permits",
		"rejected", "gave_up", "never", "queued", "timed_out", "completed", "failed", "wasted", "max_in_flight", "max_queue",
		"admit_ratio", "window_ns", "max_in_window", "bound", "first_exceeded_ns", "min_spacing_ns",
		"wait_p50_ns", "wait_p90_ns", "wait_p99_ns", "wait_max_ns", "wait_mean_ns"})
	for i, r := range res.Lanes {
		t := r.Totals
		m, _ := primaryWindow(sc.Lanes[i], r)
		if len(r.Windows) == 0 {
			m = engine.WindowMeter{Bound: -1, FirstExceeded: -1}
		}
		n := func(v int64) string { return strconv.FormatInt(v, 10) }
		cw.Write([]string{r.Name, n(t.Offered), n(t.OfferedPermits), n(t.Attempts), n(t.Retried), n(t.Admitted),
			n(t.AdmittedPermits), n(t.Rejected), n(t.GaveUp), n(t.Never), n(t.Queued), n(t.TimedOut), n(t.Completed),
			n(t.Failed), n(t.Wasted), n(int64(t.MaxInFlight)), n(int64(t.MaxQueue)),
			strconv.FormatFloat(t.AdmitRatio(), 'f', 6, 64), n(int64(m.Length)), n(m.MaxAdmitted), n(m.Bound),
			n(int64(m.FirstExceeded)), n(int64(r.MinSpacing)),
			n(int64(r.Wait.P50)), n(int64(r.Wait.P90)), n(int64(r.Wait.P99)), n(int64(r.Wait.Max)), n(int64(r.Wait.Mean))})
	}
	cw.Flush()
	return cw.Error()
}

// roundedDuration prints d to three significant digits for a table: "18.9ms", "218ms", "0s".
// Exact values are in the JSON and CSV formats.
func roundedDuration(d time.Duration) string {
	unit := time.Duration(1)
	for v := d; v >= 1000; v /= 10 {
		unit *= 10
	}
	return limiters.FormatDuration(d.Round(unit))
}
