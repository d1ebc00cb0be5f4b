package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/fit"
	"github.com/ratelab/ratelab/internal/outfile"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/plots"
	"github.com/ratelab/ratelab/sweep"
)

// sweepOutput are the flags that say what a sweep (or a merge) writes.
type sweepOutput struct {
	format  string
	out     string
	image   string
	metrics stringList
}

func (o *sweepOutput) register(fs *flag.FlagSet, format string) {
	fs.StringVar(&o.format, "format", format, "the output `FORMAT` on standard output: table (each metric as a grid) or csv (one row per cell, stable columns)")
	fs.StringVar(&o.out, "out", "", "also draw each --metric to this directory `DIR`: a heatmap for two --vary, a line chart for one (default: none)")
	fs.StringVar(&o.image, "image", "png", "the figures' `FORMAT`: png, svg or both")
	fs.Var(&o.metrics, "metric", "a `METRIC` for the table and the figures, repeatable: "+strings.Join(sweep.MetricNames(), ", ")+" (default: refused%)")
}

// check refuses bad values before anything runs, and resolves the metrics.
func (o *sweepOutput) check() ([]sweep.Metric, error) {
	if err := checkChoice("format", o.format, "table", "csv"); err != nil {
		return nil, err
	}
	if err := checkChoice("image", o.image, "png", "svg", "both"); err != nil {
		return nil, err
	}
	if o.out == "-" {
		return nil, usageErrorf("--out -: the figures are files; give a directory (the CSV goes to standard output with --format csv)")
	}
	names := []string(o.metrics)
	if len(names) == 0 {
		names = []string{"refused%"}
	}
	var out []sweep.Metric
	for _, name := range names {
		m, ok := sweep.LookupMetric(name)
		if !ok {
			return nil, usageErrorf("--metric %s: no such metric%s (metrics: %s)", quoteArg(name), didYouMean(name, sweep.MetricNames(), nil), strings.Join(sweep.MetricNames(), ", "))
		}
		out = append(out, m)
	}
	return out, nil
}

