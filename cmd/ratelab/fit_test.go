package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/fit"
	"github.com/ratelab/ratelab/limiters"
)

const gatewayTrace = "../../scenarios/traces/api-gateway.csv"

func TestFitATrace(t *testing.T) {
	out, stderr, err := ratelab(t, "fit", "--in", gatewayTrace, "--refuse", "1%")
	require.NoError(t, err)
	assert.Empty(t, stderr)
	assert.Contains(t, out, "1919 requests, 1923 permits")
	assert.Equal(t, 1, strings.Count(out, "← knee"), out)
	assert.Equal(t, 3, strings.Count(out, "admits all 1919 requests"), out)
	assert.Contains(t, out, "warning: across a boundary a fixed window admits up to 2 × 467 = 934 within 1s")
	assert.Contains(t, out, "leaky-bucket: does not apply")
	assert.Contains(t, out, "Refusing at most 1% of permits")
}

// The JSON holds every number; each spec in it parses, and the curve's σ falls with the rate.
func TestFitJSONSpecsParse(t *testing.T) {
	out, _, err := ratelab(t, "fit", "--in", gatewayTrace, "--format", "json", "--rate", "200/1s", "--refuse", "0.5%")
	require.NoError(t, err)
	var rep fit.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, "200/1s", rep.Curve[rep.Chosen].RateText)
	for i := 1; i < len(rep.Curve); i++ {
		assert.LessOrEqual(t, rep.Curve[i].Capacity, rep.Curve[i-1].Capacity)
	}
	specs := []string{rep.Relaxed.Spec}
	for _, a := range rep.Specs {
		if a.Applies {
			specs = append(specs, a.Spec)
			assert.EqualValues(t, 1919, a.Admitted, a.Spec)
		}
	}
	require.Len(t, specs, 4)
	for _, s := range specs {
		parsed, err := limiters.ParseSpec(s)
		require.NoError(t, err, s)
		assert.Equal(t, s, parsed.String())
	}
	assert.EqualValues(t, 5000, rep.Relaxed.PPM)
}

func TestFitCSVIsTheCurve(t *testing.T) {
	out, _, err := ratelab(t, "fit", "--in", gatewayTrace, "--format", "csv", "--steps", "5")
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Equal(t, "rate,per_s,interval_ns,capacity,burst,need_ns,from_ns,to_ns,permits,knee,chosen", lines[0])
	// The header, the 5 rates of the grid, and the knee, found between two of them.
	assert.Len(t, lines, 7)
	assert.Equal(t, 1, strings.Count(out, ",true,true"))
}

// A scenario is fitted by its offered traffic; the replay scenario's is the bundled trace.
func TestFitAScenario(t *testing.T) {
	fromScenario, _, err := ratelab(t, "fit", "replay", "--format", "csv")
	require.NoError(t, err)
	fromTrace, _, err := ratelab(t, "fit", "--in", gatewayTrace, "--format", "csv")
	require.NoError(t, err)
	assert.Equal(t, fromTrace, fromScenario)
	out, _, err := ratelab(t, "fit", "poisson", "--seed", "3", "--horizon", "5s")
	require.NoError(t, err)
	assert.Contains(t, out, "scenario poisson:")
}

// Standard input is kept in a temporary file while fitting, and the file is gone afterwards.
func TestFitStandardInput(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	data, err := os.ReadFile(gatewayTrace)
	require.NoError(t, err)
	out, _, err := ratelabIn(t, string(data), "fit", "--in", "-", "--steps", "5")
	require.NoError(t, err)
	assert.Contains(t, out, "standard input: 1919 requests")
	assert.Empty(t, names(t, tmp), "the temporary copy is removed")
}

