package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/internal/outfile"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/plots"
	"github.com/ratelab/ratelab/trace"
	"github.com/ratelab/ratelab/translate"
)

// translateAbout is translate's help beyond its summary.
const translateAbout = "An intent is rate=PERMITS/WINDOW,burst=N: ratelab's token-bucket:capacity=N,rate=PERMITS/WINDOW, the reference. " +
	"For each library ratelab models (x/time/rate, NGINX, uber, Guava, Sentinel, resilience4j, Flash5, the two-counter estimate, and ratelab's own kinds) it prints the parameters, " +
	"how exactly they say the intent (exact, the same requests later, or the closest there is) and what each does differently at the first requests, after an idle and at a window boundary; " +
	"libraries it does not model (redis-cell, go-redis/redis_rate, throttled) are listed with their documented parameters, not run. " +
	"Then it runs every translation on the same traffic, open loop — the built-in probe (the first requests, twice the rate, a burst after idle, a window boundary), a --scenario or an --in trace — " +
	"and compares each lane with the reference request for request: identical, or the first request it decides otherwise, when, and each limiter's own sentence for why. " +
	"A library that never refuses (uber) is compared wait for wait with the same bucket whose callers wait as long as it takes."

// checkTranslateBudget refuses a translation run over e's budget before anything is made
// (translate.Estimate: sc nil is the probe, counted from the intent), as run and fit refuse
// theirs: the estimate and the flag that raises the budget.
func checkTranslateBudget(e *env, sc *engine.Scenario, intent translate.Intent, translations []translate.Translation) error {
	budget := e.budgetOrDefault()
	est, err := translate.Estimate(sc, intent, translations)
	if err != nil {
		return fmt.Errorf("translate: %w", err)
	}
	name := fmt.Sprintf("translate %s on the probe (%s requests for a burst of %d)", intent, engine.SI(est.Requests), intent.Burst)
	if sc != nil {
		name = "translate " + intent.String() + " on " + sc.Name
	}
	if err := budget.Check(&engine.Scenario{Name: name}, est); err != nil {
		return err
	}
	if e.stderrTTY && est.Runtime > 10*time.Second {
		fmt.Fprintf(e.stderr, "%s: about %s events and %s; about %s on one core\n", name, engine.SI(est.Events),
			engine.Bytes(est.Memory), roundedDuration(est.Runtime))
	}
	return nil
}

