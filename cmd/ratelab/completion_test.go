package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What may come next, by position: commands; a command's flags; a flag's values (a
// format's choices, chart names, limiter kinds then their fields, files); scenario names
// (and files) where a scenario goes; guarantee IDs.
func TestCompletions(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		line []string // the words before the current one, then the current one
		want []string // exactly these, in order
		has  []string // at least these
	}{
		{line: []string{"re"}, want: []string{"replay"}},
		{line: []string{"-"}, want: []string{"--help", "--version"}},
		{line: []string{"run", "--ho"}, want: []string{"--horizon"}},
		{line: []string{"run", "--"}, has: []string{"--assert", "--bins", "--format", "--horizon", "--limiter", "--seed", "--help"}},
		{line: []string{"run", "--format", ""}, want: []string{"table", "json", "csv"}},
		{line: []string{"run", "--format=j"}, want: []string{"--format=json"}},
		{line: []string{"plot", "--format", ""}, want: []string{"png", "svg", "gif"}},
		{line: []string{"plot", "--chart", "ti"}, want: []string{"timeline"}},
		{line: []string{"run", "--limiter", "leaky"}, want: []string{"leaky-bucket:"}},
		{line: []string{"run", "--limiter", "token-bucket:"}, want: []string{"token-bucket:capacity=", "token-bucket:rate="}},
		{line: []string{"run", "--limiter", "token-bucket:capacity=3,"}, want: []string{"token-bucket:capacity=3,rate="}},
		{line: []string{"run", "--limiter", "token-bucket:capacity=3,rate=1/1s+conc"}, want: []string{"token-bucket:capacity=3,rate=1/1s+concurrency:"}},
		{line: []string{"run", "--limiter", "cap=fixed"}, want: []string{"cap=fixed-window:"}},
		{line: []string{"run", "bou"}, want: []string{filesDirective, "boundary-attack"}},
		{line: []string{"run", "steady", ""}, want: nil}, // one scenario at most
		{line: []string{"run", "--seed", "3", "cold"}, want: []string{filesDirective, "cold-start"}},
		{line: []string{"replay", "--in", ""}, want: []string{filesDirective, "-"}},
		{line: []string{"fit", "--chart", ""}, want: []string{filesDirective, "-"}},
		{line: []string{"guarantees", ""}, want: []string{"run"}},
		{line: []string{"guarantees", "run", "token-bucket-b"}, want: []string{"token-bucket-burst"}},
		{line: []string{"help", "com"}, want: []string{"completion"}},
		{line: []string{"completion", ""}, want: []string{"bash", "zsh", "fish"}},
		{line: []string{"nosuch", ""}, want: nil},
	} {
		got := completions(ctx, tc.line[:len(tc.line)-1], tc.line[len(tc.line)-1])
		if tc.has != nil {
			for _, w := range tc.has {
				assert.Contains(t, got, w, "%q", tc.line)
			}
			continue
		}
		assert.Equal(t, tc.want, got, "%q", tc.line)
	}
}

func TestCompletionCommand(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		out, _, err := ratelab(t, "completion", shell)
		require.NoError(t, err)
		assert.Contains(t, out, "__complete", shell)
	}
	_, _, err := ratelab(t, "completion", "zhs")
	require.Error(t, err)
	assert.True(t, isUsage(err))
	assert.Equal(t, `completion: unknown shell "zhs" (did you mean zsh?) (shells: bash, zsh, fish)`, err.Error())
	_, _, err = ratelab(t, "completion")
	assert.True(t, isUsage(err))
}

// shellFor returns the shell's path, skipping the test when it is missing (CI installs bash,
// zsh and fish, and there it must run).
func shellFor(t *testing.T, name string) string {
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (.ci/run installs it)", name)
		}
		t.Skipf("%s is not installed", name)
	}
	return path
}

// completionEnv is a folder holding the real binary as "ratelab" (first on PATH) and the
// shell's script, and a scenario file to see files offered.
func completionEnv(t *testing.T, shell string) (dir string, env []string) {
	dir = t.TempDir()
	bin := ratelabBinary(t)
	require.NoError(t, os.Symlink(bin, filepath.Join(dir, "ratelab")))
	out, _, err := ratelab(t, "completion", shell)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "script"), []byte(out), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bursty.yaml"), []byte("horizon: 1s\n"), 0o644))
	return dir, append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "HOME="+dir)
}

// bash: the script's function fills COMPREPLY for a line, as bash calls it on <Tab>.
func TestCompletionInBash(t *testing.T) {
	bash := shellFor(t, "bash")
	dir, env := completionEnv(t, "bash")
	complete := func(line string) []string {
		script := `source ./script
COMP_LINE=$1; COMP_POINT=${#COMP_LINE}
_ratelab ratelab
printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.Command(bash, "-c", script, "bash", line)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.Fields(string(out))
	}
	assert.Equal(t, []string{"replay"}, complete("ratelab rep"))
	assert.Equal(t, []string{"--horizon"}, complete("ratelab run --hor"))
	// bash has taken "token-bucket:" as words already: it is offered the rest.
	assert.Equal(t, []string{"capacity=", "rate="}, complete("ratelab run --limiter token-bucket:"))
	assert.Equal(t, []string{"bursty.yaml", "burst-after-idle"}, complete("ratelab run burst"))
	assert.Equal(t, []string{"json"}, complete("ratelab run --format js"))
}

// zsh: the function run with compadd and _files standing in for the completion system's,
// printing what would be offered.
func TestCompletionInZsh(t *testing.T) {
	zsh := shellFor(t, "zsh")
	dir, env := completionEnv(t, "zsh")
	check := exec.Command(zsh, "-n", filepath.Join(dir, "script"))
	out, err := check.CombinedOutput()
	require.NoError(t, err, "zsh -n: %s", out)
	complete := func(words ...string) string {
		script := `compadd() { local s=' '; while [[ $1 == -* && $1 != -- ]]; do [[ $1 == -S ]] && { s=$2; shift }; shift; done; shift; for w in "$@"; do print -r -- "$w|$s|"; done }
_files() { print -r -- FILES }
source ./script
words=("$@"); CURRENT=$#
_ratelab`
		cmd := exec.Command(zsh, append([]string{"-f", "-c", script, "zsh"}, words...)...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	assert.Equal(t, "replay| |\n", complete("ratelab", "rep"))
	assert.Equal(t, "token-bucket:capacity=||\ntoken-bucket:rate=||\n", complete("ratelab", "run", "--limiter", "token-bucket:"),
		"a field takes no space after its =")
	assert.Equal(t, "FILES\nburst-after-idle| |\n", complete("ratelab", "run", "burst"))
}

// fish: complete -C asks fish itself what it would offer for a command line.
func TestCompletionInFish(t *testing.T) {
	fish := shellFor(t, "fish")
	dir, env := completionEnv(t, "fish")
	complete := func(line string) []string {
		cmd := exec.Command(fish, "--no-config", "-c", "source ./script; complete -C $argv[1]", line)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			got = append(got, strings.SplitN(l, "\t", 2)[0])
		}
		return got
	}
	assert.Equal(t, []string{"replay"}, complete("ratelab rep"))
	assert.Equal(t, []string{"token-bucket:capacity=", "token-bucket:rate="}, complete("ratelab run --limiter token-bucket:"))
	assert.Equal(t, []string{"bursty.yaml", "burst-after-idle"}, complete("ratelab run burst"))
}
