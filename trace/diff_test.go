package trace

// Differential tests of the trace reader: on random traces of every layout, with
// rows that stress the plain path's edges (digits at its limits, leading zeros, spaces,
// CRLF, blank lines, quotes, keys with commas or Unicode spaces, errors of every kind), read
// in chunks of random sizes, the plain path, the general path and the seed's encoding/csv
// reader (ref_test.go) must agree on every row, key and error. (engine's trace_diff_test.go
// holds Replay to the same standard.)

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// pick returns one of choices.
func pickOf[T any](r *rand.Rand, choices ...T) T { return choices[r.IntN(len(choices))] }

// traceGen writes random traces.
type traceGen struct {
	r      *rand.Rand
	nasty  int  // per-mille chance of a field or line being odd
	benign bool // odd but valid: no errors
	layout string
	at     int64
}

var traceHeaders = map[string][]string{
	// The plain layouts, as written and in other spellings that are still plain.
	"plain": {"t_ns", "t_ns,permits", "t_ns,permits,key", "\ufefft_ns,permits,key", "T_NS,Permits,KEY",
		" t_ns , permits , key ", "t_ns,permits,key\r", "t_ns,permits\r"},
	// Other layouts of integer nanoseconds: the general path.
	"ns": {"t_ns,permits,key,extra", "key,t_ns,permits", "permits,t_ns", "t_ns,key", "t,t_ns,permits",
		"t_ns,permits,note,note", `"t_ns","permits","key"`, `t_ns,"permits",key`, "t_ns,,key"},
	// Seconds and RFC 3339.
	"t": {"t", "t,permits", "t,permits,key", "key,t", `"t",permits`},
}

func (g *traceGen) trace(rows int) string {
	var b strings.Builder
	if g.r.IntN(20) == 0 {
		b.WriteString(pickOf(g.r, "\n", "\r\n", "\n\n"))
	}
	header := pickOf(g.r, traceHeaders[g.layout]...)
	b.WriteString(header)
	b.WriteString(g.eol())
	names := strings.Split(strings.ReplaceAll(strings.TrimPrefix(header, "\ufeff"), `"`, ""), ",")
	g.at = g.r.Int64N(1_000_000_000_000)
	if g.r.IntN(4) == 0 {
		g.at = int64(MaxTime) - 1 - g.r.Int64N(1_000_000_000)
	}
	for i := range rows {
		if g.odd() {
			if g.benign {
				b.WriteString(pickOf(g.r, "\n", "\r\n"))
			} else {
				b.WriteString(pickOf(g.r, "\n", "\r\n", " \n", "\r"+g.eol()))
			}
		}
		fields := make([]string, len(names))
		for k, name := range names {
			switch strings.ToLower(strings.TrimSpace(strings.TrimSuffix(name, "\r"))) {
			case "t_ns":
				fields[k] = g.ns()
			case "t":
				fields[k] = g.t()
			case "permits":
				fields[k] = g.permits()
			case "key":
				fields[k] = g.key()
			default:
				fields[k] = pickOf(g.r, "x", "", "1", `"q"`, "a b")
			}
		}
		if len(fields) > 1 && g.odd() && !g.benign {
			fields = fields[:g.r.IntN(len(fields))] // fewer fields
		}
		if g.odd() {
			fields = append(fields, pickOf(g.r, "", "extra", `"quoted, extra"`, "\"multi\nline\"")) // more
		}

		b.WriteString(strings.Join(fields, ","))
		if i < rows-1 || g.r.IntN(3) > 0 {
			b.WriteString(g.eol())
		} else if g.r.IntN(2) == 0 {
			b.WriteString("\r") // the last line: no newline, perhaps a lone CR
		}
	}
	return b.String()
}

func (g *traceGen) odd() bool { return g.r.IntN(1000) < g.nasty }

