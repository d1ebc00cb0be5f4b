package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/internal/outfile"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/plots"
	"github.com/ratelab/ratelab/present"
	"github.com/ratelab/ratelab/scenarios"
)

// traceLimit is the most attempts per lane for which plot reruns a scenario with its trace
// recorded: the timeline needs it and the guarantee chart is exact with it. Longer runs are
// charted from their bins.
const traceLimit = 50_000

// plotOptions are the rendering flags.
type plotOptions struct {
	format        string
	width, height int
}

func plotCommand(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	var sf scenarioFlags
	sf.register(fs)
	var bf budgetFlags
	bf.register(fs)
	var charts stringList
	fs.Var(&charts, "chart", "a chart to draw by its `NAME`, repeatable: "+strings.Join(plots.ChartNames(), ", ")+" (default: every chart that applies)")
	out := fs.String("out", "", "the directory `DIR` to write the charts to; - writes the one --chart to standard output (required, unless --gallery)")
	window := fs.Duration("window", 0, "the guarantee chart's rolling window, a `DURATION` (default: the limiters' natural window, or their emission interval for runs shorter than two windows)")
	timing := fs.Bool("timing", false, "report on standard error how long the run (simulation included) and each chart's rendering took, in wall time")
	from := fs.Duration("from", 0, "zoom every time axis to start at this virtual `TIME`, e.g. 900ms (default: the run's start)")
	to := fs.Duration("to", 0, "zoom every time axis to end at this virtual `TIME`, e.g. 1.2s (default: the run's horizon)")
	gallery := fs.String("gallery", "", "regenerate the gallery (GALLERY.md and img/) in this `DIR`, for every scenario (default: none)")
	replications := fs.Int("replications", 0, "draw the rate chart of `K` replications (seeds SEED…SEED+K−1, in parallel): the mean rates with a 95% confidence band around the admitted one; the other charts draw one run (default: one run, every chart)")
	var opt plotOptions
	fs.StringVar(&opt.format, "format", "png", "the image `FORMAT`: png, svg, or gif (an animation of a time-axis chart building up over virtual time)")
	fs.IntVar(&opt.width, "width", plots.DefaultWidth, "the width in `PIXELS` (at 96 dpi)")
	fs.IntVar(&opt.height, "height", 0, "the height in `PIXELS` (default: from the number of panels)")
	positional, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := checkChoice("format", opt.format, "png", "svg", "gif"); err != nil {
		return err
	}
	if err := bf.apply(e); err != nil {
		return err
	}
	if opt.width < 200 || opt.width > 10000 || opt.height < 0 || opt.height > 10000 || (opt.height > 0 && opt.height < 150) {
		return usageErrorf("plot: --width must be 200 to 10000 and --height 150 to 10000 pixels, got %d×%d", opt.width, opt.height)
	}
	for _, c := range charts {
		if !slices.Contains(plots.ChartNames(), c) {
			return usageErrorf("--chart %s: no such chart%s (charts: %s)", quoteArg(c), didYouMean(c, plots.ChartNames(), nil), strings.Join(plots.ChartNames(), ", "))
		}
	}
	if *window < 0 {
		return usageErrorf("--window %v: must be positive", *window)
	}
	replicated := flagSet(fs, "replications")
	if err := checkReplications(*replications, replicated); err != nil {
		return err
	}
	if replicated {
		for _, c := range charts {
			if c != "rate" {
				return usageErrorf("--chart %s: with --replications only the rate chart is drawn (its band is the replications' interval)", c)
			}
		}
		if *gallery != "" {
			return usageErrorf("plot: --gallery draws one run of every scenario; it does not combine with --replications")
		}
	}
	if *from < 0 {
		return usageErrorf("--from %v: must not be negative", *from)
	}
	if *to < 0 || (*to > 0 && *to <= *from) {
		return usageErrorf("--to %v: must be after --from (%v)", *to, *from)
	}
	view := plots.View{From: *from, To: *to}
	if *gallery != "" {
		if len(positional) > 0 || *out != "" || len(charts) > 0 || !view.Whole() {
			return usageErrorf("plot: --gallery draws every scenario; it takes no scenario, --chart, --out, --from or --to")
		}
		if opt.format == "gif" {
			return usageErrorf("--gallery: the gallery is png or svg (animate one chart with --chart NAME --format gif)")
		}
		if *gallery == "-" {
			return usageErrorf("--gallery -: the gallery is a directory of files; give its path")
		}
		return writeGallery(ctx, e, *gallery, scenarios.Names(), opt)
	}
	if *out == "" {
		return usageErrorf("plot: --out DIR is required (or --gallery DIR)")
	}
	toStdout := *out == "-"
	if err := refuseTerminal(e, "--out", "DIR", *out); err != nil {
		return err
	}
	if err := refuseImageNameForDir(*out); err != nil {
		return err
	}
	if toStdout && len(charts) != 1 {
		return usageErrorf("--out -: standard output takes one image; choose it with one --chart (charts: %s)", strings.Join(plots.ChartNames(), ", "))
	}
	sc, err := sf.load(ctx, e, fs, positional)
	if err != nil {
		return err
	}
	if err := outfile.Check(ctx, plotPaths(*out, fileBase(sc, positional), charts, *replications, opt.format)...); err != nil {
		return err
	}
	if replicated {
		return plotReplications(ctx, e, sc, *replications, *out, fileBase(sc, positional), opt)
	}
	began := time.Now()
	res, err := runForCharts(ctx, e, sc, *from, *to)
	if err != nil {
		return err
	}
	simulated := time.Since(began)
	if *to > res.Horizon {
		return usageErrorf("--to %v: past the run's horizon, %v", *to, limiters.FormatDuration(res.Horizon))
	}
	if *from >= res.Horizon {
		return usageErrorf("--from %v: at or past the run's horizon, %v", *from, limiters.FormatDuration(res.Horizon))
	}
	var rendered []string
	if *timing {
		defer func() {
			fmt.Fprintf(e.stderr, "plot: %s requests per lane simulated in %s; rendered %s; total %s\n",
				groupDigits(res.Lanes[0].Totals.Offered), roundedDuration(simulated), strings.Join(rendered, ", "), roundedDuration(time.Since(began)))
		}()
	}
	names := []string(charts)
	if len(names) == 0 {
		names = plots.Applicable(sc, res)
	}
	if !toStdout {
		if err := outfile.EnsureDir(*out); err != nil {
			return fmt.Errorf("--out %w", err)
		}
	}
	base := fileBase(sc, positional)
	for _, name := range names {
		drawing := time.Now()
		fig, err := plots.BuildWith(name, sc, res, plots.Params{View: view, Window: *window})
		if err != nil {
			return fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		if opt.format == "gif" && !fig.TimeAxis {
			if len(charts) > 0 {
				return usageErrorf("--format gif: the %s chart has no time axis to animate (animate timeline, rate, state, guarantee, warmup, downstream or fleet)", name)
			}
			continue // every chart that applies: the ones that animate
		}
		if toStdout {
			var buf bytes.Buffer
			if err := fig.Write(&buf, opt.format, opt.width, opt.height); err != nil {
				return fmt.Errorf("%s chart: %w", name, err)
			}
			_, err := e.stdout.Write(buf.Bytes())
			rendered = append(rendered, name+" "+roundedDuration(time.Since(drawing)))
			return err
		}
		path := filepath.Join(*out, fmt.Sprintf("%s-%s.%s", base, name, opt.format))
		if err := writeFigure(ctx, path, fig, opt); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, path)
		rendered = append(rendered, name+" "+roundedDuration(time.Since(drawing)))
	}
	return nil
}

