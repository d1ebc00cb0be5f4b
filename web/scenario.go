package web

import (
	"context"
	"errors"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/jsonout"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/present"
	"github.com/ratelab/ratelab/scenarios"
)

// FileName is the name the page's scenario text goes by in errors: "scenario.yaml:3:7: …".
const FileName = "scenario.yaml"

// Builtin is one built-in scenario as the page's picker lists it.
type Builtin struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Builtins lists the built-in scenarios in catalogue order.
func Builtins() []Builtin {
	var out []Builtin
	for _, sc := range scenarios.All() {
		out = append(out, Builtin{Name: sc.Name, Description: sc.Description})
	}
	return out
}

// BuiltinYAML is the built-in scenario name as a scenario file (scenarios.YAML): what
// `ratelab show NAME` prints, and what the page's editor starts with. Loaded back, it runs
// the same run to the byte (TestBuiltinYAMLRunsTheSameJSON).
func BuiltinYAML(name string) (string, error) {
	sc, err := scenarios.Get(name)
	if err != nil {
		return "", err
	}
	data, err := scenarios.YAML(sc)
	return string(data), err
}

// DefaultYAML is the default scenario (scenarios.Default) as a scenario file: the page opened
// with no link shows it, as `ratelab` on a terminal does.
func DefaultYAML() (string, error) { return BuiltinYAML(scenarios.Default) }

// Load reads the page's scenario text with the CLI's reader (scenarios.Load), so a mistake
// gets the same line:col error, named FileName, and validates it.
func Load(text string) (*engine.Scenario, error) {
	sc, err := scenarios.Load(FileName, []byte(text))
	if err != nil {
		return nil, err
	}
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	return sc, nil
}

// Problem is an error as the page shows it: the message, and where in the text when it is a
// scenario file's (Line and Column from 1; 0 when the error has no place).
type Problem struct {
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
}

// ProblemOf is err as a Problem, located when it is a *scenarios.FileError.
func ProblemOf(err error) Problem {
	p := Problem{Message: err.Error()}
	var fe *scenarios.FileError
	if errors.As(err, &fe) {
		p.Line, p.Column = fe.Line, fe.Column
	}
	return p
}

// RunJSON runs the scenario text to its horizon and returns what `ratelab run --format json`
// prints for it, to the byte: for a built-in's BuiltinYAML, what `ratelab run NAME --format
// json` prints.
func RunJSON(ctx context.Context, text string) (string, error) {
	sc, err := Load(text)
	if err != nil {
		return "", err
	}
	out, err := jsonout.RunJSON(ctx, sc)
	return string(out), err
}

// CheckSpec parses a lane's limiter spec (a stack of specs joined with +) as --limiter does,
// with its did-you-mean ("token-buckt: unknown kind … (did you mean token-bucket?)").
func CheckSpec(spec string) error {
	_, err := engine.ParseStack(spec)
	return err
}

// AddLane returns the scenario text with one more lane, spec, after the others (as the TUI's
// a key adds one), written back by scenarios.YAML.
func AddLane(text, spec string) (string, error) {
	sc, err := Load(text)
	if err != nil {
		return "", err
	}
	stack, err := engine.ParseStack(spec)
	if err != nil {
		return "", err
	}
	sc.Lanes = append(sc.Lanes, engine.LaneSpec{Stack: stack})
	if err := sc.Validate(); err != nil {
		return "", err
	}
	data, err := scenarios.YAML(sc)
	return string(data), err
}

// laneColor is the lane's colour in every chart and on the page: its first stage's kind's
// style (present.Of, the Okabe–Ito palette for ratelab's own six), dark grey for a kind
// outside the registry, as plots.LaneColor.
func laneColor(spec engine.LaneSpec) string {
	if len(spec.Stack) > 0 {
		kind := spec.Stack[0].Kind()
		if _, ok := limiters.Lookup(kind); ok {
			return present.Of(string(kind)).Color
		}
	}
	return "#333333"
}