func translateCommand(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("translate", flag.ContinueOnError)
	scenarioArg := fs.String("scenario", "", "run the translations on this `SCENARIO`'s traffic (a built-in, a scenario FILE, or - for standard input) instead of the probe (default: the probe)")
	in := fs.String("in", "", "run them on this trace `FILE` instead: an access log (nginx, Caddy, HAProxy, JSON; gzip too) or a CSV with a t_ns or t column and optional permits; - is standard input (default: the probe)")
	format := fs.String("format", "table", "the output `FORMAT`: table, json or csv")
	details := fs.Bool("details", false, "print every translation in full: its parameters and why, what it does at the first requests, after idle and at a window boundary, the admissions per phase, and the first request each decides otherwise (default: a summary of one screen)")
	chart := fs.String("chart", "", "also draw each lane's admissions so far minus its reference's to this `FILE` (PNG for .png or no extension, SVG for .svg); - writes the image to standard output instead of the table (default: none)")
	var seed seedValue
	fs.Var(&seed, "seed", "a --scenario's random seed, a decimal whole number `N` (default: the scenario's)")
	horizon := fs.Duration("horizon", 0, "how much of a --scenario's traffic to run, a `DURATION` such as 30s (default: the scenario's)")
	var bf budgetFlags
	bf.register(fs)
	var lf logFlags
	lf.register(fs)
	positional, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	logOpt, err := lf.options()
	if err != nil {
		return err
	}
	if err := bf.apply(e); err != nil {
		return err
	}
	if err := checkChoice("format", *format, "table", "json", "csv"); err != nil {
		return err
	}
	if err := refuseTerminal(e, "--chart", "FILE", *chart); err != nil {
		return err
	}
	switch {
	case len(positional) == 0:
		return usageErrorf("translate: an intent is required, e.g. ratelab translate 'rate=100/1s,burst=20'")
	case len(positional) > 1:
		return usageErrorf("translate: one intent, got %d: %s (quote it: 'rate=100/1s,burst=20')", len(positional), strings.Join(positional, " "))
	}
	intent, err := translate.ParseIntent(positional[0])
	if err != nil {
		return usageErrorf("translate %s: %v", quoteArg(positional[0]), err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if (set["seed"] || set["horizon"]) && *scenarioArg == "" {
		return usageErrorf("translate: --seed and --horizon apply to a --scenario, not to %s", map[bool]string{true: "a trace", false: "the probe"}[*in != ""])
	}
	var (
		sc     *engine.Scenario
		phases []translate.Phase
	)
	switch {
	case *scenarioArg != "" && *in != "":
		return usageErrorf("translate: either --scenario or --in, not both")
	case *in == "" && logFlagSet(set) != "":
		return usageErrorf("translate: --%s applies to a log given with --in", logFlagSet(set))
	case *scenarioArg != "":
		if sc, err = resolveScenario(ctx, e, *scenarioArg); err != nil {
			return err
		}
		if err := applySeedHorizon(sc, set, uint64(seed), *horizon); err != nil {
			return err
		}
	case *in != "":
		path, name := *in, *in
		if err := outfile.NoteInput(ctx, "the trace --in "+quoteArg(*in), *in); err != nil {
			return err
		}
		if *in == "-" {
			if err := outfile.NoteStdin(ctx, "standard input (the trace)", e.stdin); err != nil {
				return err
			}
			readingStdin(e, "the trace")
			spooled, remove, err := spool(ctx, e.stdin)
			if err != nil {
				return fmt.Errorf("standard input: %w", err)
			}
			defer remove()
			path, name = spooled, "standard input"
		}
		var notes []string
		if sc, notes, err = traceScenario(path, name, logOpt); err != nil {
			return err
		}
		printNotes(e.stderr, e.errWidth, name, notes)
	}
	translations := translate.Translate(intent)
	if err := checkTranslateBudget(e, sc, intent, translations); err != nil {
		return err
	}
	if sc == nil {
		sc, phases = translate.ProbeScenario(intent)
		sc.Name = "the probe"
	}
	if err := checkChart(ctx, *chart); err != nil {
		return err
	}
	rep, err := translate.Run(ctx, sc, intent, translations, phases)
	if err != nil {
		return fmt.Errorf("translate: %w", err)
	}
	if *chart != "" {
		fig, err := plots.Translation(rep)
		if err != nil {
			return err
		}
		if err := writeChart(ctx, e, *chart, fig); err != nil || *chart == "-" {
			return err // - is the image instead of the table
		}
	}
	switch *format {
	case "json":
		return writeJSON(e.stdout, rep)
	case "csv":
		return writeTranslateCSV(e.stdout, rep)
	}
	if !*details {
		return wrapped(e, func(w io.Writer) error { return writeTranslateSummary(w, rep, intent, e.width) })
	}
	if e.width > 0 {
		return wrapped(e, func(w io.Writer) error { return writeTranslateTable(w, rep, intent, e.width) })
	}
	return writeTranslateTable(e.stdout, rep, intent, 0)
}

// writeTranslateSummary is translate's table by default: what the intent means, then one
// line for each translation that ran (its fit, what it admitted, how many requests it decided
// otherwise than its reference), the ones that did not in a sentence, and how to see the
// rest. It fits 80 columns and, for the 21 translations of today, 24 lines; narrower on a
// narrower terminal (width, 0 when piped).
func writeTranslateSummary(w io.Writer, rep *translate.Report, intent translate.Intent, width int) error {
	if width <= 0 || width > defaultColumns {
		width = defaultColumns
	}
	dur := limiters.FormatDuration
	var reference translate.LaneReport
	var waiting []string
	rows := [][]string{{"lane", "fit", "admitted", "differing"}}
	notRun := map[translate.Fit][]string{}
	var fits []translate.Fit
	for _, l := range rep.Lanes {
		switch {
		case l.Lane == translate.Reference:
			reference = l
		case l.Fit == translate.FitReference:
		case !l.Ran:
			if len(notRun[l.Fit]) == 0 {
				fits = append(fits, l.Fit)
			}
			notRun[l.Fit] = append(notRun[l.Fit], l.Lane)
		default:
			rows = append(rows, []string{l.Lane, string(l.Fit), strconv.FormatInt(l.Admitted, 10), strconv.FormatInt(l.Differing, 10)})
			if l.Against == translate.WaitingReference {
				waiting = append(waiting, l.Lane)
			}
		}
	}
	fitWidth := 0
	for _, r := range rows {
		fitWidth = max(fitWidth, len([]rune(r[1])))
	}
	for _, r := range rows { // the fit left-aligned
		r[1] += strings.Repeat(" ", fitWidth-len([]rune(r[1])))
	}
	intro := fmt.Sprintf("%s means %s (T = %s): %d at once after idle, then one per %s; it admits %d of the %d requests of %s (%s). "+
		"Each library's translation on the same requests, and how many it decides otherwise",
		rep.Intent, rep.Reference, dur(intent.Interval()), intent.Burst, dur(intent.Interval()), reference.Admitted, rep.Requests, rep.Traffic, dur(rep.Horizon))
	if len(waiting) > 0 {
		intro += fmt.Sprintf(" (%s, which never refuses: wait for wait)", strings.Join(waiting, ", "))
	}
	fmt.Fprintln(w, wrap(intro+":", width, ""))
	fmt.Fprintln(w)
	fmt.Fprint(w, fitTable(rows, 2, width, true, 0))
	if len(fits) > 0 {
		var parts []string
		for _, f := range fits {
			parts = append(parts, fmt.Sprintf("%s (%s)", strings.Join(notRun[f], ", "), f))
		}
		fmt.Fprintln(w, wrap("Not run: "+strings.Join(parts, "; ")+".", width, ""))
	}
	fmt.Fprintln(w, wrap("--details: each one's parameters, why, and its first differing request.", width, ""))
	return nil
}

// traceScenario is a trace file (a CSV trace or an access log, read as opt says) as a
// scenario: its requests, to just after the last one; with the log's notes.
func traceScenario(path, name string, opt accesslog.Options) (*engine.Scenario, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, cause(err))
	}
	defer f.Close()
	in, err := accesslog.Open(f, opt)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	// A log's requests are read as rows (trace.Rows), a CSV trace as its text.
	var r interface{ Next() (trace.Row, error) }
	if log := in.Log(); log != nil {
		r = trace.NewRows(log)
	} else if r, err = trace.NewReader(in); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	last, rows := time.Duration(-1), 0
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		last, rows = row.At, rows+1
	}
	if rows == 0 {
		return nil, nil, fmt.Errorf("%s: the trace has no requests", name)
	}
	return &engine.Scenario{Name: name, Seed: 1, Horizon: last + 1, Client: engine.Client{Policy: engine.PolicyDrop},
		Sources: []engine.Source{{Kind: engine.SourceTrace, TraceFile: path, Log: opt}}}, in.Notes(), nil
}