// plotReplications writes the rate chart of k replications, with its band, to out (a
// directory, or - for standard output).
func plotReplications(ctx context.Context, e *env, sc *engine.Scenario, k int, out, base string, opt plotOptions) error {
	set, err := replicateWithProgress(ctx, e, sc, k)
	if err != nil {
		return err
	}
	fig, err := plots.RateInterval(sc, set)
	if err != nil {
		return fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	if out == "-" {
		var buf bytes.Buffer
		if err := fig.Write(&buf, opt.format, opt.width, opt.height); err != nil {
			return fmt.Errorf("rate chart: %w", err)
		}
		_, err := e.stdout.Write(buf.Bytes())
		return err
	}
	if err := outfile.EnsureDir(out); err != nil {
		return fmt.Errorf("--out %w", err)
	}
	path := filepath.Join(out, fmt.Sprintf("%s-rate-%dx.%s", base, k, opt.format))
	if err := writeFigure(ctx, path, fig, opt); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, path)
	return nil
}

// runForCharts runs sc for charts of the window [from, to) (to 0: the horizon); when the
// window holds few enough attempts (traceLimit per lane, counted from the run's bins) and the
// run was not traced, it reruns it up to the window's end, recording the window's trace only
// (engine.TraceWindow; the results are the same: the trace only observes). A chart of the
// whole of a short run gets its whole trace; a window of a long run, the window's.
func runForCharts(ctx context.Context, e *env, sc *engine.Scenario, from, to time.Duration) (*engine.Results, error) {
	res, err := runWithProgress(ctx, e, sc)
	if err != nil || sc.Trace {
		return res, err
	}
	if to <= 0 || to > res.Horizon {
		to = res.Horizon
	}
	for _, l := range res.Lanes {
		attempts := int64(0)
		for _, b := range l.Bins {
			if b.Start < to && b.Start+res.BinWidth > from { // the bins the window touches
				attempts += b.Attempts + b.Failed
			}
		}
		if attempts > traceLimit {
			return res, nil
		}
	}
	return res, engine.TraceWindow(ctx, sc, res, from, to)
}

// groupDigits is n with thousands separated by commas: 10,000,000.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// fileBase names a scenario's files: its name, or the scenario file's base name.
func fileBase(sc *engine.Scenario, positional []string) string {
	name := sc.Name
	if name == "" && len(positional) == 1 {
		name = strings.TrimSuffix(filepath.Base(positional[0]), filepath.Ext(positional[0]))
	}
	name = strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '-'
	}, name)
	if name == "" {
		name = "scenario"
	}
	return name
}

