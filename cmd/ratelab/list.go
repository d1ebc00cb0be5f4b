package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/scenarios"
)

func listCommand(_ context.Context, e *env, args []string) error {
	args, err := parseFlags(flag.NewFlagSet("list", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	if len(args) > 0 {
		return usageErrorf("list takes no arguments, got %s", strings.Join(args, " "))
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIOS\t")
	for _, sc := range scenarios.All() {
		first, _, _ := strings.Cut(sc.Description, ". ")
		fmt.Fprintf(tw, "  %s\t%s.\n", sc.Name, strings.TrimSuffix(first, "."))
	}
	fmt.Fprintln(tw, "\t")
	fmt.Fprintln(tw, "LIMITERS\t")
	for _, k := range limiters.Kinds() {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", k.Kind, k.Summary, k.Example)
	}
	return tw.Flush()
}
