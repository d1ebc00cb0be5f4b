package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/fit"
	"github.com/ratelab/ratelab/internal/linelimit"
	"github.com/ratelab/ratelab/internal/outfile"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/plots"
	"github.com/ratelab/ratelab/trace"
)

func fitCommand(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("fit", flag.ContinueOnError)
	in := fs.String("in", "", "the trace `FILE`: an access log (nginx, Caddy, HAProxy, JSON; gzip too) or a CSV with a t_ns or t column and optional permits; - is standard input (default: none, a SCENARIO's traffic instead)")
	rateText := fs.String("rate", "", "answer for this `RATE`, e.g. 200/1s, instead of the knee (default: the knee)")
	per := fs.Duration("per", time.Second, "the `WINDOW` rates are counted per (the grid is whole permits per WINDOW), and the window kinds' window and the peak's")
	steps := fs.Int("steps", 24, "the number `N` of rates in the grid, from the mean to twice the peak")
	refuse := fs.String("refuse", "", "also find the least capacity at the recommended rate that refuses at most this `PERCENT` of permits, e.g. 1% (default: none)")
	format := fs.String("format", "table", "the output `FORMAT`: table, json or csv")
	chart := fs.String("chart", "", "also draw the curve to this `FILE` (PNG for .png or no extension, SVG for .svg); - writes the image to standard output instead of the table (default: none)")
	clients := fs.String("clients", "", "fit one limit per client key instead of one for all: the share of clients, as a `PERCENT` such as 99%, the per-client spec admits entirely (default: 99% when --key is given, else no per-client fit)")
	protectText := fs.String("protect", "", "with a per-client fit, add a global token bucket at this `RATE` behind it, e.g. 400/1s, sized to admit all the per-client limit admits (default: none)")
	var seed seedValue
	fs.Var(&seed, "seed", "a SCENARIO's random seed, a decimal whole number `N` (default: the scenario's)")
	horizon := fs.Duration("horizon", 0, "how much of a SCENARIO's traffic to fit, a `DURATION` such as 30s (default: the scenario's)")
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
	opt := fit.Options{Window: *per, Steps: *steps, RefusePPM: -1}
	if *per <= 0 || int64(*per) >= 1<<62 {
		return usageErrorf("--per %v: must be positive and less than 2^62ns", *per)
	}
	if *steps < 2 || *steps > 1000 {
		return usageErrorf("--steps %d: must be between 2 and 1000", *steps)
	}
	if *rateText != "" {
		r, err := limiters.ParseRate(*rateText)
		if err != nil {
			return usageErrorf("--rate %s: %v", quoteArg(*rateText), err)
		}
		if err := (limiters.TokenBucketSpec{Capacity: 1, Rate: r}).Validate(); err != nil {
			return usageErrorf("--rate %s: %v", quoteArg(*rateText), err)
		}
		opt.Rate = r
	}
	if *refuse != "" {
		ppm, err := parsePercent(*refuse)
		if err != nil {
			return usageErrorf("--refuse %s: %v", quoteArg(*refuse), err)
		}
		opt.RefusePPM = ppm
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	perClient := set["clients"] || set["key"]
	pco := fit.PerClientOptions{Window: *per, Steps: *steps, Rate: opt.Rate, ClientsPPM: 990000}
	if set["clients"] {
		ppm, err := parsePercent(*clients)
		if err != nil || ppm == 0 {
			if err == nil {
				err = fmt.Errorf("a limit that admits no client entirely is no answer; give more than 0%%")
			}
			return usageErrorf("--clients %s: %v", quoteArg(*clients), err)
		}
		pco.ClientsPPM = ppm
	}
	if *protectText != "" {
		if !perClient {
			return usageErrorf("--protect applies to a per-client fit: add --clients PERCENT (or --key FIELD for a log)")
		}
		r, err := limiters.ParseRate(*protectText)
		if err == nil {
			err = (limiters.TokenBucketSpec{Capacity: 1, Rate: r}).Validate()
		}
		if err != nil {
			return usageErrorf("--protect %s: %v", quoteArg(*protectText), err)
		}
		pco.Protect = r
	}
	if perClient && (set["refuse"] || set["chart"]) {
		return usageErrorf("--refuse and --chart apply to the global fit; a per-client fit (--clients, --key) has neither yet")
	}
	var src fit.Source
	switch {
	case *in != "" && len(positional) > 0:
		return usageErrorf("fit: either --in TRACE.csv or a SCENARIO, not both")
	case len(positional) > 1:
		return usageErrorf("fit: one scenario at most, got %d: %s", len(positional), strings.Join(positional, " "))
	case *in == "" && len(positional) == 0:
		return usageErrorf("fit: --in TRACE.csv or a SCENARIO is required (--in - reads standard input)")
	case *in == "" && logFlagSet(set) != "":
		return usageErrorf("fit: --%s applies to a log given with --in, not to a SCENARIO", logFlagSet(set))
	case *in != "":
		if set["seed"] || set["horizon"] {
			return usageErrorf("fit: --seed and --horizon apply to a SCENARIO, not to a trace")
		}
		if *in == "-" {
			if err := outfile.NoteStdin(ctx, "standard input (the trace)", e.stdin); err != nil {
				return err
			}
			readingStdin(e, "the trace")
			path, remove, err := spool(ctx, e.stdin)
			if err != nil {
				return fmt.Errorf("standard input: %w", err)
			}
			defer remove()
			src = fit.Log(path, "standard input", logOpt)
		} else {
			if err := outfile.NoteInput(ctx, "the trace --in "+quoteArg(*in), *in); err != nil {
				return err
			}
			if err := checkChart(ctx, *chart); err != nil {
				return err // before spooling a FIFO
			}
			f, err := os.Open(*in)
			if err != nil {
				return fmt.Errorf("%s: %w", *in, cause(err))
			}
			info, err := f.Stat()
			if err == nil && !info.Mode().IsRegular() && !info.IsDir() {
				// A FIFO, a device, /dev/stdin: it can be read once, so it is kept as
				// standard input is (reopening a FIFO would wait for a writer forever).
				path, remove, err := spool(ctx, f)
				f.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", *in, err)
				}
				defer remove()
				src = fit.Log(path, *in, logOpt)
			} else {
				f.Close()
				src = fit.Log(*in, *in, logOpt)
			}
		}
	default:
		sc, err := resolveScenario(ctx, e, positional[0])
		if err != nil {
			return err
		}
		if err := applySeedHorizon(sc, set, uint64(seed), *horizon); err != nil {
			return err
		}
		if err := sc.Validate(); err != nil {
			return fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		if err := checkFitBudget(e, sc, *steps); err != nil {
			return err
		}
		src = fit.Scenario(sc)
	}
	if err := checkChart(ctx, *chart); err != nil {
		return err
	}
	if perClient {
		rep, err := fit.FitPerClient(ctx, src, pco)
		if err != nil {
			return err
		}
		if l, ok := src.(*fit.LogSource); ok {
			printNotes(e.stderr, e.errWidth, l.Name(), l.Notes())
		}
		switch *format {
		case "json":
			return writeJSON(e.stdout, rep)
		case "csv":
			return writePerClientCSV(e.stdout, rep)
		}
		return wrapped(e, func(w io.Writer) error { return writePerClientTable(w, rep, pco.Protect) })
	}
	rep, err := fit.Fit(ctx, src, opt)
	if err != nil {
		return err
	}
	if l, ok := src.(*fit.LogSource); ok {
		printNotes(e.stderr, e.errWidth, l.Name(), l.Notes())
	}
	if *chart != "" {
		if err := writeChart(ctx, e, *chart, plots.Burstiness(rep)); err != nil || *chart == "-" {
			return err // - is the image instead of the table
		}
	}
	switch *format {
	case "json":
		return writeJSON(e.stdout, rep)
	case "csv":
		return writeFitCSV(e.stdout, rep)
	}
	return wrapped(e, func(w io.Writer) error { return writeFitTable(w, rep) })
}

// checkFitBudget refuses to fit a scenario whose traffic is more work than e's budget
// allows. Fitting makes the sources' requests once (again for each pass when they pass
// fit.DefaultMaxMemory of columns, 12 bytes a request), and the curve's pass takes each
// request at every one of the grid's steps rates, each kind's replay once: about requests ×
// (steps + kinds) events. A trace file is not estimated:
// its length is its own, already on the disk.
func checkFitBudget(e *env, sc *engine.Scenario, steps int) error {
	budget := e.budgetOrDefault()
	requests := sc.Estimate().Requests
	work := float64(requests) * float64(max(steps, 1)+len(limiters.Kinds()))
	if budget.MaxEvents > 0 && work > float64(budget.MaxEvents) {
		events := int64(min(work, math.MaxInt64))
		scale := math.Pow(10, math.Floor(math.Log10(work))-1) // two significant digits, rounded up
		raise := int64(min(math.Ceil(work/scale)*scale, math.MaxInt64))
		return fmt.Errorf("scenario %s: about %s requests to fit, %s events over its %d rates and every kind's replay, over the budget of %s events: "+
			"shorten the horizon, or raise the budget with --max-events %s",
			sc.Name, engine.SI(requests), engine.SI(events), steps, engine.SI(budget.MaxEvents), engine.SI(raise))
	}
	return nil
}

// percentPattern is a decimal number, optionally with an exponent: 1, 0.5, .25, 1e-3, 2.5E+1.
var percentPattern = regexp.MustCompile(`^\+?([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$`)

// parsePercent reads a percentage of permits, with or without %, as parts per million: from
// 0% to 100% in steps of 0.0001% (one permit in a million), 1% is 10000. An exponent is read
// exactly (1e-3% is 10), by moving the decimal point in the digits, never through a float; a
// value between two steps (1.00001%, 1e-300%) is refused with the range, never rounded, so a
// tiny nonzero bound does not silently become 0.
func parsePercent(text string) (int64, error) {
	const allowed = "a percentage from 0% to 100% in steps of 0.0001% (one permit in a million) is allowed, e.g. 1%, 0.5% or 0.0001%"
	s := strings.TrimSuffix(strings.TrimSpace(text), "%")
	m := percentPattern.FindStringSubmatch(s)
	if m == nil || m[1]+m[2] == "" {
		if strings.HasPrefix(s, "-") && percentPattern.MatchString(s[1:]) {
			return 0, fmt.Errorf("negative: %s", allowed)
		}
		return 0, fmt.Errorf("not a percentage: %s", allowed)
	}
	digits := strings.TrimLeft(m[1]+m[2], "0")
	if digits == "" {
		return 0, nil // 0, 0.000, 0e99
	}
	// The value is 0.digits × 10^point; in parts per million (×10^4), the point moves 4 on.
	// Past ±100 digits either way the answer is known: too large, or below the step.
	exp, err := strconv.Atoi(m[3])
	if m[3] == "" {
		exp, err = 0, nil
	}
	if err != nil || exp > 100 || exp < -100 {
		exp = max(min(exp, 1000), -1000)
	}
	point := len(m[1]) - (len(m[1]+m[2]) - len(digits)) + exp + 4 // digits before the point
	whole, frac := digits, ""
	switch {
	case point <= 0:
		whole, frac = "", digits
	case point < len(digits):
		whole, frac = digits[:point], digits[point:]
	default:
		whole = digits + strings.Repeat("0", min(point-len(digits), 20))
	}
	if len(whole) > 7 {
		return 0, fmt.Errorf("at most 100%%: %s", allowed)
	}
	if strings.Trim(frac, "0") != "" {
		if whole == "" {
			return 0, fmt.Errorf("more than 0%% but less than 0.0001%%: %s", allowed)
		}
		return 0, fmt.Errorf("finer than 0.0001%%, one permit in a million, the finest step (at most four decimals): %s", allowed)
	}
	ppm, _ := strconv.ParseInt("0"+whole, 10, 64)
	if ppm > 1e6 {
		return 0, fmt.Errorf("at most 100%%: %s", allowed)
	}
	return ppm, nil
}

// spool copies standard input to a temporary file, which fitting reads several times; remove
// deletes it (also after an interruption: the command returns, and its defers run).
func spool(ctx context.Context, stdin io.Reader) (path string, remove func(), err error) {
	f, err := os.CreateTemp("", "ratelab-fit-*.csv")
	if err != nil {
		return "", nil, err
	}
	remove = func() { f.Close(); os.Remove(f.Name()) }
	in, stop := newCtxReader(ctx, stdin)
	defer stop()
	// Spooling stops at the first line the trace reader would refuse (trace.MaxLine)
	// instead of filling the disk with what is not a trace (/dev/zero, an endless line).
	if _, err := io.Copy(f, &linelimit.Reader{R: in, Max: trace.MaxLine}); err != nil {
		remove()
		var long *linelimit.TooLongError
		if errors.As(err, &long) {
			err = fmt.Errorf("line %d: the line is longer than 1 MiB (%d bytes)", long.Line, trace.MaxLine)
		}
		return "", nil, err
	}
	if err := f.Close(); err != nil {
		remove()
		return "", nil, err
	}
	return f.Name(), remove, nil
}

func writeFitCSV(w io.Writer, rep *fit.Report) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"rate", "per_s", "interval_ns", "capacity", "burst", "need_ns", "from_ns", "to_ns", "permits", "knee", "chosen"})
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	for i, p := range rep.Curve {
		cw.Write([]string{p.RateText, strconv.FormatFloat(p.PerSec, 'f', 6, 64), n(int64(p.Interval)), n(p.Capacity),
			strconv.FormatFloat(p.Burst, 'f', 6, 64), n(int64(p.Need)), n(int64(p.From)), n(int64(p.To)), n(p.Permits),
			strconv.FormatBool(i == rep.Knee), strconv.FormatBool(i == rep.Chosen)})
	}
	cw.Flush()
	return cw.Error()
}