// writeFigure renders fig to path, writing only when the bytes differ (a regenerated gallery
// leaves unchanged files untouched).
func writeFigure(ctx context.Context, path string, fig *plots.Figure, opt plotOptions) error {
	var buf bytes.Buffer
	if err := fig.Write(&buf, opt.format, opt.width, opt.height); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return outfile.WriteFile(ctx, path, buf.Bytes())
}

// writeGallery runs every named scenario and writes dir/img/SCENARIO-CHART.EXT for each chart
// that applies, and dir/GALLERY.md: each scenario's explanation, charts and results table.
func writeGallery(ctx context.Context, e *env, dir string, names []string, opt plotOptions) error {
	if err := outfile.EnsureDir(dir); err != nil {
		return fmt.Errorf("--gallery %w", err)
	}
	img := filepath.Join(dir, "img")
	if err := outfile.EnsureDir(img); err != nil {
		return err
	}
	var md strings.Builder
	md.WriteString("# Gallery\n\n<!-- Generated by `go run ./cmd/ratelab plot --gallery docs/`; do not edit. -->\n\n" +
		"Every built-in scenario, run with its own seed, and every chart that applies to it. " +
		"Colours mean one limiter kind everywhere: " + kindLegend() + ". " +
		"Offered traffic is the grey area, refusals are black (below zero in the rate charts), measured data are solid " +
		"and references dashed or dotted: bounds, the configured limit, window and slot boundaries (thin lines in the kind's colour).\n\n")
	for _, name := range names {
		fmt.Fprintf(&md, "- [%s](#%s)\n", name, name)
	}
	for _, name := range names {
		sc, err := scenarios.Get(name)
		if err != nil {
			return err
		}
		res, err := runForCharts(ctx, e, sc, 0, 0)
		if err != nil {
			return fmt.Errorf("scenario %s: %w", name, err)
		}
		fmt.Fprintf(&md, "\n## %s\n\n%s\n\n", name, sc.Description)
		for _, chart := range plots.Applicable(sc, res) {
			fig, err := plots.Build(chart, sc, res)
			if err != nil {
				return fmt.Errorf("scenario %s: %w", name, err)
			}
			file := fmt.Sprintf("%s-%s.%s", name, chart, opt.format)
			path := filepath.Join(img, file)
			if err := writeFigure(ctx, path, fig, opt); err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, path)
			fmt.Fprintf(&md, "![%s](img/%s)\n\n", fig.Title, file)
			if chart == "timeline" && opt.format == "png" { // the teaching picture, animated
				anim := plotOptions{format: "gif", width: opt.width, height: opt.height}
				file := fmt.Sprintf("%s-%s.gif", name, chart)
				if err := writeFigure(ctx, filepath.Join(img, file), fig, anim); err != nil {
					return err
				}
				fmt.Fprintln(e.stdout, filepath.Join(img, file))
				fmt.Fprintf(&md, "Animated, building up over virtual time: [%s](img/%s)\n\n", file, file)
			}
		}
		writeMarkdownTable(&md, sc, res)
	}
	path := filepath.Join(dir, "GALLERY.md")
	if err := outfile.WriteFile(ctx, path, []byte(md.String())); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, path)
	return nil
}

// kindLegend names every registered kind's chart colour (present.Of): "token-bucket blue, …".
func kindLegend() string {
	kinds := limiters.Kinds()
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %s", k.Kind, present.Of(string(k.Kind)).ColorName)
	}
	return strings.Join(parts, ", ")
}

// writeMarkdownTable is the run command's table as Markdown.
func writeMarkdownTable(md *strings.Builder, sc *engine.Scenario, res *engine.Results) {
	rows := summarize(sc, res)
	cols := tableColumns(rows)
	cells := headers(cols, false)
	fmt.Fprintf(md, "| %s |\n| --- |%s\n", strings.Join(cells, " | "), strings.Repeat(" ---: |", len(cells)-1))
	for _, r := range rows {
		c := r.cells(cols)
		c[0] = "`" + c[0] + "`"
		fmt.Fprintf(md, "| %s |\n", strings.Join(c, " | "))
	}
}

// refuseImageNameForDir refuses --out guarantee.png when no such directory exists: plot
// writes DIR/NAME-CHART.png, and a user who names an image file means the file, not a new
// directory of that name holding it. One chart to a file of one's own is --out - > file.
func refuseImageNameForDir(out string) error {
	switch strings.ToLower(filepath.Ext(out)) {
	case ".png", ".svg", ".gif":
	default:
		return nil
	}
	if info, err := os.Stat(out); err == nil && info.IsDir() {
		return nil
	}
	return usageErrorf("--out %s: a directory, not an image file: plot writes DIR/NAME-CHART.%s; for one chart in a file of your own, --chart NAME --out - > %s",
		quoteArg(out), strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), "."), quoteArg(out))
}
