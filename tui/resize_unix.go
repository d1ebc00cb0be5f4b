//go:build unix

package tui

import (
	"os"
	"os/signal"
	"syscall"

	tea "github.com/charmbracelet/bubbletea"
	"golang.org/x/term"
)

// watchResize sends a WindowSizeMsg with the size of the terminal fd each time the window
// changes (SIGWINCH), until the returned stop is called. The goroutine it starts waits on
// the signal alone: it wakes on a resize and on nothing else.
func watchResize(fd int, send func(tea.Msg)) (stop func()) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGWINCH)
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case <-signals:
				if w, h, err := term.GetSize(fd); err == nil {
					send(tea.WindowSizeMsg{Width: w, Height: h})
				}
			}
		}
	}()
	return func() {
		signal.Stop(signals)
		close(done)
		<-finished
	}
}
