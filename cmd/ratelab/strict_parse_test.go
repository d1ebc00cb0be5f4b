package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --seed is read as a scenario file's seed: is, decimal digits only, by every command that
// takes it: 0x1f was 31 here (the flag package's base prefixes) and refused in a file, 010
// was 8 here and 10 in a file. Now both refuse them, with the same words.
func TestSeedIsDecimalEverywhere(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.csv")
	require.NoError(t, os.WriteFile(trace, []byte("t_ns\n0\n1000000\n"), 0o644))
	commands := [][]string{
		{"run", "steady", "--horizon", "10ms"},
		{"plot", "steady", "--horizon", "10ms", "--out", filepath.Join(dir, "plots")},
		{"sweep", "steady", "--horizon", "10ms", "--vary", "token-bucket.capacity=1..3", "--steps", "2"},
		{"fit", "steady", "--horizon", "10ms", "--steps", "2"},
		{"translate", "rate=100/1s,burst=10", "--scenario", "steady", "--horizon", "10ms"},
	}
	for _, args := range commands {
		for seed, want := range map[string]string{
			"0x1f":  "--seed 0x1f: a seed is written in decimal digits: 0x1f is hex for 31, so write 31",
			"010":   "--seed 010: a seed is written in decimal digits without a leading 0: 010 is 10 in decimal but 8 in octal, so write 10 (or 8)",
			"1_000": "--seed 1_000: a seed is written in decimal digits without _: write 1000",
			"-1":    "--seed -1: must be 0 or more",
		} {
			_, _, err := ratelab(t, append(append([]string(nil), args...), "--seed", seed)...)
			require.Error(t, err, "%v --seed %s", args, seed)
			assert.True(t, isUsage(err), "%v", args)
			assert.Equal(t, want, err.Error(), "%v", args)
		}
	}
	out, _, err := ratelab(t, "run", "steady", "--horizon", "10ms", "--seed", "31")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "steady — seed 31, 10ms of virtual time\n"), out)

	// The scenario file says the same of its seed:.
	file := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(file, []byte("seed: 0x1f\nhorizon: 1s\nsources: [{kind: constant, rate: 5}]\nlimiters: [concurrency:max=1]\n"), 0o644))
	_, _, err = ratelab(t, "run", file)
	require.Error(t, err)
	assert.Equal(t, file+`:1:7: seed: "0x1f": a seed is written in decimal digits: 0x1f is hex for 31, so write 31`, err.Error())
}

// A spec with an empty field (a trailing comma, two in a row) or an empty stage (a trailing
// +) is refused by every --limiter as a scenario file refuses it (scenarios' tests), where
// before ParseSpec skipped it and replay's own split said: unknown kind "". keys(…) is a
// keyed stage, not a lane's name.
func TestLimiterSpecIsStrictEverywhere(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.csv")
	require.NoError(t, os.WriteFile(trace, []byte("t_ns\n0\n1000000\n"), 0o644))
	commands := [][]string{
		{"run", "steady", "--horizon", "10ms", "--limiter"},
		{"sweep", "steady", "--horizon", "10ms", "--vary", "token-bucket.capacity=1..3", "--steps", "2", "--limiter"},
		{"replay", "--in", trace, "--limiter"},
	}
	for _, args := range commands {
		for spec, want := range map[string]string{
			"token-bucket:capacity=10,rate=100/1s,":              `limiter spec "token-bucket:capacity=10,rate=100/1s,": an empty field at the end (a trailing comma): fields are FIELD=VALUE joined by single commas`,
			"token-bucket:capacity=10,,rate=100/1s":              `limiter spec "token-bucket:capacity=10,,rate=100/1s": an empty field after capacity=10 (two commas in a row): fields are FIELD=VALUE joined by single commas`,
			"token-bucket:capacity=10,rate=100/1s+":              `limiter spec "token-bucket:capacity=10,rate=100/1s+": an empty stage at the end (a trailing +): a stack is specs joined by single +`,
			"keys(max=10,):token-bucket:capacity=10,rate=100/1s": `limiter spec "keys(max=10,)": an empty field at the end (a trailing comma): fields are FIELD=VALUE joined by single commas`,
		} {
			if args[0] == "replay" && strings.HasPrefix(spec, "keys(") {
				continue // replay runs no keys
			}
			_, _, err := ratelab(t, append(append([]string(nil), args...), spec)...)
			require.Error(t, err, "%v %s", args, spec)
			assert.True(t, isUsage(err), "%v %s: %v", args, spec, err)
			assert.Contains(t, err.Error(), want, "%v", args)
		}
	}
	out, _, err := ratelab(t, "run", "noisy-neighbour", "--horizon", "1s", "--limiter", "keys(max=1000):token-bucket:capacity=20,rate=10/1s")
	require.NoError(t, err)
	assert.Contains(t, out, "keys(max=1000,evict=lru):token-bucket:capacity=20,rate=10/1s")
}
