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
	"time"

	"golang.org/x/term"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/internal/outfile"
)

func main() {
	// Ctrl-C, kill (SIGTERM) and a closed terminal or ssh session (SIGHUP) stop a run cleanly:
	// no temporary file is left behind, and nothing half-made is printed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan int, 1)
	go func() { done <- report(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr), os.Stderr) }()
	var code int
	select {
	case code = <-done:
	case <-ctx.Done():
		select {
		case code = <-done:
		case <-time.After(interruptGrace):
			// Something ignores the signal: an open of a FIFO nobody writes to (or reads
			// from) waits in the kernel, where nothing cancels it. It holds no output
			// half-written (a file being written is never waited on), so stop anyway.
			code = report(&interruptedError{cause: context.Cause(ctx), err: ctx.Err()}, os.Stderr)
		}
	}
	stop()
	os.Exit(code)
}

// interruptGrace is how long after Ctrl-C (or SIGTERM) a command has to stop by itself
// (commands stop within 0.1s) before main stops it.
const interruptGrace = time.Second

// report prints err, if any, as one line on w and returns the exit code it means.
func report(err error, w io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(w, "ratelab: "+err.Error())
	var usage *usageError
	var sameFile *outfile.SameFileError // an output that is an input: a command-line mistake
	var stopped *interruptedError
	switch {
	case errors.As(err, &stopped):
		return stopped.exitCode()
	case errors.As(err, &usage), errors.As(err, &sameFile):
		return 2
	}
	return 1
}

// env is what a command may touch: its streams and whether they are terminals.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	stdinTTY       bool
	stdoutTTY      bool
	stderrTTY      bool
	// width is the columns to lay the output out for when stdout is a terminal (its size,
	// else $COLUMNS, else 80); 0 when it is not, for the stable piped layout (width.go).
	width int
	// errWidth is width for stderr: the columns notes are wrapped at when stderr is a
	// terminal, 0 when it is not (one note a line, as scripts and tests read them).
	errWidth int
	// budget is the most a run may take (--max-events, --max-memory); nil is
	// engine.DefaultBudget.
	budget *engine.Budget
}

type command struct {
	name    string
	args    string
	summary string
	about   string // more about the arguments, for the command's help
	run     func(ctx context.Context, e *env, args []string) error
}

