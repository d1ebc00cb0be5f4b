package main

import (
	"context"
	"testing"

	"github.com/ratelab/ratelab/jsonout"
	"github.com/ratelab/ratelab/scenarios"
)

// `run NAME --format json` prints jsonout.RunJSON of the built-in scenario, to the byte, for
// every built-in: the page in the browser (package web) shows RunJSON's text, so the page and
// the command agree.
func TestRunJSONIsTheLibrarysJSONForEveryBuiltin(t *testing.T) {
	for _, name := range scenarios.Names() {
		t.Run(name, func(t *testing.T) {
			stdout, _, err := ratelab(t, "run", name, "--format", "json")
			if err != nil {
				t.Fatal(err)
			}
			sc, err := scenarios.Get(name)
			if err != nil {
				t.Fatal(err)
			}
			want, err := jsonout.RunJSON(context.Background(), sc)
			if err != nil {
				t.Fatal(err)
			}
			if stdout != string(want) {
				t.Fatalf("run %s --format json (%d bytes) differs from jsonout.RunJSON (%d bytes)", name, len(stdout), len(want))
			}
		})
	}
}
