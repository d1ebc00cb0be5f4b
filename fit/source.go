package fit

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/trace"
)

// Rows is a stream of requests in time order, io.EOF after the last: a trace.Reader, a
// trace.Rows (an access log's) or engine.Arrivals.
type Rows interface {
	Next() (trace.Row, error)
}

// Source is an input that can be read again from its first row: fitting reads it a few times
// (statistics, the curve, the search, the replay that confirms), each time identically.
type Source interface {
	// Name is what errors are prefixed with: the file's name, or the scenario's.
	Name() string
	// Open starts a new read from the first row; close the reader when done.
	Open() (Rows, io.Closer, error)
}

// File is a CSV trace or an access log on disk (told by its content: see accesslog.Open),
// named name in errors: "trace.csv: line 7: permits "x" is not a whole number >= 1".
func File(path, name string) Source { return Log(path, name, accesslog.Options{}) }

// Log is a CSV trace or an access log on disk, read as opt says (accesslog.Open).
func Log(path, name string, opt accesslog.Options) *LogSource {
	return &LogSource{path: path, name: name, opt: opt}
}

// LogSource is a trace file read by Log.
type LogSource struct {
	path, name string
	opt        accesslog.Options
	first      *accesslog.Input
}

func (f *LogSource) Name() string { return f.name }

func (f *LogSource) Open() (Rows, io.Closer, error) {
	file, err := os.Open(f.path)
	if err != nil {
		return nil, nil, err
	}
	in, err := accesslog.Open(file, f.opt)
	if err != nil {
		file.Close()
		return nil, nil, fmt.Errorf("%s: %w", f.name, err)
	}
	if f.first == nil && in.Log() != nil {
		f.first = in
	}
	if log := in.Log(); log != nil {
		// A log's requests are read as rows, not as the CSV text in also reads as: the
		// same rows and errors (trace.Rows), in 0.85x the CPU time (see trace.Rows).
		return trace.NewRows(log), file, nil
	}
	r, err := trace.NewReader(in)
	if err != nil {
		file.Close()
		return nil, nil, fmt.Errorf("%s: %w", f.name, err)
	}
	if f.first == nil {
		f.first = in
	}
	return r, file, nil
}

// Notes are the access log's notes from the first read (accesslog.Input.Notes): the format,
// the stamps' resolution, completion times, rows reordered. None for a CSV trace.
func (f *LogSource) Notes() []string {
	if f.first == nil {
		return nil
	}
	return f.first.Notes()
}

// Text is a CSV trace held in memory (tests, small inputs).
func Text(name, csv string) Source { return textSource{name: name, csv: csv} }

type textSource struct{ name, csv string }

func (t textSource) Name() string { return t.name }

func (t textSource) Open() (Rows, io.Closer, error) {
	r, err := trace.NewReader(strings.NewReader(t.csv))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", t.name, err)
	}
	return r, io.NopCloser(nil), nil
}

// Scenario is a scenario's offered traffic (engine.Arrivals): every source's requests, without
// the retries a client policy would add. Each Open generates it again from the seed.
func Scenario(sc *engine.Scenario) Source { return scenarioSource{sc} }

type scenarioSource struct{ sc *engine.Scenario }

func (s scenarioSource) Name() string { return "scenario " + s.sc.Name }

func (s scenarioSource) Open() (Rows, io.Closer, error) {
	a, err := engine.NewArrivals(s.sc)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.Name(), err)
	}
	return a, a, nil
}