// commands is every subcommand, in the order usage lists them.
var commands = []command{
	{"run", "[SCENARIO | FILE | -] [flags]", "run a scenario through every limiter and print one row per limiter",
		"SCENARIO is a built-in scenario (see ratelab list); FILE is a scenario file (YAML, whatever its name); - reads the scenario file from standard input. " +
			"Without one, the default scenario runs. On a terminal the table fits its width; piped, it is plain text in a stable layout. " +
			"With --redis ADDR, a fleet scenario's central lanes keep their shared store in that real Redis, decided at the run's virtual times.",
		runCommand},
	{"list", "", "list the built-in scenarios and the limiter kinds", "", listCommand},
	{"show", "[SCENARIO | FILE | -] [flags]", "print a scenario as the YAML file it would be (run loads it back to the same results)",
		"Start a scenario file of your own from a built-in: ratelab show peers > mine.yaml. The flags change what is shown, as they change what run runs. " +
			"A built-in's embedded trace is written inline (the trace source's data).",
		showCommand},
	{"replay", "--in TRACE.csv --limiter SPEC [--limiter SPEC]... [--out FILE] [--redis ADDR]", "stream a recorded trace through limiters, open loop",
		"Each request of the trace meets every limiter at its time; one decisions column per limiter (1 admitted, 0 refused). " +
			"--in - reads the trace from standard input, --out - (the default) writes the decisions to standard output; the summary goes to standard error. " +
			"A stage written redis/SPEC (token-bucket, leaky-bucket, fixed-window) keeps its state in the real Redis at --redis ADDR, decided at the trace's times, " +
			"so its column can be checked against the in-process one beside it; decisions Redis did not make are the --redis-on-failure policy's and fail the run (exit 1).",
		replayCommand},
	{"fit", "--in TRACE.csv | SCENARIO [--rate RATE] [--refuse PERCENT] [flags]", "find the least limiter parameters that admit a trace: its burstiness curve and each kind's spec",
		"For each rate ρ of a grid from the trace's mean to twice its peak, σ(ρ) is the least token-bucket capacity that admits every request, computed exactly in the token bucket's arithmetic (T rounded up to a whole ns); " +
			"the recommended point is the curve's knee (or --rate), with the least spec of each kind there, every one replayed over the whole trace to confirm it. " +
			"A SCENARIO's traffic is its sources' requests, without retries. --in - reads the trace from standard input (kept in a temporary file: fitting reads it several times).",
		fitCommand},
	{"sweep", "[SCENARIO | FILE | -] --vary TARGET.FIELD=VALUES [--vary …] [flags]", "run a grid of limiter parameters over a scenario: every cell's metrics as a table or CSV, and heatmaps",
		"Each --vary names a field and its values. TARGET.FIELD is a kind's field in every lane with a stage of that kind (token-bucket.capacity), or a field of the one lane named TARGET (its NAME=, or its spec), in the stage of it that has the field. " +
			"VALUES is LO..HI stepped in --steps values (whole numbers 1..100; rates of one window 50/1s..200/1s, the permits stepped; durations 10ms..1s; decimals), the ends exact and the values between rounded to a round unit, or a list a,b,c taken as given. " +
			"With two --vary the grid is every pair, for every lane both apply to; cells are numbered lane by lane, then by the first --vary's value, then the second's. " +
			"Each cell is that lane alone on the scenario's seed, so every cell sees the same offered traffic. Cells run on every core; the output is the same whatever the cores. " +
			"--shard I/N runs every N-th cell from the I-th, as CSV, and ratelab sweep merge joins the shards into the CSV one machine writes, byte for byte. " +
			"The figures (--out) draw each --metric: a heatmap for two --vary with a colour bar, σ(ρ) from ratelab fit drawn over it when the scenario is a trace and the two are a token bucket's rate and capacity; a line chart for one. " +
			"A cell whose lane the scenario refuses (fleet's split lane at capacity=5: not a multiple of 3 instances) is invalid: it does not run, and the sweep goes on. Its CSV row has its reason in an error column (there only when a cell is invalid) and nothing measured, the table prints invalid and lists the reasons, the heatmap hatches it (a line chart crosses it on the axis) with the reason in the legend. " +
			"Exit status: 1 when some cells were invalid, after all the output is written, with a one-line summary on stderr; a --shard exits 0 (its rows say it), and sweep merge exits 1.",
		sweepCommand},
	{"sweep merge", "SHARD.csv... [flags]", "join the CSVs of a sweep's shards into the CSV one machine writes (and draw its figures)",
		"The shards may come in any order; a shard missing, given twice, or of another sweep (the sweep column is a hash of the grid) is an error naming it. - reads one shard from standard input. " +
			"Figures drawn from shards have no σ(ρ) curve: it needs the trace, which the CSV does not hold. " +
			"Invalid cells' rows (an error column with the reason) are merged like any other; when there is one, the merge writes everything and exits 1 with a one-line summary.",
		sweepMergeCommand},
	{"translate", "'rate=R,burst=B' [--scenario SCENARIO | --in TRACE.csv] [flags]", "say one intent (a rate and a burst) in every library's terms, run them all on the same traffic and show where they admit the same requests", translateAbout, translateCommand},
	{"plot", "[SCENARIO | FILE | -] --out DIR [flags] | --gallery DIR", "draw a scenario's charts as PNG or SVG files, or regenerate the gallery",
		"Writes DIR/NAME-CHART.png (or .svg) for each chart and prints their paths. With exactly one --chart, --out - writes the image to standard output.",
		plotCommand},
	{"tui", "[SCENARIO | FILE | -] [flags]", "open the interactive workbench: every limiter side by side, one decision at a time",
		"Needs a terminal. With -, the scenario file comes from standard input and the keys from the terminal.",
		tuiCommand},
	{"learn", "[LESSON | FILE.yaml] [--answers]", "list the built-in lessons, or take one: read, predict what the limiters will do, reach a goal", learnAbout, learnCommand},
	{"web", "[--out DIR] [--addr ADDRESS]", "the workbench in a browser: serve the page on a loopback port (its address printed), or write it as a static site", "The page runs ratelab's engine compiled to WebAssembly, built here by the Go toolchain from ratelab's source; --out DIR writes it for any static host or to open as a file.", webCommand},
	{"guarantees", "[run ID]", "list the guarantee catalogue, or run one guarantee: its check's verdict and golden text",
		"A broken guarantee fails (exit 1).", guaranteesCommand},
	{"completion", "bash | zsh | fish", "print a shell completion script (commands, flags, scenarios, limiter kinds and fields)",
		"bash: source <(ratelab completion bash); zsh: ratelab completion zsh > ~/.zfunc/_ratelab (a directory of $fpath); " +
			"fish: ratelab completion fish > ~/.config/fish/completions/ratelab.fish. The script asks ratelab itself on each <Tab>, so it always knows this build.",
		completionCommand},
	{"help", "[COMMAND]", "explain ratelab, or one command and every flag it takes", "", nil},
	{"version", "", "print ratelab's version (also --version)", "", nil},
}

