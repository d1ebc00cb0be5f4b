package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/ratelab/ratelab/golden"
)

// guaranteeFactory builds the limiters `guarantees run` checks; nil, the real ones. A test
// sets it to a broken variant to see the command fail.
var guaranteeFactory golden.Factory

// guaranteesCommand lists the guarantee catalogue, or runs one guarantee and prints its
// check's verdict and its golden text. A broken guarantee is a failure (exit 1).
//
//	ratelab guarantees            id, claim and algorithms of every guarantee
//	ratelab guarantees run ID     run one: the verdict, then the golden text
func guaranteesCommand(ctx context.Context, e *env, args []string) error {
	args, err := parseFlags(flag.NewFlagSet("guarantees", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		if e.width > 0 { // a terminal: the claims wrapped at its width
			rows := []columnRow{{left: "ID", right: "CLAIM [ALGORITHMS]"}}
			for _, g := range golden.Catalogue() {
				rows = append(rows, columnRow{left: g.ID, right: fmt.Sprintf("%s [%s]", g.Claim, g.AlgorithmList())})
			}
			_, err := io.WriteString(e.stdout, columns(rows, 0, e.width))
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tCLAIM [ALGORITHMS]")
		for _, g := range golden.Catalogue() { // the claims are long: the algorithms go last
			fmt.Fprintf(tw, "%s\t%s [%s]\n", g.ID, g.Claim, g.AlgorithmList())
		}
		return tw.Flush()
	}
	if args[0] != "run" {
		return usageErrorf("guarantees: unknown subcommand %q (guarantees, or guarantees run ID)", args[0])
	}
	if len(args) != 2 {
		return usageErrorf("guarantees run: exactly one guarantee id expected, got %d (see ratelab guarantees)", len(args)-1)
	}
	g, err := golden.Get(args[1])
	if err != nil {
		if errors.Is(err, golden.ErrUnknown) {
			return usageErrorf("guarantees run: %v", err)
		}
		return err
	}
	v, err := g.Run(ctx, guaranteeFactory)
	if err != nil {
		return err
	}
	w := wrapping(e) // the golden text's long lines wrapped at a terminal's width
	if v.OK() {
		fmt.Fprintf(w, "%s: ok — %s\n\n", g.ID, g.Bound)
	} else {
		fmt.Fprintf(w, "%s: FAILED\n  %s\n\n", g.ID, strings.Join(v.Failures, "\n  "))
	}
	fmt.Fprint(w, v.Text)
	if err := w.Flush(); err != nil {
		return err
	}
	return v.Err()
}