func sweepCommand(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	var sf scenarioFlags
	sf.register(fs)
	var varies stringList
	fs.Var(&varies, "vary", "a field and its values, `VARY`, as TARGET.FIELD=VALUES, once or twice (required): TARGET is a kind (every lane with a stage of it) or a lane's name; VALUES is LO..HI, stepped, or a list a,b,c")
	stepsText := fs.String("steps", strconv.Itoa(sweep.DefaultSteps), "the `N` values of each LO..HI range, or NxM: N for the first --vary, M for the second")
	scaleText := fs.String("scale", "linear", "how ranges are stepped, a `SCALE`: linear or log, or one per --vary (log,linear)")
	shardText := fs.String("shard", "", "run only this `SHARD` of the cells, I/N: every N-th cell from the I-th, I from 0 to N−1, as CSV for ratelab sweep merge (default: every cell)")
	var bf budgetFlags
	bf.register(fs)
	jobs := fs.Int("jobs", 0, "how many cells run at once, `N` (default: one per core, GOMAXPROCS)")
	var o sweepOutput
	o.register(fs, "table")
	positional, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	metrics, err := o.check()
	if err != nil {
		return err
	}
	if len(varies) == 0 {
		return usageErrorf("sweep: --vary TARGET.FIELD=VALUES is required, e.g. --vary token-bucket.capacity=1..100 (once, or twice for a heatmap)")
	}
	if len(varies) > sweep.MaxDims {
		return usageErrorf("--vary %s: a sweep varies at most %d fields (a heatmap's two axes); sweep again for each value of a third", quoteArg(varies[sweep.MaxDims]), sweep.MaxDims)
	}
	steps, err := parseSteps(*stepsText, *scaleText, len(varies))
	if err != nil {
		return err
	}
	if *jobs < 0 || set["jobs"] && *jobs == 0 {
		return usageErrorf("--jobs %d: must be at least 1", *jobs)
	}
	shard, shards := 0, 0
	if *shardText != "" {
		if shard, shards, err = parseShard(*shardText); err != nil {
			return err
		}
		if o.out != "" {
			return usageErrorf("sweep: --out draws every cell; a shard has a part of them: draw the figures with ratelab sweep merge SHARDS… --out DIR")
		}
		if set["format"] && o.format != "csv" {
			return usageErrorf("sweep: --shard writes CSV for ratelab sweep merge, not --format %s", o.format)
		}
		o.format = "csv"
	}
	var dims []sweep.Dimension
	for i, text := range varies {
		d, err := sweep.ParseDimension(text, steps[i])
		if err != nil {
			return varyUsage(err)
		}
		dims = append(dims, d)
	}
	sc, err := sf.load(ctx, e, fs, positional)
	if err != nil {
		return err
	}
	g, err := sweep.New(sc, dims)
	if err != nil {
		return varyUsage(err)
	}
	for _, m := range metrics {
		if err := g.Check(m); err != nil {
			return metricUsage(m, err)
		}
	}
	if err := bf.apply(e); err != nil {
		return err
	}
	if err := outfile.Check(ctx, sweepFigurePaths(o, metrics, fileBase(sc, positional))...); err != nil {
		return err
	}
	if err := checkSweepBudget(e, g, shard, shards); err != nil {
		return err
	}
	rows, err := sweepWithProgress(ctx, e, g, sweep.Options{Workers: *jobs, Shard: shard, Shards: shards})
	if err != nil {
		return err
	}
	if shards > 0 {
		// A shard's invalid cells are rows like the others, and the shard succeeds: the
		// merge, where the sweep is whole, fails for them (a Job would retry a failed pod
		// for the same rows).
		if err := sweep.WriteCSV(e.stdout, rows); err != nil {
			return err
		}
		if err := invalidSummary(rows); err != nil {
			fmt.Fprintf(e.stderr, "ratelab: %v (exit 0: sweep merge fails for them)\n", err)
		}
		return nil
	}
	res, err := sweep.Assemble(rows)
	if err != nil {
		return err
	}
	if err := checkResultMetrics(res, metrics); err != nil {
		return err
	}
	if o.out != "" {
		sigma, err := sigmaFor(ctx, sc, res)
		if err != nil {
			return err
		}
		if err := writeSweepFigures(ctx, e, o, metrics, res, sigma, fileBase(sc, positional)); err != nil {
			return err
		}
	}
	if o.format == "csv" {
		err = sweep.WriteCSV(e.stdout, res.Rows)
	} else {
		err = writeSweepTable(e.stdout, res, metrics, e.width)
	}
	if err != nil {
		return err
	}
	return invalidSummary(res.Rows)
}

// invalidSummary is nil when every cell ran, else the one line that says how many did not and
// why the first did not, returned after all the output is written: the exit status (1) says
// that some cells were invalid, and their rows say why.
func invalidSummary(rows []sweep.Row) error {
	invalid := sweep.InvalidCells(rows)
	if len(invalid) == 0 {
		return nil
	}
	cells := len(rows)
	if len(rows) > 0 {
		cells = rows[0].Cells
	}
	first := invalid[0]
	return fmt.Errorf("sweep: %d of %d cells invalid, not run: the first, cell %d (%s, %s): %s; each invalid cell's row gives its reason",
		len(invalid), cells, first.Cell, first.Lane, first.Parameters(), first.ShortReason())
}