// run is the whole program: main only adds the process's streams and exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, stdinTTY: isTerminal(stdin), stdoutTTY: isTerminal(stdout), stderrTTY: isTerminal(stderr)}
	if e.stdoutTTY {
		e.width = columnsOf(stdout)
	}
	if e.stderrTTY {
		e.errWidth = columnsOf(stderr)
	}
	return runEnv(ctx, e, args)
}

// runEnv runs the command line in args with e's streams (a test sets a terminal's width).
func runEnv(ctx context.Context, e *env, args []string) error {
	err := dispatch(outfile.WithInputs(ctx, e.stdout), e, args)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return &interruptedError{cause: context.Cause(ctx), err: err}
	}
	return err
}

func dispatch(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return defaultCommand(ctx, e)
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		fmt.Fprint(e.stdout, usage())
		return nil
	case "help":
		return helpCommand(ctx, e, args[1:])
	case "__complete": // the completion scripts' question (not listed)
		return completeCommand(ctx, e, args[1:])
	case "version", "-version", "--version":
		if len(args) == 2 && (args[1] == "-h" || args[1] == "--help") {
			return helpCommand(ctx, e, []string{"version"})
		}
		if len(args) > 1 {
			return usageErrorf("%s takes no arguments, got %s", name, strings.Join(args[1:], " "))
		}
		fmt.Fprintln(e.stdout, versionLine())
		return nil
	}
	if name == "sweep" && len(args) > 1 && args[1] == "merge" { // a subcommand (a scenario file called merge: ./merge)
		name, args = "sweep merge", args[1:]
	}
	c, err := lookupCommand(name)
	if err != nil {
		return err
	}
	err = c.run(ctx, e, args[1:])
	var help *helpRequested
	if errors.As(err, &help) {
		fmt.Fprint(e.stdout, commandHelp(c, help.fs))
		return nil
	}
	return err
}

// lookupCommand finds the command called name, or says what it might have been.
func lookupCommand(name string) (command, error) {
	for _, c := range commands {
		if c.name == name && c.run != nil {
			return c, nil
		}
	}
	if strings.HasPrefix(name, "-") {
		return command{}, usageErrorf("%s: flags go after the command, as in ratelab run %s (commands: %s)", name, name, commandNames())
	}
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	return command{}, usageErrorf("unknown command %q%s (commands: %s)", name, didYouMean(name, names, nil), commandNames())
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

// interruptedError is a command stopped by Ctrl-C (or SIGTERM, or SIGHUP): it says only that,
// and exits 128 + the signal's number (130, 143, 129), as a shell reports a process the
// signal killed.
type interruptedError struct {
	cause error // context.Cause: which signal, when one did it
	err   error // the command's own error, for errors.Is
}

func (i *interruptedError) Error() string {
	switch i.signal() {
	case syscall.SIGTERM:
		return "terminated"
	case syscall.SIGHUP:
		return "hung up"
	}
	return "interrupted"
}

func (i *interruptedError) Unwrap() error { return i.err }

func (i *interruptedError) signal() syscall.Signal {
	if i.cause != nil {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
			if strings.Contains(i.cause.Error(), sig.String()) {
				return sig
			}
		}
	}
	return syscall.SIGINT
}

func (i *interruptedError) exitCode() int { return 128 + int(i.signal()) }

// isTerminal is whether the stream s (an io.Reader or io.Writer) is a terminal.
func isTerminal(s any) bool {
	f, ok := s.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// readingStdin tells someone at a terminal that ratelab waits for them to type what, when
// standard input is the terminal.
func readingStdin(e *env, what string) {
	if e.stdinTTY {
		fmt.Fprintf(e.stderr, "ratelab: reading %s from the terminal; end it with Ctrl-D\n", what)
	}
}

// terminalWidth is the number of columns of the terminal w writes to, 0 when unknown.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil || width <= 0 {
		return 0
	}
	return width
}
