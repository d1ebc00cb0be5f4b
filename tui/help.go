package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// helpEntry is one line of the `?` page: what to press or what is seen, and what it means.
type helpEntry struct{ what, means string }

// helpSection is a titled list of entries.
type helpSection struct {
	title   string
	entries []helpEntry
}

// helpSections is the `?` page: every key, then every glyph and symbol on screen, in the
// words the algorithms document uses. A test checks that each glyph the views draw is here.
func (m *Model) helpSections() []helpSection {
	groups := m.keys.FullHelp() // time, speed, lanes, the rest
	entries := make([][]helpEntry, len(groups))
	for g, bindings := range groups {
		for _, b := range bindings {
			entries[g] = append(entries[g], helpEntry{b.Help().Key, b.Help().Desc})
		}
	}
	time, lanes, rest := append(entries[0], entries[1]...), entries[2], entries[3]
	return []helpSection{
		{"Time (the run is deterministic: going back re-simulates it exactly)", time},
		{"Lanes", lanes},
		{"Traffic and the rest (what b and ↑/↓ inject is part of the run: r replays it, w writes it)", rest},
		{"Each lane", []helpEntry{
			{"▸", "the focused lane: the log at the bottom reads its decisions"},
			{"ok ▁▄█", "requests admitted per column; one column is one time slice (on the axis line)"},
			{"no ▁▄█", "requests refused per column; a full bar is the axis line's scale, ▁ at least 1"},
			{"admitted a/o", "a of the o requests offered so far were admitted; then refused, timed out, gave up and waiting: each request ends as one of them"},
			{"1: 2:", "the stages of a stack, first to last; a request must pass every one"},
		}},
		{"Fleets and keys", []helpEntry{
			{"#0 [██░░] ok · no", "a fleet lane's instance 0: its requests admitted (ok) and refused (no) so far, the bar its admitted of its offered"},
			{"ok/no #0 5/2", "the same for every instance on one line, when the lane has no row for each (+n more: instances left out)"},
			{"down", "the balancer sends the instance nothing: it left (a fault), or has not joined yet"},
			{"total ok n", "what all the instances admitted; limit l (r×): the most one limiter of the lane's spec admits from 0 to now, what one process keeps to, and r = n/l"},
			{"1s max a/b", "the most the fleet admitted in one window of the spec (a) against one limiter's bound for it (b): run's overshoot is a/b"},
			{"store down", "a fault cut the shared store: central lanes decide by their failure policy, async ones stop syncing; cut off: that instance alone"},
			{"most offered", "k: a keyed lane's busiest keys, beside its most refused, each with its requests offered, admitted (ok) and not (no: refused, timed out, gave up) so far"},
			{"fairness", "Jain's index of the permits admitted over the keys offered: 1 when every key got the same, 1/n when one key got everything"},
			{"table h/m held", "a keys(max=m) stage's table: keys it holds, keys it evicted to make room, requests refused because it was full and could evict none"},
		}},
		{"Token and leaky bucket, warm-up (GCRA)", []helpEntry{
			{"T", "the emission interval: one permit every T (1/rate; 10ms at 100/s)"},
			{"TAT", "theoretical arrival time: when the next permit is due; TAT ≤ now means the bucket is full"},
			{"(+d)", "the backlog TAT − now: how far admissions ran ahead of the rate"},
			{"τ", "the tolerance: how far ahead of now TAT may run (capacity × T; the leaky bucket's τ is T)"},
			{"now├▓▓●···┤", "the schedule from now to now+τ: ▓ the backlog, ● TAT, · room left"},
			{"backlog+T ≤ τ", "the admission test for one more permit, with the state's numbers"},
			{"ramp[━━╸──]", "warm-up: how far the ramp has gone from cold (a third of the rate) to warm"},
		}},
		{"Windows and the rest", []helpEntry{
			{"│ 3│ .│~4│", "sliding window: each slot's count, oldest first, the current slot last; . an empty live slot"},
			{"~n", "a stale slot: n counted in an older generation of that slot, ignored by reads (# when it does not fit)"},
			{"window [a, b)", "fixed window: the current window, from a to just before b, and when it resets"},
			{"[██░░]", "a meter: permits used of the limit, requests in flight of the maximum, or a level"},
			{"pool", "the downstream: requests being served of its pool; queue: requests waiting in the client"},
		}},
		{"Client loop (a lane whose clients retry or pace: all of it when focused)", []helpEntry{
			{"goodput n/s", "requests admitted per second so far"},
			{"amplification a", "attempts per request offered: 1 when nothing is retried"},
			{"herd ×s", "the most retries in one 10ms bin over their mean per bin: about 1 when spread, the number of bins when all come at once"},
			{"success p50 p99", "from a request's first attempt to its admission, every refusal and backoff between"},
			{"latency p50 p99", "from a request's arrival to its answer, every client wait and the service included"},
		}},
		{"Log", []helpEntry{
			{"t=…", "the virtual time of the decision; times are rounded for reading (194.7ms), x shows them exact"},
			{"req #n", "the request's number, in arrival order: the same request in every lane"},
		}},
	}
}

