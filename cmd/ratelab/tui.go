package main

import (
	"context"
	"errors"
	"flag"
	"os"

	"golang.org/x/term"

	"github.com/ratelab/ratelab/tui"
)

// The workbench is what `ratelab` opens on a terminal when given no command.
func init() { openWorkbench = tuiCommand }

// tuiCommand opens the interactive workbench on a scenario (the default one when none is
// given). It needs a terminal: without one it says so and points at `run`.
func tuiCommand(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("tui", flag.ContinueOnError)
	var sf scenarioFlags
	sf.register(fs)
	positional, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	sc, err := sf.load(ctx, e, fs, positional)
	if err != nil {
		return err
	}
	if !e.stdoutTTY {
		return errors.New("tui: standard output is not a terminal (`ratelab run` prints a table)")
	}
	in := e.stdin
	if f, ok := in.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		in = nil // keys come from the terminal itself (/dev/tty)
	}
	return tui.Run(ctx, sc, in, e.stdout)
}
