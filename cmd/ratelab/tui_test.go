package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTUIInTmux drives the real binary in a real terminal: tmux at 100×30, keys by
// send-keys, screens by capture-pane, each awaited with a bounded deadline (no fixed sleeps).
func TestTUIInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the end-to-end TUI test needs it (.ci/run installs it)")
	}
	bin := ratelabBinary(t)
	socket := fmt.Sprintf("ratelab-test-%d", os.Getpid())
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-L", socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { _, _ = tmux("kill-server") })
	if out, err := tmux("new-session", "-d", "-s", "rl", "-x", "100", "-y", "30",
		"env TERM=xterm-256color "+bin+" tui burst-after-idle; sleep 30"); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	screen := ""
	waitFor := func(what string, facts ...string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			out, err := tmux("capture-pane", "-p", "-t", "rl")
			if err == nil {
				screen = out
				missing := ""
				for _, f := range facts {
					if !strings.Contains(strings.ReplaceAll(screen, "\n  ", " "), f) {
						missing = f
						break
					}
				}
				if missing == "" {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: the screen never showed %q:\n%s", what, missing, screen)
				}
			} else if time.Now().After(deadline) {
				t.Fatalf("%s: capture-pane: %v %s", what, err, out)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	keys := func(k ...string) {
		t.Helper()
		if out, err := tmux(append([]string{"send-keys", "-t", "rl"}, k...)...); err != nil {
			t.Fatalf("send-keys %v: %v %s", k, err, out)
		}
	}

	waitFor("open", "ratelab · burst-after-idle", "t=0s of 250ms", "paused",
		"▸ token-bucket:capacity=3,rate=100/1s", "leaky-bucket:rate=100/1s", "no decisions yet")

	keys(".", ".", ".", ".")
	waitFor("four steps", "t=50ms of 250ms", "admitted 3/4 · refused 1", "admitted 1/4 · refused 3",
		"t=50ms req #4 (1 permit) rejected by token-bucket: next permit due at 80ms")

	// Time travel: back one event, jumps between the focused lane's refusals and bursts, a
	// typed time, the end and the start; each a deterministic re-simulation.
	keys("Left")
	waitFor("step back", "back one event: event 3", "admitted 3/3 · refused 0", "admitted 1/3 · refused 2")
	keys("]")
	waitFor("next mark", "at the refusal at t=50ms (event 4)", "admitted 3/4 · refused 1")
	keys("[")
	waitFor("previous mark", "back to the burst at t=50ms (event 1)", "admitted 1/1 · refused 0")
	keys("g")
	waitFor("seek prompt", "seek to t=")
	keys("120ms", "Enter")
	waitFor("seek", "t=120ms of 250ms", "at t=120ms", "admitted 4/6")
	keys("End")
	waitFor("end", "t=250ms of 250ms", "at the end of the run", "admitted 8/13")
	keys("Home")
	waitFor("home", "t=0s of 250ms", "back at the start", "admitted 0/0", "? help · q quit")

	// A burst sent at 100ms becomes part of the run: the end counts its 10 requests, and
	// playing again from the start (below) meets it again.
	keys("g")
	waitFor("seek prompt", "seek to t=")
	keys("100ms", "Enter")
	waitFor("seek", "t=100ms of 250ms")
	keys("b")
	waitFor("burst", "sent a burst of 10 requests at t=100ms")
	keys("End")
	waitFor("end with the burst", "t=250ms of 250ms", "admitted 11/23", "admitted 5/23")
	keys("Home")
	waitFor("home", "t=0s of 250ms", "admitted 0/0")

	keys("+", "+", "+", "+", "+") // 500ms of virtual time per second: the rest takes half a second
	keys("Space")
	waitFor("play to the end", "t=250ms of 250ms", "end of the run", "admitted 11/23")

	keys("e")
	waitFor("edit", "edit lane 1", "spec> token-bucket:capacity=3,rate=100/1s")
	keys("C-u", "token-bucket:capacity=0,rate=100/1s", "Enter")
	waitFor("bad value", "capacity=0: must be at least 1", "t=250ms of 250ms")
	keys("C-u", "token-bucket:capacity=5,rate=100/1s", "Enter")
	waitFor("good value", "▸ token-bucket:capacity=5,rate=100/1s  admitted 0/0", "t=0s of 250ms", "restarted")

	keys("q")
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _ := tmux("capture-pane", "-p", "-t", "rl")
		if !strings.Contains(out, "ratelab · ") {
			break // the program left the alternate screen: only the shell's sleep remains
		}
		if time.Now().After(deadline) {
			t.Fatalf("q did not quit:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTUIIsIdleWhenPausedInTmux: the real binary in tmux, paused, does not wake. Its threads'
// voluntary context switches (each a wait a thread began: a timer, a read, a futex) are summed
// from /proc/PID/task/*/status across 2s. With bubbletea's renderer, which ticks 60 times a
// second, main made 530 to 580 in 2s; painting its own frames the workbench makes 0 (measured
// five times, and 0 across 20s, on a loaded 2-core machine). The bound, 20 in 2s (10 a second),
// leaves room for the Go runtime's own rare wake-ups (a forced GC every 2 minutes). While
// playing, the same counter climbs far past the bound (~320 in 2s) and the screen changes: the
// measure sees wake-ups when there are some, and the painter paints.
func TestTUIIsIdleWhenPausedInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the end-to-end TUI test needs it (.ci/run installs it)")
	}
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("needs /proc to count context switches")
	}
	bin := ratelabBinary(t)
	socket := fmt.Sprintf("ratelab-idle-%d", os.Getpid())
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-L", socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { _, _ = tmux("kill-server") })
	// exec: the pane's process is the workbench itself.
	if out, err := tmux("new-session", "-d", "-s", "rl", "-x", "100", "-y", "30",
		"exec env TERM=xterm-256color "+bin+" tui burst-after-idle"); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	out, err := tmux("display-message", "-p", "-t", "rl", "#{pane_pid}")
	if err != nil {
		t.Fatalf("pane_pid: %v %s", err, out)
	}
	pid := strings.TrimSpace(out)
	capture := func() string {
		out, _ := tmux("capture-pane", "-p", "-t", "rl")
		return out
	}
	waitFor := func(what, fact string) string {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if screen := capture(); strings.Contains(screen, fact) {
				return screen
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the screen never showed %q:\n%s", what, fact, capture())
			}
		}
	}
	switches := func() int {
		t.Helper()
		tasks, err := filepath.Glob("/proc/" + pid + "/task/*/status")
		if err != nil || len(tasks) == 0 {
			t.Fatalf("no threads of pid %s: %v", pid, err)
		}
		sum := 0
		for _, task := range tasks {
			status, err := os.ReadFile(task)
			if err != nil {
				continue // a thread that ended
			}
			for _, line := range strings.Split(string(status), "\n") {
				if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
					n, _ := strconv.Atoi(strings.TrimSpace(v))
					sum += n
				}
			}
		}
		return sum
	}
	over2s := func() int {
		before := switches()
		time.Sleep(2 * time.Second)
		return switches() - before
	}
	const bound = 20 // in 2s; see the comment above

	waitFor("open", "❚❚ paused")
	time.Sleep(300 * time.Millisecond) // the first frames and the resize are drawn
	idle := over2s()
	t.Logf("paused: %d voluntary context switches in 2s", idle)
	if idle > bound {
		t.Errorf("paused, the workbench woke %d times in 2s (bound %d)", idle, bound)
	}

	if _, err := tmux("send-keys", "-t", "rl", "Space"); err != nil {
		t.Fatal(err)
	}
	first := waitFor("play", "▶ playing")
	playing := over2s()
	later := capture()
	t.Logf("playing: %d voluntary context switches in 2s", playing)
	if playing <= bound {
		t.Errorf("playing, only %d context switches in 2s: the measure misses the frames", playing)
	}
	if later == first {
		t.Errorf("2s of play did not change the screen:\n%s", later)
	}

	if _, err := tmux("send-keys", "-t", "rl", "Space"); err != nil {
		t.Fatal(err)
	}
	waitFor("pause again", "❚❚ paused")
	time.Sleep(300 * time.Millisecond) // the frame already on its way when play stopped
	again := over2s()
	t.Logf("paused again: %d voluntary context switches in 2s", again)
	if again > bound {
		t.Errorf("paused after playing, the workbench woke %d times in 2s (bound %d)", again, bound)
	}
	_, _ = tmux("send-keys", "-t", "rl", "q")
}

// TestTUINeedsATerminal: without a terminal, `tui` says so instead of drawing into a pipe.
func TestTUINeedsATerminal(t *testing.T) {
	var out, errOut strings.Builder
	err := run(context.Background(), []string{"tui", "burst-after-idle"}, strings.NewReader(""), &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "not a terminal") {
		t.Fatalf("err = %v, want a 'not a terminal' error", err)
	}
	err = run(context.Background(), []string{"tui", "no-such-scenario"}, strings.NewReader(""), &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "no built-in scenario") {
		t.Fatalf("err = %v, want the unknown scenario named", err)
	}
}
