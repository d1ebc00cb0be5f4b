package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/plots"
	"github.com/ratelab/ratelab/sweep"
)

// ratelab never writes over what it reads. Every file a command reads is noted as it is
// opened (noteInput: a trace --in, a scenario file and the trace files its sources name, a
// shard, standard input when it is read); every file it writes is checked against them
// before anything is written (checkOutputs, up front in each command, and again in
// createOutput for any path the command did not name up front). Two paths are the same file
// when they have the same device and inode (os.SameFile), so ./in.csv, a symbolic link to
// in.csv and a hard link to it are all in.csv. Standard output is checked as an input is
// noted: `ratelab run s.yaml >> s.yaml` appends to the file being read.
//
// Only regular files and FIFOs are compared: a device (/dev/null, a terminal) may be read
// and written at once, and is never replaced.

// inputFiles is what a command has read so far, and its standard output.
type inputFiles struct {
	mu     sync.Mutex
	stdout fs.FileInfo // nil unless standard output is a regular file or a FIFO
	files  []inputFile
}

type inputFile struct {
	what string // how an error names it: "the trace --in in.csv"
	info fs.FileInfo
}

type inputsKey struct{}

// withInputs gives ctx an empty set of inputs for one command, whose standard output is
// stdout.
func withInputs(ctx context.Context, stdout io.Writer) context.Context {
	in := &inputFiles{}
	if f, ok := stdout.(*os.File); ok {
		if info, err := f.Stat(); err == nil && guarded(info) {
			in.stdout = info
		}
	}
	return context.WithValue(ctx, inputsKey{}, in)
}

// guarded is whether info is a file that reading and writing at once would destroy.
func guarded(info fs.FileInfo) bool {
	return info.Mode().IsRegular() || info.Mode()&fs.ModeNamedPipe != 0
}

// noteInput records that the command reads path, named what in errors ("the trace --in
// in.csv"). A path that does not exist (yet) is not an input; "-" is standard input, noted
// with noteStdin. It refuses an input that is also standard output.
func noteInput(ctx context.Context, what, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil // reported by whoever opens it
	}
	return note(ctx, what, info)
}

// noteStdin records that the command reads standard input (stdin), as what.
func noteStdin(ctx context.Context, what string, stdin io.Reader) error {
	f, ok := stdin.(*os.File)
	if !ok {
		return nil
	}
	info, err := f.Stat()
	if err != nil {
		return nil
	}
	return note(ctx, what, info)
}

func note(ctx context.Context, what string, info fs.FileInfo) error {
	in, _ := ctx.Value(inputsKey{}).(*inputFiles)
	if in == nil || !guarded(info) {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.stdout != nil && os.SameFile(in.stdout, info) {
		return usageErrorf("standard output is %s: ratelab does not write over what it reads; send the output elsewhere", what)
	}
	in.files = append(in.files, inputFile{what: what, info: info})
	return nil
}

// output is a path a command will write and the flag that named it ("" in createOutput,
// whose callers add it).
type output struct{ flag, path string }

// checkOutputs refuses to write any of outputs that is one of ctx's inputs, before anything
// is written: "--chart in.csv: is the trace --in in.csv; …". Standard output (-), "" (none)
// and paths that do not exist yet pass.
func checkOutputs(ctx context.Context, outputs ...output) error {
	in, _ := ctx.Value(inputsKey{}).(*inputFiles)
	if in == nil {
		return nil
	}
	for _, o := range outputs {
		if o.path == "" || o.path == "-" {
			continue
		}
		info, err := os.Stat(o.path)
		if err != nil {
			continue
		}
		in.mu.Lock()
		files := in.files
		in.mu.Unlock()
		for _, f := range files {
			if os.SameFile(f.info, info) {
				name := quoteArg(o.path)
				if o.flag != "" {
					name = o.flag + " " + name
				}
				return usageErrorf("%s: the same file as %s; ratelab does not write over what it reads: give another path", name, f.what)
			}
		}
	}
	return nil
}

// resolveScenario is loadScenarioArg, noting as inputs the scenario file it reads (standard
// input for -) and the trace files of its sources.
func resolveScenario(ctx context.Context, e *env, arg string) (*engine.Scenario, error) {
	sc, err := loadScenarioArg(ctx, e, arg)
	if err != nil {
		return nil, err
	}
	if arg == "-" {
		err = noteStdin(ctx, "standard input (the scenario file)", e.stdin)
	} else {
		err = noteInput(ctx, "the scenario file "+quoteArg(arg), arg)
	}
	if err != nil {
		return nil, err
	}
	for _, src := range sc.Sources {
		if src.TraceFile != "" {
			if err := noteInput(ctx, "the trace file "+quoteArg(src.TraceFile)+" of the scenario "+quoteArg(sc.Name), src.TraceFile); err != nil {
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
			err = noteStdin(ctx, "standard input (a shard)", e.stdin)
		} else {
			err = noteInput(ctx, "the shard "+quoteArg(p), p)
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
func sweepFigurePaths(o sweepOutput, metrics []sweep.Metric, base string) []output {
	if o.out == "" {
		return nil
	}
	formats := []string{o.image}
	if o.image == "both" {
		formats = []string{"png", "svg"}
	}
	var paths []output
	for _, m := range metrics {
		for _, format := range formats {
			paths = append(paths, output{"--out", filepath.Join(o.out, fmt.Sprintf("%s-%s.%s", base, plots.MetricFileName(m), format))})
		}
	}
	return paths
}

// plotPaths are the files plot --out DIR may write: DIR/BASE-CHART.FORMAT for each chart
// asked for (every chart when none is: which apply is known only after the run), or the
// replications' rate chart.
func plotPaths(out, base string, charts []string, replications int, format string) []output {
	if out == "" || out == "-" {
		return nil
	}
	if replications > 0 {
		return []output{{"--out", filepath.Join(out, fmt.Sprintf("%s-rate-%dx.%s", base, replications, format))}}
	}
	if len(charts) == 0 {
		charts = plots.ChartNames()
	}
	var paths []output
	for _, c := range charts {
		paths = append(paths, output{"--out", filepath.Join(out, fmt.Sprintf("%s-%s.%s", base, c, format))})
	}
	return paths
}
