package main

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/jsonout"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/redislimit/redislanes"
	"github.com/ratelab/ratelab/scenarios"
)

// scenarioFlags are the options every command that runs a scenario shares.
type scenarioFlags struct {
	limiters stringList
	seed     seedValue
	horizon  time.Duration
	bins     int
}

func (f *scenarioFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.limiters, "limiter", "a limiter `SPEC`, repeatable, one lane each; stack with +, name a lane with NAME=SPEC; replaces the scenario's limiters (default: the scenario's)")
	fs.Var(&f.seed, "seed", "the random seed, a decimal whole number `N` (default: the scenario's)")
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
	if err := applySeedHorizon(sc, set, uint64(f.seed), f.horizon); err != nil {
		return nil, err
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

// seedValue is --seed: decimal digits, as a scenario file's seed: (scenarios.ParseSeed), so
// that 0x1f, 010 or 1_000 mean one thing everywhere or are refused everywhere; the flag
// package's own uint64 read them as hex, octal and 1000.
type seedValue uint64

func (s *seedValue) String() string { return strconv.FormatUint(uint64(*s), 10) }

func (s *seedValue) Set(text string) error {
	v, err := scenarios.ParseSeed(text)
	if err != nil {
		return err
	}
	*s = seedValue(v)
	return nil
}

// applySeedHorizon sets sc's seed and horizon from --seed and --horizon where set says they
// were given, refusing a horizon outside (0, 2^62ns).
func applySeedHorizon(sc *engine.Scenario, set map[string]bool, seed uint64, horizon time.Duration) error {
	if set["seed"] {
		sc.Seed = seed
	}
	if set["horizon"] {
		if horizon <= 0 {
			return usageErrorf("--horizon %v: must be positive", horizon)
		}
		if horizon >= engine.MaxTime {
			return usageErrorf("--horizon %v: must be less than 2^62ns (about 146 years)", horizon)
		}
		sc.Horizon = horizon
	}
	return nil
}

// parseLane reads a --limiter value: a stack of specs joined with +, optionally named first,
// NAME=SPEC. The text before the first = is a name only when it holds no ":" and no "(" (in a
// spec, a field's = always comes after its kind's colon or inside keys(…)), so every spec
// reads as it always did.
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
	// keys(max=1000):spec is a keyed stage, not a lane called "keys(max".
	if !ok || strings.ContainsAny(before, ":(") || limiters.IsKeyedSpec(text) {
		return "", text, false
	}
	return strings.TrimSpace(before), after, true
}

func runCommand(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var sf scenarioFlags
	sf.register(fs)
	format := fs.String("format", "table", "the output `FORMAT`: table, json or csv")
	var bf budgetFlags
	bf.register(fs)
	var asserts stringList
	fs.Var(&asserts, "assert", "a `CHECK` LANES.METRIC OP VALUE that must hold, repeatable, e.g. 'all.refused% < 1' or 'token-bucket.p99 <= 50ms'; exit 1 when one fails (LANES: all, a lane's name or a kind)")
	replications := fs.Int("replications", 0, replicationsUsage)
	var rf redisRunFlags
	rf.register(fs)
	positional, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	replicated := flagSet(fs, "replications")
	if err := checkReplications(*replications, replicated); err != nil {
		return err
	}
	if replicated && len(asserts) > 0 {
		return usageErrorf("--assert checks one run's numbers; it does not combine with --replications")
	}
	if rf.addr == "" && (flagSet(fs, "redis-prefix") || flagSet(fs, "redis-timeout")) {
		return usageErrorf("--redis-prefix and --redis-timeout set where the central stores' keys go: they need --redis ADDR")
	}
	if rf.addr != "" && replicated {
		return usageErrorf("--redis runs one run's central stores in Redis; it does not combine with --replications")
	}
	if err := checkChoice("format", *format, "table", "json", "csv"); err != nil {
		return err
	}
	if err := bf.apply(e); err != nil {
		return err
	}
	var checks []assertion
	for _, text := range asserts {
		a, err := parseAssertion(text)
		if err != nil {
			return err
		}
		checks = append(checks, a)
	}
	sc, err := sf.load(ctx, e, fs, positional)
	if err != nil {
		return err
	}
	for _, a := range checks { // a lane that is not there is refused before the run
		if _, err := selectLanes(a, sc); err != nil {
			return err
		}
	}
	if replicated {
		return runReplications(ctx, e, sc, *replications, *format)
	}
	if *format != "json" {
		sc.Trace = false // a trace is only printed in JSON
	} else if err := checkBudgetJSON(e, sc); err != nil {
		return err
	}
	var store *redislanes.Run
	if rf.addr != "" {
		if store, err = startRedisRun(ctx, sc, rf); err != nil {
			return err
		}
		defer store.Abandon(e.stderr) // a run that fails before Finish still deletes its keys
	}
	res, err := runWithProgress(ctx, e, sc)
	if err != nil {
		return err
	}
	switch *format {
	case "json":
		err = writeJSON(e.stdout, res)
	case "csv":
		err = writeCSV(e.stdout, sc, res)
	default:
		err = writeTable(e, sc, res)
	}
	if err != nil {
		return err
	}
	if store != nil {
		lines, err := store.Finish()
		for _, line := range lines {
			fmt.Fprintln(e.stderr, line)
		}
		if err != nil {
			return err
		}
	}
	if err := checkAssertions(checks, sc, res); err != nil {
		return err
	}
	if len(checks) > 0 {
		fmt.Fprintf(e.stderr, "%d assertion%s held\n", len(checks), map[bool]string{true: "", false: "s"}[len(checks) == 1])
	}
	return nil
}