// writeTranslateTable is translate --details: every translation in full, the admissions per
// phase, and the first request each decides otherwise. Prose is wrapped at 100 columns, or at
// a terminal's width (termWidth > 0), where the table is cut to fit it too.
func writeTranslateTable(w io.Writer, rep *translate.Report, intent translate.Intent, termWidth int) error {
	dur := limiters.FormatDuration
	fmt.Fprintf(w, "%s means %s (T = %s): %d at once after idle, then one per %s.\n",
		rep.Intent, rep.Reference, dur(intent.Interval()), intent.Burst, dur(intent.Interval()))
	fmt.Fprintln(w, "In each library's terms, and what each does differently:")
	width, indent := proseWidth, "              "
	if termWidth > 0 {
		width = prose(termWidth)
	}
	for _, l := range rep.Lanes {
		fmt.Fprintf(w, "\n%s — %s (%s)\n", l.Lane, l.Fit, l.Library)
		row := func(name, text string) {
			if text != "" && text != "-" {
				fmt.Fprintf(w, "  %-10s  %s\n", name, wrap(text, width-len(indent), indent))
			}
		}
		row("write", l.Config)
		if l.Spec != "" && !strings.HasPrefix(l.Config, l.Spec) {
			spec := l.Spec
			if l.MaxWait > 0 && l.MaxWait < translate.Forever {
				spec += ", callers waiting up to " + dur(l.MaxWait)
			}
			row("ratelab", spec)
		}
		row("why", l.Why)
		row("first", l.Translation.First)
		row("after idle", l.Idle)
		row("boundary", l.Boundary)
		if l.Ran {
			row("run", runVerdict(rep, l))
		}
	}
	fmt.Fprintf(w, "\nDecisions on %s: %d requests over %s, open loop (a refused request is dropped), every lane the same requests.\n",
		rep.Traffic, rep.Requests, dur(rep.Horizon))
	if len(rep.Phases) > 0 {
		var parts []string
		for _, p := range rep.Phases {
			parts = append(parts, fmt.Sprintf("%s %d requests in [%s, %s)", p.Name, p.Requests, dur(p.From), dur(p.To)))
		}
		fmt.Fprintf(w, "Admitted per phase: %s.\n", strings.Join(parts, "; "))
	}
	fmt.Fprintln(w)
	if termWidth > 0 {
		fmt.Fprint(w, fitTable(translateRows(rep), 2, termWidth, true, 0))
	} else if err := writePhaseTable(w, rep); err != nil {
		return err
	}
	first := true
	for _, l := range rep.Lanes {
		f := l.FirstDifference
		if f == nil {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nThe first request each lane decides otherwise, and why (each limiter's own words):")
			first = false
		}
		fmt.Fprintf(w, "  %s: request %d at %s (%d permit%s)\n", l.Lane, f.Request, dur(f.At), f.Permits, plural(f.Permits))
		against := "reference"
		if l.Against == translate.WaitingReference {
			against = "waiting"
		}
		for _, d := range []struct {
			who string
			d   translate.Decision
		}{{"it", f.Lane}, {against, f.Reference}} {
			fmt.Fprintf(w, "    %-9s  %s\n", d.who, wrap(d.d.String()+": "+d.d.Reason, width-15, "               "))
		}
	}
	return nil
}

// translateRows are the per-phase table's header and one row per lane that ran.
func translateRows(rep *translate.Report) [][]string {
	header := []string{"lane"}
	for _, p := range rep.Phases {
		header = append(header, p.Name)
	}
	rows := [][]string{append(header, "admitted", "refused", "delayed", "max wait", "differing")}
	for _, l := range rep.Lanes {
		if !l.Ran {
			continue
		}
		cells := []string{l.Lane}
		for _, n := range l.PerPhase {
			cells = append(cells, strconv.FormatInt(n, 10))
		}
		diff := "—"
		if l.Fit != translate.FitReference {
			diff = strconv.FormatInt(l.Differing, 10)
		}
		rows = append(rows, append(cells, strconv.FormatInt(l.Admitted, 10), strconv.FormatInt(l.Refused, 10), strconv.FormatInt(l.Delayed, 10),
			roundedDuration(l.LongestWait), diff))
	}
	return rows
}

// writePhaseTable is the per-phase table in its stable piped layout.
func writePhaseTable(w io.Writer, rep *translate.Report) error {
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', tabwriter.AlignRight)
	name := len("lane")
	for _, l := range rep.Lanes {
		name = max(name, len(l.Lane))
	}
	header := []string{fmt.Sprintf("%-*s", name, "lane")}
	for _, p := range rep.Phases {
		header = append(header, p.Name)
	}
	header = append(header, "admitted", "refused", "delayed", "max wait", "differing", "")
	fmt.Fprintln(tw, strings.Join(header, "\t")+"\t")
	for _, l := range rep.Lanes {
		if !l.Ran {
			continue
		}
		cells := []string{fmt.Sprintf("%-*s", name, l.Lane)}
		for _, n := range l.PerPhase {
			cells = append(cells, strconv.FormatInt(n, 10))
		}
		diff := "—"
		if l.Fit != translate.FitReference {
			diff = strconv.FormatInt(l.Differing, 10)
		}
		cells = append(cells, strconv.FormatInt(l.Admitted, 10), strconv.FormatInt(l.Refused, 10), strconv.FormatInt(l.Delayed, 10),
			roundedDuration(l.LongestWait), diff, "")
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		if line != "" {
			fmt.Fprintln(w, strings.TrimRight(line, " \n"))
		}
	}
	return nil
}

// runVerdict is a lane's line in the table: identical, or how many requests differ and where.
func runVerdict(rep *translate.Report, l translate.LaneReport) string {
	against := "the reference"
	if l.Against == translate.WaitingReference {
		against = "the waiting reference (request for request and wait for wait)"
	}
	if l.Fit == translate.FitReference {
		return fmt.Sprintf("%d admitted, %d refused, %d after a wait", l.Admitted, l.Refused, l.Delayed)
	}
	if l.Differing == 0 {
		s := fmt.Sprintf("identical to %s: the same %d admitted, %d refused", against, l.Admitted, l.Refused)
		if l.Delayed > 0 && l.Against == translate.Reference {
			s += fmt.Sprintf("; %d of them after a wait (at most %s)", l.Delayed, roundedDuration(l.LongestWait))
		}
		return s
	}
	where := ""
	if len(l.DifferingPerPhase) > 0 {
		var parts []string
		for i, n := range l.DifferingPerPhase {
			if n > 0 {
				parts = append(parts, fmt.Sprintf("%s: %d", rep.Phases[i].Name, n))
			}
		}
		where = " (" + strings.Join(parts, ", ") + ")"
	}
	f := l.FirstDifference
	return fmt.Sprintf("differs from %s in %d requests%s; the first is request %d at %s: %s, the reference %s. %d admitted, %d refused",
		against, l.Differing, where, f.Request, limiters.FormatDuration(f.At), f.Lane, f.Reference, l.Admitted, l.Refused)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func writeTranslateCSV(w io.Writer, rep *translate.Report) error {
	cw := csv.NewWriter(w)
	header := []string{"lane", "library", "fit", "config", "spec", "max_wait_ns", "ran", "against", "admitted", "refused", "delayed",
		"longest_wait_ns", "differing", "first_request", "first_t_ns", "first_decision", "first_reference_decision", "first_reason", "first_reference_reason"}
	for _, p := range rep.Phases {
		header = append(header, "admitted_"+strings.ReplaceAll(strings.ReplaceAll(p.Name, " ", "_"), "×", "x"))
	}
	cw.Write(header)
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, l := range rep.Lanes {
		row := []string{l.Lane, l.Library, string(l.Fit), l.Config, l.Spec, n(int64(l.MaxWait)), strconv.FormatBool(l.Ran), l.Against}
		if !l.Ran {
			row = append(row, "", "", "", "", "", "", "", "", "", "", "")
		} else {
			row = append(row, n(l.Admitted), n(l.Refused), n(l.Delayed), n(int64(l.LongestWait)), n(l.Differing))
			if f := l.FirstDifference; f != nil {
				row = append(row, strconv.FormatUint(f.Request, 10), n(int64(f.At)), f.Lane.String(), f.Reference.String(), f.Lane.Reason, f.Reference.Reason)
			} else {
				row = append(row, "", "", "", "", "", "")
			}
		}
		for i := range rep.Phases {
			if l.Ran {
				row = append(row, n(l.PerPhase[i]))
			} else {
				row = append(row, "")
			}
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}
