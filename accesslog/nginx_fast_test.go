package accesslog

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// clfPieces are the parts a line of a combined log is built from in the tests below, each
// with its variants that a straight reading could get wrong: a quote inside $request, a
// "- " where " - " is expected, spaces in odd places, a stamp with a fraction and no zone
// (26 bytes too), a stamp that does not parse, statuses of 2 to 4 characters, the line
// ending anywhere.
var clfPieces = [][]string{
	{"10.0.1.23", "::1", "", "a b", "a - b", `"`, "10.0.0.1 ", "10.0.0.1\t", "\x80.0.0.1", "10.0.0.\x7f",
		"2001:db8::ff00:42:8329", "255.255.255.255", "0123456789abcdef", "0123456789abcdefg", "a"},
	{" - ", " -  ", "- ", " ", " -", " - - "},
	{"-", "frank", "", "a b", "a [b", " ["},
	{" [", "[", " [ ", "  ["},
	{"02/Dec/2026:18:03:19 +0000", "02/Dec/2026:18:03:20 +0000", "02/Dec/2026:18:03:19 -0700",
		"02/Dec/2026:18:03:19.12345", "02/Dex/2026:18:03:19 +0000", "02/Dec/2026:18:03:19 +000",
		"02/Dec/2026:18:03:19 +0030", "02/Dec/2026:18:03:19 +0001", "12/Dec/2026:18:03:19 +0000",
		"02/Dec/2026:18:03:19+0000 ", "02/Dec/2026:18:03:99 +0000"},
	{`] "`, `]"`, `] `, `]  "`},
	{"GET /api/items/1 HTTP/1.1", "", `GET /a"b HTTP/1.1`, `GET /a" HTTP/1.1`, "-", `x"`},
	{`" `, `"`, ` "`, `"  `},
	{"200", "429", "20", "2000", "", "abc", "-", " 200"},
	{" ", "", "  "},
	{`512 "-" "curl/8.0"`, `512 "-" "curl/8.0`, "512", `- "a b" "c"`, ""},
}

// clfLine builds a line from the pieces: mostly the first (well-formed) variant of each, now
// and then another.
func clfLine(rng *rand.Rand) []byte {
	var b []byte
	for _, p := range clfPieces {
		v := p[0]
		if rng.IntN(6) == 0 {
			v = p[rng.IntN(len(p))]
		}
		b = append(b, v...)
	}
	if rng.IntN(20) == 0 {
		b = b[:rng.IntN(len(b)+1)]
	}
	return b
}

// decodeBoth decodes line through decodeCLF's straight path and through parse's loop and
// decode's, in two readers of format, and requires the same slot, the same error and the same
// counts of zone-less stamps. ok is whether the line was read.
func decodeBoth(t testing.TB, fast, slow *Reader, n int, line []byte) (ok bool) {
	// Each with a key buffer as the reader's decoder's (64 bytes), which the straight path
	// needs to take a line.
	sf, ss := slot{key: make([]byte, 0, 64)}, slot{key: make([]byte, 0, 64)}
	ef := fast.decode(n, line, &sf, false)
	es := slow.decode(n, line, &ss, false)
	require.Equal(t, fmt.Sprint(es), fmt.Sprint(ef), "%q", line)
	if es == nil {
		requirePlainIsExact(t, fast, n, line)
		require.False(t, ss.plain)
		sf.plain = false
		require.Equal(t, string(ss.key), string(sf.key), "%q", line) // an empty key may be nil
		ss.key, sf.key = nil, nil
		require.Equal(t, ss, sf, "%q", line)
	}
	require.Equal(t, slow.zoneless, fast.zoneless, "%q", line)
	return es == nil
}

// requirePlainIsExact: plain is the straight path's note that csvKey returns the key as it
// is (the loop leaves the key to csvKey): when decodeCLF reads the line, plain is true exactly
// when the key is 1 to 16 bytes of 0x21 to 0x7F (and the line has 16 bytes to copy it from
// as two words), and csvKey then returns it unchanged.
func requirePlainIsExact(t testing.TB, fast *Reader, n int, line []byte) {
	s := slot{key: make([]byte, 0, 64)} // as the reader's decoder's
	zoneless := fast.zoneless
	defer func() { fast.zoneless = zoneless }()
	if !fast.clfFast || !fast.decodeCombined(n, line, &s) {
		return
	}
	printable := len(s.key) > 0 && len(s.key) <= 16 && len(line) >= 16
	for _, c := range s.key {
		printable = printable && c > ' ' && c < 0x80
	}
	require.Equal(t, printable, s.plain, "plain %q", line)
	if s.plain {
		var r Reader
		require.Equal(t, s.key, r.csvKey(bytes.Clone(s.key)), "%q", line)
	}
}

// clfReaders are two readers of format: one that decodes straight where it can (decodeCLF and
// parseCLFPrefix), one that never does.
func clfReaders(t testing.TB, format string) (fast, slow *Reader) {
	fast, err := newReader(nil, Options{Format: format})
	require.NoError(t, err)
	require.True(t, fast.clfFast, "%s decodes straight", format)
	slow, err = newReader(nil, Options{Format: format})
	require.NoError(t, err)
	slow.clfFast = false
	slow.f.(*nginxFormat).clfPrefix = false
	return fast, slow
}

