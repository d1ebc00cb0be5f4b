package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
	"github.com/ratelab/ratelab/web"
)

// maxScenarioFile is the most ratelab reads of a file named without a .yaml suffix to see
// whether it is a scenario file: far more than any scenario file, far less than a trace.
const maxScenarioFile = 64 << 20

// loadScenarioArg returns the scenario arg names (resolveScenario is it, noting the files it
// reads as inputs):
//
//   - "-": a scenario file read from standard input;
//   - a name ending in .yaml or .yml: that scenario file;
//   - an existing regular file, whatever its name, when its content is a scenario file (YAML
//     whose document is a mapping), else the built-in scenario of that name if there is one;
//     a FIFO, a device or a socket is refused before it is opened, whatever its name (a
//     scenario from a pipe comes on standard input, -);
//   - a built-in scenario's name;
//   - a permalink of the page `ratelab web` serves ("r1.…", or a URL whose fragment is one),
//     when no file has that name: the scenario it carries, bursts injected on the page included.
//
// A misspelt name is a usage error that says what it might have been; a file that cannot be
// read or is not a valid scenario file is a failure.
func loadScenarioArg(ctx context.Context, e *env, arg string) (*engine.Scenario, error) {
	if arg == "-" {
		readingStdin(e, "a scenario file")
		in, stop := newCtxReader(ctx, e.stdin)
		defer stop()
		// One byte past the largest scenario file says it is too large: an endless stream
		// (/dev/zero, a trace piped by mistake) is refused there, not read to its end.
		data, err := io.ReadAll(io.LimitReader(in, scenarios.MaxFileSize+1))
		if err != nil {
			return nil, fmt.Errorf("reading a scenario file from standard input: %w", err)
		}
		if len(data) > scenarios.MaxFileSize {
			return nil, fmt.Errorf("stdin: more than %d bytes: a scenario file may hold at most %d (16 MiB)", scenarios.MaxFileSize, scenarios.MaxFileSize)
		}
		return scenarios.Load("stdin", data)
	}
	if scenarios.IsFile(arg) {
		return scenarios.LoadFile(arg)
	}
	builtin := slices.Contains(scenarios.Names(), arg)
	info, statErr := os.Stat(arg)
	if statErr == nil && !info.IsDir() && !info.Mode().IsRegular() {
		// A FIFO, a device, a socket: refused before it is opened, as a .yaml path is (the
		// open of a FIFO waits for a writer, a device never ends), whatever it is called.
		if !builtin {
			return nil, scenarios.CheckFileKind(arg, info)
		}
		return scenarios.Get(arg)
	}
	if statErr == nil && !info.IsDir() {
		data, err := readSmallFile(ctx, arg)
		if err != nil && !builtin {
			return nil, err
		}
		if err == nil && looksLikeScenarioFile(data) {
			if builtin && !strings.ContainsRune(arg, os.PathSeparator) {
				fmt.Fprintf(e.stderr, "ratelab: %s: reading the scenario file %s, not the built-in scenario %s\n", arg, arg, arg)
			}
			return scenarios.Load(arg, data)
		}
		if !builtin {
			return nil, fmt.Errorf("%s: not a scenario file (a scenario file is YAML: a mapping of name, sources, limiters…; see docs/SCENARIOS.md)", arg)
		}
	}
	if builtin {
		return scenarios.Get(arg)
	}
	if link, ok := web.LinkIn(arg); ok && statErr != nil {
		return web.LoadLink(link)
	}
	switch {
	case statErr == nil:
		return nil, fmt.Errorf("%s: is a directory, not a scenario file", arg)
	case strings.ContainsRune(arg, os.PathSeparator) || !errors.Is(statErr, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: %w", arg, cause(statErr))
	}
	names := scenarios.Names()
	slices.Sort(names)
	return nil, usageErrorf("no built-in scenario %q%s (known: %s; or a scenario file)", arg,
		didYouMean(arg, names, nil), strings.Join(names, ", "))
}

// looksLikeScenarioFile is whether data is meant as a scenario file: YAML whose document is
// a mapping, or text that fails to parse as YAML (a scenario file with a mistake, which
// scenarios.Load then locates).
func looksLikeScenarioFile(data []byte) bool {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return utf8.Valid(data) && !slices.Contains(data, 0)
	}
	return len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode
}

// readSmallFile reads the regular file path, refusing one larger than maxScenarioFile (or
// replaced by a FIFO or a device since it was looked at); ctx ends a read that blocks.
func readSmallFile(ctx context.Context, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, cause(err))
	}
	defer f.Close()
	// The file may have been replaced by a FIFO or a device since it was looked at.
	if info, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, cause(err))
	} else if err := scenarios.CheckFileKind(path, info); err != nil {
		return nil, err
	}
	in, stop := newCtxReader(ctx, f)
	defer stop()
	data, err := io.ReadAll(io.LimitReader(in, maxScenarioFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, cause(err))
	}
	if len(data) > maxScenarioFile {
		return nil, fmt.Errorf("%s: larger than %d MiB: too large to be a scenario file", path, maxScenarioFile>>20)
	}
	return data, nil
}
