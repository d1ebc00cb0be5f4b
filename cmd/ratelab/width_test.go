package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/golden"
	"github.com/ratelab/ratelab/scenarios"
)

// ratelabOnTerminal runs the CLI in-process as if standard output were a terminal width
// columns wide.
func ratelabOnTerminal(t *testing.T, width int, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, stdoutTTY: true, width: width}
	err = runEnv(context.Background(), e, args)
	return out.String(), errOut.String(), err
}

// tooWide are the lines of text wider than width (ANSI styling stripped, width in terminal
// cells), but for those that are one token too long for any line: a line may overflow only
// with its last word, a word wider than the room a line has after its indent or label (at
// most half the width), as a spec or a library's configuration line is.
func tooWide(text string, width int) []string {
	var bad []string
	for _, line := range strings.Split(ansi.Strip(text), "\n") {
		w := ansi.StringWidth(line)
		if w <= width {
			continue
		}
		fields := strings.Fields(line)
		last := fields[len(fields)-1]
		before := w - ansi.StringWidth(last)
		if strings.HasSuffix(line, last) && before <= width/2 && ansi.StringWidth(last) > width-before {
			continue // one unbreakable token, as far left as the layout puts it
		}
		bad = append(bad, line)
	}
	return bad
}

// Every command's text fits 80 columns on a terminal of 80: every line, but for a single
// token (a spec) too long for any line. The commands are run as a person would, on the
// built-ins.
func TestEveryCommandFitsEightyColumns(t *testing.T) {
	const width = 80
	commands := [][]string{
		{"list"},
		{"guarantees"},
		{"fit", "noisy-neighbour", "--clients", "95"},
		{"fit", "--in", gatewayTrace, "--refuse", "1%"},
		{"translate", "rate=100/1s,burst=20"},
		{"translate", "rate=100/1s,burst=20", "--details"},
		{"translate", "rate=10/1s,burst=3", "--scenario", "noisy-neighbour", "--horizon", "2s", "--details"},
		{"sweep", "peers", "--vary", "token-bucket.capacity=1..100", "--vary", "token-bucket.rate=50/1s..200/1s", "--steps", "12"},
		{"sweep", "peers", "--vary", "token-bucket.capacity=1..100", "--steps", "4", "--limiter", "a=token-bucket:capacity=20,rate=100/1s",
			"--limiter", "keys(max=100):token-bucket:capacity=20,rate=100/1s", "--metric", "refused%", "--metric", "p99"},
		{"run", "noisy-neighbour", "--replications", "3", "--horizon", "2s"},
		{"-h"},
	}
	for _, name := range scenarios.Names() {
		commands = append(commands, []string{"run", name}, []string{"show", name}, []string{"fit", name})
	}
	for _, c := range commands {
		if c[0] == "-h" {
			continue
		}
		if c[0] == "run" || c[0] == "fit" && c[1] == "noisy-neighbour" {
			continue
		}
		commands = append(commands, []string{"help", c[0]})
	}
	for _, g := range golden.Catalogue()[:6] {
		commands = append(commands, []string{"guarantees", "run", g.ID})
	}
	for _, args := range commands {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, _, err := ratelabOnTerminal(t, width, args...)
			require.NoError(t, err)
			require.NotEmpty(t, out)
			assert.Empty(t, tooWide(out, width), "lines wider than %d columns", width)
		})
	}
}

// The layouts for a narrow terminal are the information of the piped ones: the same words
// in the same order, only the spaces and line breaks differ.
func TestNarrowLayoutsSayWhatPipedOnesSay(t *testing.T) {
	for _, args := range [][]string{
		{"list"}, {"guarantees"}, {"fit", "burst-after-idle"}, {"run", "fleet"}, {"run", "noisy-neighbour"},
		{"guarantees", "run", "token-bucket-burst"}, {"translate", "rate=100/1s,burst=20"},
	} {
		piped, _, err := ratelab(t, args...)
		require.NoError(t, err)
		narrow, _, err := ratelabOnTerminal(t, 80, args...)
		require.NoError(t, err)
		words := func(s string) string {
			return strings.Join(strings.Fields(strings.ReplaceAll(ansi.Strip(s), "#", "")), " ")
		}
		if args[0] == "run" { // the run table's layouts differ; the sections under it do not
			section := func(s string) string {
				i := max(strings.Index(s, "\nper key ("), strings.Index(s, "\nfleet ("))
				require.Positive(t, i, s)
				return s[i:]
			}
			piped, narrow = section(piped), section(narrow)
		}
		assert.Equal(t, words(piped), words(narrow), "%v", args)
	}
}

