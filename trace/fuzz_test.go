package trace

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"testing"
)

// traceErr is the shape of every error the trace reader gives: the line, then the reason.
var traceErr = regexp.MustCompile(`^line [0-9]+: `)

// FuzzReader reads arbitrary bytes as a CSV trace. It must never panic, every error
// names its line, and every row it returns is in range and in order: times from 0 to below
// MaxTime, never before the previous row's, permits from 1 to MaxPermits, lines increasing.
// Seeds: testdata/fuzz/FuzzReader; go test runs them, scripts/fuzz.sh fuzzes.
func FuzzReader(f *testing.F) {
	f.Add([]byte("t_ns,permits,key\n0,1,a\n1000,2,b\n"))
	f.Add([]byte("t\n0.5\n1.25\n"))
	f.Add([]byte("t,key\n2024-01-01T00:00:00Z,a\n2024-01-01T00:00:01.5Z,b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			if !traceErr.MatchString(err.Error()) {
				t.Fatalf("header: the error does not name its line: %v", err)
			}
			return
		}
		var last Row
		for rows := 0; ; rows++ {
			row, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				if !traceErr.MatchString(err.Error()) {
					t.Fatalf("row %d: the error does not name its line: %v", rows+1, err)
				}
				return
			}
			switch {
			case row.At < 0 || row.At >= MaxTime:
				t.Fatalf("line %d: time %v out of range", row.Line, row.At)
			case row.At < last.At:
				t.Fatalf("line %d: time %v before line %d's %v", row.Line, row.At, last.Line, last.At)
			case row.Permits < 1 || row.Permits > MaxPermits:
				t.Fatalf("line %d: permits %d out of range", row.Line, row.Permits)
			case row.Line <= max(last.Line, 1):
				t.Fatalf("line %d after line %d", row.Line, last.Line)
			}
			last = row
		}
	})
}
