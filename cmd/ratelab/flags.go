package main

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// parseFlags parses args with fs, allowing flags and positional arguments in any order
// ("run poisson --seed 2" as well as "run --seed 2 poisson"), and returns the positional ones.
// A bad flag is a usage error that names it, in ratelab's words rather than the flag
// package's; -h or --help is a *helpRequested, which run answers with the command's usage.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	failed := ""
	fs.VisitAll(func(f *flag.Flag) {
		if _, isBool := f.Value.(interface{ IsBoolFlag() bool }); !isBool {
			f.Value = &checkedValue{Value: f.Value, name: f.Name, failed: &failed}
		}
	})
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &helpRequested{fs: fs}
			}
			return nil, flagError(fs, err, failed)
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

// flagError rewrites an error of fs.Parse. failed is what checkedValue said of a bad value.
func flagError(fs *flag.FlagSet, err error, failed string) error {
	msg := err.Error()
	if strings.HasPrefix(msg, "invalid value ") && failed != "" {
		return usageErrorf("%s", failed)
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var known []string
		fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
		if len(known) == 0 {
			return usageErrorf("%s: unknown flag --%s (%s takes no flags)", fs.Name(), name, fs.Name())
		}
		return usageErrorf("%s: unknown flag --%s%s (flags: %s)", fs.Name(), name,
			didYouMean(name, known, dashes), strings.Join(mapStrings(known, dashes), ", "))
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		if f := fs.Lookup(name); f != nil {
			return usageErrorf("--%s needs a value (--%s %s)", name, name, metavar(f))
		}
		return usageErrorf("--%s needs a value", name)
	}
	if rest, ok := strings.CutPrefix(msg, "invalid boolean value "); ok { // `"x" for -timing: parse error`
		value, name, _ := strings.Cut(rest, " for -")
		name, _, _ = strings.Cut(name, ":")
		return usageErrorf("--%s=%s: --%s is a switch: give it alone (--%s), or --%s=true or --%s=false", name, strings.Trim(value, `"`), name, name, name, name)
	}
	if arg, ok := strings.CutPrefix(msg, "bad flag syntax: "); ok {
		return usageErrorf("%s: %s is not a flag (flags are --name or --name=value; see ratelab %s -h)", fs.Name(), arg, fs.Name())
	}
	return usageErrorf("%s: %s", fs.Name(), msg)
}

// checkedValue is a flag's value that keeps, when a value is refused, a sentence saying why
// in terms of the flag's type, for flagError.
type checkedValue struct {
	flag.Value
	name   string
	failed *string
}

func (c *checkedValue) Set(s string) error {
	err := c.Value.Set(s)
	if err != nil {
		*c.failed = valueProblem(c.Value, c.name, s, err)
	}
	return err
}

// valueProblem says why s is not a value of the flag called name: "--horizon 5: a duration
// needs a unit, e.g. 5s".
func valueProblem(v flag.Value, name, s string, err error) string {
	what := "--" + name + " " + quoteArg(s) + ": "
	g, ok := v.(flag.Getter)
	if !ok {
		return what + err.Error() // ratelab's own values say it themselves
	}
	switch g.Get().(type) {
	case time.Duration:
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return what + "a duration needs a unit, e.g. " + s + "s"
		}
		return what + "not a duration (e.g. 250ms, 5s, 1m30s; units ns, us, ms, s, m, h)"
	case uint, uint64:
		if strings.HasPrefix(strings.TrimSpace(s), "-") {
			return what + "must be 0 or more"
		}
		if _, err := strconv.ParseUint(s, 0, 64); errors.Is(err, strconv.ErrRange) {
			return what + "too large (at most " + strconv.FormatUint(1<<64-1, 10) + ")"
		}
		return what + "not a whole number"
	case int, int64:
		if _, err := strconv.ParseInt(s, 0, 64); errors.Is(err, strconv.ErrRange) {
			return what + "too large"
		}
		return what + "not a whole number"
	case float64:
		return what + "not a number"
	case bool:
		return what + "not true or false"
	}
	return what + err.Error()
}

// quoteArg shows an argument as the user would type it in a shell: quoted only when needed.
func quoteArg(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"'\\") {
		return strconv.Quote(s)
	}
	return s
}

// metavar is what a flag's value is called in usage: the `QUOTED` word of its usage string,
// else its type ("DURATION", "N"); "" for a switch (a bool flag), which takes no value.
func metavar(f *flag.Flag) string {
	if isBool(f) {
		return "" // a switch: --timing, or --timing=false
	}
	if name, _ := splitUsage(f.Usage); name != "" {
		return name
	}
	v := f.Value
	if c, ok := v.(*checkedValue); ok {
		v = c.Value
	}
	if g, ok := v.(flag.Getter); ok {
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

func dashes(name string) string { return "--" + name }

func mapStrings(s []string, f func(string) string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// checkChoice refuses a value of the flag called name that is not one of choices.
func checkChoice(name, value string, choices ...string) error {
	if slices.Contains(choices, value) {
		return nil
	}
	list := strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
	return usageErrorf("--%s %s: not %s%s", name, quoteArg(value), list, didYouMean(value, choices, nil))
}
