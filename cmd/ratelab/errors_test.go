package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/scenarios"
)

// Go's raw flag errors come out in ratelab's words, naming the flag and what is wrong with
// its value; unknown names get "did you mean" and the list of what there is. Every one is a
// usage error (exit 2) of one line.
func TestUsageErrorsSayWhatIsWrong(t *testing.T) {
	runFlags := "(flags: --assert, --bins, --format, --horizon, --limiter, --max-events, --max-memory, --redis, --redis-prefix, --redis-timeout, --replications, --seed)"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--horizon", "5"}, "--horizon 5: a duration needs a unit, e.g. 5s"},
		{[]string{"run", "--horizon=1.5"}, "--horizon 1.5: a duration needs a unit, e.g. 1.5s"},
		{[]string{"run", "--horizon", "soon"}, "--horizon soon: not a duration (e.g. 250ms, 5s, 1m30s; units ns, us, ms, s, m, h)"},
		{[]string{"run", "--horizon", "-1s"}, "--horizon -1s: must be positive"},
		{[]string{"run", "--horizon"}, "--horizon needs a value (--horizon DURATION)"},
		{[]string{"run", "--seed", "-1"}, "--seed -1: must be 0 or more"},
		{[]string{"run", "--seed", "x"}, "--seed x: not a whole number"},
		{[]string{"run", "--seed", "99999999999999999999"}, "--seed 99999999999999999999: too large (at most 18446744073709551615)"},
		{[]string{"run", "--bins", "many"}, "--bins many: not a whole number"},
		{[]string{"run", "--bins", "0"}, "--bins 0: must be at least 1"},
		{[]string{"run", "--bins", ""}, `--bins "": not a whole number`},
		{[]string{"run", "--replications", "0"}, "--replications 0: must be 1 to 10000"},
		{[]string{"run", "--replications=-3"}, "--replications -3: must be 1 to 10000"},
		{[]string{"run", "--replications", "10001"}, "--replications 10001: must be 1 to 10000"},
		{[]string{"run", "--replications", "few"}, "--replications few: not a whole number"},
		{[]string{"run", "--replications", "3", "--assert", "all.refused% < 1"}, "--assert checks one run's numbers; it does not combine with --replications"},
		{[]string{"run", "--replicatons", "3"}, "run: unknown flag --replicatons (did you mean --replications?) " + runFlags},
		{[]string{"run", "--hoizon", "5s"}, "run: unknown flag --hoizon (did you mean --horizon?) " + runFlags},
		{[]string{"run", "-Seed", "5"}, "run: unknown flag --Seed (did you mean --seed?) " + runFlags},
		{[]string{"run", "--hor", "5s"}, "run: unknown flag --hor (did you mean --horizon?) " + runFlags},
		{[]string{"run", "--verbose"}, "run: unknown flag --verbose " + runFlags},
		{[]string{"list", "--all"}, "list: unknown flag --all (list takes no flags)"},
		{[]string{"plot", "--timing=", "steady"}, "--timing=: --timing is a switch: give it alone (--timing), or --timing=true or --timing=false"},
		{[]string{"plot", "--timing=yes", "steady"}, "--timing=yes: --timing is a switch: give it alone (--timing), or --timing=true or --timing=false"},
		{[]string{"run", "---seed"}, "run: ---seed is not a flag (flags are --name or --name=value; see ratelab run -h)"},
		{[]string{"run", "--format", "jsn"}, "--format jsn: not table, json or csv (did you mean json?)"},
		{[]string{"run", "--format", "XML"}, "--format XML: not table, json or csv"},
		{[]string{"plot", "--format", "SVG", "--out", "x"}, "--format SVG: not png, svg or gif (did you mean svg?)"},
		{[]string{"plot", "boundary-attack", "--chart", "rates", "--out", "x"}, "--chart rates: no such chart (did you mean rate?) (charts: timeline, rate, state, guarantee, warmup, downstream, fleet, waits, loop, limit)"},
		{[]string{"plot", "--window", "-1s", "--out", "x"}, "--window -1s: must be positive"},
		{[]string{"plot", "--replications", "0", "--out", "x"}, "--replications 0: must be 1 to 10000"},
		{[]string{"plot", "--replications", "3", "--chart", "state", "--out", "x"}, "--chart state: with --replications only the rate chart is drawn (its band is the replications' interval)"},
		{[]string{"plot", "--replications", "3", "--gallery", "x"}, "plot: --gallery draws one run of every scenario; it does not combine with --replications"},
		{[]string{"rn"}, `unknown command "rn" (did you mean run?) (commands: run, list, show, replay, fit, sweep, sweep merge, translate, plot, tui, learn, web, guarantees, completion, help, version)`},
		{[]string{"Replay"}, `unknown command "Replay" (did you mean replay?) (commands: run, list, show, replay, fit, sweep, sweep merge, translate, plot, tui, learn, web, guarantees, completion, help, version)`},
		{[]string{"--seed", "2"}, "--seed: flags go after the command, as in ratelab run --seed (commands: run, list, show, replay, fit, sweep, sweep merge, translate, plot, tui, learn, web, guarantees, completion, help, version)"},
	} {
		_, _, err := ratelab(t, tc.args...)
		require.Error(t, err, "%v", tc.args)
		assert.True(t, isUsage(err), "%v: %v is a usage error (exit 2)", tc.args, err)
		assert.Equal(t, tc.want, err.Error(), "%v", tc.args)
	}
}

