package lessons

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/gate"
	"github.com/ratelab/ratelab/internal/wording"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/scenarios"
)

// Lesson is a sequence of steps a learner goes through in order (docs/LESSONS.md).
type Lesson struct {
	Name    string // what `ratelab learn NAME` calls it
	Title   string
	Summary string // one line
	File    string // where it was read from
	Steps   []*Step
}

// Step is one screen of a lesson: a scenario, text to read, and optionally a question to
// predict (its Answer computed by the engine when the lesson is loaded) and a goal to reach.
type Step struct {
	Title    string
	Text     string
	Scenario *engine.Scenario // after the step's change, if any: the scenario the step runs
	Question *Question
	Answer   *Answer // Question's, computed by the engine; nil without a question
	Goal     *Goal
	Line     int // where the step starts in the file
}

// MaxFileSize is the largest lesson file read: 1 MiB, far beyond any hand-written lesson.
const MaxFileSize = 1 << 20

// LoadFile reads a lesson file (a regular file of at most MaxFileSize bytes) within
// engine.DefaultBudget.
func LoadFile(ctx context.Context, path string) (*Lesson, error) {
	return LoadFileWithin(ctx, path, engine.DefaultBudget)
}

// LoadFileWithin is LoadFile with each step's runs held to budget (see LoadWithin).
func LoadFileWithin(ctx context.Context, path string, budget engine.Budget) (*Lesson, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := scenarios.CheckFileKind(path, info); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	return LoadWithin(ctx, path, data, budget)
}

// Load reads a lesson from data; name is used in error messages ("name:line:col: field:
// reason") and, when the lesson has no name:, for its name. Every question's answer is
// computed and every goal checked (its start must miss it, its solution meet it), so a lesson
// that loads can be taught. Its runs are held to engine.DefaultBudget.
func Load(ctx context.Context, name string, data []byte) (*Lesson, error) {
	return LoadWithin(ctx, name, data, engine.DefaultBudget)
}

// LoadWithin is Load with a budget: a step whose scenario is estimated over it (a lesson is
// run as it loads, and again as it is taught: every question's answer, a goal's start and
// solution) is refused at the step's scenario or change, with the estimate and the flag that
// raises the budget, before anything runs. A 100000h scenario at 10⁶ requests a second
// (3.6·10¹⁴ events) is refused in milliseconds instead of running for days.
func LoadWithin(ctx context.Context, name string, data []byte, budget engine.Budget) (*Lesson, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s: is %d bytes: a lesson file may hold at most %d (1 MiB)", name, len(data), MaxFileSize)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s: is not UTF-8 text", name)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil, &scenarios.FileError{File: name, Line: 1, Column: 1, Reason: "the file is empty"}
	}
	d := &decoder{file: name, data: data, ctx: ctx, budget: budget}
	l, err := d.lesson(doc.Content[0])
	if err != nil {
		return nil, err
	}
	l.File = name
	if l.Name == "" {
		l.Name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	}
	return l, nil
}

type decoder struct {
	file   string
	data   []byte
	ctx    context.Context
	budget engine.Budget
}