func writeFitTable(w io.Writer, rep *fit.Report) error {
	st := rep.Stats
	d := func(v time.Duration) string { return roundedDuration(v) }
	fmt.Fprintf(w, "%s: %d requests, %d permits over %s\n", rep.Source, st.Requests, st.Permits, at(st.Span()))
	gap := "one request"
	if st.MinGap >= 0 {
		gap = "closest two " + d(st.MinGap) + " apart"
	}
	fmt.Fprintf(w, "mean %.4g/s, peak %d in %s (ending at %s); largest request %d; most at one instant %d; %s\n\n",
		st.MeanPerSec, st.Peak, d(st.Window), at(st.PeakAt), st.MaxRequest, st.MaxInstant, gap)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rate\tT\tcapacity σ\tσ* (real)\tworst burst")
	for i, p := range rep.Curve {
		mark := ""
		switch {
		case i == rep.Knee:
			mark = "  ← knee"
		case i == rep.Chosen:
			mark = "  ← asked"
		}
		if !p.Fits() {
			fmt.Fprintf(tw, "%s\t%s\tnone\t-\tno token bucket at this rate admits it (tolerance past 2^62ns)%s\n", p.RateText, d(p.Interval), mark)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%d permits, %s to %s%s\n", p.RateText, d(p.Interval), p.Capacity, p.Burst, p.Permits, at(p.From), at(p.To), mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	p := rep.Recommended()
	where := "at the knee"
	if rep.Chosen != rep.Knee {
		where = "at the rate asked for"
	}
	fmt.Fprintf(w, "\nRecommended %s, %s; each spec replayed over the whole trace:\n", where, p.RateText)
	for _, a := range rep.Specs {
		if !a.Applies {
			fmt.Fprintf(w, "  %s: %s\n", a.Kind, a.Note)
			continue
		}
		verdict := fmt.Sprintf("admits all %d requests", a.Admitted)
		if a.Below != "" {
			verdict += fmt.Sprintf("; capacity %d refuses %d", p.Capacity-1, a.BelowRefused)
		}
		fmt.Fprintf(w, "  %s  %s\n      %s\n", a.Spec, verdict, a.Note)
	}
	if r := rep.Relaxed; r != nil {
		fmt.Fprintf(w, "\nRefusing at most %s of permits at %s (found in %d passes, replayed):\n  %s  refuses %d permits (%d requests, %.3g%%)",
			fmtPercent(r.PPM), r.Rate, r.Passes, r.Spec, r.RefusedPermits, r.RefusedRequests, 100*float64(r.RefusedPermits)/float64(st.Permits))
		if r.Capacity > 1 {
			fmt.Fprintf(w, "; capacity %d refuses %d", r.Capacity-1, r.BelowPermits)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// at prints a time in the trace to the millisecond (to the microsecond below 10ms).
func at(d time.Duration) string {
	if d >= 10*time.Millisecond {
		return limiters.FormatDuration(d.Round(time.Millisecond))
	}
	return limiters.FormatDuration(d.Round(time.Microsecond))
}

func fmtPercent(ppm int64) string {
	s := strconv.FormatFloat(float64(ppm)/1e4, 'f', 4, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "%"
}

func writePerClientCSV(w io.Writer, rep *fit.PerClientReport) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"rate", "per_s", "sigma_p50", "sigma_p90", "sigma_p99", "sigma_max", "capacity", "knee", "chosen"})
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	for i, p := range rep.Curve {
		cw.Write([]string{p.RateText, strconv.FormatFloat(p.PerSec, 'f', 6, 64), n(p.P50), n(p.P90), n(p.P99), n(p.Max), n(p.Capacity),
			strconv.FormatBool(i == rep.Knee), strconv.FormatBool(i == rep.Chosen)})
	}
	cw.Flush()
	return cw.Error()
}

// writePerClientTable prints a per-client fit within 80 columns: the clients' σ at each rate,
// the recommended keyed spec, whom it refuses, and the protected stack.
func writePerClientTable(w io.Writer, rep *fit.PerClientReport, protect limiters.Rate) error {
	share := fmtPercent(rep.ClientsPPM)
	fmt.Fprintf(w, "%s: %d requests, %d permits, from %d clients\n", rep.Source, rep.Requests, rep.Permits, rep.Clients)
	fmt.Fprintf(w, "σ per client: the least bucket at a rate that admits all a client asks\n\n")
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "rate\tσ p50\tp90\tp99\tmax\tcapacity for %s\t\n", share)
	sig := func(v int64) string {
		if v == 0 {
			return "none"
		}
		return strconv.FormatInt(v, 10)
	}
	for i, p := range rep.Curve {
		mark := ""
		switch {
		case i == rep.Knee:
			mark = "← knee"
		case i == rep.Chosen:
			mark = "← asked"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.RateText, sig(p.P50), sig(p.P90), sig(p.P99), sig(p.Max), sig(p.Capacity), mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for line := range strings.Lines(table.String()) {
		fmt.Fprintln(w, strings.TrimRight(line, " \n"))
	}
	p := rep.Curve[rep.Chosen]
	where := "at the knee"
	if rep.Chosen != rep.Knee {
		where = "at the rate asked for"
	}
	fmt.Fprintf(w, "\nPer client %s, %s, replayed over the whole trace:\n  %s\n", where, p.RateText, rep.Spec)
	fmt.Fprintf(w, "  admits %d of %d clients entirely, %d of %d requests\n", rep.Clients-rep.RefusedClients, rep.Clients, rep.Admitted, rep.Requests)
	if rep.RefusedClients > 0 {
		fmt.Fprintf(w, "\nRefused, most first:\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  client\trefused\tof\tσ at "+p.RateText)
		for _, c := range rep.Refused {
			fmt.Fprintf(tw, "  %s\t%d (%.3g%%)\t%d\t%s\n", clip(c.Key, 30), c.Refused, 100*float64(c.Refused)/float64(c.Requests), c.Requests, sig(c.Sigma))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if more := rep.RefusedClients - len(rep.Refused); more > 0 {
			fmt.Fprintf(w, "  and %d more clients\n", more)
		}
	}
	switch {
	case rep.Stack != "":
		fmt.Fprintf(w, "\nProtecting the backend at %s, behind the per-client limit:\n  %s\n  admits the same %d requests\n", protect, rep.Stack, rep.StackAdmitted)
	case rep.ProtectNote != "":
		fmt.Fprintf(w, "\n--protect %s: %s\n", protect, rep.ProtectNote)
	}
	return nil
}

// clip is s cut to n runes, with … when cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
