package linelimit

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lines up to Max pass whole; the first longer one fails with its number, after the bytes
// that fit, whatever the reads' sizes.
func TestReaderStopsAtTheFirstLongLine(t *testing.T) {
	in := "abc\nabcd\nabcde\nabc\n"
	for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in))} {
		out, err := io.ReadAll(&Reader{R: r, Max: 4})
		var long *TooLongError
		require.True(t, errors.As(err, &long), "%v", err)
		assert.Equal(t, TooLongError{Line: 3, Max: 4}, *long)
		assert.Equal(t, "abc\nabcd\nabcd", string(out))
		assert.Equal(t, "line 3: the line is longer than 4 bytes", err.Error())
	}
	out, err := io.ReadAll(&Reader{R: strings.NewReader("abcd\nabcd"), Max: 4})
	require.NoError(t, err)
	assert.Equal(t, "abcd\nabcd", string(out))
}
