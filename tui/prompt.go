package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
)

// promptKeys are a one-line prompt's own keys (the seek prompt's, the guess prompt's); every
// other key is the text's.
type promptKeys struct {
	Go     key.Binding
	Cancel key.Binding
}

func defaultPromptKeys() promptKeys {
	return promptKeys{
		Go:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "goes")),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancels")),
	}
}

// newPromptInput is a one-line text input with a cursor that does not blink.
func newPromptInput(prompt, placeholder string) textinput.Model {
	in := textinput.New()
	in.Prompt, in.Placeholder = prompt, placeholder
	in.Cursor.SetMode(cursor.CursorStatic)
	return in
}

// seekPrompt is the one-line prompt of g (a time to go to, 0 to the horizon) and of B (the
// burst's size, 1 to maxBurst). It reads and checks the number; the root moves the run or
// keeps the size.
type seekPrompt struct {
	keys     promptKeys
	in       textinput.Model
	burst    bool          // the prompt asks for the burst size, not a time
	horizon  time.Duration // the run's end: the latest time the prompt takes
	burstKey string        // the key that sends a burst, as the title names it
	err      string        // why the last enter was refused
}

// seekOutcome is what a key did to the prompt.
type seekOutcome int

const (
	seekTyping    seekOutcome = iota // the prompt stays open
	seekCancelled                    // esc: closed, nothing changed
	seekTime                         // enter with a time: closed
	seekBurstSize                    // enter with a burst size: closed
)

func newSeekPrompt() seekPrompt {
	return seekPrompt{keys: defaultPromptKeys(), in: newPromptInput("seek to t=", "1.5s")}
}

// openSeek asks for a time from 0 to horizon.
func (p *seekPrompt) openSeek(horizon time.Duration) tea.Cmd {
	p.burst, p.horizon, p.err = false, horizon, ""
	p.in.Prompt, p.in.Placeholder = "seek to t=", "1.5s"
	p.in.SetValue("")
	return p.in.Focus()
}

// openBurstSize asks for the size of the bursts burstKey sends, now size.
func (p *seekPrompt) openBurstSize(size int, burstKey string) tea.Cmd {
	p.burst, p.burstKey, p.err = true, burstKey, ""
	p.in.Prompt, p.in.Placeholder = "burst size: ", ""
	p.in.SetValue(fmt.Sprint(size))
	p.in.CursorEnd()
	return p.in.Focus()
}

// update takes a key: with seekTime, at is the time typed; with seekBurstSize, size the size.
func (p *seekPrompt) update(msg tea.KeyMsg) (cmd tea.Cmd, out seekOutcome, at time.Duration, size int) {
	switch {
	case key.Matches(msg, p.keys.Cancel):
		p.in.Blur()
		return nil, seekCancelled, 0, 0
	case key.Matches(msg, p.keys.Go):
		if p.burst {
			n, err := parseBurstSize(p.in.Value())
			if err != nil {
				p.err = err.Error()
				return nil, seekTyping, 0, 0
			}
			p.in.Blur()
			return nil, seekBurstSize, 0, n
		}
		t, err := parseSeek(p.in.Value(), p.horizon)
		if err != nil {
			p.err = err.Error()
			return nil, seekTyping, 0, 0
		}
		p.in.Blur()
		return nil, seekTime, t, 0
	}
	p.in, cmd = p.in.Update(msg)
	return cmd, seekTyping, 0, 0
}

// footer is the prompt's lines under the lanes: what it asks, the input, the error.
func (p *seekPrompt) footer(w int, sty Styles) []string {
	goKey, cancel := p.keys.Go.Help().Key, p.keys.Cancel.Help().Key
	title := sty.Header.Render("seek") + sty.Dim.Render(fmt.Sprintf(" · a time from 0 to %s, e.g. 1.5s · %s goes · %s cancels", short(p.horizon), goKey, cancel))
	if p.burst {
		title = sty.Header.Render("burst size") + sty.Dim.Render(fmt.Sprintf(" · how many requests %s sends at once · %s sets · %s cancels", p.burstKey, goKey, cancel))
	}
	lines := []string{fitWords(title, w), p.in.View()}
	if p.err != "" {
		lines = append(lines, sty.Error.Render(fitWords(p.err, w)))
	}
	return lines
}

// parseSeek reads a typed time: a duration with its unit, from 0 to the horizon.
func parseSeek(text string, horizon time.Duration) (time.Duration, error) {
	text = strings.TrimSpace(text)
	t, err := time.ParseDuration(text)
	switch {
	case text == "":
		return 0, fmt.Errorf("type a time, e.g. 1.5s or 200ms")
	case err != nil:
		return 0, fmt.Errorf("%q is not a time: it needs a unit, e.g. 1.5s or 200ms", text)
	case t < 0:
		return 0, fmt.Errorf("%s: the run starts at 0", text)
	case t > horizon:
		return 0, fmt.Errorf("%s: the run ends at %s", text, short(horizon))
	}
	return t, nil
}
