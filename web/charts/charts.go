// Package charts draws the page's charts with package plots, as `ratelab plot --format svg`
// draws them. It is apart from package web because plots brings gonum/plot and its twelve
// embedded fonts: the page loads the WebAssembly build with charts (web/wasm built with
// -tags charts) only when a chart is asked for, so the lanes show without waiting for it.
package charts

import (
	"bytes"
	"context"
	"fmt"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/plots"
	"github.com/ratelab/ratelab/web"
)

// traceLimit is the most attempts per lane for which a run's charts get its trace (the
// timeline needs one), as `ratelab plot` (cmd/ratelab's traceLimit): 50,000.
const traceLimit = 50_000

// Width is the charts' width in pixels: plots.DefaultWidth.
const Width = plots.DefaultWidth

// Set is a scenario's run, ready to draw any of its charts.
type Set struct {
	sc  *engine.Scenario
	res *engine.Results
}

// Run runs the scenario text for charts: the whole run, traced when every lane made at most
// traceLimit attempts (engine.TraceWindow: the same run, the trace only observes).
func Run(ctx context.Context, text string) (*Set, error) {
	sc, err := web.Load(text)
	if err != nil {
		return nil, err
	}
	res, err := engine.Run(ctx, sc, nil)
	if err != nil {
		return nil, err
	}
	if !sc.Trace {
		small := true
		for _, l := range res.Lanes {
			attempts := int64(0)
			for _, b := range l.Bins {
				attempts += b.Attempts + b.Failed
			}
			small = small && attempts <= traceLimit
		}
		if small {
			if err := engine.TraceWindow(ctx, sc, res, 0, res.Horizon); err != nil {
				return nil, err
			}
		}
	}
	return &Set{sc: sc, res: res}, nil
}

// Names lists the charts that have something to show for this run (plots.Applicable).
func (s *Set) Names() []string { return plots.Applicable(s.sc, s.res) }

// SVG draws the chart called name as SVG at plots' default size.
func (s *Set) SVG(name string) (string, error) {
	fig, err := plots.Build(name, s.sc, s.res)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := fig.Write(&buf, "svg", 0, 0); err != nil {
		return "", fmt.Errorf("%s chart: %w", name, err)
	}
	return buf.String(), nil
}