func sweepMergeCommand(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("sweep merge", flag.ContinueOnError)
	var o sweepOutput
	o.register(fs, "csv")
	positional, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	metrics, err := o.check()
	if err != nil {
		return err
	}
	if len(positional) == 0 {
		return usageErrorf("sweep merge: give the shards' CSV files, e.g. ratelab sweep merge shard-*.csv")
	}
	if i := slices.Index(positional, "-"); i >= 0 && slices.Contains(positional[i+1:], "-") {
		return usageErrorf("sweep merge: - (standard input) given twice")
	}
	if err := noteShards(ctx, e, positional); err != nil {
		return err
	}
	shards := &shardFiles{ctx: ctx, e: e, paths: positional}
	defer shards.close()
	if o.format == "csv" && o.out == "" {
		// The CSV streams: a first pass checks that the shards are one whole sweep (keeping a
		// copy of what can be read once: standard input, a FIFO), the second writes the rows
		// as they merge, so memory stays flat whatever the cells and nothing is written from
		// shards that do not add up.
		// The first pass also finds the invalid cells: their CSV has the error column.
		var invalid []sweep.Row
		if err := shards.merge(func(r sweep.Row) error {
			if r.Invalid != "" && len(invalid) == 0 {
				invalid = append(invalid, r)
			}
			return nil
		}); err != nil {
			return err
		}
		w := sweep.NewCSVWriter(e.stdout)
		w.ErrorColumn = len(invalid) > 0
		count, cells := 0, 0
		if err := shards.merge(func(r sweep.Row) error {
			cells = r.Cells
			if r.Invalid != "" {
				count++
			}
			return w.Write(r)
		}); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if count == 0 {
			return nil
		}
		first := invalid[0]
		return fmt.Errorf("sweep: %d of %d cells invalid, not run: the first, cell %d (%s, %s): %s; each invalid cell's row gives its reason",
			count, cells, first.Cell, first.Lane, first.Parameters(), first.ShortReason())
	}
	// A table or a figure is the whole grid: the rows are kept.
	var rows []sweep.Row
	if err := shards.merge(func(r sweep.Row) error { rows = append(rows, r); return nil }); err != nil {
		return err
	}
	res, err := sweep.Assemble(rows)
	if err != nil {
		return err
	}
	if err := checkResultMetrics(res, metrics); err != nil {
		return err
	}
	if o.out != "" {
		if err := writeSweepFigures(ctx, e, o, metrics, res, nil, fileBase(&engine.Scenario{Name: res.Scenario}, nil)); err != nil {
			return err
		}
	}
	if o.format == "csv" {
		err = sweep.WriteCSV(e.stdout, rows)
	} else {
		err = writeSweepTable(e.stdout, res, metrics, e.width)
	}
	if err != nil {
		return err
	}
	return invalidSummary(rows)
}

// shardFiles are the shards sweep merge reads, each as many times as merge is called: a
// regular file is opened again; what can be read once (standard input, a FIFO, a device) is
// copied to a temporary file as the first merge reads it, and read from there after.
type shardFiles struct {
	ctx    context.Context
	e      *env
	paths  []string
	copies []string // per path, its copy ("" for a regular file); made by the first merge
}

// merge runs sweep.MergeCSV over every shard.
func (s *shardFiles) merge(emit func(sweep.Row) error) error {
	first := s.copies == nil
	if first {
		s.copies = make([]string, len(s.paths))
	}
	var readers []*sweep.CSVReader
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	for i, path := range s.paths {
		name := path
		if path == "-" {
			name = "standard input"
		}
		in, closeIn, err := s.open(i, first)
		if err != nil {
			return err
		}
		closers = append(closers, closeIn)
		readers = append(readers, sweep.NewCSVReader(in, name))
	}
	return sweep.MergeCSV(readers, emit)
}

// open is shard i to read: the first time, the path (standard input for -), through a copy
// when it can be read only once; after, the path again, or its copy.
func (s *shardFiles) open(i int, first bool) (io.Reader, func(), error) {
	path := s.paths[i]
	if !first {
		if s.copies[i] != "" {
			path = s.copies[i]
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", s.paths[i], cause(err))
		}
		in, stop := newCtxReader(s.ctx, f)
		return in, func() { stop(); f.Close() }, nil
	}
	var src io.Reader
	var closeSrc func()
	once := true // read once: kept in a copy
	if path == "-" {
		readingStdin(s.e, "a shard's CSV")
		src, closeSrc = s.e.stdin, func() {}
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, cause(err))
		}
		info, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("%s: %w", path, cause(err))
		}
		if info.IsDir() {
			f.Close()
			return nil, nil, fmt.Errorf("%s: is a directory, not a shard's CSV", path)
		}
		src, closeSrc, once = f, func() { f.Close() }, !info.Mode().IsRegular()
	}
	in, stop := newCtxReader(s.ctx, src)
	if !once {
		return in, func() { stop(); closeSrc() }, nil
	}
	keep, err := os.CreateTemp("", "ratelab-shard-*.csv")
	if err != nil {
		stop()
		closeSrc()
		return nil, nil, fmt.Errorf("%s: keeping a copy to read again: %w", path, cause(err))
	}
	s.copies[i] = keep.Name()
	return io.TeeReader(in, keep), func() { stop(); closeSrc(); keep.Close() }, nil
}

