package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/internal/outfile"
	"github.com/ratelab/ratelab/plots"
	"github.com/ratelab/ratelab/sweep"
)

// The paths a command reads and writes, for the guard of internal/outfile: the inputs it
// notes (a scenario, its traces, sweep merge's shards), the outputs it names up front
// (--out DIR's figures, --chart FILE), and the flags' own checks (a chart's format).

// resolveScenario is loadScenarioArg, noting as inputs the scenario file it reads (standard
// input for -) and the trace files of its sources.
func resolveScenario(ctx context.Context, e *env, arg string) (*engine.Scenario, error) {
	sc, err := loadScenarioArg(ctx, e, arg)
	if err != nil {
		return nil, err
	}
	if arg == "-" {
		err = outfile.NoteStdin(ctx, "standard input (the scenario file)", e.stdin)
	} else {
		err = outfile.NoteInput(ctx, "the scenario file "+quoteArg(arg), arg)
	}
	if err != nil {
		return nil, err
	}
	for _, src := range sc.Sources {
		if src.TraceFile != "" {
			if err := outfile.NoteInput(ctx, "the trace file "+quoteArg(src.TraceFile)+" of the scenario "+quoteArg(sc.Name), src.TraceFile); err != nil {
				return nil, err
			}
		}
	}
	return sc, nil
}

// noteShards notes sweep merge's shards as inputs, and refuses one file given twice (by two
// names, or a FIFO twice, which the second open would wait on forever) before any is opened.
func noteShards(ctx context.Context, e *env, paths []string) error {
	seen := make([]fs.FileInfo, len(paths))
	for i, p := range paths {
		var err error
		if p == "-" {
			err = outfile.NoteStdin(ctx, "standard input (a shard)", e.stdin)
		} else {
			err = outfile.NoteInput(ctx, "the shard "+quoteArg(p), p)
			seen[i], _ = os.Stat(p)
		}
		if err != nil {
			return err
		}
		for j := range i {
			if seen[i] != nil && seen[j] != nil && os.SameFile(seen[i], seen[j]) {
				return usageErrorf("sweep merge: %s and %s are the same file: give each shard once", quoteArg(paths[j]), quoteArg(p))
			}
		}
	}
	return nil
}

// sweepFigurePaths are the files --out DIR gets: DIR/BASE-METRIC.EXT for each metric and
// image format.
func sweepFigurePaths(o sweepOutput, metrics []sweep.Metric, base string) []outfile.Output {
	if o.out == "" {
		return nil
	}
	formats := []string{o.image}
	if o.image == "both" {
		formats = []string{"png", "svg"}
	}
	var paths []outfile.Output
	for _, m := range metrics {
		for _, format := range formats {
			paths = append(paths, outfile.Output{Flag: "--out", Path: filepath.Join(o.out, fmt.Sprintf("%s-%s.%s", base, plots.MetricFileName(m), format))})
		}
	}
	return paths
}

// plotPaths are the files plot --out DIR may write: DIR/BASE-CHART.FORMAT for each chart
// asked for (every chart when none is: which apply is known only after the run), or the
// replications' rate chart.
func plotPaths(out, base string, charts []string, replications int, format string) []outfile.Output {
	if out == "" || out == "-" {
		return nil
	}
	if replications > 0 {
		return []outfile.Output{{Flag: "--out", Path: filepath.Join(out, fmt.Sprintf("%s-rate-%dx.%s", base, replications, format))}}
	}
	if len(charts) == 0 {
		charts = plots.ChartNames()
	}
	var paths []outfile.Output
	for _, c := range charts {
		paths = append(paths, outfile.Output{Flag: "--out", Path: filepath.Join(out, fmt.Sprintf("%s-%s.%s", base, c, format))})
	}
	return paths
}

// chartFormat is the format a --chart FILE is written in, told by its name: SVG for .svg, PNG
// for .png or a name without an extension (and for -, standard output), in any case. Any other
// extension is refused before the run, so that a file's name never says one format while its
// bytes are another (out.gif held PNG bytes).
func chartFormat(path string) (string, error) {
	if path == "-" {
		return "png", nil
	}
	switch ext := filepath.Ext(path); strings.ToLower(ext) {
	case ".svg":
		return "svg", nil
	case ".png", "":
		return "png", nil
	default:
		return "", usageErrorf("--chart %s: ratelab does not write %s files; name the chart .png (PNG) or .svg (SVG)", quoteArg(path), quoteArg(ext))
	}
}

// checkChart refuses a --chart path before the run: one that is an input (outfile.Check, the
// graver mistake, said first), then one whose extension is not a format written.
func checkChart(ctx context.Context, path string) error {
	if err := outfile.Check(ctx, outfile.Output{Flag: "--chart", Path: path}); err != nil {
		return err
	}
	if path == "" {
		return nil
	}
	_, err := chartFormat(path)
	return err
}

// writeChart writes fig to path for a --chart flag in chartFormat's format, at the default
// width; - is standard output.
func writeChart(ctx context.Context, e *env, path string, fig *plots.Figure) error {
	kind, err := chartFormat(path)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := fig.Write(&buf, kind, plots.DefaultWidth, 0); err != nil {
		return fmt.Errorf("--chart %s: %w", path, err)
	}
	if path == "-" {
		if err := refuseTerminal(e, "--chart", "FILE", path); err != nil {
			return err
		}
		_, err := e.stdout.Write(buf.Bytes())
		return err
	}
	if err := outfile.WriteFile(ctx, path, buf.Bytes()); err != nil {
		return fmt.Errorf("--chart %w", err)
	}
	return nil
}

// cause is the system's reason inside an *fs.PathError ("permission denied"), which the
// caller prefixes with the path the user gave.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