// helpLines lays the `?` page out in width cells: each entry's left column padded to the
// section's widest, its meaning word-wrapped under itself.
func (m *Model) helpLines(width int) []string {
	sty := m.styles
	var lines []string
	for _, sec := range m.helpSections() {
		for _, l := range strings.Split(ansi.Wrap(sec.title, width, ""), "\n") {
			lines = append(lines, sty.Header.Render(l))
		}
		keyW := 0
		for _, e := range sec.entries {
			keyW = max(keyW, ansi.StringWidth(e.what))
		}
		keyW = min(keyW, width/3)
		for _, e := range sec.entries {
			what := e.what
			pad := max(keyW-ansi.StringWidth(what), 0)
			indent := strings.Repeat(" ", 2+keyW+2)
			textW := max(width-len(indent), 20)
			wrapped := strings.Split(ansi.Wrap(e.means, textW, ""), "\n")
			lines = append(lines, "  "+what+strings.Repeat(" ", pad)+"  "+wrapped[0])
			for _, w := range wrapped[1:] {
				lines = append(lines, indent+w)
			}
		}
	}
	return lines
}

// pagerKeys are the `?` page's keys, named in its footer.
type pagerKeys struct {
	Close    key.Binding
	Quit     key.Binding
	Up       key.Binding
	Down     key.Binding
	PageUp   key.Binding
	PageDown key.Binding
	Top      key.Binding
	Bottom   key.Binding
}

func defaultPagerKeys() pagerKeys {
	return pagerKeys{
		Close:    key.NewBinding(key.WithKeys("?", "esc"), key.WithHelp("? or esc", "closes")),
		Quit:     key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑", "scroll up")),
		Down:     key.NewBinding(key.WithKeys("down", "j", "enter"), key.WithHelp("↓", "scroll down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "b"), key.WithHelp("pgup", "a page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", " ", "f"), key.WithHelp("pgdown", "a page down")),
		Top:      key.NewBinding(key.WithKeys("home"), key.WithHelp("home", "the first line")),
		Bottom:   key.NewBinding(key.WithKeys("end"), key.WithHelp("end", "the last page")),
	}
}

// pager shows the `?` page a screen at a time: its keys scroll it, close it or quit. The
// page's lines are the root's (helpLines); the pager keeps which is on top.
type pager struct {
	keys pagerKeys
	top  int // the first line of the page on screen
}

// pagerOutcome is what a key did to the pager.
type pagerOutcome int

const (
	pagerReading pagerOutcome = iota // the page stays open
	pagerClosed                      // ? or esc: back to the workbench
	pagerQuit                        // q: quit ratelab
)

// update takes a key on a page of lines lines shown rows at a time.
func (p *pager) update(msg tea.KeyMsg, lines, rows int) pagerOutcome {
	out := pagerReading
	switch {
	case key.Matches(msg, p.keys.Close):
		out = pagerClosed
	case key.Matches(msg, p.keys.Quit):
		return pagerQuit
	case key.Matches(msg, p.keys.Up):
		p.top--
	case key.Matches(msg, p.keys.Down):
		p.top++
	case key.Matches(msg, p.keys.PageUp):
		p.top -= rows
	case key.Matches(msg, p.keys.PageDown):
		p.top += rows
	case key.Matches(msg, p.keys.Top):
		p.top = 0
	case key.Matches(msg, p.keys.Bottom):
		p.top = lines
	}
	p.top = min(max(p.top, 0), max(lines-rows, 0))
	return out
}

// view is the page's body scrolled to top, under title, above a footer that says how to
// move and leave, in h lines of w cells.
func (p *pager) view(title string, body []string, w, h int, sty Styles) []string {
	rows := h - 2
	top := min(p.top, max(len(body)-rows, 0))
	end := min(top+rows, len(body))
	lines := []string{title}
	lines = append(lines, body[top:end]...)
	for len(lines) < h-1 {
		lines = append(lines, "")
	}
	leave := fmt.Sprintf("%s %s · %s %s", p.keys.Close.Help().Key, p.keys.Close.Help().Desc, p.keys.Quit.Help().Key, p.keys.Quit.Help().Desc)
	where := leave
	if len(body) > rows {
		where = fmt.Sprintf("%s/%s scroll (lines %d–%d of %d) · %s", p.keys.Up.Help().Key, p.keys.Down.Help().Key, top+1, end, len(body), leave)
	}
	return append(lines, sty.Dim.Render(fitWords(where, w)))
}

// updateHelp hands the key to the `?` page's pager.
func (m *Model) updateHelp(msg tea.KeyMsg) tea.Cmd {
	switch m.pager.update(msg, len(m.helpLines(m.width)), max(m.height-2, 1)) {
	case pagerClosed:
		m.showHelp = false
	case pagerQuit:
		return tea.Quit
	}
	return nil
}

// helpView is the `?` page.
func (m *Model) helpView(w, h int) []string {
	title := fitWords(m.styles.Header.Render("ratelab · help")+m.styles.Dim.Render(" · every key, then every symbol on screen"), w)
	return m.pager.view(title, m.helpLines(w), w, h, m.styles)
}
