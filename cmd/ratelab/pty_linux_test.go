//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openPTY opens a pseudo-terminal cols columns wide: its controlling side and the terminal
// a process writes to. It skips the test where the system has none.
func openPTY(t *testing.T, cols int) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	ioctl := func(f *os.File, req uintptr, arg unsafe.Pointer) error {
		if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); errno != 0 {
			return errno
		}
		return nil
	}
	unlock, n := int32(0), uint32(0)
	require.NoError(t, ioctl(master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)))
	require.NoError(t, ioctl(master, syscall.TIOCGPTN, unsafe.Pointer(&n)))
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { tty.Close() })
	size := struct{ rows, cols, x, y uint16 }{24, uint16(cols), 0, 0}
	require.NoError(t, ioctl(tty, syscall.TIOCSWINSZ, unsafe.Pointer(&size)))
	return master, tty
}

// onPTY runs the real binary with standard output on a terminal cols columns wide (standard
// error a pipe) and returns what the terminal showed, what went to standard error, and the
// exit code.
func onPTY(t *testing.T, cols int, args ...string) (screen, stderr string, code int) {
	t.Helper()
	bin := ratelabBinary(t)
	master, tty := openPTY(t, cols)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "TERM=dumb", "COLUMNS=")
	var errOut bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, tty, &errOut
	require.NoError(t, cmd.Start())
	tty.Close() // the child holds it: its exit ends the reads
	read := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				read <- b.String()
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else {
			require.NoError(t, err)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%v did not finish in 20s", args)
	}
	select {
	case screen = <-read:
	case <-time.After(5 * time.Second):
		t.Fatalf("%v: the terminal's output did not end", args)
	}
	return strings.ReplaceAll(screen, "\r\n", "\n"), errOut.String(), code
}

// The real binary on a real pseudo-terminal measures it: list wraps its descriptions on a
// terminal of 80 columns and prints its one-line table on one of 320, and refuses to write an
// image to it (exit 2, one sentence, not a byte of PNG).
func TestBinaryOnATerminal(t *testing.T) {
	screen, _, code := onPTY(t, 80, "list")
	require.Equal(t, 0, code, screen)
	assert.Empty(t, tooWide(screen, 80))
	assert.Contains(t, screen, "\n  token-bucket       average rate, bursts up to capacity after idle (GCRA)\n                     token-bucket:capacity=3,rate=100/1s\n")

	screen, _, code = onPTY(t, 320, "list")
	require.Equal(t, 0, code, screen)
	assert.Contains(t, screen, "\n  token-bucket       average rate, bursts up to capacity after idle (GCRA)  ")

	screen, stderr, code := onPTY(t, 80, "plot", "burst-after-idle", "--chart", "rate", "--out", "-")
	assert.Equal(t, 2, code)
	assert.Empty(t, screen)
	assert.Equal(t, "ratelab: --out -: refusing to write image bytes to a terminal: redirect standard output to a file (> chart.png) or give --out DIR\n", stderr)
}
