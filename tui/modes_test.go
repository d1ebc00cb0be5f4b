package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
)

// rebound is a binding of k alone, named k in the hints.
func rebound(k, desc string) key.Binding {
	return key.NewBinding(key.WithKeys(k), key.WithHelp(k, desc))
}

// Each mode acts on the keys of its own keymap and names them from it: rebind one of its
// keys and the new key acts, the old one no longer does, and the mode's hints say the new
// one.
func TestModesTakeTheirKeysFromTheirKeyMaps(t *testing.T) {
	t.Run("editor", func(t *testing.T) {
		m := open(t, "burst-after-idle", 80, 24)
		m.editor.keys.Apply = rebound("tab", "applies")
		press(m, "e", "ctrl+u", "token-bucket:capacity=5,rate=100/1s")
		mustContain(t, m.View(), "edit lane 1 · tab applies and restarts · esc cancels")
		press(m, "enter")
		if m.mode != modeEdit {
			t.Fatal("enter applied the edit with Apply bound to tab")
		}
		press(m, "tab")
		if got := m.sim.sc.Lanes[0].Label(); m.mode != modeMain || got != "token-bucket:capacity=5,rate=100/1s" {
			t.Fatalf("tab did not apply the edit: mode %d, lane 1 %s", m.mode, got)
		}
	})
	t.Run("seek prompt", func(t *testing.T) {
		m := open(t, "burst-after-idle", 80, 24)
		m.seek.keys.Cancel = rebound("tab", "cancels")
		press(m, "B")
		mustContain(t, m.View(), "how many requests b sends at once · enter sets · tab cancels")
		press(m, "esc")
		if m.mode != modeSeek {
			t.Fatal("esc closed the prompt with Cancel bound to tab")
		}
		press(m, "tab")
		if m.mode != modeMain || m.burstSize != 10 {
			t.Fatalf("tab did not cancel the prompt: mode %d, burst size %d", m.mode, m.burstSize)
		}
	})
	t.Run("picker", func(t *testing.T) {
		m := open(t, "burst-after-idle", 80, 24)
		m.picker.keys.Open = rebound("tab", "opens")
		press(m, "s", "down")
		mustContain(t, m.View(), "↑/↓ move · tab opens · esc back · q quits")
		press(m, "enter")
		if m.mode != modePicker {
			t.Fatal("enter opened a scenario with Open bound to tab")
		}
		press(m, "tab")
		if m.mode != modeMain || m.sim.sc.Name != "boundary-attack" {
			t.Fatalf("tab did not open the scenario: mode %d, scenario %s", m.mode, m.sim.sc.Name)
		}
	})
	t.Run("help page", func(t *testing.T) {
		m := open(t, "burst-after-idle", 80, 24)
		m.pager.keys.Close = rebound("c", "closes")
		press(m, "?")
		mustContain(t, m.View(), "c closes · q quit")
		press(m, "esc")
		if !m.showHelp {
			t.Fatal("esc closed the help page with Close bound to c")
		}
		press(m, "c")
		if m.showHelp {
			t.Fatal("c did not close the help page")
		}
	})
	t.Run("guess prompt", func(t *testing.T) {
		m := open(t, "burst-after-idle", 80, 24)
		m.predictor.keys.Cancel = rebound("tab", "skips")
		press(m, "p", "space")
		playUntilAsked(t, m)
		mustContain(t, strings.ReplaceAll(m.View(), "\n", " "), "enter plays · tab skips")
		press(m, "esc")
		if m.mode != modeGuess {
			t.Fatal("esc skipped the question with Cancel bound to tab")
		}
		press(m, "tab")
		if m.mode != modeMain || m.predict != nil {
			t.Fatalf("tab did not skip the question: mode %d", m.mode)
		}
	})
	t.Run("long move", func(t *testing.T) {
		m := open(t, "poisson", 100, 30)
		m.keys.Stop = rebound("tab", "halts")
		m.moving = &travel{to: toTime, at: m.sim.sc.Horizon}
		if m.move(time.Nanosecond) {
			t.Skip("the whole run fit in the move's first steps")
		}
		mustContain(t, m.View(), "(tab halts)")
		m.Update(keyMsg("esc"))
		if m.moving == nil {
			t.Fatal("esc stopped the move with Stop bound to tab")
		}
		m.Update(keyMsg("tab"))
		if m.moving != nil {
			t.Fatal("tab did not stop the move")
		}
	})
}
