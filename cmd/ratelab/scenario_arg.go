package main

import (
	"slices"
	"strings"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
)

// resolveScenario returns the scenario arg names: a scenario file when it ends in .yaml or
// .yml, else a built-in scenario. A misspelt name is a usage error that says what it might
// have been; a file that cannot be read or is not a valid scenario file is a failure.
func resolveScenario(arg string) (*engine.Scenario, error) {
	if scenarios.IsFile(arg) {
		return scenarios.LoadFile(arg)
	}
	if slices.Contains(scenarios.Names(), arg) {
		return scenarios.Get(arg)
	}
	names := scenarios.Names()
	slices.Sort(names)
	return nil, usageErrorf("no built-in scenario %q%s (known: %s; or a scenario file)", arg,
		didYouMean(arg, names, nil), strings.Join(names, ", "))
}