// close removes the copies.
func (s *shardFiles) close() {
	for _, c := range s.copies {
		if c != "" {
			os.Remove(c)
		}
	}
}

// metricUsage is a metric the sweep cannot have, as a usage error naming --metric.
func metricUsage(m sweep.Metric, err error) error {
	return usageErrorf("--metric %s: %s", m.Name, strings.TrimPrefix(err.Error(), "sweep: "+m.Name+": "))
}

// checkResultMetrics refuses a metric none of the sweep's cells has (per-key fairness when no
// cell kept per-key results: a trace without keys).
func checkResultMetrics(res *sweep.Result, metrics []sweep.Metric) error {
	for _, m := range metrics {
		if err := res.Check(m); err != nil {
			return metricUsage(m, err)
		}
	}
	return nil
}

// varyUsage makes the sweep package's complaints about --vary usage errors in the CLI's
// words: "--vary 'token-bucket.capcity=1..9': token-bucket has no field …".
func varyUsage(err error) error {
	var ve *sweep.VaryError
	if errors.As(err, &ve) {
		return usageErrorf("--vary %s: %s", quoteArg(ve.Text), ve.Reason)
	}
	return usageErrorf("%s", strings.TrimPrefix(err.Error(), "sweep: "))
}

// parseSteps reads --steps N or NxM and --scale S or S,S into one Steps per --vary.
func parseSteps(stepsText, scaleText string, dims int) ([]sweep.Steps, error) {
	parts := strings.FieldsFunc(stepsText, func(r rune) bool { return r == 'x' || r == '×' })
	if len(parts) != 1 && len(parts) != dims || strings.Count(stepsText, "x")+strings.Count(stepsText, "×") != len(parts)-1 {
		return nil, usageErrorf("--steps %s: give N, or NxM with one N per --vary (%d here)", quoteArg(stepsText), dims)
	}
	scales := strings.Split(scaleText, ",")
	if len(scales) != 1 && len(scales) != dims {
		return nil, usageErrorf("--scale %s: give one scale, or one per --vary (%d here)", quoteArg(scaleText), dims)
	}
	out := make([]sweep.Steps, dims)
	for i := range out {
		text := parts[min(i, len(parts)-1)]
		n, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil {
			return nil, usageErrorf("--steps %s: %q is not a whole number", quoteArg(stepsText), text)
		}
		if n < 2 || n > sweep.MaxSteps {
			return nil, usageErrorf("--steps %s: a range takes 2 to %d values", quoteArg(stepsText), sweep.MaxSteps)
		}
		scale := strings.TrimSpace(scales[min(i, len(scales)-1)])
		if err := checkChoice("scale", scale, "linear", "log"); err != nil {
			return nil, err
		}
		out[i] = sweep.Steps{N: n, Scale: sweep.Scale(scale)}
	}
	return out, nil
}

// parseShard reads I/N.
func parseShard(text string) (i, n int, err error) {
	a, b, ok := strings.Cut(text, "/")
	i, errI := strconv.Atoi(strings.TrimSpace(a))
	n, errN := strconv.Atoi(strings.TrimSpace(b))
	switch {
	case !ok || errI != nil || errN != nil:
		return 0, 0, usageErrorf("--shard %s: not I/N, e.g. 0/4 (shard I of N, I from 0 to N−1)", quoteArg(text))
	case n < 1:
		return 0, 0, usageErrorf("--shard %s: N must be at least 1", quoteArg(text))
	case i < 0 || i >= n:
		return 0, 0, usageErrorf("--shard %s: I runs from 0 to %d (N−1), as Kubernetes' JOB_COMPLETION_INDEX does", quoteArg(text), n-1)
	}
	return i, n, nil
}

