package tui

import (
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// Keys pressed while a long step back re-simulates are not lost: each waits its turn and is
// applied once the move arrives, in order, as if pressed after it. Every move here is made
// long (a key budget of 1ns: the move goes on in frames), and the keys arrive between its
// frames, as the program delivers them; the result is the position and screen that the same
// keys reach one after another.
func TestKeysDuringALongMoveAreApplied(t *testing.T) {
	keys := []string{"left", "left", ".", "tab", "left", "x"}
	play := func(m *Model) {
		press(m, "space")
		frames(m, 4)
		press(m, "space")
	}
	want := open(t, "poisson", 100, 30)
	play(want)
	press(want, "left")
	for _, k := range keys {
		press(want, k)
	}

	defer func(b time.Duration) { keyBudget = b }(keyBudget)
	keyBudget = time.Nanosecond
	m := open(t, "poisson", 100, 30)
	play(m)
	m.Update(keyMsg("left"))
	if m.moving == nil {
		t.Fatal("the step back finished within its key: this test needs a long one")
	}
	for _, k := range keys {
		m.Update(keyMsg(k)) // while it moves: a frame in between, as the program would
		m.Update(tickMsg{gen: m.tickGen})
	}
	for n := 0; (m.moving != nil || len(m.queued) > 0) && n < 100000; n++ {
		_, cmd := m.Update(tickMsg{gen: m.tickGen})
		_ = cmd
	}
	if m.moving != nil || len(m.queued) > 0 {
		t.Fatalf("still moving with %d keys waiting", len(m.queued))
	}
	if m.sim.steps != want.sim.steps || m.focus != want.focus || m.exact != want.exact {
		t.Fatalf("at event %d, lane %d, exact %v; the keys one after another reach event %d, lane %d, exact %v",
			m.sim.steps, m.focus, m.exact, want.sim.steps, want.focus, want.exact)
	}
	if got, w := screenOf(m), screenOf(want); got != w {
		t.Fatalf("the screens differ\nqueued:\n%s\none after another:\n%s", got, w)
	}
}

// esc stops a long move where it is and forgets the keys that waited for it.
func TestEscForgetsTheWaitingKeys(t *testing.T) {
	defer func(b time.Duration) { keyBudget = b }(keyBudget)
	keyBudget = time.Nanosecond
	m := open(t, "poisson", 100, 30)
	press(m, "space")
	frames(m, 4)
	press(m, "space")
	m.Update(keyMsg("left"))
	m.Update(keyMsg("left"))
	m.Update(keyMsg("tab"))
	if len(m.queued) != 2 {
		t.Fatalf("%d keys wait, want 2", len(m.queued))
	}
	m.Update(tea.KeyMsg{Type: tea.KeyEsc})
	if m.moving != nil || len(m.queued) != 0 || m.focus != 0 {
		t.Fatalf("after esc: moving %v, %d keys wait, focus %d", m.moving != nil, len(m.queued), m.focus)
	}
}
