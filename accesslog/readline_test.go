package accesslog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// readLines reads text's lines with readLine, from a reader of text that the given wrapper
// makes read in pieces, until an error; it returns the lines and that error.
func readLines(t *testing.T, src io.Reader) ([]string, error) {
	t.Helper()
	r := &Reader{in: bufio.NewReaderSize(src, 64<<10)}
	var lines []string
	for {
		b, err := r.readLine()
		if err != nil {
			return lines, err
		}
		lines = append(lines, string(b))
		require.Equal(t, len(lines), r.line, "the line count")
	}
}

// referenceLines are text's lines as readLine must give them: split at '\n', one '\r' before
// it dropped, a last line with no '\n' a line too (if it is not empty).
func referenceLines(text string) []string {
	lines := strings.Split(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// readLine gives a log's lines as splitting its text would, whatever pieces the source gives
// them in (one byte at a time, half of what is asked, the last piece with io.EOF): 300 random
// texts of lines of 0 to 300 bytes, CRLF line ends, and no newline at the end.
func TestReadLineSplitsAsTheText(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	wrappers := map[string]func(io.Reader) io.Reader{
		"whole": func(r io.Reader) io.Reader { return r }, "one byte": iotest.OneByteReader,
		"half": iotest.HalfReader, "data and EOF": iotest.DataErrReader,
	}
	for c := range 300 {
		var text strings.Builder
		for range rng.IntN(2000) {
			text.WriteString(strings.Repeat("ab c", rng.IntN(75)))
			switch rng.IntN(4) {
			case 0:
				text.WriteString("\r\n")
			default:
				text.WriteString("\n")
			}
		}
		if rng.IntN(3) == 0 {
			text.WriteString("last\r")
		}
		for _, name := range []string{"whole", "one byte", "half", "data and EOF"} {
			if name == "one byte" && c%10 != 0 {
				continue
			}
			lines, err := readLines(t, wrappers[name](strings.NewReader(text.String())))
			require.Equal(t, io.EOF, err, "case %d, %s", c, name)
			require.Equal(t, referenceLines(text.String()), lines, "case %d, %s", c, name)
		}
	}
}

// A line longer than 1 MiB is refused, naming it, whether it ends in a newline or the file;
// one of exactly 1 MiB is read. Lines before it are read first.
func TestReadLineRefusesALineLongerThan1MiB(t *testing.T) {
	for _, tc := range []struct {
		text string
		ok   bool
	}{
		{"a\n" + strings.Repeat("x", maxLine) + "\nb\n", true},
		{"a\n" + strings.Repeat("x", maxLine) + "\r\n", true},
		{"a\n" + strings.Repeat("x", maxLine), true},
		{"a\n" + strings.Repeat("x", maxLine) + "\r", true},
		{"a\n" + strings.Repeat("x", maxLine+1) + "\r\n", false},
		{"a\n" + strings.Repeat("x", maxLine+1) + "\nb\n", false},
		{"a\n" + strings.Repeat("x", maxLine+1), false},
		{"a\n" + strings.Repeat("x", 3*maxLine) + "\n", false},
	} {
		name := fmt.Sprintf("%d bytes", len(tc.text))
		lines, err := readLines(t, iotest.HalfReader(strings.NewReader(tc.text)))
		require.Equal(t, "a", lines[0], name)
		if tc.ok {
			require.Equal(t, io.EOF, err, name)
			require.Equal(t, referenceLines(tc.text), lines, name)
			continue
		}
		require.EqualError(t, err, "line 2: the line is longer than 1 MiB (1048576 bytes)", name)
		require.Len(t, lines, 1, name)
	}
}

// A source's error is returned once the lines before it are read, and a source that returns
// nothing, again and again, is io.ErrNoProgress rather than a loop without end.
func TestReadLineReturnsTheSourcesError(t *testing.T) {
	broken := errors.New("disk on fire")
	lines, err := readLines(t, io.MultiReader(strings.NewReader("a\nb\nc"), iotest.ErrReader(broken)))
	require.Equal(t, []string{"a", "b"}, lines)
	require.ErrorIs(t, err, broken)

	lines, err = readLines(t, io.MultiReader(strings.NewReader("a\n"), stuck{}))
	require.Equal(t, []string{"a"}, lines)
	require.ErrorIs(t, err, io.ErrNoProgress)
}

// stuck is a source that returns nothing, and no error, forever.
type stuck struct{}

func (stuck) Read([]byte) (int, error) { return 0, nil }