// sweepWithProgress runs the grid, with run's progress bar (and the time left) on a terminal.
func sweepWithProgress(ctx context.Context, e *env, g *sweep.Grid, opt sweep.Options) ([]sweep.Row, error) {
	var progress sweep.Progress
	opt.Progress = &progress
	var rows []sweep.Row
	err := withProgressBar(e, "sweep "+g.Scenario.Name, progress.Fraction, func() error {
		var err error
		rows, err = sweep.Run(ctx, g, opt)
		return err
	})
	return rows, err
}

// sigmaFor is σ(ρ) at the sweep's rates when it varies a token bucket's rate and capacity over
// a trace (every source a trace): the burstiness curve ratelab fit computes, to draw over the
// heatmap. nil otherwise.
func sigmaFor(ctx context.Context, sc *engine.Scenario, res *sweep.Result) ([]fit.Point, error) {
	rateDim, _, ok := plots.SigmaAxes(res)
	if !ok || len(sc.Sources) == 0 {
		return nil, nil
	}
	for _, s := range sc.Sources {
		if s.Kind != engine.SourceTrace {
			return nil, nil
		}
	}
	var rates []limiters.Rate
	for _, v := range res.Dims[rateDim].Values {
		r, err := limiters.ParseRate(v.Text)
		if err != nil {
			return nil, nil // a list of rates in another syntax: no curve
		}
		rates = append(rates, r)
	}
	return fit.Curve(ctx, fit.Scenario(sc), rates)
}

// writeSweepFigures draws each metric to DIR/BASE-sweep-METRIC.EXT and names each file on
// stderr (standard output holds the table or the CSV).
func writeSweepFigures(ctx context.Context, e *env, o sweepOutput, metrics []sweep.Metric, res *sweep.Result, sigma []fit.Point, base string) error {
	if err := outfile.Check(ctx, sweepFigurePaths(o, metrics, base)...); err != nil {
		return err
	}
	if err := outfile.EnsureDir(o.out); err != nil {
		return fmt.Errorf("--out %w", err)
	}
	formats := []string{o.image}
	if o.image == "both" {
		formats = []string{"png", "svg"}
	}
	for _, m := range metrics {
		fig, err := plots.Sweep(res, m, sigma)
		if err != nil {
			return err
		}
		for _, format := range formats {
			var buf bytes.Buffer
			if err := fig.Write(&buf, format, plots.DefaultWidth, 0); err != nil {
				return err
			}
			path := filepath.Join(o.out, fmt.Sprintf("%s-%s.%s", base, plots.MetricFileName(m), format))
			if err := outfile.WriteFile(ctx, path, buf.Bytes()); err != nil {
				return err
			}
			fmt.Fprintln(e.stderr, path)
		}
	}
	return nil
}