// runReplications is run --replications K: the means and intervals in the chosen format.
func runReplications(ctx context.Context, e *env, sc *engine.Scenario, k int, format string) error {
	set, err := replicateWithProgress(ctx, e, sc, k)
	if err != nil {
		return err
	}
	switch format {
	case "json":
		return writeReplicationsJSON(e.stdout, set)
	case "csv":
		return writeReplicationsCSV(e.stdout, set)
	}
	if e.width > 0 { // a terminal: the table in slices of its width
		_, err = io.WriteString(e.stdout, wrapHanging(replicationsTitle(set), e.width)+"\n"+fitTable(replicationRows(set), 2, e.width, true, 2))
		return err
	}
	table, err := replicationsTable(set)
	if err != nil {
		return err
	}
	_, err = io.WriteString(e.stdout, table)
	return err
}

// flagSet reports whether the flag called name was given.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// runWithProgress runs sc, with a progress bar on a terminal that says how long is left. A
// run over the budget (checkBudget) is refused before it starts.
func runWithProgress(ctx context.Context, e *env, sc *engine.Scenario) (*engine.Results, error) {
	if err := checkBudget(e, sc); err != nil {
		return nil, err
	}
	progress := engine.NewProgress(sc)
	var res *engine.Results
	err := withProgressBar(e, sc.Name, progress.Fraction, func() error {
		var err error
		res, err = engine.Run(ctx, sc, progress)
		return err
	})
	return res, err
}

// withProgressBar runs work, drawing a progress bar of fraction on stderr when it is a
// terminal and the work takes longer than a second. Wall-clock time paces only the bar,
// never the results.
func withProgressBar(e *env, label string, fraction func() float64, work func() error) error {
	done := make(chan struct{})
	finished := make(chan struct{})
	if e.stderrTTY {
		go func() {
			defer close(finished)
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
					fmt.Fprint(e.stderr, "\r"+progressBar(label, fraction(), 30)+timeLeft(time.Since(start), fraction()))
				}
			}
		}()
	} else {
		close(finished)
	}
	err := work()
	close(done)
	<-finished
	return err
}

// timeLeft is "  about 12s left" from the time taken so far and the fraction done.
func timeLeft(taken time.Duration, fraction float64) string {
	if fraction <= 0.01 || fraction >= 1 {
		return "\033[K"
	}
	left := time.Duration(float64(taken) * (1 - fraction) / fraction)
	return "  about " + roundedDuration(left.Round(time.Second)) + " left\033[K"
}

func progressBar(label string, fraction float64, width int) string {
	filled := int(fraction * float64(width))
	filled = min(max(filled, 0), width)
	return fmt.Sprintf("%s [%s%s] %3.0f%%", label, strings.Repeat("█", filled), strings.Repeat("░", width-filled), fraction*100)
}

// writeJSON writes v as the commands' JSON output: indented by two spaces, one value.
func writeJSON(w io.Writer, v any) error { return jsonout.JSON(w, v) }

// summaryRow is one lane's table row. Its request counts add up: offered = admitted +
// refused + timed out + gave up + waiting (engine.Totals).
type summaryRow struct {
	limiter, offered, admitted, refused, timedOut, gaveUp, waiting, admitPct string
	window, maxInWindow, bound, maxInFlight, failed                          string
	p50, p90, p99, p999, maxWait                                             string
}

