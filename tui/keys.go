package tui

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every key of the workbench; `?` lists them (bubbles/help), save Stop, which the
// status of a long move names while it can be pressed, and Abort. The modes that take the keys from it
// (the editor, the prompts, the picker, the `?` page) have keymaps of their own.
type KeyMap struct {
	Play     key.Binding
	Step     key.Binding
	StepBack key.Binding
	PrevMark key.Binding
	NextMark key.Binding
	Home     key.Binding
	End      key.Binding
	Seek     key.Binding
	Exact    key.Binding
	TopKeys  key.Binding

	Burst     key.Binding
	Predict   key.Binding
	BurstSize key.Binding
	RateUp    key.Binding
	RateDown  key.Binding
	Export    key.Binding
	Add       key.Binding
	Duplicate key.Binding
	Faster    key.Binding
	Slower    key.Binding
	Restart   key.Binding
	Focus     key.Binding
	Back      key.Binding
	Edit      key.Binding
	Switch    key.Binding
	Help      key.Binding
	Quit      key.Binding
	Stop      key.Binding // stops a time-travel move that goes on in frames
	Abort     key.Binding // quits from any mode, a text input's too (where q is a letter)
}

// DefaultKeyMap is the workbench's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Play:      key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "play/pause")),
		Step:      key.NewBinding(key.WithKeys(".", "right"), key.WithHelp("./→", "step one event")),
		StepBack:  key.NewBinding(key.WithKeys(",", "left"), key.WithHelp(",/←", "step back one event")),
		PrevMark:  key.NewBinding(key.WithKeys("["), key.WithHelp("[", "back to the last burst/refusal")),
		NextMark:  key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "on to the next burst/refusal")),
		Home:      key.NewBinding(key.WithKeys("home"), key.WithHelp("home", "back to t=0")),
		End:       key.NewBinding(key.WithKeys("end"), key.WithHelp("end", "on to the end")),
		Seek:      key.NewBinding(key.WithKeys("g"), key.WithHelp("g", "go to a typed time")),
		TopKeys:   key.NewBinding(key.WithKeys("k"), key.WithHelp("k", "keyed lanes: top keys instead of the chart (again: the chart)")),
		Exact:     key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "exact durations in the log (again: rounded)")),
		Burst:     key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "send a burst now (recorded in the run)")),
		Predict:   key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "predict mode: pause before a burst or a full window's boundary, guess, see")),
		BurstSize: key.NewBinding(key.WithKeys("B"), key.WithHelp("B", "set the burst's size")),
		RateUp:    key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "source's rate ×1.25 from now")),
		RateDown:  key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "source's rate ÷1.25 from now")),
		Export:    key.NewBinding(key.WithKeys("w"), key.WithHelp("w", "write the session as a scenario file")),
		Add:       key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "add a lane")),
		Duplicate: key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "duplicate the focused lane, then edit")),
		Faster:    key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "faster")),
		Slower:    key.NewBinding(key.WithKeys("-", "_"), key.WithHelp("-", "slower")),
		Restart:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "restart (same traffic, same decisions)")),
		Focus:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "focus next lane")),
		Back:      key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "focus previous lane")),
		Edit:      key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "edit focused limiter")),
		Switch:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "switch scenario")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "this help: every key and symbol")),
		Quit:      key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Stop:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "stops")),
		Abort:     key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
	}
}

// ShortHelp is the footer's keys, most used first, in its short words; the footer shows as
// many as fit before "? help · q quit".
func (k KeyMap) ShortHelp() []key.Binding {
	short := func(b key.Binding, keys, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(b.Keys()...), key.WithHelp(keys, desc))
	}
	return []key.Binding{
		short(k.Play, "space", "play"), short(k.Step, ".", "step"), short(k.StepBack, ",", "back"),
		short(k.NextMark, "[ ]", "jump"), short(k.Seek, "g", "go to"), short(k.Focus, "tab", "lane"),
		short(k.Burst, "b", "burst"), short(k.Edit, "e", "edit"), short(k.Faster, "+/-", "speed"),
		short(k.Add, "a/d", "add lane"), short(k.Switch, "s", "scenario"),
	}
}

// FullHelp is the `?` view, in columns: time, lanes, the rest.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Play, k.Step, k.StepBack, k.PrevMark, k.NextMark, k.Home, k.End, k.Seek},
		{k.Faster, k.Slower, k.Restart},
		{k.Focus, k.Back, k.Edit, k.Add, k.Duplicate, k.TopKeys},
		{k.Predict, k.Burst, k.BurstSize, k.RateUp, k.RateDown, k.Export, k.Exact, k.Switch, k.Help, k.Quit},
	}
}
