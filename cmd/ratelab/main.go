// Command ratelab runs scripted traffic through rate limiters on a virtual clock and shows,
// side by side, what each one admits.
//
//	ratelab                       the workbench (TUI on a terminal; the default scenario's table otherwise)
//	ratelab run [SCENARIO|FILE]   run a scenario and print one row per limiter
//	ratelab list                  the scenarios and limiter kinds
//	ratelab replay --in TRACE.csv replay a recorded trace through limiters
//
// Exit codes: 0 ok, 1 failure, 2 usage error; every error is one line on stderr.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/ratelab/ratelab/limiters"
)

func main() {
	// Ctrl-C and kill (SIGTERM) stop a run cleanly: no temporary file is left behind.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ratelab: "+err.Error())
		var usage *usageError
		if errors.As(err, &usage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// env is what a command may touch: its streams and whether they are terminals.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	stdoutTTY      bool
	stderrTTY      bool
}

type command struct {
	name    string
	args    string
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

// commands is every subcommand, in the order usage lists them.
var commands = []command{
	{"run", "[SCENARIO | FILE.yaml] [--limiter SPEC]... [--seed N] [--horizon D] [--bins N] [--format table|json|csv]", "run a scenario through every limiter and print one row per limiter", runCommand},
	{"list", "", "list the built-in scenarios and the limiter kinds", listCommand},
	{"replay", "--in TRACE.csv --limiter SPEC [--limiter SPEC]... [--out DECISIONS.csv]", "stream a recorded trace through limiters, open loop", replayCommand},
	{"plot", "[SCENARIO | FILE.yaml] [--chart NAME]... [--window D] --out DIR [--format png|svg] [--width W --height H] | --gallery DIR", "draw a scenario's charts as PNG or SVG files, or regenerate the gallery", plotCommand},
	{"tui", "[SCENARIO | FILE.yaml] [--limiter SPEC]... [--seed N] [--horizon D]", "open the interactive workbench: every limiter side by side, one decision at a time", tuiCommand},
	{"guarantees", "[run ID]", "list the guarantee catalogue, or run one guarantee: its check's verdict and golden text", guaranteesCommand},
}

// run is the whole program: main only adds the process's streams and exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, stdoutTTY: isTerminal(stdout), stderrTTY: isTerminal(stderr)}
	if len(args) == 0 {
		return defaultCommand(ctx, e)
	}
	name := args[0]
	if name == "-h" || name == "--help" || name == "help" {
		fmt.Fprint(stdout, usage())
		return nil
	}
	for _, c := range commands {
		if c.name == name {
			return c.run(ctx, e, args[1:])
		}
	}
	return usageErrorf("unknown command %q (commands: %s)", name, commandNames())
}

// defaultCommand opens the workbench on a terminal and otherwise prints the default
// scenario's table.
func defaultCommand(ctx context.Context, e *env) error {
	if e.stdoutTTY && openWorkbench != nil {
		return openWorkbench(ctx, e, nil)
	}
	return runCommand(ctx, e, nil)
}

// openWorkbench starts the interactive workbench; nil while the build has none.
var openWorkbench func(ctx context.Context, e *env, args []string) error

func usage() string {
	var b strings.Builder
	b.WriteString("ratelab: a workbench for rate limiters on a virtual clock\n\nUsage:\n  ratelab                 open the workbench (on a terminal) or run the default scenario\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  ratelab %s %s\n      %s\n", c.name, c.args, c.summary)
	}
	b.WriteString("\nLimiter specs (join with + to stack; `ratelab list` explains each kind):\n")
	line := ""
	for _, k := range limiters.Kinds() {
		if line != "" && len(line)+2+len(k.Example) > 92 {
			b.WriteString(line + "\n")
			line = ""
		}
		line += "  " + k.Example
	}
	b.WriteString(line + "\n")
	return b.String()
}

func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// usageError is a mistake in the command line: exit code 2.
type usageError struct{ msg string }

func (u *usageError) Error() string { return u.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