func (g *traceGen) eol() string {
	switch {
	case !g.odd():
	case g.benign: // ("\r\r\n" after a quoted field is an error)
		return pickOf(g.r, "\r\n", "\n\n", "\n\r\n")
	default:
		return pickOf(g.r, "\r\n", "\r\r\n", "\n\n", "\n\r\n")
	}
	if g.layout == "plain" && g.r.IntN(50) == 0 {
		return "\r\n"
	}
	return "\n"
}

func (g *traceGen) step() {
	switch p := g.r.IntN(10); {
	case p < 2:
	case p < 9:
		g.at += g.r.Int64N(20_000)
	default:
		g.at += g.r.Int64N(1 << 40)
	}
	g.at = min(g.at, int64(MaxTime)-1)
}

func (g *traceGen) ns() string {
	g.step()
	s := strconv.FormatInt(g.at, 10)
	if !g.odd() {
		return s
	}
	if g.benign {
		return pickOf(g.r, "0"+s, "000000000000000000000"+s, " "+s+" ", "\t"+s, `"`+s+`"`, "+"+s, "\u00a0"+s, s+"\u3000")
	}
	switch g.r.IntN(18) {
	case 0:
		return "0" + s // leading zeros read the same
	case 1:
		return "000000000000000000000" + s
	case 2:
		return " " + s + " "
	case 3:
		return "\t" + s
	case 4:
		return `"` + s + `"`
	case 5:
		return ""
	case 6:
		return strconv.FormatInt(max(g.at-1-g.r.Int64N(1000), 0), 10) // out of order, perhaps
	case 7:
		return "-1"
	case 8:
		return "+" + s
	case 9:
		return s + ".5"
	case 10:
		return "4611686018427387904" // MaxTime
	case 11:
		return "99999999999999999999999"
	case 12:
		return "1e9"
	case 13:
		return s + "x"
	case 14:
		return "\u00a0" + s
	case 15:
		return pickOf(g.r, "999999999999999999", "1000000000000000000", "4611686018427387903", // 18 and 19 digits
			"18446744073709551621", "00000000000000000005", "9999999999999999999", s+":", s[:1]+";"+s[1:]) // 2^64+5
	case 16:
		return s[:len(s)/2] + `"` + s[len(s)/2:]
	}
	return strconv.FormatInt(g.at, 10)
}

