package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// editKeys are the lane editor's own keys; every other key is the text's.
type editKeys struct {
	Apply      key.Binding
	Cancel     key.Binding
	DeleteWord key.Binding // a spec's word: textinput's words end at spaces only, and a spec has none
}

func defaultEditKeys() editKeys {
	return editKeys{
		Apply:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "applies")),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancels")),
		// ctrl+u (all before the cursor) is textinput's own.
		DeleteWord: key.NewBinding(key.WithKeys("ctrl+w", "alt+backspace"), key.WithHelp("ctrl+w", "deletes a word")),
	}
}

// editor is the lane editor (e edits the focused lane, a and d make a new one): one line of
// stack text, parsed and validated stage by stage on enter. What the stack does to the
// scenario is the root's: the editor hands it over (edited) and shows the error the root
// gives back (fail), staying open until the root closes it.
type editor struct {
	keys   editKeys
	input  textinput.Model
	adding bool   // enter makes a new lane instead of changing the focused one
	lane   int    // the lane the title names, from 1: the edited one, or the one being added
	err    string // why the last enter changed nothing
}

// editOutcome is what a key did to the editor.
type editOutcome int

const (
	editTyping    editOutcome = iota // the editor stays open
	editCancelled                    // esc: closed, nothing changed
	editedStack                      // enter with a stack whose every stage parses and validates
)

func newEditor() editor {
	e := editor{keys: defaultEditKeys(), input: textinput.New()}
	e.input.Prompt = "spec> "
	e.input.Cursor.SetMode(cursor.CursorStatic)
	return e
}

// open starts editing text, the cursor at its end, for lane (from 1); adding says enter
// makes a new lane.
func (e *editor) open(adding bool, lane int, text string) tea.Cmd {
	e.adding, e.lane, e.err = adding, lane, ""
	e.input.SetValue(text)
	e.input.CursorEnd()
	return e.input.Focus()
}

// openNew starts an empty stack for new lane (from 1), the first kind's example shown in it.
func (e *editor) openNew(lane int) tea.Cmd {
	e.adding, e.lane, e.err = true, lane, ""
	e.input.SetValue("")
	e.input.Placeholder = limiters.Kinds()[0].Example
	return e.input.Focus()
}

func (e *editor) close() { e.input.Blur() }

// fail shows why the stack could not be applied; the editor stays open.
func (e *editor) fail(err error) { e.err = err.Error() }

// setWidth fits the input to a terminal w cells wide: long stacks scroll, the cursor stays on
// screen.
func (e *editor) setWidth(w int) { e.input.Width = max(w-len(e.input.Prompt)-1, 10) }

// update takes a key; with editedStack, stack is the parsed text.
func (e *editor) update(msg tea.KeyMsg) (cmd tea.Cmd, out editOutcome, stack []limiters.Spec) {
	switch {
	case key.Matches(msg, e.keys.Cancel):
		e.close()
		return nil, editCancelled, nil
	case key.Matches(msg, e.keys.Apply):
		stack, err := engine.ParseStack(e.input.Value())
		if err == nil {
			for _, spec := range stack {
				if err = spec.Validate(); err != nil {
					break
				}
			}
		}
		if err != nil {
			e.fail(err)
			return nil, editTyping, nil
		}
		return nil, editedStack, stack
	}
	if key.Matches(msg, e.keys.DeleteWord) {
		e.deleteWord()
		return nil, editTyping, nil
	}
	e.input, cmd = e.input.Update(msg)
	return cmd, editTyping, nil
}

// deleteWord deletes the word before the cursor, and the separators between it and the
// cursor: in a spec, words end at ':', ',', '=', '+', '/' and spaces, so ctrl+w on
// "token-bucket:capacity=3,rate=100/1s" leaves "token-bucket:capacity=3,rate=100/", and again
// "token-bucket:capacity=3,rate=".
func (e *editor) deleteWord() {
	text := []rune(e.input.Value())
	pos := min(e.input.Position(), len(text))
	sep := func(r rune) bool { return strings.ContainsRune(":,=+/ ", r) }
	i := pos
	for i > 0 && sep(text[i-1]) {
		i--
	}
	for i > 0 && !sep(text[i-1]) {
		i--
	}
	e.input.SetValue(string(text[:i]) + string(text[pos:]))
	e.input.SetCursor(i)
}

// title is the editor's first line: what enter will do.
func (e *editor) title(sty Styles) string {
	apply, cancel := e.keys.Apply.Help().Key, e.keys.Cancel.Help().Key
	if e.adding {
		return sty.Header.Render(fmt.Sprintf("new lane %d", e.lane)) +
			sty.Dim.Render(fmt.Sprintf(" · %s adds it beside the others · %s cancels · stack with +", apply, cancel))
	}
	return sty.Header.Render(fmt.Sprintf("edit lane %d", e.lane)) +
		sty.Dim.Render(fmt.Sprintf(" · %s applies and restarts · %s cancels · stack with +", apply, cancel))
}

// footer is the editor's lines under the lanes: the title, the input, then the error or
// every kind's example.
func (e *editor) footer(w int, sty Styles) []string {
	lines := []string{fitWords(e.title(sty), w), e.input.View()}
	if e.err != "" {
		for _, l := range strings.Split(ansi.Wrap(e.err, w, ""), "\n") {
			lines = append(lines, sty.Error.Render(l))
		}
		return lines
	}
	return append(lines, sty.Dim.Render(fitWords(kindExamples(), w)))
}

func kindExamples() string {
	var ex []string
	for _, k := range limiters.Kinds() {
		ex = append(ex, k.Example)
	}
	return strings.Join(ex, "  ")
}
