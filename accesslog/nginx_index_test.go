package accesslog

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// indexLit finds what bytes.Index finds, for the literals of nginx formats and random lines
// of a few bytes from a small alphabet (so that first bytes match often, at every offset of a
// word, before, inside and after the eight-byte steps).
func TestIndexLitIsBytesIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	alphabet := []byte(`" -[]x` + "\x80\xff")
	for _, lit := range []string{`"`, `" `, ` - `, ` [`, `] "`, ` "`, `" "`, " ", "\xff\x80", `] "x-x-x-x" - `} {
		item := litItem([]byte(lit))
		for range 20000 {
			b := make([]byte, rng.IntN(40))
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			require.Equal(t, bytes.Index(b, []byte(lit)), indexLit(b, &item), "%q in %q", lit, b)
		}
	}
}

// The last stamp's cache compares a stamp with the last one by words: any one byte changed, at
// any place of a stamp of any length, is a different stamp.
func TestSameAsLastStampSeesEveryByte(t *testing.T) {
	var c clfCache
	for n := 1; n <= len(c.last); n++ {
		stamp := make([]byte, n)
		for i := range stamp {
			stamp[i] = byte('a' + i)
		}
		c.lastLen = copy(c.last[:], stamp)
		require.True(t, c.sameAsLast(stamp), "length %d", n)
		for i := range stamp {
			other := bytes.Clone(stamp)
			other[i] ^= 0x40
			require.False(t, c.sameAsLast(other), "length %d, byte %d changed", n, i)
		}
	}
}
