package tui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// The spec editor deletes as a shell line does: ctrl+u everything before the cursor, ctrl+w
// and alt+backspace the word before it, a spec's word (#25); twice, the word before that.
func TestEditorDeletesLikeAShell(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  tea.KeyMsg
		want string
	}{
		{"ctrl+u", tea.KeyMsg{Type: tea.KeyCtrlU}, ""},
		{"ctrl+w", tea.KeyMsg{Type: tea.KeyCtrlW}, "token-bucket:capacity=3,rate=100/"},
		{"alt+backspace", tea.KeyMsg{Type: tea.KeyBackspace, Alt: true}, "token-bucket:capacity=3,rate=100/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := open(t, "burst-after-idle", 100, 30)
			press(m, "e")
			if m.mode != modeEdit {
				t.Fatal("e did not open the editor")
			}
			if got := m.editor.input.Value(); got != "token-bucket:capacity=3,rate=100/1s" {
				t.Fatalf("the editor opened on %q", got)
			}
			m.Update(tc.key)
			if got := m.editor.input.Value(); got != tc.want {
				t.Errorf("after %s the text is %q, want %q", tc.name, got, tc.want)
			}
			if tc.want != "" {
				m.Update(tc.key)
				if got, want := m.editor.input.Value(), "token-bucket:capacity=3,rate="; got != want {
					t.Errorf("after %s twice the text is %q, want %q", tc.name, got, want)
				}
				m.Update(keyMsg("7"))
				if got, want := m.editor.input.Value(), "token-bucket:capacity=3,rate=7"; got != want {
					t.Errorf("typing after %s gives %q, want %q (the cursor is not where the word was)", tc.name, got, want)
				}
			}
			if m.mode != modeEdit {
				t.Errorf("%s closed the editor", tc.name)
			}
		})
	}
}
