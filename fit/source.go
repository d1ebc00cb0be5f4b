package fit

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ratelab/ratelab/engine"
)

// Rows is a stream of requests in time order, io.EOF after the last: an engine.TraceReader or
// engine.Arrivals.
type Rows interface {
	Next() (engine.TraceRow, error)
}

// Source is an input that can be read again from its first row: fitting reads it a few times
// (statistics, the curve, the search, the replay that confirms), each time identically.
type Source interface {
	// Name is what errors are prefixed with: the file's name, or the scenario's.
	Name() string
	// Open starts a new read from the first row; close the reader when done.
	Open() (Rows, io.Closer, error)
}

// File is a CSV trace on disk (see engine.TraceReader), named name in errors: "trace.csv:
// line 7: permits "x" is not a whole number >= 1".
func File(path, name string) Source { return fileSource{path: path, name: name} }

type fileSource struct{ path, name string }

func (f fileSource) Name() string { return f.name }

func (f fileSource) Open() (Rows, io.Closer, error) {
	file, err := os.Open(f.path)
	if err != nil {
		return nil, nil, err
	}
	r, err := engine.NewTraceReader(file)
	if err != nil {
		file.Close()
		return nil, nil, fmt.Errorf("%s: %w", f.name, err)
	}
	return r, file, nil
}

// Text is a CSV trace held in memory (tests, small inputs).
func Text(name, csv string) Source { return textSource{name: name, csv: csv} }

type textSource struct{ name, csv string }

func (t textSource) Name() string { return t.name }

func (t textSource) Open() (Rows, io.Closer, error) {
	r, err := engine.NewTraceReader(strings.NewReader(t.csv))
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
