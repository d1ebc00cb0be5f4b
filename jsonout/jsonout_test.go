package jsonout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/jsonout"
	"github.com/ratelab/ratelab/scenarios"
)

func TestJSONIndentsByTwoAndEndsInANewline(t *testing.T) {
	var buf bytes.Buffer
	if err := jsonout.JSON(&buf, map[string]any{"a": []int{1}, "b": "<&>"}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"a\": [\n    1\n  ],\n  \"b\": \"\\u003c\\u0026\\u003e\"\n}\n"
	if buf.String() != want {
		t.Fatalf("got %q, want %q", buf.String(), want)
	}
}

// RunJSON is the run's Results, encoded by JSON: decoding it gives back the numbers of a
// second run of the same scenario (the engine is deterministic).
func TestRunJSONIsTheRunsResults(t *testing.T) {
	sc, err := scenarios.Get(scenarios.Default)
	if err != nil {
		t.Fatal(err)
	}
	sc.Horizon = sc.Horizon / 10
	got, err := jsonout.RunJSON(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(context.Background(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := jsonout.JSON(&want, res); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatal("two runs of one scenario printed different JSON")
	}
	var back engine.Results
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if back.Scenario != sc.Name || len(back.Lanes) != len(sc.Lanes) {
		t.Fatalf("decoded %q with %d lanes, want %q with %d", back.Scenario, len(back.Lanes), sc.Name, len(sc.Lanes))
	}
	if !strings.HasPrefix(string(got), "{\n  \"scenario\": ") {
		t.Fatalf("starts %q", string(got[:min(len(got), 40)]))
	}
}

func TestRunJSONRefusesAnInvalidScenario(t *testing.T) {
	if _, err := jsonout.RunJSON(context.Background(), &engine.Scenario{Name: "empty"}); err == nil {
		t.Fatal("an empty scenario ran")
	}
}
