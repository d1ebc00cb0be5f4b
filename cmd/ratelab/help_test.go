package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flagsOf is the flag set a command parses, as it reports it when asked for help.
func flagsOf(t *testing.T, c command) *flag.FlagSet {
	t.Helper()
	err := c.run(context.Background(), &env{stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}, []string{"-h"})
	var h *helpRequested
	require.True(t, errors.As(err, &h), "%s -h: %v", c.name, err)
	return h.fs
}

// `ratelab SUB -h`, `SUB --help` and `help SUB` print the same usage, exit 0, and list every
// flag of SUB with its meaning and its default.
func TestEveryCommandExplainsItselfAndEveryFlag(t *testing.T) {
	for _, c := range commands {
		if c.run == nil {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			var outs []string
			for _, args := range [][]string{{c.name, "-h"}, {c.name, "--help"}, {"help", c.name}, {c.name, "x", "--help", "--nonsense"}} {
				out, stderr, err := ratelab(t, args...)
				require.NoError(t, err, "%v: help is not an error", args)
				assert.Empty(t, stderr)
				outs = append(outs, out)
			}
			for _, o := range outs[1:] {
				assert.Equal(t, outs[0], o)
			}
			help := outs[0]
			assert.True(t, strings.HasPrefix(help, "Usage: ratelab "+c.name), help)
			assert.Contains(t, help, "-h, --help")
			flagsOf(t, c).VisitAll(func(f *flag.Flag) {
				value := ` [A-Z]+` // a switch (--timing) shows none, and is off unless given
				if isBool(f) {
					value = ``
				}
				m := regexp.MustCompile(`(?m)^  --` + f.Name + value + ` +(.*(\n {6,}.*)*)`).FindStringSubmatch(help)
				if !assert.NotNil(t, m, "--%s is listed:\n%s", f.Name, help) {
					return
				}
				meaning := strings.Join(strings.Fields(m[1]), " ")
				if !isBool(f) {
					assert.Regexp(t, `default|required`, meaning, "--%s says its default", f.Name)
				}
				_, usage := splitUsage(f.Usage)
				assert.Contains(t, meaning, strings.Join(strings.Fields(usage), " "), "--%s says what it means", f.Name)
			})
			for _, line := range strings.Split(help, "\n") {
				assert.LessOrEqual(t, len([]rune(line)), helpWidth+20, "help lines stay readable: %q", line)
			}
		})
	}
}

func TestRunHelpNamesItsFlagsAndDefaults(t *testing.T) {
	out, _, err := ratelab(t, "run", "--help")
	require.NoError(t, err)
	flat := strings.Join(strings.Fields(out), " ") // a meaning wraps where the column ends
	for _, want := range []string{"Usage: ratelab run [SCENARIO | FILE | -] [flags]", "--format FORMAT", "(default table)",
		"--horizon DURATION", "--limiter SPEC", "NAME=SPEC", "--seed N", "--bins N", "1000)", "--redis ADDR"} {
		assert.Contains(t, flat, want)
	}
}

func TestGlobalHelp(t *testing.T) {
	var outs []string
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"help", "help"}} {
		out, _, err := ratelab(t, args...)
		require.NoError(t, err, "%v", args)
		outs = append(outs, out)
	}
	for _, o := range outs[1:] {
		assert.Equal(t, outs[0], o)
	}
	for _, c := range commands {
		assert.Contains(t, outs[0], "ratelab "+c.name)
	}
	assert.Contains(t, outs[0], "ratelab COMMAND -h")
	_, _, err := ratelab(t, "help", "rnu")
	require.Error(t, err)
	assert.True(t, isUsage(err))
	assert.Contains(t, err.Error(), "did you mean run?")
}

func TestVersion(t *testing.T) {
	out, _, err := ratelab(t, "--version")
	require.NoError(t, err)
	other, _, err := ratelab(t, "version")
	require.NoError(t, err)
	assert.Equal(t, out, other)
	// A test binary records no module version: it says so rather than making one up.
	assert.Regexp(t, `^ratelab \(devel\)(, commit [0-9a-f]{12}( \(modified\))?)?, go1\.\S+\n$`, out)
	help, _, err := ratelab(t, "version", "-h")
	require.NoError(t, err)
	assert.Contains(t, help, "Usage: ratelab version")
}

// The built binary reports the version the build info records, as `go version -m` reads it.
func TestBinaryVersionIsTheBuildInfos(t *testing.T) {
	bin := ratelabBinary(t)
	out, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	info, err := exec.Command("go", "version", "-m", bin).Output()
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s+mod\s+github.com/ratelab/ratelab\s+(\S+)`).FindSubmatch(info)
	require.NotNil(t, m, "%s", info)
	assert.True(t, strings.HasPrefix(string(out), "ratelab "+string(m[1])), "%s vs %s", out, m[1])
}
