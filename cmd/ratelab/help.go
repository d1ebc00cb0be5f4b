package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/ratelab/ratelab/limiters"
)

// helpWidth is the width help text is wrapped to.
const helpWidth = 80

// helpCommand is `ratelab help [COMMAND]`: the global usage, or one command's, which is
// what `ratelab COMMAND -h` prints.
func helpCommand(ctx context.Context, e *env, args []string) error {
	if len(args) == 2 && args[0] == "sweep" && args[1] == "merge" {
		args = []string{"sweep merge"}
	}
	switch len(args) {
	case 0:
		fmt.Fprint(e.stdout, usage())
		return nil
	case 1:
	default:
		return usageErrorf("help: one command at most, got %s", strings.Join(args, " "))
	}
	switch args[0] {
	case "help", "-h", "--help":
		fmt.Fprint(e.stdout, usage())
		return nil
	case "version", "--version":
		for _, c := range commands {
			if c.name == "version" {
				fmt.Fprint(e.stdout, commandHelp(c, nil))
			}
		}
		return nil
	}
	c, err := lookupCommand(args[0])
	if err != nil {
		return err
	}
	// A command parses its flags before anything else: asked for help, it answers with its
	// flag set and does nothing.
	err = c.run(ctx, e, []string{"--help"})
	if h, ok := err.(*helpRequested); ok {
		fmt.Fprint(e.stdout, commandHelp(c, h.fs))
		return nil
	}
	return fmt.Errorf("help %s: the command did not describe itself (%v)", c.name, err)
}

// usage is ratelab's help: every command, and the limiter spec syntax.
func usage() string {
	var b strings.Builder
	b.WriteString("ratelab: a workbench for rate limiters on a virtual clock\n\nUsage:\n  ratelab\n      open the workbench (on a terminal) or run the default scenario\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "%s\n      %s\n", breakLine("  "+strings.TrimSpace("ratelab "+c.name+" "+c.args), helpWidth, strings.Repeat(" ", 10)),
			wrap(c.summary, helpWidth-6, "      "))
	}
	b.WriteString("\n`ratelab COMMAND -h` (or `ratelab help COMMAND`) explains a command and\nevery flag it takes. " +
		"A FILE argument may be -, standard input or output.\n" +
		"Exit status: 0 ok, 1 failure, 2 usage error, 130 interrupted.\n")
	b.WriteString("\nLimiter specs (join with + to stack, NAME=SPEC to name a lane; `ratelab list`\nexplains each kind):\n")
	line := ""
	for _, k := range limiters.Kinds() {
		if line != "" && len(line)+2+len(k.Example) > helpWidth {
			b.WriteString(line + "\n")
			line = ""
		}
		line += "  " + k.Example
	}
	b.WriteString(line + "\n")
	return b.String()
}

// commandHelp is one command's usage: its arguments, what it does, and every flag of fs with
// its meaning and default.
func commandHelp(c command, fs *flag.FlagSet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n", breakLine("Usage: "+strings.TrimSpace("ratelab "+c.name+" "+c.args), helpWidth, strings.Repeat(" ", len("Usage: ratelab "))))
	summary := strings.ToUpper(c.summary[:1]) + c.summary[1:] + "."
	b.WriteString(wrap(strings.TrimSpace(summary+" "+c.about), helpWidth, "") + "\n")
	type row struct{ left, right string }
	var rows []row
	if fs != nil {
		fs.VisitAll(func(f *flag.Flag) {
			rows = append(rows, row{strings.TrimSpace("--" + f.Name + " " + metavar(f)), flagMeaning(f)})
		})
	}
	rows = append(rows, row{"-h, --help", "show this help"})
	left := 0
	for _, r := range rows {
		left = max(left, len(r.left))
	}
	b.WriteString("\nFlags:\n")
	indent := strings.Repeat(" ", 2+left+2)
	for _, r := range rows {
		text := wrap(r.right, helpWidth-len(indent), indent)
		fmt.Fprintf(&b, "  %-*s  %s\n", left, r.left, text)
	}
	return b.String()
}

// flagMeaning is a flag's usage text with its default: stated in the text ("default: the
// scenario's"), or else the flag's default value.
func flagMeaning(f *flag.Flag) string {
	_, text := splitUsage(f.Usage)
	if strings.Contains(text, "default") || strings.Contains(text, "required") {
		return text
	}
	switch f.DefValue {
	case "", "0", "[]", "0s":
		return text + " (default: none)"
	}
	return text + " (default " + f.DefValue + ")"
}

// wrap breaks text into lines of at most width bytes at spaces; lines after the first start
// with indent.
func wrap(text string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(text) {
		if i > 0 && n+1+len(word) > width {
			b.WriteString("\n" + indent)
			n = 0
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}

// versionLine is `ratelab --version`: the module version the binary was built from, as the
// build info records it; "(devel)" when it records none (go run, go test, a build outside a
// module or version control), then the commit when known.
func versionLine() string {
	version, commit, modified := "(devel)", "", false
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	line := "ratelab " + version
	if version == "(devel)" && commit != "" {
		line += ", commit " + commit[:min(12, len(commit))]
		if modified {
			line += " (modified)"
		}
	}
	return line + ", " + runtime.Version()
}
