package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A --chart FILE's name and bytes agree: .png (any case) or no extension is PNG, .svg is SVG,
// and any other extension (fit --chart out.gif wrote PNG bytes) is refused before the run,
// leaving no file.
func TestChartExtensionIsTheFormat(t *testing.T) {
	for _, cmd := range [][]string{{"fit", "--in", gatewayTrace, "--steps", "4"}, {"translate", "rate=100/1s,burst=20"}} {
		dir := t.TempDir()
		for _, bad := range []string{"out.gif", "out.jpg", "out.PDF", "out.png.txt"} {
			path := filepath.Join(dir, bad)
			_, _, err := ratelab(t, append(cmd, "--chart", path)...)
			require.Error(t, err, "%v --chart %s", cmd, bad)
			assert.True(t, isUsage(err), "%v: %v", cmd, err)
			assert.Contains(t, err.Error(), "--chart "+path+": ratelab does not write "+filepath.Ext(bad)+" files; name the chart .png (PNG) or .svg (SVG)")
			assert.NoFileExists(t, path)
		}
		for name, magic := range map[string]string{"a.PNG": "\x89PNG\r\n", "plain": "\x89PNG\r\n", "b.SVG": "<svg"} {
			path := filepath.Join(dir, name)
			_, _, err := ratelab(t, append(cmd, "--chart", path)...)
			require.NoError(t, err, "%v --chart %s", cmd, name)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.True(t, bytes.HasPrefix(b, []byte(magic)) || bytes.Contains(b[:min(len(b), 200)], []byte(magic)), "%v --chart %s: %.20q", cmd, name, b)
		}
	}
}

// show of a file whose lane name is not UTF-8, or of a file whose own name is not (and which
// names the scenario), says so in ratelab's words at the place, where it printed yaml's
// "invalid leading UTF-8 octet" at column 1, or "yaml: cannot marshal invalid UTF-8 data".
func TestShowRefusesTextThatIsNotUTF8(t *testing.T) {
	dir := t.TempDir()
	body := "horizon: 1s\nsources: [{kind: constant, rate: 5}]\nlimiters:\n  - {name: \"a\xffb\", spec: concurrency:max=1}\n"
	path := filepath.Join(dir, "lane.yaml")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	_, _, err := ratelab(t, "show", path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+":4:14: byte 0xff is not UTF-8 text, which a scenario file must be")
	assert.NotContains(t, err.Error(), "octet")

	path = filepath.Join(dir, "a\xffb.yaml")
	require.NoError(t, os.WriteFile(path, []byte("horizon: 1s\nsources: [{kind: constant, rate: 5}]\nlimiters: [concurrency:max=1]\n"), 0o644))
	_, _, err = ratelab(t, "show", path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `name "a\xffb" is not UTF-8 text, which a scenario file must be (a file without a name: is named after the file: add a name: line)`)
	assert.NotContains(t, err.Error(), "marshal")
}

// sweep merge of a real sweep's shards refuses a shard whose rows were edited, naming the
// shard and the line, and draws no figure: a parameter changed to 999 or NaN, a spec replaced
// by shell text, a changed scenario column, a NUL byte.
func TestSweepMergeRefusesEditedRows(t *testing.T) {
	dir := t.TempDir()
	base := []string{"sweep", "steady", "--horizon", "1s", "--vary", "token-bucket.capacity=1..50", "--steps", "4"}
	var shards []string
	for _, shard := range []string{"0/2", "1/2"} {
		out, _, err := ratelab(t, append(base, "--shard", shard)...)
		require.NoError(t, err)
		path := filepath.Join(dir, "shard-"+shard[:1]+".csv")
		require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
		shards = append(shards, path)
	}
	_, _, err := ratelab(t, "sweep", "merge", shards[0], shards[1])
	require.NoError(t, err)
	original, err := os.ReadFile(shards[1])
	require.NoError(t, err)
	lines := strings.Split(string(original), "\n")
	require.Contains(t, lines[2], `,token-bucket.capacity,50,,,"token-bucket:capacity=50,rate=100/1s",`)
	for _, c := range []struct{ from, to, want string }{
		{",token-bucket.capacity,50,", ",token-bucket.capacity,999,", ":3:"},
		{",token-bucket.capacity,50,", ",token-bucket.capacity,NaN,", `:3:103: x: "NaN" is not a value of token-bucket.capacity`},
		{"token-bucket:capacity=50,rate=100/1s", "$(touch pwned)", ": spec: not a limiter stack"},
		{",steady,", ",other,", `cell 3's scenario is "other"`},
		{",steady,", ",ste\x00ady,", `scenario: "ste\x00ady" holds the control character U+0000`},
	} {
		edited := slices.Clone(lines)
		edited[2] = strings.Replace(edited[2], c.from, c.to, 1)
		require.NotEqual(t, lines[2], edited[2], c.to)
		require.NoError(t, os.WriteFile(shards[1], []byte(strings.Join(edited, "\n")), 0o644))
		figures := filepath.Join(dir, "figures")
		_, _, err := ratelab(t, "sweep", "merge", shards[0], shards[1], "--out", figures)
		require.Error(t, err, c.to)
		assert.Contains(t, err.Error(), shards[1]+":3", c.to)
		assert.Contains(t, err.Error(), c.want, c.to)
		entries, _ := os.ReadDir(figures)
		assert.Empty(t, entries, "no figure drawn: %s", c.to)
	}
}

// translate has run's and fit's budget: a probe that would keep 5.7 GiB (burst 1000000 at
// one permit a ns: 13M requests, which ran 275s to 5.6 GB) and a scenario of a million hours
// are refused before anything is made, with the estimate and the flag that raises the
// budget; --max-events and --max-memory parse as run's do.
func TestTranslateHasABudget(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"translate", "rate=1/1ns,burst=1000000"},
			"translate rate=1/1ns,burst=1000000 on the probe (13M requests for a burst of 1000000): about 5.7 GiB of memory (records, reasons and arrivals in flight 4.8 GiB, the probe's arrivals 397 MiB, window meters 320 MiB), over the budget of 2 GiB: raise it with --max-memory 5.7GiB"},
		{[]string{"translate", "rate=100/1s,burst=20", "--scenario", "poisson", "--horizon", "1000000h"},
			"translate rate=100/1s,burst=20 on poisson: about 14.5T events (342G requests through 17 lanes; "},
		{[]string{"translate", "rate=100/1s,burst=20", "--max-events", "1000"}, "over the budget of 1k events: shorten the horizon, or raise the budget with --max-events 20k"},
		{[]string{"translate", "rate=100/1s,burst=20", "--max-events", "0.5"}, "--max-events 0.5: less than one event"},
	} {
		began := time.Now()
		_, _, err := ratelab(t, c.args...)
		require.Error(t, err, "%v", c.args)
		assert.Contains(t, err.Error(), c.want, "%v", c.args)
		assert.Less(t, time.Since(began), 5*time.Second, "refused up front: %v", c.args)
	}
	// Within the budget, as before; and 0 lifts a limit.
	_, _, err := ratelab(t, "translate", "rate=100/1s,burst=20", "--max-events", "0", "--max-memory", "64MiB")
	require.NoError(t, err)
}
