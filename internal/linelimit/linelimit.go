// Package linelimit bounds the lines of a stream: a reader that passes bytes through and
// fails at the first line longer than its limit, so that a reader of strangers' files (a
// trace spooled from standard input, a sweep's shard) stops at /dev/zero or an endless line
// instead of filling the memory or the disk with it.
package linelimit

import (
	"fmt"
	"io"
)

// Reader passes R through, failing with a *TooLongError once a line passes Max bytes (the
// newline not counted).
type Reader struct {
	R    io.Reader
	Max  int
	line int // the line being read, from 1 (0 before the first Read)
	run  int // its bytes so far
}

// TooLongError is a line of more than Max bytes.
type TooLongError struct {
	Line int // from 1
	Max  int
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("line %d: the line is longer than %d bytes", e.Line, e.Max)
}

// Read reads from R; when a line passes Max bytes it returns the bytes before the first byte
// past the limit and a *TooLongError.
func (r *Reader) Read(p []byte) (int, error) {
	if r.line == 0 {
		r.line = 1
	}
	n, err := r.R.Read(p)
	for i, b := range p[:n] {
		if b == '\n' {
			r.line++
			r.run = 0
			continue
		}
		if r.run++; r.run > r.Max {
			return i, &TooLongError{Line: r.line, Max: r.Max}
		}
	}
	return n, err
}
