package main

import (
	"bytes"
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
	var piped bytes.Buffer
	tw := tabwriter.NewWriter(&piped, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIOS\t")
	var scenarioRows, kindRows []columnRow
	for _, sc := range scenarios.All() {
		first, _, _ := strings.Cut(sc.Description, ". ")
		fmt.Fprintf(tw, "  %s\t%s.\n", sc.Name, strings.TrimSuffix(first, "."))
		scenarioRows = append(scenarioRows, columnRow{left: sc.Name, right: strings.TrimSuffix(first, ".") + "."})
	}
	fmt.Fprintln(tw, "\t")
	fmt.Fprintln(tw, "LIMITERS\t")
	for _, k := range limiters.Kinds() {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", k.Kind, k.Summary, k.Example)
		kindRows = append(kindRows, columnRow{left: string(k.Kind), right: k.Summary, more: []string{k.Example}})
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if e.width <= 0 || fits(piped.String(), e.width) {
		_, err := e.stdout.Write(piped.Bytes())
		return err
	}
	// A terminal too narrow for the table: the descriptions wrapped beside the names, each
	// kind's example spec under its summary, both lists' texts in one column.
	name := 0
	for _, r := range append(scenarioRows, kindRows...) {
		name = max(name, len(r.left))
	}
	for _, rows := range [][]columnRow{scenarioRows, kindRows} {
		for i := range rows {
			rows[i].left += strings.Repeat(" ", name-len(rows[i].left))
		}
	}
	_, err = fmt.Fprintf(e.stdout, "SCENARIOS\n%s\nLIMITERS\n%s", columns(scenarioRows, 2, e.width), columns(kindRows, 2, e.width))
	return err
}
