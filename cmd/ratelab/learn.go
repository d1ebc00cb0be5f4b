package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/lessons"
	"github.com/ratelab/ratelab/tui"
)

const learnAbout = "Without a lesson, lists the built-in course. LESSON is a built-in lesson's name; FILE.yaml is a lesson file of your own (docs/LESSONS.md). " +
	"On a terminal the lesson runs in the workbench's lesson mode: step by step, your predictions checked against the engine's answers, goals tried spec by spec. " +
	"Otherwise (or with --answers) it is printed as text: each step's text and question, and with --answers the engine's answer, the decision log that explains it, and each goal's known solution."

// learnCommand lists the built-in lessons, or runs one (a built-in's name or a lesson file).
func learnCommand(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("learn", flag.ContinueOnError)
	answers := fs.Bool("answers", false, "print the lesson as text with the engine's answers and the goals' solutions (for teachers, and to check a lesson file)")
	var bf budgetFlags
	bf.register(fs)
	positional, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := bf.apply(e); err != nil {
		return err
	}
	width := e.width
	if width <= 0 {
		width = 80
	}
	switch len(positional) {
	case 0:
		if *answers {
			return usageErrorf("learn --answers: name a lesson (ratelab learn lists them)")
		}
		return listLessons(e, width)
	case 1:
	default:
		return usageErrorf("learn takes one lesson, got %s", strings.Join(positional, " "))
	}
	l, err := loadLesson(ctx, positional[0], e.budgetOrDefault())
	if err != nil {
		return err
	}
	if e.stdoutTTY && !*answers {
		in := e.stdin
		if f, ok := in.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
			in = nil // keys come from the terminal itself (/dev/tty)
		}
		return tui.RunLesson(ctx, l, in, e.stdout)
	}
	return printLesson(e, l, width, *answers)
}

// loadLesson is the built-in lesson called arg, or the lesson file arg names (a path with a
// / or a .yaml/.yml name, or an existing file).
func loadLesson(ctx context.Context, arg string, budget engine.Budget) (*lessons.Lesson, error) {
	if strings.ContainsRune(arg, os.PathSeparator) || strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") {
		return lessons.LoadFileWithin(ctx, arg, budget)
	}
	l, err := lessons.Get(arg)
	if err != nil {
		if _, statErr := os.Stat(arg); statErr == nil {
			return lessons.LoadFileWithin(ctx, arg, budget)
		}
		return nil, usageErrorf("%v", err)
	}
	return l, nil
}

// listLessons writes the course, one lesson a paragraph, to fit width.
func listLessons(e *env, width int) error {
	all, err := lessons.Course()
	if err != nil {
		return err
	}
	nameW := 0
	for _, l := range all {
		nameW = max(nameW, len(l.Name))
	}
	var b strings.Builder
	b.WriteString("LESSONS (ratelab learn NAME runs one; ratelab learn FILE.yaml runs your own)\n")
	for _, l := range all {
		text := fmt.Sprintf("%s (%d steps). %s", l.Title, len(l.Steps), l.Summary)
		lines := wrapText(text, width-nameW-4)
		for i, line := range lines {
			name := ""
			if i == 0 {
				name = l.Name
			}
			fmt.Fprintf(&b, "  %-*s  %s\n", nameW, name, line)
		}
	}
	_, err = fmt.Fprint(e.stdout, b.String())
	return err
}

// printLesson writes a lesson as text: its steps, questions, and with answers the engine's
// answers and the goals' solutions, checked.
func printLesson(e *env, l *lessons.Lesson, width int, answers bool) error {
	var b strings.Builder
	para := func(text, indent string) {
		for _, p := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
			for _, line := range wrapText(p, width-len(indent)) {
				b.WriteString(strings.TrimRight(indent+line, " ") + "\n")
			}
		}
	}
	para(l.Title, "")
	if l.Summary != "" {
		para(l.Summary, "")
	}
	for i, s := range l.Steps {
		b.WriteString("\n")
		head := fmt.Sprintf("step %d/%d", i+1, len(l.Steps))
		if s.Title != "" {
			head += " · " + s.Title
		}
		para(head+" (scenario: "+s.Scenario.Name+")", "")
		para(s.Text, "  ")
		if q := s.Question; q != nil {
			para("question: "+q.Prompt(), "  ")
			if answers {
				para("answer: "+s.Answer.Text, "  ")
				for _, line := range s.Answer.Explain {
					para(line, "    ")
				}
			}
		}
		if g := s.Goal; g != nil {
			para("goal: "+g.Text, "  ")
			para(fmt.Sprintf("set lane %s, starting from %s; checks: %s", g.Lane, g.Start, checkTexts(g)), "  ")
			if answers {
				v, err := g.Try(context.Background(), s.Scenario, g.Solution)
				if err != nil {
					return err
				}
				para("a solution: "+g.Solution, "  ")
				for _, line := range strings.Split(strings.TrimSpace(v.String()), "\n") {
					para(line, "    ")
				}
			}
		}
	}
	_, err := fmt.Fprint(e.stdout, b.String())
	return err
}

func checkTexts(g *lessons.Goal) string {
	var out []string
	for _, c := range g.Checks {
		out = append(out, c.Text)
	}
	return strings.Join(out, ", ")
}

// wrapText breaks text into lines of at most w columns at spaces (a word longer than w is a
// line of its own).
func wrapText(text string, w int) []string {
	w = max(w, 20)
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) <= w:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}