func (g *traceGen) t() string {
	g.step()
	if g.benign || g.r.IntN(2) == 0 { // (RFC 3339 rows are all at 0: a benign trace has none)
		s := fmt.Sprintf("%d.%09d", g.at/1e9, g.at%1e9)
		switch {
		case !g.odd():
		case g.benign:
			return pickOf(g.r, " "+s+" ", s, `"`+s+`"`, "0"+s)
		default:
			return pickOf(g.r, "", "abc", "1.0000000001", "-1", " 5 ", s+"0", "4611686019", `"`+s+`"`)
		}
		return strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if g.odd() && !g.benign {
		return pickOf(g.r, "2026-13-01T00:00:00Z", "1500-01-01T00:00:00Z", "2026-01-02T03:04:05+01:00")
	}
	return "2026-01-02T03:04:05Z"
}

func (g *traceGen) permits() string {
	if !g.odd() {
		return pickOf(g.r, "1", "1", "1", "1", "2", "3", "10", "123456789")
	}
	if g.benign {
		return pickOf(g.r, "", "007", " 2 ", "2147483647", "999999999", "1000000000", "+1", `"2"`, "1\t", "0000000001")
	}
	return pickOf(g.r, "", "0", "00", "007", " 2 ", "2147483647", "2147483648", "999999999", "1000000000",
		"99999999999999999999", "-1", "-99999999999999999999", "x", "+1", `"2"`, "1\t", "１")
}

func (g *traceGen) key() string {
	if !g.odd() {
		return pickOf(g.r, "web", "partner", "tenant-"+strconv.Itoa(g.r.IntN(100)), "", "a")
	}
	if g.benign {
		return pickOf(g.r, " a", "a ", "\u00a0a", "a\u3000", "a\u0085", "é", "a é", `"a,b"`, `"say ""hi"""`,
			"\"two\nlines\"", "x\ty", "\ufeffk", longKey, "\x01", "a\r", "\x7f")
	}
	return pickOf(g.r, " a", "a ", "\u00a0a", "a\u3000", "a\u0085", "é", "a é", "a,b", `a"b`, `"a,b"`, `"say ""hi"""`,
		"\"two\nlines\"", "\"open", "x\ty", "\ufeffk", longKey, "\x01", "a\r", "\x7f")
}

// longKey is longer than the line buffer starts.
var longKey = strings.Repeat("k", 70_000)

// chunkReader reads text in chunks of random sizes and, if failAt >= 0, fails with errBroken
// there.
type chunkReader struct {
	r      *rand.Rand
	text   string
	off    int
	max    int
	failAt int
}

var errBroken = errors.New("broken pipe")

func (c *chunkReader) Read(p []byte) (int, error) {
	end := len(c.text)
	if c.failAt >= 0 {
		end = min(end, c.failAt)
	}
	if c.off >= end {
		if c.failAt >= 0 {
			return 0, errBroken
		}
		return 0, io.EOF
	}
	n := min(len(p), end-c.off, 1+c.r.IntN(c.max))
	if c.r.IntN(10) == 0 {
		return 0, nil // nothing this time
	}
	copy(p, c.text[c.off:c.off+n])
	c.off += n
	return n, nil
}

// traceResult is what a reader made of a trace: its rows, then its error (nil at io.EOF).
type traceResult struct {
	rows []Row
	err  error
}

func (r traceResult) String() string {
	return fmt.Sprintf("%d rows, last %v, err %v", len(r.rows), r.rows[max(len(r.rows)-1, 0):], r.err)
}

type nexter interface{ Next() (Row, error) }

func readWith(open func() (nexter, error)) traceResult {
	t, err := open()
	if err != nil {
		return traceResult{err: err}
	}
	var res traceResult
	for {
		row, err := t.Next()
		if err == io.EOF {
			return res
		}
		if err != nil {
			res.err = err
			return res
		}
		res.rows = append(res.rows, row)
	}
}

func requireSameResult(t *testing.T, want, got traceResult, what, text string) {
	t.Helper()
	if fmt.Sprint(want.err) != fmt.Sprint(got.err) || (want.err == errBroken) != (got.err == errBroken) {
		require.Failf(t, what+": errors differ", "want %v\ngot  %v\ntrace %.300q", want.err, got.err, text)
	}
	if len(want.rows) != len(got.rows) {
		require.Failf(t, what+": row counts differ", "want %v\ngot  %v\ntrace %.300q", want, got, text)
	}
	for i := range want.rows {
		if want.rows[i] != got.rows[i] {
			require.Failf(t, what+": rows differ", "row %d: want %+v\ngot  %+v\ntrace %.300q", i, want.rows[i], got.rows[i], text)
		}
	}
}

// diffRuns is n, or a fifth of it under -race or -short.
func diffRuns(n int) int {
	if raceDetector || testing.Short() {
		return max(n/5, 1)
	}
	return n
}

// TestTraceReaderPathsAgree: the plain path, the general path and the seed's reader read the
// same rows, keys and errors from random traces, whatever the chunks the input comes in.
func TestTraceReaderPathsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 3))
	traces, plainRows := 0, 0
	for _, layout := range []string{"plain", "plain", "plain", "ns", "t"} {
		for _, nasty := range []int{0, 2, 20, 200, -20, -200} {
			for range diffRuns(100) {
				g := &traceGen{r: r, nasty: max(nasty, -nasty), benign: nasty < 0, layout: layout}
				rows := pickOf(r, 0, 1, 2, 5, 50, 300)
				if r.IntN(40) == 0 && nasty < 20 {
					rows = 20_000 // past the first 64 KiB buffer
				}
				text := g.trace(rows)
				failAt := -1
				if r.IntN(8) == 0 {
					failAt = r.IntN(len(text) + 1)
				}
				maxChunk := pickOf(r, 1, 7, 100, 5000, 1<<20)
				if len(text) > 50_000 {
					maxChunk = pickOf(r, 1000, 5000, 1<<20) // (a byte at a time takes long)
				}
				input := func() io.Reader {
					return &chunkReader{r: rand.New(rand.NewPCG(uint64(len(text)), 1)), text: text, max: maxChunk, failAt: failAt}
				}
				ref := readWith(func() (nexter, error) { return newRefTraceReader(input()) })
				fast := readWith(func() (nexter, error) { return NewReader(input()) })
				general := readWith(func() (nexter, error) {
					tr, err := NewReader(input())
					if err == nil {
						tr.plain = 0
					}
					return tr, err
				})
				requireSameResult(t, ref, fast, "seed reader vs plain path", text)
				requireSameResult(t, ref, general, "seed reader vs general path", text)
				if g.benign && failAt < 0 {
					require.NoError(t, ref.err, "a benign trace: %.300q", text)
				}
				traces++
				if tr, err := NewReader(input()); err == nil && tr.plain > 0 {
					for _, err := tr.Next(); err == nil; _, err = tr.Next() {
					}
					plainRows += int(tr.rows - tr.decoded)
					if nasty == 0 && failAt < 0 {
						// A clean plain trace is read on the plain path, but for a last line
						// with no newline.
						require.LessOrEqual(t, tr.decoded, int64(1), "%.300q", text)
					}
				}
			}
		}
	}
	t.Logf("%d traces, %d rows read on the plain path", traces, plainRows)
}

