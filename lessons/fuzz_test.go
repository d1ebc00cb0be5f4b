package lessons

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
)

// fuzzBudget keeps each fuzzed lesson's runs to milliseconds: a lesson runs as it loads.
var fuzzBudget = engine.Budget{MaxEvents: 2e5, MaxMemory: 64 << 20}

// FuzzLoad reads arbitrary bytes as a lesson file. It must never panic; it either refuses
// with a located *scenarios.FileError or a one-line message that starts with the file's name
// (YAML's own syntax errors), or returns a lesson whose every step has a scenario and text.
// Seeds: the built-in course and testdata/fuzz/FuzzLoad; go test runs them, scripts/fuzz.sh
// fuzzes.
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("course", "*.yaml"))
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("title: x\nsteps:\n  - scenario: poisson\n    text: hi\n  - text: more\n    change: {horizon: 100000h}\n"))
	f.Add([]byte("steps: [{scenario: {horizon: 1s, limiters: [a]}, text: t}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := LoadWithin(context.Background(), "fuzz.yaml", data, fuzzBudget)
		if err != nil {
			var fe *scenarios.FileError
			if errors.As(err, &fe) {
				if fe.Line < 1 || fe.Column < 1 || fe.Reason == "" {
					t.Fatalf("a refusal without its place or reason: %#v", fe)
				}
				return
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "fuzz.yaml: ") || !utf8.ValidString(msg) {
				t.Fatalf("an unlocated refusal: %q", msg)
			}
			return
		}
		for i, s := range l.Steps {
			if s.Scenario == nil || s.Text == "" {
				t.Fatalf("step %d loaded without a scenario or text", i)
			}
			if s.Question != nil && s.Answer == nil {
				t.Fatalf("step %d's question has no answer", i)
			}
		}
	})
}
