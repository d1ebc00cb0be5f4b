package sweep

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An endless line (/dev/zero as a shard) is refused once it passes MaxCSVLine, naming the
// line, instead of being read into memory until the machine runs out (the adversarial
// harness's sweep-merge←dev-zero: 1.2 GB, then "out of memory").
func TestReadCSVRefusesAnEndlessLine(t *testing.T) {
	zeros := io.LimitReader(zeroReader{}, 64<<30) // 64 GiB, never stored
	_, err := ReadCSV(zeros, "zero.csv")
	require.EqualError(t, err, "zero.csv:1: the line is longer than 1 MiB (1048576 bytes): not a sweep CSV")

	// The same on a later line, after a good header.
	in := io.MultiReader(strings.NewReader(strings.Join(Header, ",")+"\n"), io.LimitReader(zeroReader{}, 2<<20))
	_, err = ReadCSV(in, "zero.csv")
	require.EqualError(t, err, "zero.csv:2: the line is longer than 1 MiB (1048576 bytes): not a sweep CSV")
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
