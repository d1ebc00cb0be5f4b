package plots

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ratelab/ratelab/engine"
)

// Chart is one kind of figure: a pure function from a scenario, its results and the
// parameters a caller chose to a Figure. Each chart is declared in its own file beside the
// code that draws it (timeline.go, rate.go, …); Charts lists them.
type Chart struct {
	Name    string
	Summary string
	// Applies reports whether the chart has something to show for this run with p.
	Applies func(sc *engine.Scenario, res *engine.Results, p Params) bool
	// Build draws the chart. BuildWith calls it only when Applies says yes and p.View lies in
	// the run.
	Build func(sc *engine.Scenario, res *engine.Results, p Params) (*Figure, error)
	// Zooms says Build draws p.View itself: its bins grouped and its axes scaled for that
	// stretch (a rate chart zoomed to 1s of a 2-minute run groups the bins of that second). A
	// chart whose x axis is not time (waits) does not, and refuses a view.
	Zooms bool
}

// Params are what a caller chooses about a chart beyond the run; the zero Params draws the
// whole run with each chart's defaults.
type Params struct {
	// View is the stretch of virtual time shown; the zero View is the whole run.
	View View
	// Window is the guarantee chart's rolling window L (0: the lanes' natural window, see
	// Guarantee). Given one, the guarantee chart applies to any run, its limiters' windows or
	// not. Other charts ignore it.
	Window time.Duration
}

// Charts is every chart, in the order a gallery shows them.
var Charts = []Chart{timelineChart, rateChart, stateChart, guaranteeChart, warmUpChart, downstreamChart, fleetChart, waitsChart, loopChart, limitChart}

// ChartNames lists the charts' names.
func ChartNames() []string {
	names := make([]string, len(Charts))
	for i, c := range Charts {
		names[i] = c.Name
	}
	return names
}

// ErrNotApplicable is returned by Build for a chart that has nothing to show for a run.
var ErrNotApplicable = errors.New("plots: chart does not apply to this scenario")

// Build makes the chart called name for the whole run, with its defaults.
func Build(name string, sc *engine.Scenario, res *engine.Results) (*Figure, error) {
	return BuildWith(name, sc, res, Params{})
}

// BuildWith makes the chart called name with p: the stretch of time p.View (checked against
// the run first), the guarantee chart's window p.Window. The chart is built once, for p.
func BuildWith(name string, sc *engine.Scenario, res *engine.Results, p Params) (*Figure, error) {
	if !p.View.Whole() {
		if _, _, err := p.View.span(res); err != nil {
			return nil, err
		}
	}
	for _, c := range Charts {
		if c.Name != name {
			continue
		}
		if !c.Applies(sc, res, p) {
			// Say what the chart needs, which this run does not have: its summary says it.
			return nil, fmt.Errorf("%s: %w: it shows %s, and this run has nothing of the kind (charts that apply: %s)",
				name, ErrNotApplicable, c.Summary, strings.Join(Applicable(sc, res), ", "))
		}
		if !p.View.Whole() && !c.Zooms {
			return nil, fmt.Errorf("plots: the %s chart has no time axis to zoom (--from, --to)", name)
		}
		return c.Build(sc, res, p)
	}
	return nil, fmt.Errorf("plots: no chart %q (charts: %s)", name, strings.Join(ChartNames(), ", "))
}

// Applicable lists the charts that have something to show for this run, with their defaults.
func Applicable(sc *engine.Scenario, res *engine.Results) []string {
	var names []string
	for _, c := range Charts {
		if c.Applies(sc, res, Params{}) {
			names = append(names, c.Name)
		}
	}
	return names
}

func always(*engine.Scenario, *engine.Results, Params) bool { return true }
