package tui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/scenarios"
)

func record(t *testing.T, name string, w, h int) []byte {
	t.Helper()
	sc, err := scenarios.Get(name)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, Record(context.Background(), sc, w, h, &out))
	return out.Bytes()
}

// A recording is asciicast v2: a header, then [time, "o", data] events at non-decreasing
// virtual-paced times, 50ms apart or more; the same bytes every time.
func TestRecordIsAsciicastAndTheSameEveryTime(t *testing.T) {
	cast := record(t, "burst-after-idle", 100, 30)
	require.Equal(t, cast, record(t, "burst-after-idle", 100, 30), "byte-identical across runs")
	sc := bufio.NewScanner(bytes.NewReader(cast))
	sc.Buffer(nil, 1<<20)
	require.True(t, sc.Scan())
	var header struct {
		Version, Width, Height int
		Timestamp              *int64
	}
	require.NoError(t, json.Unmarshal(sc.Bytes(), &header))
	assert.Equal(t, 2, header.Version)
	assert.Equal(t, 100, header.Width)
	assert.Equal(t, 30, header.Height)
	assert.Nil(t, header.Timestamp, "no wall-clock time")
	last, events := -1.0, 0
	for sc.Scan() {
		var ev []any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
		require.Len(t, ev, 3)
		at := ev[0].(float64)
		assert.Greater(t, at, last)
		assert.Equal(t, "o", ev[1])
		last = at
		events++
	}
	// 250ms at the default 10ms/s is 25s: 500 frames of 50ms, and the last held for 1s.
	assert.InDelta(t, 26.0, last, 0.001)
	assert.Greater(t, events, 100)
	assert.Less(t, len(cast), 1<<20, "only changed lines are written")
}

// Played in a real terminal (tmux), the recording ends on the workbench's last screen.
func TestRecordPlaysBackToTheLastScreen(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	cast := record(t, "burst-after-idle", 100, 30)
	var stream strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(cast))
	sc.Buffer(nil, 1<<20)
	sc.Scan() // the header
	for sc.Scan() {
		var ev []any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
		stream.WriteString(ev[2].(string))
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "stream")
	require.NoError(t, os.WriteFile(file, []byte(stream.String()), 0o644))
	session := "ratelab-record-" + filepath.Base(dir)
	socket := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", socket}, args...)...).CombinedOutput()
		require.NoError(t, err, "tmux %v: %s", args, out)
		return string(out)
	}
	tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "30", "cat "+file+"; sleep 30")
	t.Cleanup(func() { exec.Command("tmux", "-S", socket, "kill-server").Run() })

	// The workbench's last screen, as the recording drew it.
	s, err := scenarios.Get("burst-after-idle")
	require.NoError(t, err)
	restore := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.ANSI256)
	defer lipgloss.SetColorProfile(restore)
	m, err := New(s)
	require.NoError(t, err)
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	require.NoError(t, m.sim.advanceTo(s.Horizon))
	m.status = "end of the run"
	var want []string
	for _, line := range strings.Split(m.View(), "\n") {
		want = append(want, strings.TrimRight(ansi.Strip(line), " "))
	}
	var got []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got = nil
		for _, line := range strings.Split(strings.TrimRight(tmux("capture-pane", "-p", "-t", session), "\n"), "\n") {
			got = append(got, strings.TrimRight(line, " "))
		}
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			break
		}
	}
	assert.Equal(t, strings.Join(want, "\n"), strings.Join(got, "\n"))
}