// digits8 reads the digits that begin every 8-byte word: each byte value in each position,
// after digits, and random words mostly of digits.
func TestDigits8(t *testing.T) {
	naive := func(b []byte) (uint64, int) {
		v, n := uint64(0), 0
		for n < len(b) && b[n] >= '0' && b[n] <= '9' {
			v = v*10 + uint64(b[n]-'0')
			n++
		}
		return v, n
	}
	check := func(b []byte) {
		wv, wn := naive(b)
		v, n := digits8(binary.LittleEndian.Uint64(b))
		if n != wn || (n > 0 && v != wv) {
			require.Failf(t, "digits8", "%q: got %d digits, %d; want %d, %d", b, n, v, wn, wv)
		}
	}
	b := make([]byte, 8)
	for pos := range 8 {
		for c := range 256 {
			for k := range b {
				b[k] = "98765432"[k]
			}
			b[pos] = byte(c)
			check(b)
		}
	}
	r := rand.New(rand.NewPCG(8, 8))
	for range diffRuns(1_000_000) {
		for k := range b {
			if r.IntN(8) == 0 {
				b[k] = byte(r.IntN(256))
			} else {
				b[k] = '0' + byte(r.IntN(10))
			}
		}
		check(b)
	}
}

// special8 finds the first '\n', '"' or ',' of every 8-byte word: each byte value in each
// position, and random words.
func TestSpecial8(t *testing.T) {
	naive := func(b []byte) int {
		for i, c := range b {
			if c == '\n' || c == '"' || c == ',' {
				return i
			}
		}
		return 8
	}
	check := func(b []byte) {
		m := special8(binary.LittleEndian.Uint64(b))
		got := 8
		if m != 0 {
			got = bits.TrailingZeros64(m) >> 3
		}
		if want := naive(b); got != want {
			require.Failf(t, "special8", "%q: got %d, want %d", b, got, want)
		}
	}
	b := make([]byte, 8)
	for pos := range 8 {
		for c := range 256 {
			copy(b, "tenant-7")
			b[pos] = byte(c)
			check(b)
			for k := pos + 1; k < 8; k++ { // and with specials after it
				b[k] = pickOf[byte](rand.New(rand.NewPCG(uint64(c), uint64(k))), '\n', '"', ',', 0, 0x80)
			}
			check(b)
		}
	}
	r := rand.New(rand.NewPCG(9, 9))
	for range diffRuns(1_000_000) {
		for k := range b {
			b[k] = pickOf[byte](r, byte(r.IntN(256)), 'a', '\n', '"', ',', 0x2b, 0x2d, 0x0b, 0x21, 0x23)
		}
		check(b)
	}
}