// A wider terminal gets the wider layout: list's table whole at 320 columns, as piped; the
// guarantees' claims beside their ids at 120, on fewer lines than at 80; a 2-D sweep's grid
// of 12 columns in one piece at 100 and in two at 80.
func TestWiderTerminalsGetWiderLayouts(t *testing.T) {
	piped, _, err := ratelab(t, "list")
	require.NoError(t, err)
	wide, _, err := ratelabOnTerminal(t, 320, "list")
	require.NoError(t, err)
	assert.Equal(t, piped, wide)
	narrow, _, err := ratelabOnTerminal(t, 80, "list")
	require.NoError(t, err)
	assert.Contains(t, narrow, "\n  token-bucket       average rate, bursts up to capacity after idle (GCRA)\n                     token-bucket:capacity=3,rate=100/1s\n")

	at80, _, err := ratelabOnTerminal(t, 80, "guarantees")
	require.NoError(t, err)
	at120, _, err := ratelabOnTerminal(t, 120, "guarantees")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(at80, "ID\n    CLAIM [ALGORITHMS]\ntoken-bucket-burst\n    after idle"), at80[:100])
	assert.True(t, strings.HasPrefix(at120, "ID                           CLAIM [ALGORITHMS]\ntoken-bucket-burst           after idle"), at120[:100])
	assert.Less(t, strings.Count(at120, "\n"), strings.Count(at80, "\n"))

	sweep := []string{"sweep", "peers", "--vary", "token-bucket.capacity=1..100", "--vary", "token-bucket.rate=50/1s..200/1s", "--steps", "12"}
	grid100, _, err := ratelabOnTerminal(t, 100, sweep...)
	require.NoError(t, err)
	grid80, _, err := ratelabOnTerminal(t, 80, sweep...)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(grid100, `rate \ capacity`))
	assert.Equal(t, 2, strings.Count(grid80, `rate \ capacity`), "12 columns of 6 and the row labels' 17 need 89: two slices")
	assert.Contains(t, grid80, "           200/1s  55.9  50.0  44.1  38.3  35.4  33.5  31.5  29.6  27.6  25.7\n")
	assert.Contains(t, grid80, "  rate \\ capacity    91   100\n           200/1s  23.7  21.7\n")
}

// translate's summary fits one screen: 24 lines of at most 80 columns, every translation
// that ran on a line of its own, piped as on a terminal.
func TestTranslateSummaryFitsOneScreen(t *testing.T) {
	piped, _, err := ratelab(t, "translate", "rate=100/1s,burst=20")
	require.NoError(t, err)
	onTerminal, _, err := ratelabOnTerminal(t, 120, "translate", "rate=100/1s,burst=20")
	require.NoError(t, err)
	assert.Equal(t, piped, onTerminal, "the summary is laid out for 80 columns either way")
	lines := strings.Split(strings.TrimSuffix(piped, "\n"), "\n")
	assert.LessOrEqual(t, len(lines), 24, piped)
	assert.Empty(t, tooWide(piped, 80))
	for _, want := range []string{
		"  nginx                          exact                      179          0",
		"  uber                           closest                    460         29",
		"  guava                          closest                    331        190",
		"  sentinel                       same requests, later       179          0",
		"Not run: concurrency (cannot express); redis-cell, redis_rate, throttled (not\nmodelled).",
	} {
		assert.Contains(t, piped, want)
	}
	assert.NotContains(t, piped, "token-bucket (reference)", "the reference is in the sentence above the table")
}

