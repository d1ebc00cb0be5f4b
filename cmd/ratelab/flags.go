package main

import (
	"flag"
	"io"
	"strings"
)

// parseFlags parses args with fs, allowing flags and positional arguments in any order
// ("run poisson --seed 2" as well as "run --seed 2 poisson"), and returns the positional ones.
// A bad flag is a usage error.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			msg := err.Error()
			if rest, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
				msg = "unknown flag " + rest
			}
			return nil, usageErrorf("%s: %s", fs.Name(), msg)
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
