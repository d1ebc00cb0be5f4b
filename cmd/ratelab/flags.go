package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"time"
)

// parseFlags parses args with fs, allowing flags and positional arguments in any order
// ("run poisson --seed 2" as well as "run --seed 2 poisson"), and returns the positional ones.
// A bad flag is a usage error; -h or --help is a *helpRequested, which run answers with the
// command's usage.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &helpRequested{fs: fs}
			}
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

// helpRequested is -h or --help: not a mistake, so run prints the usage and exits 0.
type helpRequested struct{ fs *flag.FlagSet }

func (h *helpRequested) Error() string { return h.fs.Name() + ": help requested" }

// metavar is what a flag's value is called in usage: the `QUOTED` word of its usage string,
// else its type ("DURATION", "N").
func metavar(f *flag.Flag) string {
	if name, _ := splitUsage(f.Usage); name != "" {
		return name
	}
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case time.Duration:
			return "DURATION"
		case int, int64, uint, uint64:
			return "N"
		case float64:
			return "X"
		}
	}
	return "VALUE"
}

// splitUsage reads a flag's usage string as flag.UnquoteUsage does: the first `quoted` word
// names the value, and the text is the usage without the back quotes.
func splitUsage(usage string) (name, text string) {
	i := strings.IndexByte(usage, '`')
	if i < 0 {
		return "", usage
	}
	j := strings.IndexByte(usage[i+1:], '`')
	if j < 0 {
		return "", usage
	}
	name = usage[i+1 : i+1+j]
	return name, usage[:i] + name + usage[i+1+j+1:]
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
