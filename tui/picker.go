package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
)

// pickerKeys are the scenario picker's keys, named in its header.
type pickerKeys struct {
	Up   key.Binding
	Down key.Binding
	Open key.Binding
	Back key.Binding
	Quit key.Binding
}

func defaultPickerKeys() pickerKeys {
	return pickerKeys{
		Up:   key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑", "move up")),
		Down: key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓", "move down")),
		Open: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "opens")),
		Back: key.NewBinding(key.WithKeys("esc", "s"), key.WithHelp("esc", "back")),
		Quit: key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quits")),
	}
}

// picker lists the scenarios with the selected one's explanation beside the list. A scenario
// that is not built in (a file) is listed first, as it was opened. Enter hands the root the
// selected scenario, loaded and validated; the root opens it, or gives back why not (fail).
type picker struct {
	keys     pickerKeys
	items    []*engine.Scenario
	selected int
	own      *engine.Scenario // the opened file's scenario, or nil
	err      string
}

// pickOutcome is what a key did to the picker.
type pickOutcome int

const (
	pickBrowsing pickOutcome = iota // the picker stays open
	pickBack                        // esc or s: back to the workbench as it was
	pickQuit                        // q: quit ratelab
	pickOpened                      // enter on a scenario that loads and validates
)

func newPicker(current *engine.Scenario) picker {
	p := picker{keys: defaultPickerKeys(), items: scenarios.All()}
	builtIn := false
	for _, sc := range p.items {
		builtIn = builtIn || sc.Name == current.Name
	}
	if !builtIn {
		p.own = current
		p.items = append([]*engine.Scenario{current}, p.items...)
	}
	return p
}

func (p *picker) selectName(name string) {
	for i, sc := range p.items {
		if sc.Name == name {
			p.selected = i
		}
	}
	p.err = ""
}

func (p *picker) move(d int) {
	p.selected = (p.selected + d + len(p.items)) % len(p.items)
	p.err = ""
}

// load returns a fresh copy of the selected built-in scenario, or the opened file's.
func (p *picker) load() (*engine.Scenario, error) {
	sc := p.items[p.selected]
	if sc == p.own {
		return sc, nil
	}
	return scenarios.Get(sc.Name)
}

// update takes a key; with pickOpened, sc is the scenario to open.
func (p *picker) update(msg tea.KeyMsg) (out pickOutcome, sc *engine.Scenario) {
	switch {
	case key.Matches(msg, p.keys.Back):
		return pickBack, nil
	case key.Matches(msg, p.keys.Quit):
		return pickQuit, nil
	case key.Matches(msg, p.keys.Up):
		p.move(-1)
	case key.Matches(msg, p.keys.Down):
		p.move(1)
	case key.Matches(msg, p.keys.Open):
		sc, err := p.load()
		if err == nil {
			err = sc.Validate()
		}
		if err != nil {
			p.fail(err)
			return pickBrowsing, nil
		}
		return pickOpened, sc
	}
	return pickBrowsing, nil
}

// fail shows why the selected scenario cannot be opened.
func (p *picker) fail(err error) { p.err = err.Error() }

// hints is the header's line of keys: "↑/↓ move · enter opens · esc back · q quits".
func (k pickerKeys) hints() string {
	h := func(b key.Binding) string { return b.Help().Key + " " + b.Help().Desc }
	return k.Up.Help().Key + "/" + k.Down.Help().Key + " move · " + strings.Join([]string{h(k.Open), h(k.Back), h(k.Quit)}, " · ")
}

func (p *picker) view(w, h int, sty Styles) []string {
	lines := []string{sty.Header.Render("ratelab · choose a scenario") + sty.Dim.Render("   "+p.keys.hints()), ""}
	listW := 20
	for _, sc := range p.items {
		listW = max(listW, len(sc.Name)+4)
	}
	descW := w - listW - 2
	sel := p.items[p.selected]
	var desc []string
	desc = append(desc, sty.Header.Render(sel.Name)+sty.Dim.Render(fmt.Sprintf(" · %s of virtual time", short(sel.Horizon))))
	desc = append(desc, strings.Split(ansi.Wrap(sel.Description, descW, ""), "\n")...)
	desc = append(desc, "", sty.Dim.Render("lanes:"))
	for _, lane := range sel.Lanes {
		desc = append(desc, ansi.Truncate("  "+lane.Label(), descW, "…"))
	}
	if p.err != "" {
		desc = append(desc, "", sty.Error.Render(ansi.Wrap(p.err, descW, "")))
	}
	rows := max(len(p.items), len(desc))
	for r := 0; r < rows && len(lines) < h; r++ {
		left := ""
		if r < len(p.items) {
			name := p.items[r].Name
			if r == p.selected {
				left = sty.Focused.Render("▸ " + name)
			} else {
				left = "  " + name
			}
		}
		left += strings.Repeat(" ", max(0, listW-ansi.StringWidth(left)))
		right := ""
		if r < len(desc) {
			right = desc[r]
		}
		lines = append(lines, left+"  "+right)
	}
	return lines
}
