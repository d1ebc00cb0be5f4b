package main

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/present"
	"github.com/ratelab/ratelab/virtualclock"
)

// kindsMarkdown is docs/SPECS.md's table of limiter kinds, made from the registry: every kind,
// its family, what it is, its spec's fields and the capabilities beyond the core.
func kindsMarkdown() (string, error) {
	var b strings.Builder
	b.WriteString("| kind | family | what it is | example | fields | capabilities | colour |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, k := range limiters.Kinds() {
		l, err := limiters.Parse(k.Example, virtualclock.New())
		if err != nil {
			return "", fmt.Errorf("kind %s: example %q: %w", k.Kind, k.Example, err)
		}
		var fields []string
		for _, f := range k.Fields {
			name := "`" + f.Name + "`"
			if !f.Required {
				name += " (optional)"
			}
			fields = append(fields, name+": "+f.Meaning)
		}
		var caps []string
		for _, c := range limiters.CapabilitiesOf(l).List() {
			caps = append(caps, string(c))
		}
		if len(caps) == 0 {
			caps = []string{"–"}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | `%s` | %s | %s | %s |\n", k.Kind, k.Family, k.Summary, k.Example,
			strings.Join(fields, "; "), strings.Join(caps, ", "), present.Of(string(k.Kind)).ColorName)
	}
	return b.String(), nil
}

// familiesMarkdown is the README's short table of kinds: one row per family, in registry
// order, its kinds named; docs/SPECS.md has the full table.
func familiesMarkdown() string {
	var b strings.Builder
	b.WriteString("| family | kinds |\n| --- | --- |\n")
	var order []limiters.Family
	kinds := map[limiters.Family][]string{}
	for _, k := range limiters.Kinds() {
		if _, seen := kinds[k.Family]; !seen {
			order = append(order, k.Family)
		}
		kinds[k.Family] = append(kinds[k.Family], "`"+string(k.Kind)+"`")
	}
	for _, f := range order {
		fmt.Fprintf(&b, "| %s | %s |\n", f, strings.Join(kinds[f], ", "))
	}
	return b.String()
}
