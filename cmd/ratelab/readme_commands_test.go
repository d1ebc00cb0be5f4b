package main

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/internal/redistest"
)

// readmeCommands is every command the README and the guides in docs/ show: each line of their
// sh blocks (a line ending in \ joined to the next) and each inline `go run ./cmd/ratelab …`.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	var text strings.Builder
	for _, path := range docFiles(t) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		text.Write(data)
		text.WriteString("\n")
	}
	var cmds []string
	inBlock, pending := false, ""
	for _, line := range strings.Split(text.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			inBlock = true
			continue
		case strings.HasPrefix(line, "```"):
			inBlock = false
			continue
		}
		if inBlock {
			if c, ok := strings.CutSuffix(line, "\\"); ok {
				pending += c
				continue
			}
			if cmd := strings.TrimSpace(pending + line); cmd != "" && !strings.HasPrefix(cmd, "#") {
				cmds = append(cmds, cmd)
			}
			pending = ""
			continue
		}
		for _, m := range regexp.MustCompile("`(go run \\./cmd/ratelab[^`]*)`").FindAllStringSubmatch(line, -1) {
			cmds = append(cmds, m[1])
		}
	}
	return cmds
}

// Every command in the README runs as written, from the top of a copy of the repository:
// `go run ./cmd/ratelab …` with the binary, exit 0 and no error line (a --redis command
// against a real redis-server of its own). The test and benchmark commands (go test, go build)
// name packages and files that exist; the ones that need machines this test has not (GNU
// parallel over ssh, a Kubernetes cluster, the TUI's terminal: the tmux test drives it) are
// only listed.
func TestReadmeCommandsRun(t *testing.T) {
	bin := ratelabBinary(t)
	root := t.TempDir()
	for _, dir := range []string{"scenarios", "docs"} {
		copyTree(t, filepath.Join("../..", dir), filepath.Join(root, dir))
	}
	// The scenario-file example, saved where the README says.
	block := readmeBlock(t, "scenario-files")
	_, rest, _ := strings.Cut(block, "```yaml\n")
	example, _, _ := strings.Cut(rest, "```")
	require.NoError(t, os.WriteFile(filepath.Join(root, "checkout.yaml"), []byte(example), 0o644))

	ran, checked, listed := 0, 0, 0
	for _, cmd := range readmeCommands(t) {
		switch {
		case strings.HasPrefix(cmd, "go run ./cmd/ratelab tui"):
			listed++
			continue
		case strings.HasPrefix(cmd, "go run ./cmd/ratelab"):
		case strings.HasPrefix(cmd, "go test"), strings.HasPrefix(cmd, "go build"):
			for _, pkg := range regexp.MustCompile(`\./[a-z/]+`).FindAllString(cmd, -1) {
				if pkg == "./..." {
					continue
				}
				_, err := os.Stat(filepath.Join("../..", pkg))
				assert.NoError(t, err, "%s: %s", cmd, pkg)
			}
			checked++
			continue
		default:
			listed++
			continue
		}
		line := strings.Replace(cmd, "go run ./cmd/ratelab", bin, 1)
		if strings.Contains(line, "--redis ") {
			if _, err := exec.LookPath("redis-server"); err != nil && os.Getenv("CI") == "" {
				t.Logf("skipped without redis-server: %s", cmd)
				continue
			}
			srv := redistest.Start(t)
			line = regexp.MustCompile(`--redis \S+`).ReplaceAllString(line, "--redis "+srv.Addr)
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		c := exec.CommandContext(ctx, "bash", "-c", line)
		c.Dir = root
		var stderr strings.Builder
		c.Stderr = &stderr
		out, err := c.Output()
		cancel()
		require.NoError(t, err, "%s\nstderr: %s", cmd, stderr.String())
		for _, l := range strings.Split(stderr.String(), "\n") {
			assert.False(t, strings.HasPrefix(l, "ratelab: "), "%s: %s", cmd, l)
		}
		_ = out
		t.Logf("%5.1fs  %s", time.Since(start).Seconds(), cmd)
		ran++
	}
	t.Logf("%d README commands run, %d checked, %d listed", ran, checked, listed)
	assert.GreaterOrEqual(t, ran, 15)
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil // the FIFO tests' leftovers, if any
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	}))
}