func (d *decoder) fail(n *yaml.Node, field, format string, args ...any) error {
	return &scenarios.FileError{File: d.file, Line: n.Line, Column: n.Column, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// fields walks mapping n's keys, refusing one not in known (with did-you-mean) or given
// twice; visit gets each key's value.
func (d *decoder) fields(n *yaml.Node, where string, known []string, visit func(key string, k, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return d.fail(n, where, "expected a mapping of %s, got %s", strings.Join(known, ", "), describe(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := join(where, k.Value)
		if !contains(known, k.Value) {
			return d.fail(k, field, "unknown field%s (fields: %s)", wording.DidYouMeanTypo(k.Value, known), strings.Join(known, ", "))
		}
		if seen[k.Value] {
			return d.fail(k, field, "given twice")
		}
		seen[k.Value] = true
		if err := visit(k.Value, k, v); err != nil {
			return err
		}
	}
	return nil
}

func join(where, key string) string {
	if where == "" {
		return key
	}
	return where + "." + key
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Value == "" {
			return "nothing"
		}
		return strconv.Quote(n.Value)
	}
	return "an alias"
}

func (d *decoder) str(n *yaml.Node, field string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", d.fail(n, field, "expected text, got %s", describe(n))
	}
	return n.Value, nil
}

func (d *decoder) duration(n *yaml.Node, field string) (time.Duration, error) {
	s, err := d.str(n, field)
	if err != nil {
		return 0, err
	}
	t, err := time.ParseDuration(s)
	if err != nil || t < 0 {
		return 0, d.fail(n, field, "%q is not a duration such as 990ms or 2s", s)
	}
	return t, nil
}

func (d *decoder) whole(n *yaml.Node, field string, lo, hi int) (int, error) {
	s, err := d.str(n, field)
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		return 0, d.fail(n, field, "%q is not a whole number from %d to %d", s, lo, hi)
	}
	return v, nil
}

func (d *decoder) lesson(n *yaml.Node) (*Lesson, error) {
	l := &Lesson{}
	var steps *yaml.Node
	err := d.fields(n, "", []string{"name", "title", "summary", "steps"}, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "name":
			l.Name, err = d.str(v, key)
		case "title":
			l.Title, err = d.str(v, key)
		case "summary":
			l.Summary, err = d.str(v, key)
		case "steps":
			steps = v
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if l.Title == "" {
		return nil, d.fail(n, "title", "missing: a lesson has a title")
	}
	if steps == nil || steps.Kind != yaml.SequenceNode || len(steps.Content) == 0 {
		at := n
		if steps != nil {
			at = steps
		}
		return nil, d.fail(at, "steps", "a lesson is a list of steps, at least one")
	}
	var prev *engine.Scenario
	for i, sn := range steps.Content {
		s, err := d.step(sn, fmt.Sprintf("steps[%d]", i), prev)
		if err != nil {
			return nil, err
		}
		prev = s.Scenario
		l.Steps = append(l.Steps, s)
	}
	return l, nil
}

var stepFields = []string{"title", "text", "scenario", "change", "question", "goal"}

func (d *decoder) step(n *yaml.Node, where string, prev *engine.Scenario) (*Step, error) {
	s := &Step{Line: n.Line, Scenario: prev}
	var change, question, goal, scenarioKey *yaml.Node
	err := d.fields(n, where, stepFields, func(key string, k, v *yaml.Node) error {
		var err error
		switch key {
		case "title":
			s.Title, err = d.str(v, join(where, key))
		case "text":
			s.Text, err = d.str(v, join(where, key))
		case "scenario":
			scenarioKey = k
			s.Scenario, err = d.scenario(k, v, join(where, key))
		case "change":
			change = v
		case "question":
			question = v
		case "goal":
			goal = v
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if change != nil {
		if scenarioKey != nil {
			return nil, d.fail(change, join(where, "change"), "a step has a scenario or a change to the previous step's, not both")
		}
		if prev == nil {
			return nil, d.fail(change, join(where, "change"), "the first step has no previous scenario to change: give it a scenario")
		}
		if s.Scenario, err = d.change(change, join(where, "change"), prev); err != nil {
			return nil, err
		}
	}
	if s.Scenario == nil {
		return nil, d.fail(n, join(where, "scenario"), "missing: the first step names its scenario (a built-in's name, or a scenario written inline)")
	}
	// A step that keeps the previous step's scenario was checked with it.
	at, field := scenarioKey, join(where, "scenario")
	if change != nil {
		at, field = change, join(where, "change")
	}
	if at != nil {
		if err := d.budget.Check(s.Scenario, s.Scenario.Estimate()); err != nil {
			return nil, d.fail(at, field, "%v", err)
		}
	}
	if s.Text == "" {
		return nil, d.fail(n, join(where, "text"), "missing: a step has text to read")
	}
	if question != nil {
		if s.Question, err = d.question(question, join(where, "question"), s.Scenario); err != nil {
			return nil, err
		}
		if s.Answer, err = s.Question.Answer(s.Scenario); err != nil {
			return nil, d.fail(question, join(where, "question"), "%v", err)
		}
	}
	if goal != nil {
		if s.Goal, err = d.goal(goal, join(where, "goal"), s.Scenario); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// scenario reads a built-in's name or a scenario written inline, as a scenario file would
// be, its errors at their place in the lesson file.
func (d *decoder) scenario(k, v *yaml.Node, field string) (*engine.Scenario, error) {
	if v.Kind == yaml.ScalarNode {
		sc, err := scenarios.Get(v.Value)
		if err != nil {
			return nil, d.fail(v, field, "no built-in scenario %q%s (ratelab list shows them; or write the scenario inline, as a scenario file's fields)",
				v.Value, wording.DidYouMeanTypo(v.Value, scenarios.Names()))
		}
		return sc, nil
	}
	if v.Kind != yaml.MappingNode {
		return nil, d.fail(v, field, "expected a built-in scenario's name or a scenario written inline, got %s", describe(v))
	}
	sc, err := scenarios.Load(d.file, inlineText(d.data, k, v))
	if err != nil {
		return nil, err
	}
	if !hasKey(v, "name") {
		sc.Name = "inline scenario at line " + strconv.Itoa(v.Line)
	}
	return sc, nil
}

func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

// inlineText is the lesson file with every line but the value v of key k blanked: the value's
// first line from its column, then every line indented more than the key (or blank). Read as
// a scenario file it is v alone, and every line and column a scenario error names is its
// place in the lesson file.
func inlineText(data []byte, k, v *yaml.Node) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	keyIndent := k.Column - 1
	var out bytes.Buffer
	for i, line := range lines {
		no := i + 1
		switch {
		case no < v.Line:
			out.WriteString("\n")
		case no == v.Line:
			cut := 0 // the byte where column v.Column starts
			for col := 1; col < v.Column && cut < len(line); col++ {
				_, size := utf8.DecodeRune(line[cut:])
				cut += size
			}
			out.WriteString(strings.Repeat(" ", v.Column-1))
			out.Write(line[cut:])
		default:
			trimmed := bytes.TrimLeft(line, " ")
			blank := len(bytes.TrimSpace(trimmed)) == 0 || trimmed[0] == '#'
			if !blank && len(line)-len(trimmed) <= keyIndent {
				return out.Bytes()
			}
			out.Write(line)
		}
	}
	return out.Bytes()
}

var changeFields = []string{"add", "remove", "replace", "rate", "horizon", "seed"}

// change applies a step's change to a copy of the previous step's scenario.
func (d *decoder) change(n *yaml.Node, where string, prev *engine.Scenario) (*engine.Scenario, error) {
	sc := cloneScenario(prev)
	err := d.fields(n, where, changeFields, func(key string, _, v *yaml.Node) error {
		field := join(where, key)
		switch key {
		case "add":
			return d.eachText(v, field, func(item *yaml.Node, text string) error {
				lane, err := parseLane(text)
				if err != nil {
					return d.fail(item, field, "%v", err)
				}
				if laneIndex(sc, lane.Label()) >= 0 {
					return d.fail(item, field, "the scenario already has a lane %s: name the new one NAME=SPEC", lane.Label())
				}
				sc.Lanes = append(sc.Lanes, lane)
				return nil
			})
		case "remove":
			return d.eachText(v, field, func(item *yaml.Node, text string) error {
				i, err := d.lane(item, field, sc, text)
				if err != nil {
					return err
				}
				sc.Lanes = append(sc.Lanes[:i:i], sc.Lanes[i+1:]...)
				return nil
			})
		case "replace":
			if v.Kind != yaml.MappingNode {
				return d.fail(v, field, "expected a mapping LANE: SPEC, got %s", describe(v))
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				ln, sn := v.Content[j], v.Content[j+1]
				i, err := d.lane(ln, field, sc, ln.Value)
				if err != nil {
					return err
				}
				text, err := d.str(sn, field+"."+ln.Value)
				if err != nil {
					return err
				}
				lane, err := parseLane(text)
				if err != nil {
					return d.fail(sn, field+"."+ln.Value, "%v", err)
				}
				if lane.Name == "" {
					lane.Name = sc.Lanes[i].Name // a named lane keeps its name
				}
				lane.Client, lane.MaxWait = sc.Lanes[i].Client, sc.Lanes[i].MaxWait
				sc.Lanes[i] = lane
			}
			return nil
		case "rate":
			s, err := d.str(v, field)
			if err != nil {
				return err
			}
			r, err := strconv.ParseFloat(s, 64)
			if err != nil || r <= 0 || math.IsInf(r, 0) || math.IsNaN(r) {
				return d.fail(v, field, "%q is not a rate in requests per second (a positive number)", s)
			}
			for i := range sc.Sources {
				switch sc.Sources[i].Kind {
				case engine.SourceConstant, engine.SourcePoisson, engine.SourceOnOff, engine.SourceRamp, engine.SourceSine:
					sc.Sources[i].Rate = r
				default:
					return d.fail(v, field, "source %d is %s, which has no rate to change", i+1, sc.Sources[i].Kind)
				}
			}
			return nil
		case "horizon":
			h, err := d.duration(v, field)
			if err != nil {
				return err
			}
			if h <= 0 {
				return d.fail(v, field, "must be positive")
			}
			sc.Horizon = h
			return nil
		default: // seed
			s, err := d.str(v, field)
			if err != nil {
				return err
			}
			seed, err := scenarios.ParseSeed(s)
			if err != nil {
				return d.fail(v, field, "%v", err)
			}
			sc.Seed = seed
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	if len(sc.Lanes) == 0 {
		return nil, d.fail(n, where, "the change leaves no lane")
	}
	if err := sc.Validate(); err != nil {
		return nil, d.fail(n, where, "%v", err)
	}
	return sc, nil
}

func (d *decoder) eachText(v *yaml.Node, field string, f func(item *yaml.Node, text string) error) error {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	for i, item := range items { // a spec cut at its commas is said as such, before its first piece is read
		if i > 0 && v.Style&yaml.FlowStyle != 0 && item.Kind == yaml.ScalarNode && item.Style == 0 &&
			strings.Contains(item.Value, "=") && !strings.Contains(item.Value, ":") {
			return d.fail(item, field, "%s looks like the rest of a spec cut at its comma: in a [flow, list] a comma separates items, so quote each spec (\"%s,%s\") or write the list one item a line", item.Value, items[i-1].Value, item.Value)
		}
	}
	for _, item := range items {
		text, err := d.str(item, field)
		if err != nil {
			return err
		}
		if err := f(item, text); err != nil {
			return err
		}
	}
	return nil
}

// lane is the index of the lane labelled text, or an error listing the labels.
func (d *decoder) lane(n *yaml.Node, field string, sc *engine.Scenario, text string) (int, error) {
	i := laneIndex(sc, text)
	if i < 0 {
		labels := laneLabels(sc)
		return 0, d.fail(n, field, "no lane %s%s (lanes: %s)", text, wording.DidYouMeanTypo(text, labels), strings.Join(labels, ", "))
	}
	return i, nil
}

// parseLane reads a lane as --limiter does: a stack of specs joined with +, optionally named
// first, NAME=SPEC (the text before the first = is a name when it holds no ":" and no "(").
func parseLane(text string) (engine.LaneSpec, error) {
	name, spec := "", text
	if before, after, ok := strings.Cut(text, "="); ok && !strings.ContainsAny(before, ":(") && !limiters.IsKeyedSpec(text) {
		name, spec = strings.TrimSpace(before), after
		if name == "" {
			return engine.LaneSpec{}, errors.New("the lane's name before = is empty")
		}
	}
	stack, err := engine.ParseStack(spec)
	if err != nil {
		return engine.LaneSpec{}, err
	}
	return engine.LaneSpec{Name: name, Stack: stack}, nil
}

var questionFields = []string{"kind", "at", "lane", "next", "within", "ask"}

func (d *decoder) question(n *yaml.Node, where string, sc *engine.Scenario) (*Question, error) {
	q := &Question{N: 5, Within: time.Millisecond}
	var laneNode *yaml.Node
	err := d.fields(n, where, questionFields, func(key string, _, v *yaml.Node) error {
		field := join(where, key)
		var err error
		switch key {
		case "kind":
			var s string
			if s, err = d.str(v, field); err == nil {
				if !contains(questionKinds, s) {
					return d.fail(v, field, "%q is not a kind of question%s (kinds: %s)", s, wording.DidYouMeanTypo(s, questionKinds), strings.Join(questionKinds, ", "))
				}
				q.Kind = QuestionKind(s)
			}
		case "at":
			q.At, err = d.duration(v, field)
			if err == nil && q.At >= sc.Horizon {
				return d.fail(v, field, "%s is not before the scenario's horizon %s", limiters.FormatDuration(q.At), limiters.FormatDuration(sc.Horizon))
			}
		case "lane":
			laneNode = v
			if q.Lane, err = d.str(v, field); err == nil {
				_, err = d.lane(v, field, sc, q.Lane)
			}
		case "next":
			q.N, err = d.whole(v, field, 1, 100)
		case "within":
			q.Within, err = d.duration(v, field)
		case "ask":
			q.Ask, err = d.str(v, field)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if q.Kind == "" {
		return nil, d.fail(n, join(where, "kind"), "missing: one of %s", strings.Join(questionKinds, ", "))
	}
	if q.Kind != FirstRefusal && laneNode == nil {
		return nil, d.fail(n, join(where, "lane"), "missing: a %s question is about one lane (lanes: %s)", q.Kind, strings.Join(laneLabels(sc), ", "))
	}
	if q.Kind == FirstRefusal && laneNode != nil {
		return nil, d.fail(laneNode, join(where, "lane"), "a first-refusal question is about every lane: leave lane out")
	}
	return q, nil
}

var goalFields = []string{"text", "lane", "start", "solution", "checks"}

func (d *decoder) goal(n *yaml.Node, where string, sc *engine.Scenario) (*Goal, error) {
	g := &Goal{}
	var startNode, solutionNode, checksNode *yaml.Node
	err := d.fields(n, where, goalFields, func(key string, _, v *yaml.Node) error {
		field := join(where, key)
		var err error
		switch key {
		case "text":
			g.Text, err = d.str(v, field)
		case "lane":
			if g.Lane, err = d.str(v, field); err == nil {
				var i int
				if i, err = d.lane(v, field, sc, g.Lane); err == nil && sc.Lanes[i].Name == "" {
					return d.fail(v, field, "the goal's lane must be named (NAME=SPEC), so that its checks still find it when the learner changes its spec")
				}
			}
		case "start":
			startNode = v
			g.Start, err = d.str(v, field)
		case "solution":
			solutionNode = v
			g.Solution, err = d.str(v, field)
		case "checks":
			checksNode = v
			err = d.eachText(v, field, func(item *yaml.Node, text string) error {
				c, err := gate.Parse(text)
				if err == nil {
					_, err = c.Select(sc)
				}
				var ge *gate.Error
				if errors.As(err, &ge) {
					return d.fail(item, field, "%s: %s", text, ge.Reason)
				}
				if err != nil {
					return d.fail(item, field, "%v", err)
				}
				g.Checks = append(g.Checks, c)
				return nil
			})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, m := range []struct {
		field string
		ok    bool
	}{{"text", g.Text != ""}, {"lane", g.Lane != ""}, {"start", startNode != nil}, {"solution", solutionNode != nil}, {"checks", checksNode != nil}} {
		if !m.ok {
			return nil, d.fail(n, join(where, m.field), "missing: a goal has %s", strings.Join(goalFields, ", "))
		}
	}
	// The goal must be one to reach: its start misses it and its solution meets it.
	for _, try := range []struct {
		node  *yaml.Node
		field string
		spec  string
		want  bool
	}{{startNode, "start", g.Start, false}, {solutionNode, "solution", g.Solution, true}} {
		v, err := g.Try(d.ctx, sc, try.spec)
		if err != nil {
			return nil, d.fail(try.node, join(where, try.field), "%v", err)
		}
		if v.Met != try.want {
			verb := "already meets the goal, so there is nothing to reach"
			if try.want {
				verb = "does not meet the goal"
			}
			return nil, d.fail(try.node, join(where, try.field), "%s %s: %s", try.spec, verb, strings.ReplaceAll(strings.TrimSpace(v.String()), "\n", "; "))
		}
	}
	return g, nil
}
