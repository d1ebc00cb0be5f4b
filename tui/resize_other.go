//go:build !unix

package tui

import tea "github.com/charmbracelet/bubbletea"

// watchResize does nothing where there is no SIGWINCH: the workbench keeps the size it
// started with.
func watchResize(fd int, send func(tea.Msg)) (stop func()) { return func() {} }
