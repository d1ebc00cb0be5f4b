package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"golang.org/x/term"

	"github.com/ratelab/ratelab/internal/outfile"
	"github.com/ratelab/ratelab/limiters"
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
	record := fs.String("record", "", "play the scenario headless from start to end and write the screen as an asciicast v2 `FILE` (asciinema plays it; - is standard output), the same bytes on every run")
	size := fs.String("size", "100x30", "the recorded screen's `SIZE`, COLSxROWS, with --record (at least 80x24)")
	positional, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	sc, err := sf.load(ctx, e, fs, positional)
	if err != nil {
		return err
	}
	if *record != "" {
		if err := outfile.Check(ctx, outfile.Output{Flag: "--record", Path: *record}); err != nil {
			return err
		}
		var cols, rows int
		if n, err := fmt.Sscanf(*size, "%dx%d", &cols, &rows); n != 2 || err != nil || fmt.Sprintf("%dx%d", cols, rows) != *size {
			return usageErrorf("--size %s: not COLSxROWS, e.g. 100x30", *size)
		}
		if cols < 80 || rows < 24 || cols > 1000 || rows > 1000 {
			return usageErrorf("--size %s: the workbench needs at least 80x24 (and at most 1000x1000)", *size)
		}
		if *record == "-" {
			return tui.Record(ctx, sc, cols, rows, e.stdout)
		}
		o, err := outfile.Create(ctx, *record)
		if err != nil {
			return fmt.Errorf("--record %w", err)
		}
		defer o.Abort()
		if err := tui.Record(ctx, sc, cols, rows, o); err != nil {
			return err
		}
		if err := o.Commit(); err != nil {
			return fmt.Errorf("--record %w", err)
		}
		fmt.Fprintf(e.stderr, "recorded %s (%s of virtual time) to %s\n", sc.Name, limiters.FormatDuration(sc.Horizon), *record)
		return nil
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