// column is a column of the run table: its header, its abbreviation for narrow terminals,
// and its group in the one-block-per-lane layout.
type column struct {
	header, short string
	value         func(r summaryRow) string
	group         int
	// optional columns (the ways a request can end other than admitted or refused) are
	// shown only when some lane has one, so a dropping client's table keeps its width.
	optional bool
	// wait columns are shown only when some lane's longest wait is not 0: a client that
	// never waits (it drops, or retries at once) has nothing to put in them.
	wait bool
	over bool // shown in red when the lane admitted more in a window than its bound
}

var summaryColumns = []column{
	{header: "limiter", short: "limiter", value: func(r summaryRow) string { return r.limiter }},
	{header: "offered", short: "offered", value: func(r summaryRow) string { return r.offered }},
	{header: "admitted", short: "admitted", value: func(r summaryRow) string { return r.admitted }},
	{header: "refused", short: "refused", value: func(r summaryRow) string { return r.refused }},
	{header: "timed out", short: "t/o", value: func(r summaryRow) string { return r.timedOut }, optional: true},
	{header: "gave up", short: "gave up", value: func(r summaryRow) string { return r.gaveUp }, optional: true},
	{header: "waiting", short: "waiting", value: func(r summaryRow) string { return r.waiting }, optional: true},
	{header: "admit %", short: "admit%", value: func(r summaryRow) string { return r.admitPct }},
	{header: "window", short: "window", value: func(r summaryRow) string { return r.window }, group: 1},
	{header: "max in window", short: "max/win", value: func(r summaryRow) string { return r.maxInWindow }, group: 1, over: true},
	{header: "bound", short: "bound", value: func(r summaryRow) string { return r.bound }, group: 1},
	{header: "max in flight", short: "in flight", value: func(r summaryRow) string { return r.maxInFlight }, group: 2},
	{header: "ds failures", short: "ds fail", value: func(r summaryRow) string { return r.failed }, group: 2},
	{header: "p50 wait", short: "p50", value: func(r summaryRow) string { return r.p50 }, group: 3, wait: true},
	{header: "p90 wait", short: "p90", value: func(r summaryRow) string { return r.p90 }, group: 3, wait: true},
	{header: "p99 wait", short: "p99", value: func(r summaryRow) string { return r.p99 }, group: 3, wait: true},
	{header: "p99.9 wait", short: "p99.9", value: func(r summaryRow) string { return r.p999 }, group: 3, wait: true},
	{header: "max wait", short: "max", value: func(r summaryRow) string { return r.maxWait }, group: 3, wait: true},
}

// tableColumns is summaryColumns without the optional ones no lane of rows has.
func tableColumns(rows []summaryRow) []column {
	var cols []column
	for _, c := range summaryColumns {
		keep := !c.optional && !c.wait
		for _, r := range rows {
			keep = keep || (c.optional && c.value(r) != "0") || (c.wait && r.maxWait != "0s")
		}
		if keep {
			cols = append(cols, c)
		}
	}
	return cols
}

// headers are the columns' headers, or their abbreviations when short.
func headers(cols []column, short bool) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.header
		if short {
			out[i] = c.short
		}
	}
	return out
}

// cells are row's values in cols.
func (r summaryRow) cells(cols []column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.value(r)
	}
	return out
}