// The straight path reads what the loop reads, and refuses what it refuses with the same
// error (line and column): 200,000 lines of the combined and the common format built from
// well-formed and malformed pieces.
func TestDecodeCLFIsDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 27))
	for _, format := range []string{"combined", "common"} {
		fast, slow := clfReaders(t, format)
		accepted, refused := 0, 0
		for n := 1; n <= 100000; n++ {
			line := clfLine(rng)
			if decodeBoth(t, fast, slow, n, line) {
				accepted++
			} else {
				refused++
			}
		}
		// Both kinds of line were tried, many times.
		require.Greater(t, accepted, 10000, format)
		require.Greater(t, refused, 10000, format)
	}
}

// Only formats that begin as combined does, with combined's roles, decode straight: another
// key, permits or a format whose $status ends the line do not.
func TestDecodeCLFOnlyForCombinedRoles(t *testing.T) {
	for _, c := range []struct {
		opt      Options
		straight bool
	}{
		{Options{Format: "combined"}, true},
		{Options{Format: "common"}, true},
		{Options{Format: `nginx:$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $gzip_ratio`}, true},
		{Options{Format: "combined", Key: "remote_user"}, false},
		{Options{Format: "combined", Key: "method+path"}, false},
		{Options{Format: "combined", Permits: "body_bytes_sent"}, false},
		{Options{Format: "combined", RefusedStatus: "429"}, true},
		{Options{Format: `nginx:$remote_addr - $remote_user [$time_local] "$request" $status `}, false},
		{Options{Format: `nginx:$remote_addr - $remote_user [$time_local] "$request" $status -- $body_bytes_sent`}, false},
		{Options{Format: `nginx:$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent $request_time`}, false},
	} {
		rd, err := newReader(nil, c.opt)
		require.NoError(t, err)
		require.Equal(t, c.straight, rd.clfFast, "%+v", c.opt)
	}
}

// The straight path is taken by the lines of a combined log (not only tried): a reader of
// the benchmark's lines decodes them all straight, and all but the first in one pass.
func TestDecodeCLFTakesCombinedLines(t *testing.T) {
	rd, err := newReader(nil, Options{Format: "combined"})
	require.NoError(t, err)
	for i, line := range bytes.Split(bytes.TrimSpace(nginxStagesLogRows(2000)), []byte{'\n'}) {
		var s slot
		require.True(t, rd.decodeCLF(i+1, line, &s), "%q", line)
	}
	// And decodeCombined reads them itself, but for the first (which reads the stamp), when
	// its slot has the reader's key buffer.
	rd, err = newReader(nil, Options{Format: "combined"})
	require.NoError(t, err)
	for i, line := range bytes.Split(bytes.TrimSpace(nginxStagesLogRows(2000)), []byte{'\n'}) {
		require.True(t, rd.decodeCombined(i+1, line, &rd.dec), "%q", line)
	}
	require.Equal(t, int64(1999), rd.combinedLines)
	require.True(t, strings.HasPrefix(nginxCombined, clfPrefixText))
	require.True(t, strings.HasPrefix(nginxCommon, clfPrefixText))
}

// FuzzDecodeCLF: on any line, the straight path and the loop decode alike (TestDecodeCLFIsDecode).
func FuzzDecodeCLF(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		f.Add(string(clfLine(rng)))
	}
	fast, slow := clfReaders(f, "combined")
	n := 0
	f.Fuzz(func(t *testing.T, line string) {
		n++
		_ = decodeBoth(t, fast, slow, n, []byte(line))
	})
}

// indexSpace finds what bytes.IndexByte finds, for random bytes of 0 to 40 from a small
// alphabet: spaces at every offset of either word it reads and past them.
func TestIndexSpaceIsIndexByte(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	alphabet := []byte(" .1a\x80\xff\x00\x21\x1f")
	for range 200000 {
		b := make([]byte, rng.IntN(41))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		require.Equal(t, bytes.IndexByte(b, ' '), indexSpace(b), "%q", b)
	}
}

// plainKey is true only of keys that csvKey returns as they are, and of every key of 8 bytes
// or more made of printable ASCII other than a space: random keys of 0 to 24 bytes from an
// alphabet of printable bytes and the bytes around its edges (0x20, 0x21, 0x7F, 0x80, \r).
func TestPlainKeyIsCSVKeyUnchanged(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	alphabet := []byte("a1.:\x20\x21\x7e\x7f\x80\xff\r\n\x00")
	var r Reader
	for range 200000 {
		key := make([]byte, rng.IntN(25))
		for i := range key {
			key[i] = alphabet[rng.IntN(len(alphabet))]
			if rng.IntN(3) > 0 {
				key[i] = alphabet[rng.IntN(5)]
			}
		}
		printable := len(key) >= 8
		for _, c := range key {
			printable = printable && c > ' ' && c < 0x80
		}
		require.Equal(t, printable, plainKey(key), "%q", key)
		if plainKey(key) {
			require.Equal(t, key, r.csvKey(bytes.Clone(key)), "%q", key)
		}
	}
}
