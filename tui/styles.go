package tui

import "github.com/charmbracelet/lipgloss"

// Styles is every style the workbench draws with; the views receive it instead of making
// their own. In the ASCII colour profile (tests, NO_COLOR) they all render as plain text, so
// nothing on screen may depend on colour alone.
type Styles struct {
	Header   lipgloss.Style
	Lane     lipgloss.Style // an unfocused lane's title
	Focused  lipgloss.Style // the focused lane's title
	Admitted lipgloss.Style
	Rejected lipgloss.Style
	Stale    lipgloss.Style // a sliding window's stale generation
	Dim      lipgloss.Style
	Bar      lipgloss.Style // the filled part of a state bar
	Error    lipgloss.Style
	Status   lipgloss.Style
	Rule     lipgloss.Style
}

// DefaultStyles is the workbench's theme.
func DefaultStyles() Styles {
	return Styles{
		Header:   lipgloss.NewStyle().Bold(true),
		Lane:     lipgloss.NewStyle().Bold(true),
		Focused:  lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("12")),
		Admitted: lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		Rejected: lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
		Stale:    lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		Dim:      lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		Bar:      lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		Error:    lipgloss.NewStyle().Foreground(lipgloss.Color("9")).Bold(true),
		Status:   lipgloss.NewStyle().Foreground(lipgloss.Color("6")),
		Rule:     lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
	}
}