// A misspelt scenario gets "did you mean" before the list of known names; case does not
// matter; a name nothing is close to gets the list alone.
func TestMisspeltScenarioSuggestsTheName(t *testing.T) {
	var names []string
	for _, sc := range scenarios.All() {
		names = append(names, sc.Name)
	}
	slices.Sort(names)
	known := "(known: " + strings.Join(names, ", ") + "; or a scenario file)"
	require.Contains(t, known, "boundary-attack, burst-after-idle, codel-overload, cold-start, diurnal, ")
	for arg, want := range map[string]string{
		"poison":          `no built-in scenario "poison" (did you mean poisson?) ` + known,
		"Poisson":         `no built-in scenario "Poisson" (did you mean poisson?) ` + known,
		"boundry-attack":  `no built-in scenario "boundry-attack" (did you mean boundary-attack?) ` + known,
		"slow-dowstream":  `no built-in scenario "slow-dowstream" (did you mean slow-downstream?) ` + known,
		"cold":            `no built-in scenario "cold" (did you mean cold-start?) ` + known,
		"everything-else": `no built-in scenario "everything-else" ` + known,
	} {
		for _, cmd := range []string{"run", "tui", "plot"} {
			args := []string{cmd, arg}
			if cmd == "plot" {
				args = append(args, "--out", t.TempDir())
			}
			_, _, err := ratelab(t, args...)
			require.Error(t, err)
			assert.True(t, isUsage(err), "%v", args)
			assert.Equal(t, want, err.Error(), "%v", args)
		}
	}
}

// Limiter kinds and fields already get "did you mean" from limiters.ParseSpec; the CLI passes
// it on, in a named lane too.
func TestMisspeltKindAndFieldSuggest(t *testing.T) {
	_, _, err := ratelab(t, "run", "--limiter", "token-bukcet:capacity=1,rate=1/1s")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did you mean token-bucket?")
	_, _, err = ratelab(t, "run", "--limiter", "fast=token-bucket:capacty=1,rate=1/1s")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did you mean capacity?")
}

func TestSuggest(t *testing.T) {
	known := []string{"run", "list", "replay", "plot", "tui", "guarantees"}
	for name, want := range map[string]string{
		"rn": "run", "rnu": "run", "RUN": "run", "lsit": "list", "guarantes": "guarantees", "guar": "guarantees",
		"p": "", "xyzzy": "", "r": "", "": "",
	} {
		assert.Equal(t, want, suggest(name, known), "%q", name)
	}
	assert.Equal(t, "", didYouMean("run", known, nil), "the name itself is no suggestion")
	assert.Equal(t, " (did you mean --seed?)", didYouMean("sed", []string{"seed", "bins"}, dashes))
}

// fit and translate read --horizon as run does: past 2^62ns is refused, naming the flag.
func TestHorizonRangeIsTheSameEverywhere(t *testing.T) {
	for _, args := range [][]string{
		{"run", "poisson", "--horizon", "1500000h"},
		{"fit", "poisson", "--horizon", "1500000h"},
		{"translate", "rate=100/1s,burst=20", "--scenario", "poisson", "--horizon", "1500000h"},
	} {
		_, _, err := ratelab(t, args...)
		require.Error(t, err, "%v", args)
		assert.True(t, isUsage(err), "%v", args)
		assert.Equal(t, "--horizon 1500000h0m0s: must be less than 2^62ns (about 146 years)", err.Error(), "%v", args)
	}
}
