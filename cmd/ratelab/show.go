package main

import (
	"context"
	"flag"

	"github.com/ratelab/ratelab/scenarios"
)

// showCommand prints a scenario as the YAML file it would be: a built-in to start a file of
// one's own from, or a scenario with --limiter/--seed/--horizon applied. run loads it back to
// byte-identical results.
func showCommand(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
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
	text, err := scenarios.YAML(sc)
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(text)
	return err
}
