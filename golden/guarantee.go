package golden

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/limiters"
)

// Guarantee is one promise of one or more algorithms, pinned by a checker and a golden file.
type Guarantee struct {
	ID         string          // stable, kebab-case: the golden file is testdata/ID.golden
	Algorithms []limiters.Kind // the algorithms the promise is about
	Claim      string          // the promise in plain words
	Scenario   string          // what runs, with its parameters
	Bound      string          // the exact bound the checker asserts
	Checker    string          // what the checker compares, in one line
	Chart      string          // a chart of the scenario, relative to the repository root ("" if none)
	serial     bool            // must not run beside other tests (it counts the process's allocations)
	run        func(r *run) error
}

// Golden is the golden file's path relative to this package: testdata/ID.golden.
func (g *Guarantee) Golden() string { return "testdata/" + g.ID + ".golden" }

// AlgorithmList is the algorithms joined with ", ".
func (g *Guarantee) AlgorithmList() string {
	names := make([]string, len(g.Algorithms))
	for i, k := range g.Algorithms {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// Verdict is what one run of a guarantee found.
type Verdict struct {
	ID       string
	Failures []string // every broken bound, each naming the bound and where it broke; empty: held
	Text     string   // the golden text: header (claim, parameters, bound) and the decisive part of the run
}

// OK reports whether every check held.
func (v Verdict) OK() bool { return len(v.Failures) == 0 }

// Err is nil when every check held, else a one-line error with the first failure and how
// many more there are.
func (v Verdict) Err() error {
	if v.OK() {
		return nil
	}
	more := ""
	if len(v.Failures) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(v.Failures)-1)
	}
	return fmt.Errorf("guarantee %s broken: %s%s", v.ID, v.Failures[0], more)
}

// Run runs the guarantee's scenario with limiters from factory (nil: the real ones) and
// checks its bound. The error is for a run that could not happen (a scenario the engine
// refused, a cancelled ctx); a broken bound is in the Verdict.
func (g *Guarantee) Run(ctx context.Context, factory Factory) (Verdict, error) {
	r := &run{ctx: ctx, factory: factory}
	if err := g.run(r); err != nil {
		return Verdict{ID: g.ID}, fmt.Errorf("guarantee %s: %w", g.ID, err)
	}
	var text strings.Builder
	fmt.Fprintf(&text, "# %s\n", g.ID)
	fmt.Fprintf(&text, "# claim: %s\n", g.Claim)
	fmt.Fprintf(&text, "# algorithms: %s\n", g.AlgorithmList())
	fmt.Fprintf(&text, "# scenario: %s\n", g.Scenario)
	fmt.Fprintf(&text, "# bound: %s\n", g.Bound)
	fmt.Fprintf(&text, "# checker: %s\n", g.Checker)
	text.WriteString("\n")
	text.WriteString(r.body.String())
	return Verdict{ID: g.ID, Failures: r.failures, Text: text.String()}, nil
}

// ErrUnknown is returned by Get for an id that is not in the catalogue.
var ErrUnknown = errors.New("no such guarantee")

// Get returns the guarantee called id.
func Get(id string) (*Guarantee, error) {
	for _, g := range Catalogue() {
		if g.ID == id {
			return g, nil
		}
	}
	ids := make([]string, 0, len(Catalogue()))
	for _, g := range Catalogue() {
		ids = append(ids, g.ID)
	}
	return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknown, id, strings.Join(ids, ", "))
}
