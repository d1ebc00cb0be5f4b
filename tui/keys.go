package tui

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every key of the workbench; `?` lists them (bubbles/help).
type KeyMap struct {
	Play    key.Binding
	Step    key.Binding
	Faster  key.Binding
	Slower  key.Binding
	Restart key.Binding
	Focus   key.Binding
	Back    key.Binding
	Edit    key.Binding
	Switch  key.Binding
	Help    key.Binding
	Quit    key.Binding
}

// DefaultKeyMap is the workbench's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Play:    key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "play/pause")),
		Step:    key.NewBinding(key.WithKeys(".", "right"), key.WithHelp("./→", "step one event")),
		Faster:  key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "faster")),
		Slower:  key.NewBinding(key.WithKeys("-", "_"), key.WithHelp("-", "slower")),
		Restart: key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "restart")),
		Focus:   key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "focus next lane")),
		Back:    key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "focus previous lane")),
		Edit:    key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "edit focused limiter")),
		Switch:  key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "switch scenario")),
		Help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "all keys")),
		Quit:    key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// ShortHelp is the footer line.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Play, k.Step, k.Faster, k.Slower, k.Focus, k.Edit, k.Switch, k.Help, k.Quit}
}

// FullHelp is the `?` view, in columns: time, lanes, the rest.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Play, k.Step, k.Faster, k.Slower, k.Restart},
		{k.Focus, k.Back, k.Edit},
		{k.Switch, k.Help, k.Quit},
	}
}
