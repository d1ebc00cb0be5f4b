package tui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/lessons"
)

func lessonKeys(m *LessonModel, keys ...string) {
	for _, k := range keys {
		var msg tea.KeyMsg
		switch k {
		case "enter":
			msg = tea.KeyMsg{Type: tea.KeyEnter}
		case "esc":
			msg = tea.KeyMsg{Type: tea.KeyEsc}
		case "tab":
			msg = tea.KeyMsg{Type: tea.KeyTab}
		case "ctrl+u":
			msg = tea.KeyMsg{Type: tea.KeyCtrlU}
		default:
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		}
		m.Update(msg)
	}
}

// Through the burst-after-idle lesson in the model: progress in the header, a wrong
// prediction answered with the log's sentences, a right one confirmed, the workbench at the
// answer's instant, a goal missed then met, and the end's score.
func TestLessonModeGoesThroughALesson(t *testing.T) {
	l, err := lessons.Get("burst-after-idle")
	require.NoError(t, err)
	m, err := NewLesson(context.Background(), l)
	require.NoError(t, err)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 30})
	view := m.View()
	assert.Contains(t, view, "ratelab learn · burst-after-idle · step 1/4 · Five at once")
	assert.Contains(t, view, "At t=50ms five")

	lessonKeys(m, "enter") // the question
	assert.Contains(t, strings.Join(strings.Fields(m.View()), " "), "how many will token-bucket:capacity=3,rate=100/1s")
	lessonKeys(m, "5", "enter") // wrong: 3 pass
	view = m.View()
	assert.Contains(t, view, "✗ you said 5; the engine says 3.")
	assert.Contains(t, view, "t=50ms req #4 (1 permit) rejected by token-bucket: next permit due at")
	assert.Contains(t, strings.Join(strings.Fields(view), " "), "over the 30ms tolerance", "the log's reason, State.Explain")
	for _, line := range strings.Split(view, "\n") {
		assert.LessOrEqual(t, len([]rune(line)), 80, line)
	}

	lessonKeys(m, "tab") // the workbench, after the answer's decisions
	assert.Contains(t, m.View(), "req #4")
	lessonKeys(m, "tab", "enter")
	assert.Contains(t, m.View(), "step 2/4 · The leaky bucket")
	lessonKeys(m, "enter", "1", "enter")
	assert.Contains(t, m.View(), "✓ right: 1")

	lessonKeys(m, "enter", "enter", "x", "enter") // step 3: a guess that is not a time
	assert.Contains(t, m.View(), `"x" is not a time such as 80ms`)
	lessonKeys(m, "ctrl+u", "60ms", "enter")
	assert.Contains(t, m.View(), "✓ right: 60ms")

	lessonKeys(m, "enter", "enter") // step 4: the goal, starting from its start spec
	view = m.View()
	assert.Contains(t, view, "step 4/4")
	assert.Contains(t, view, "yours> token-bucket:capacity=3,rate=100/1s")
	lessonKeys(m, "enter")
	assert.Contains(t, m.View(), "✗ yours.refused == 0: yours has refused")
	lessonKeys(m, "ctrl+u", "token-bucket:capacity=6,rate=100/1s", "enter")
	assert.Contains(t, m.View(), "goal met with token-bucket:capacity=6,rate=100/1s")
	lessonKeys(m, "enter")
	assert.Contains(t, strings.Join(strings.Fields(m.View()), " "), "2 of 3 predictions right; 1 of 1 goals reached.")
}

// Words are kept whole (a spec's hyphens are not breaks), indents kept, long words cut.
func TestWrapWords(t *testing.T) {
	assert.Equal(t, []string{"how many will", "token-bucket:capacity=3", "admit?"}, wrapWords("how many will token-bucket:capacity=3 admit?", 23))
	assert.Equal(t, []string{"  a b", "  c"}, wrapWords("  a b c", 5))
	assert.Equal(t, []string{"abcd", "ef"}, wrapWords("abcdef", 4))
}