// writeSweepTable prints each metric as the heatmap reads: for two dimensions, one grid per
// lane, the first dimension across and the second down from its largest value; for one, a
// column per lane.
//
// On a terminal (width > 0) the same, laid out for its width (termSweepTable).
func writeSweepTable(w io.Writer, res *sweep.Result, metrics []sweep.Metric, width int) error {
	if width > 0 {
		_, err := io.WriteString(w, termSweepTable(res, metrics, width))
		return err
	}
	var shape []string
	for _, d := range res.Dims {
		shape = append(shape, fmt.Sprintf("%s (%d values)", d.Name(), len(d.Values)))
	}
	lanes := "1 lane"
	if len(res.Lanes) > 1 {
		lanes = fmt.Sprintf("%d lanes", len(res.Lanes))
	}
	fmt.Fprintf(w, "%s: %d cells = %s × %s; seed %d, %s of virtual time\n", res.Scenario, len(res.Rows), lanes,
		strings.Join(shape, " × "), res.Seed, limiters.FormatDuration(res.Horizon))
	for _, m := range metrics {
		fmt.Fprintf(w, "\n%s: %s\n", m.Name, m.Meaning)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		if len(res.Dims) == 1 {
			d := res.Dims[0]
			fmt.Fprint(tw, d.Name()+"\t")
			for _, lane := range res.Lanes {
				fmt.Fprint(tw, laneTemplate(lane, res.Dims)+"\t")
			}
			fmt.Fprintln(tw)
			for i, v := range d.Values {
				fmt.Fprint(tw, v.Text+"\t")
				for lane := range res.Lanes {
					fmt.Fprint(tw, tableValue(m, res.At(lane, i))+"\t")
				}
				fmt.Fprintln(tw)
			}
		} else {
			dx, dy := res.Dims[0], res.Dims[1]
			for lane, name := range res.Lanes {
				if len(res.Lanes) > 1 || lane > 0 {
					fmt.Fprintf(tw, "lane %s\n", laneTemplate(name, res.Dims))
				}
				fmt.Fprintf(tw, "%s \\ %s\t", dy.Field, dx.Field)
				for _, v := range dx.Values {
					fmt.Fprint(tw, v.Text+"\t")
				}
				fmt.Fprintln(tw)
				for j := len(dy.Values) - 1; j >= 0; j-- {
					fmt.Fprint(tw, dy.Values[j].Text+"\t")
					for i := range dx.Values {
						fmt.Fprint(tw, tableValue(m, res.At(lane, i, j))+"\t")
					}
					fmt.Fprintln(tw)
				}
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, line := range invalidLines(res) {
		fmt.Fprintln(w, line)
	}
	return nil
}

// maxInvalidLines is the most reasons of invalid cells the table lists.
const maxInvalidLines = 10

// invalidLines lists the invalid cells below a sweep's tables after a blank line, a line for
// each reason (sweep.Result.InvalidGroups, the first maxInvalidLines): its lanes, its cells
// and where they lie; none when every cell ran.
func invalidLines(res *sweep.Result) []string {
	groups := res.InvalidGroups()
	if len(groups) == 0 {
		return nil
	}
	total := 0
	for _, g := range groups {
		total += len(g.Cells)
	}
	out := []string{"", fmt.Sprintf("invalid: %d of %d cells did not run, the scenario refusing their lane:", total, len(res.Rows))}
	for i, g := range groups {
		if i == maxInvalidLines {
			out = append(out, fmt.Sprintf("  … and %d more reasons (--format csv gives each cell its row, with its reason in the error column)", len(groups)-i))
			break
		}
		cells := fmt.Sprintf("cell %d", g.Cells[0])
		if len(g.Cells) > 1 {
			cells = fmt.Sprintf("%d cells", len(g.Cells))
		}
		out = append(out, fmt.Sprintf("  %s, %s (%s): %s", strings.Join(g.Lanes, ", "), cells, g.Where(res.Dims), g.Reason))
	}
	return out
}

// termSweepTable is writeSweepTable's text for a terminal width columns wide: the lines of
// prose wrapped at spaces, a grid too wide cut into slices of its columns, and the lanes of a
// one-dimensional sweep numbered, and named above the table, when their specs make it too wide.
func termSweepTable(res *sweep.Result, metrics []sweep.Metric, width int) string {
	var shape []string
	for _, d := range res.Dims {
		shape = append(shape, fmt.Sprintf("%s (%d values)", d.Name(), len(d.Values)))
	}
	lanes := "1 lane"
	if len(res.Lanes) > 1 {
		lanes = fmt.Sprintf("%d lanes", len(res.Lanes))
	}
	var b strings.Builder
	b.WriteString(wrapHanging(fmt.Sprintf("%s: %d cells = %s × %s; seed %d, %s of virtual time", res.Scenario, len(res.Rows), lanes,
		strings.Join(shape, " × "), res.Seed, limiters.FormatDuration(res.Horizon)), width) + "\n")
	for _, m := range metrics {
		b.WriteString("\n" + wrapHanging(m.Name+": "+m.Meaning, width) + "\n")
		if len(res.Dims) == 1 {
			d := res.Dims[0]
			grid := [][]string{{d.Name()}}
			for _, lane := range res.Lanes {
				grid[0] = append(grid[0], laneTemplate(lane, res.Dims))
			}
			for i, v := range d.Values {
				row := []string{v.Text}
				for lane := range res.Lanes {
					row = append(row, tableValue(m, res.At(lane, i)))
				}
				grid = append(grid, row)
			}
			if text := fitTable(grid, 2, 0, false, 0); fits(text, width) { // the whole table
				b.WriteString(text)
				continue
			}
			for lane, name := range res.Lanes { // numbered, named above
				grid[0][lane+1] = strconv.Itoa(lane + 1)
				b.WriteString(wrapHanging(fmt.Sprintf("  %d: %s", lane+1, laneTemplate(name, res.Dims)), width) + "\n")
			}
			b.WriteString(fitTable(grid, 2, width, false, 0))
			continue
		}
		dx, dy := res.Dims[0], res.Dims[1]
		for lane, name := range res.Lanes {
			if len(res.Lanes) > 1 || lane > 0 {
				b.WriteString(wrapHanging("lane "+laneTemplate(name, res.Dims), width) + "\n")
			}
			grid := [][]string{{dy.Field + " \\ " + dx.Field}}
			for _, v := range dx.Values {
				grid[0] = append(grid[0], v.Text)
			}
			for j := len(dy.Values) - 1; j >= 0; j-- {
				row := []string{dy.Values[j].Text}
				for i := range dx.Values {
					row = append(row, tableValue(m, res.At(lane, i, j)))
				}
				grid = append(grid, row)
			}
			b.WriteString(fitTable(grid, 2, width, false, 0))
		}
	}
	for _, line := range invalidLines(res) {
		b.WriteString(wrapHanging(line, width) + "\n")
	}
	return b.String()
}

// tableValue is a cell's value as the table prints it: shares to 0.1% (exactly none as 0),
// waits rounded, ratios and indices to 0.001, "-" where a cell has none, "invalid" where it
// did not run (the list below the tables says why).
func tableValue(m sweep.Metric, row *sweep.Row) string {
	if row.Invalid != "" {
		return "invalid"
	}
	v, ok := m.Value(row.Metrics)
	if !ok {
		return "-"
	}
	switch m.Kind {
	case sweep.Percent:
		switch {
		case v == 0:
			return "0"
		case v < 0.05:
			return "<0.1"
		}
		return strconv.FormatFloat(v, 'f', 1, 64)
	case sweep.Wait:
		return roundedDuration(time.Duration(v))
	case sweep.Ratio, sweep.Index:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
}

// laneTemplate is a lane's label with the value of every field the sweep varies in it shown
// as *: the column of token-bucket:capacity=10,rate=100/1s swept over capacity is headed
// token-bucket:capacity=*,rate=100/1s, not by the template's own 10, which no row has. A
// dimension that names a lane by name stars its field in every stage of that lane.
func laneTemplate(label string, dims []sweep.Dimension) string {
	stages := strings.Split(label, "+")
	for i, stage := range stages {
		prefix := ""
		if keys, inner, ok := strings.Cut(stage, "):"); ok && strings.HasPrefix(stage, "keys(") {
			prefix, stage = keys+"):", inner // keys(max=…):KIND:FIELDS — the inner spec's fields
		}
		kind, fields, ok := strings.Cut(stage, ":")
		if !ok {
			continue
		}
		stages[i] = prefix + kind + ":" + starFields(kind, label, fields, dims)
	}
	return strings.Join(stages, "+")
}

// starFields is fields ("capacity=10,rate=100/1s") with each field a dimension varies in a
// stage of kind (of the lane labelled label) written FIELD=*.
func starFields(kind, label, fields string, dims []sweep.Dimension) string {
	parts := strings.Split(fields, ",")
	for j, p := range parts {
		name, _, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		for _, d := range dims {
			if d.Field == name && (string(d.Kind) == kind || d.Target == label) {
				parts[j] = name + "=*"
			}
		}
	}
	return strings.Join(parts, ",")
}
