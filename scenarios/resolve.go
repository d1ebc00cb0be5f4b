package scenarios

import (
	"strings"

	"github.com/ratelab/ratelab/engine"
)

// Resolve returns the built-in scenario called arg, or loads arg as a scenario file when it
// ends in .yaml or .yml.
func Resolve(arg string) (*engine.Scenario, error) {
	if IsFile(arg) {
		return LoadFile(arg)
	}
	return Get(arg)
}

// IsFile reports whether Resolve reads arg as a scenario file rather than a built-in name.
func IsFile(arg string) bool {
	return strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml")
}
