package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/scenarios"
)

// picker lists the scenarios with the selected one's explanation beside the list. A scenario
// that is not built in (a file) is listed first, as it was opened.
type picker struct {
	items    []*engine.Scenario
	selected int
	own      *engine.Scenario // the opened file's scenario, or nil
	err      string
}

func newPicker(current *engine.Scenario) picker {
	p := picker{items: scenarios.All()}
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

func (p *picker) view(w, h int, sty Styles) []string {
	lines := []string{sty.Header.Render("ratelab · choose a scenario") + sty.Dim.Render("   ↑/↓ move · enter opens · esc back · q quits"), ""}
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