func TestFitChart(t *testing.T) {
	dir := t.TempDir()
	png, svg := filepath.Join(dir, "curve.png"), filepath.Join(dir, "curve.svg")
	_, _, err := ratelab(t, "fit", "--in", gatewayTrace, "--chart", png, "--refuse", "1%")
	require.NoError(t, err)
	_, _, err = ratelab(t, "fit", "--in", gatewayTrace, "--chart", svg)
	require.NoError(t, err)
	b, err := os.ReadFile(png)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(b, []byte("\x89PNG\r\n")))
	s, err := os.ReadFile(svg)
	require.NoError(t, err)
	assert.Contains(t, string(s), "<svg")
	assert.Contains(t, string(s), "knee")
	out, _, err := ratelab(t, "fit", "--in", gatewayTrace, "--chart", "-")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "\x89PNG\r\n"), "--chart - writes only the image")
}

func TestFitErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte("t_ns,permits\n1,1\n2,0\n"), 0o644))
	for _, c := range []struct {
		args  []string
		want  string
		usage bool
	}{
		{[]string{"fit"}, "--in TRACE.csv or a SCENARIO is required", true},
		{[]string{"fit", "--in", gatewayTrace, "poisson"}, "not both", true},
		{[]string{"fit", "--in", gatewayTrace, "--refuse", "x%"}, "--refuse x%: not a percentage", true},
		{[]string{"fit", "--in", gatewayTrace, "--refuse", "101%"}, "at most 100%", true},
		{[]string{"fit", "--in", gatewayTrace, "--refuse", "1e-300%"}, "--refuse 1e-300%: more than 0% but less than 0.0001%: a percentage from 0% to 100% in steps of 0.0001%", true},
		{[]string{"fit", "--in", gatewayTrace, "--rate", "100"}, "--rate 100: expected permits/window", true},
		{[]string{"fit", "--in", gatewayTrace, "--seed", "2"}, "apply to a SCENARIO", true},
		{[]string{"fit", "--in", gatewayTrace, "--steps", "1"}, "--steps 1: must be between 2 and 1000", true},
		{[]string{"fit", "--in", gatewayTrace, "--format", "yaml"}, "--format yaml", true},
		{[]string{"fit", "pioson"}, "did you mean poisson?", true},
		{[]string{"fit", "--in", bad}, bad + `: line 3: permits "0" is not a whole number >= 1`, false},
		{[]string{"fit", "--in", filepath.Join(dir, "missing.csv")}, "missing.csv: no such file", false},
	} {
		_, _, err := ratelab(t, c.args...)
		require.Error(t, err, "%v", c.args)
		assert.Contains(t, err.Error(), c.want, "%v", c.args)
		assert.Equal(t, c.usage, isUsage(err), "%v: %v", c.args, err)
	}
}

func TestParsePercent(t *testing.T) {
	for text, want := range map[string]int64{"1%": 10000, "0.5%": 5000, "0.0001%": 1, "100%": 1e6, "2": 20000, "0%": 0, ".25%": 2500,
		"1e-3%": 10, "1E-4%": 1, "2.5e1%": 250000, "1e2%": 1e6, "0.00010000%": 1, "0e999999999999%": 0, "1000e-3%": 10000, "+3%": 30000, "007%": 70000, "1.%": 10000} {
		got, err := parsePercent(text)
		require.NoError(t, err, text)
		assert.Equal(t, want, got, text)
	}
	for text, want := range map[string]string{
		"": "not a percentage", "%": "not a percentage", "abc": "not a percentage", "1.-5%": "not a percentage", "1e%": "not a percentage", "NaN%": "not a percentage",
		"-1%": "negative", "1.00001%": "finer than 0.0001%", "100.01%": "at most 100%", "1e3%": "at most 100%", "1e999999999999%": "at most 100%",
		"1e-300%":  "more than 0% but less than 0.0001%: a percentage from 0% to 100%",
		"0.00001%": "more than 0% but less than 0.0001%", "1e-99999999999999999999%": "more than 0% but less than 0.0001%",
	} {
		_, err := parsePercent(text)
		if assert.Error(t, err, text) {
			assert.Contains(t, err.Error(), want, text)
			assert.Contains(t, err.Error(), "a percentage from 0% to 100% in steps of 0.0001% (one permit in a million) is allowed", text)
		}
	}
}
