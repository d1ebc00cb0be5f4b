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
		item := nginxItem{lit: []byte(lit)}
		item.word, item.mask = litWord(item.lit)
		for range 20000 {
			b := make([]byte, rng.IntN(40))
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			require.Equal(t, bytes.Index(b, []byte(lit)), indexLit(b, &item), "%q in %q", lit, b)
		}
	}
}