func summarize(sc *engine.Scenario, res *engine.Results) []summaryRow {
	rows := make([]summaryRow, len(res.Lanes))
	for i, r := range res.Lanes {
		t := r.Totals
		row := summaryRow{
			limiter: r.Name, offered: fmt.Sprint(t.Offered), admitted: fmt.Sprint(t.Admitted),
			refused: fmt.Sprint(t.Refused), timedOut: fmt.Sprint(t.TimedOut), gaveUp: fmt.Sprint(t.GaveUp),
			waiting: fmt.Sprint(t.Waiting), admitPct: fmt.Sprintf("%.1f", 100*t.AdmitRatio()),
			window: "-", maxInWindow: "-", bound: "-",
			maxInFlight: fmt.Sprint(t.MaxInFlight), failed: fmt.Sprint(t.Failed),
			p50: roundedDuration(r.Wait.P50), p90: roundedDuration(r.Wait.P90), p99: roundedDuration(r.Wait.P99),
			p999: roundedDuration(r.Wait.P999), maxWait: roundedDuration(r.Wait.Max),
		}
		if m, ok := engine.PrimaryWindow(sc.Lanes[i], r); ok {
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
		cols := tableColumns(rows)
		all := [][]string{headers(cols, false)}
		for _, r := range rows {
			all = append(all, r.cells(cols))
		}
		width := 0
		for _, r := range all {
			width = max(width, len(r[0]))
		}
		for _, r := range all {
			r[0] = fmt.Sprintf("%-*s", width, r[0]) // left-aligned, the numbers right-aligned
			fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		_, err := io.WriteString(e.stdout, keySection(res, 0)+fleetSection(res, 0)+serverSection(sc, res, 0)+loopSection(sc, res, 0)+classSection(res, 0))
		return err
	}
	_, err := io.WriteString(e.stdout, termTable(sc, res, e.width)+keySection(res, e.width)+fleetSection(res, e.width)+serverSection(sc, res, e.width)+
		loopSection(sc, res, e.width)+classSection(res, e.width))
	return err
}

// writeCSV prints one row per lane: the table's columns plus every total, raw numbers only
// (durations in nanoseconds), with a header. Column order is stable.
func writeCSV(w io.Writer, sc *engine.Scenario, res *engine.Results) error {
	cw := csv.NewWriter(w)
	// The request outcomes first (offered = admitted + refused + timed_out + gave_up +
	// waiting), then the attempts, then the rest.
	cw.Write([]string{"limiter", "offered", "offered_permits", "admitted", "admitted_permits", "refused", "timed_out",
		"gave_up", "waiting", "attempts", "retried", "refused_attempts", "delayed", "never", "queued", "completed", "failed",
		"wasted", "max_in_flight", "max_queue",
		"admit_ratio", "window_ns", "max_in_window", "bound", "first_exceeded_ns", "min_spacing_ns",
		"wait_p50_ns", "wait_p90_ns", "wait_p99_ns", "wait_p999_ns", "wait_max_ns", "wait_mean_ns",
		"goodput_per_s", "amplification", "herd_peak", "herd_synchrony", "success_p50_ns", "success_p99_ns",
		"latency_p50_ns", "latency_p99_ns"})
	for i, r := range res.Lanes {
		t := r.Totals
		m, _ := engine.PrimaryWindow(sc.Lanes[i], r)
		if len(r.Windows) == 0 {
			m = engine.WindowMeter{Bound: -1, FirstExceeded: -1}
		}
		n := func(v int64) string { return strconv.FormatInt(v, 10) }
		f := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
		cw.Write([]string{r.Name, n(t.Offered), n(t.OfferedPermits), n(t.Admitted), n(t.AdmittedPermits), n(t.Refused),
			n(t.TimedOut), n(t.GaveUp), n(t.Waiting), n(t.Attempts), n(t.Retried), n(t.RefusedAttempts), n(t.Delayed),
			n(t.Never), n(t.Queued), n(t.Completed), n(t.Failed), n(t.Wasted), n(int64(t.MaxInFlight)), n(int64(t.MaxQueue)),
			strconv.FormatFloat(t.AdmitRatio(), 'f', 6, 64), n(int64(m.Length)), n(m.MaxAdmitted), n(m.Bound),
			n(int64(m.FirstExceeded)), n(int64(r.MinSpacing)),
			n(int64(r.Wait.P50)), n(int64(r.Wait.P90)), n(int64(r.Wait.P99)), n(int64(r.Wait.P999)), n(int64(r.Wait.Max)), n(int64(r.Wait.Mean)),
			f(r.Loop.GoodputPerSec), f(r.Loop.Amplification), n(r.Loop.HerdPeak), f(r.Loop.HerdSynchrony),
			n(int64(r.Loop.SuccessP50)), n(int64(r.Loop.SuccessP99)), n(int64(r.Loop.LatencyP50)), n(int64(r.Loop.LatencyP99))})
	}
	cw.Flush()
	return cw.Error()
}

// roundedDuration prints d to three significant digits for a table: "18.9ms", "218ms", "0s".
// Exact values are in the JSON and CSV formats.
//
// From 1000s on it rounds to the second ("20m35s", "1281023h53m38s"): a unit of 10s or more
// is not one of the printed units, so the hours, minutes and seconds it leaves look exact and
// are not (2^62−1 ns, rounded to 10^16 ns, printed as 1280555h33m20s: 468 hours short).
func roundedDuration(d time.Duration) string {
	unit := time.Duration(1)
	for v := d; v >= 1000 && unit < time.Second; v /= 10 {
		unit *= 10
	}
	return limiters.FormatDuration(d.Round(unit))
}