// Image bytes never go to a terminal: --out - and --chart - with standard output on one are
// refused, before anything runs, with a sentence that says what to do instead; nothing is
// written. Piped, the image is written as before.
func TestImagesAreNotWrittenToATerminal(t *testing.T) {
	for _, args := range [][]string{
		{"plot", "burst-after-idle", "--chart", "rate", "--out", "-"},
		{"plot", "burst-after-idle", "--chart", "rate", "--out", "-", "--replications", "2"},
		{"fit", "burst-after-idle", "--chart", "-"},
		{"translate", "rate=100/1s,burst=20", "--chart", "-"},
	} {
		out, stderr, err := ratelabOnTerminal(t, 80, args...)
		require.Error(t, err, "%v", args)
		assert.True(t, isUsage(err), "%v: a usage error (exit 2)", args)
		flag := map[bool]string{true: "--out", false: "--chart"}[args[0] == "plot"]
		assert.Equal(t, fmt.Sprintf("%s -: refusing to write image bytes to a terminal: redirect standard output to a file (> chart.png) or give %s %s",
			flag, flag, map[bool]string{true: "DIR", false: "FILE"}[args[0] == "plot"]), err.Error())
		assert.Empty(t, out, "%v", args)
		assert.Empty(t, stderr, "%v", args)

		piped, _, err := ratelab(t, args...)
		require.NoError(t, err, "%v", args)
		assert.True(t, strings.HasPrefix(piped, "\x89PNG\r\n\x1a\n"), "%v", args)
		assert.True(t, strings.HasSuffix(piped, "IEND\xaeB`\x82"), "%v: the image alone", args)
	}
}

// wrapHanging breaks at spaces only, hangs under a table's last column, keeps a comment a
// comment, and leaves a token too long for a line whole.
func TestWrapHanging(t *testing.T) {
	line := "  50ms      req 1     admitted avail=3  bucket full, next permit due now; 1 more would put it 10ms ahead"
	assert.Equal(t, "  50ms      req 1     admitted avail=3  bucket full, next permit due now; 1 more\n"+
		"                                        would put it 10ms ahead", wrapHanging(line, 80))
	assert.Equal(t, "# claim: after idle a token bucket admits a burst of exactly capacity at once,\n#   then one permit per T",
		wrapHanging("# claim: after idle a token bucket admits a burst of exactly capacity at once, then one permit per T", 80))
	long := strings.Repeat("x", 90)
	assert.Equal(t, "  write       "+long+"\n              and more", wrapHanging("  write       "+long+" and more", 80))
	assert.Equal(t, "fits", wrapHanging("fits", 80))
	assert.Equal(t, line, wrapHanging(line, 0), "width 0: piped, unchanged")
	for _, l := range strings.Split(wrapHanging(strings.Repeat("word ", 50), 30), "\n") {
		assert.LessOrEqual(t, len(l), 30)
	}
}

// An access log's notes on standard error fit a terminal of 80 columns, each wrapped with a
// hanging indent, and say what the piped notes say, one note a line there.
func TestLogNotesFitEightyColumnsOnATerminal(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "10.0.0.%d - - [02/Dec/2026:18:03:%02d +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"curl/8.0\"\n", i%7, 19+i/10-i%3)
	}
	require.NoError(t, os.WriteFile(log, []byte(b.String()), 0o644))
	for _, args := range [][]string{
		{"replay", "--in", log, "--limiter", "token-bucket:capacity=5,rate=10/1s"},
		{"fit", "--in", log},
		{"fit", "--in", log, "--key", "remote_addr"},
	} {
		name := strings.Join(args[:1], " ")
		var out, piped, wrapped bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &piped}
		require.NoError(t, runEnv(context.Background(), e, args), name)
		e = &env{stdin: strings.NewReader(""), stdout: &out, stderr: &wrapped, stderrTTY: true, errWidth: 80}
		require.NoError(t, runEnv(context.Background(), e, args), name)
		require.Contains(t, piped.String(), "out of arrival order", name)
		assert.Greater(t, len(strings.Split(wrapped.String(), "\n")), len(strings.Split(piped.String(), "\n")), name+": wrapped")
		assert.Empty(t, tooWide(wrapped.String(), 80), name+": lines wider than 80 columns")
		assert.GreaterOrEqual(t, strings.Count(piped.String(), "access.log: "), 4, name+": piped, one note a line")
		assert.Equal(t, strings.Fields(piped.String()), strings.Fields(wrapped.String()), name+": the same words")
	}
}
