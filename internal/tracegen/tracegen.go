// Package tracegen makes CSV traces for the tests of package trace and of engine.Replay: random
// traces of every layout whose rows stress the trace reader's edges (Gen), input read in chunks
// of random sizes (ChunkReader), endless lines (EndlessTail) and long traces made as they are
// read (Generated). It is for tests only.
package tracegen

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
)

// MaxTime is trace.MaxTime, 2^62ns, in ns (this package cannot import trace, whose own tests
// import it; they check the two agree).
const MaxTime = int64(1) << 62

// PickOf returns one of choices.
func PickOf[T any](r *rand.Rand, choices ...T) T { return choices[r.IntN(len(choices))] }

// Gen writes random traces: Trace(rows) is a header of Layout ("plain", "ns" or "t") and
// rows rows, a Nasty per-mille of whose fields and line ends are odd (only ones that read the
// same when Benign, else errors of every kind too), drawn from R.
type Gen struct {
	R      *rand.Rand
	Nasty  int  // per-mille chance of a field or line being odd
	Benign bool // odd but valid: no errors
	Layout string
	at     int64
}

var headers = map[string][]string{
	// The plain layouts, as written and in other spellings that are still plain.
	"plain": {"t_ns", "t_ns,permits", "t_ns,permits,key", "\ufefft_ns,permits,key", "T_NS,Permits,KEY",
		" t_ns , permits , key ", "t_ns,permits,key\r", "t_ns,permits\r"},
	// Other layouts of integer nanoseconds: the general path.
	"ns": {"t_ns,permits,key,extra", "key,t_ns,permits", "permits,t_ns", "t_ns,key", "t,t_ns,permits",
		"t_ns,permits,note,note", `"t_ns","permits","key"`, `t_ns,"permits",key`, "t_ns,,key"},
	// Seconds and RFC 3339.
	"t": {"t", "t,permits", "t,permits,key", "key,t", `"t",permits`},
}

func (g *Gen) Trace(rows int) string {
	var b strings.Builder
	if g.R.IntN(20) == 0 {
		b.WriteString(PickOf(g.R, "\n", "\r\n", "\n\n"))
	}
	header := PickOf(g.R, headers[g.Layout]...)
	b.WriteString(header)
	b.WriteString(g.eol())
	names := strings.Split(strings.ReplaceAll(strings.TrimPrefix(header, "\ufeff"), `"`, ""), ",")
	g.at = g.R.Int64N(1_000_000_000_000)
	if g.R.IntN(4) == 0 {
		g.at = MaxTime - 1 - g.R.Int64N(1_000_000_000)
	}
	for i := range rows {
		if g.odd() {
			if g.Benign {
				b.WriteString(PickOf(g.R, "\n", "\r\n"))
			} else {
				b.WriteString(PickOf(g.R, "\n", "\r\n", " \n", "\r"+g.eol()))
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
				fields[k] = PickOf(g.R, "x", "", "1", `"q"`, "a b")
			}
		}
		if len(fields) > 1 && g.odd() && !g.Benign {
			fields = fields[:g.R.IntN(len(fields))] // fewer fields
		}
		if g.odd() {
			fields = append(fields, PickOf(g.R, "", "extra", `"quoted, extra"`, "\"multi\nline\"")) // more
		}

		b.WriteString(strings.Join(fields, ","))
		if i < rows-1 || g.R.IntN(3) > 0 {
			b.WriteString(g.eol())
		} else if g.R.IntN(2) == 0 {
			b.WriteString("\r") // the last line: no newline, perhaps a lone CR
		}
	}
	return b.String()
}

func (g *Gen) odd() bool { return g.R.IntN(1000) < g.Nasty }

func (g *Gen) eol() string {
	switch {
	case !g.odd():
	case g.Benign: // ("\r\r\n" after a quoted field is an error)
		return PickOf(g.R, "\r\n", "\n\n", "\n\r\n")
	default:
		return PickOf(g.R, "\r\n", "\r\r\n", "\n\n", "\n\r\n")
	}
	if g.Layout == "plain" && g.R.IntN(50) == 0 {
		return "\r\n"
	}
	return "\n"
}

func (g *Gen) step() {
	switch p := g.R.IntN(10); {
	case p < 2:
	case p < 9:
		g.at += g.R.Int64N(20_000)
	default:
		g.at += g.R.Int64N(1 << 40)
	}
	g.at = min(g.at, MaxTime-1)
}

func (g *Gen) ns() string {
	g.step()
	s := strconv.FormatInt(g.at, 10)
	if !g.odd() {
		return s
	}
	if g.Benign {
		return PickOf(g.R, "0"+s, "000000000000000000000"+s, " "+s+" ", "\t"+s, `"`+s+`"`, "+"+s, "\u00a0"+s, s+"\u3000")
	}
	switch g.R.IntN(18) {
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
		return strconv.FormatInt(max(g.at-1-g.R.Int64N(1000), 0), 10) // out of order, perhaps
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
		return PickOf(g.R, "999999999999999999", "1000000000000000000", "4611686018427387903", // 18 and 19 digits
			"18446744073709551621", "00000000000000000005", "9999999999999999999", s+":", s[:1]+";"+s[1:]) // 2^64+5
	case 16:
		return s[:len(s)/2] + `"` + s[len(s)/2:]
	}
	return strconv.FormatInt(g.at, 10)
}

func (g *Gen) t() string {
	g.step()
	if g.Benign || g.R.IntN(2) == 0 { // (RFC 3339 rows are all at 0: a benign trace has none)
		s := fmt.Sprintf("%d.%09d", g.at/1e9, g.at%1e9)
		switch {
		case !g.odd():
		case g.Benign:
			return PickOf(g.R, " "+s+" ", s, `"`+s+`"`, "0"+s)
		default:
			return PickOf(g.R, "", "abc", "1.0000000001", "-1", " 5 ", s+"0", "4611686019", `"`+s+`"`)
		}
		return strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if g.odd() && !g.Benign {
		return PickOf(g.R, "2026-13-01T00:00:00Z", "1500-01-01T00:00:00Z", "2026-01-02T03:04:05+01:00")
	}
	return "2026-01-02T03:04:05Z"
}

func (g *Gen) permits() string {
	if !g.odd() {
		return PickOf(g.R, "1", "1", "1", "1", "2", "3", "10", "123456789")
	}
	if g.Benign {
		return PickOf(g.R, "", "007", " 2 ", "2147483647", "999999999", "1000000000", "+1", `"2"`, "1\t", "0000000001")
	}
	return PickOf(g.R, "", "0", "00", "007", " 2 ", "2147483647", "2147483648", "999999999", "1000000000",
		"99999999999999999999", "-1", "-99999999999999999999", "x", "+1", `"2"`, "1\t", "１")
}

func (g *Gen) key() string {
	if !g.odd() {
		return PickOf(g.R, "web", "partner", "tenant-"+strconv.Itoa(g.R.IntN(100)), "", "a")
	}
	if g.Benign {
		return PickOf(g.R, " a", "a ", "\u00a0a", "a\u3000", "a\u0085", "é", "a é", `"a,b"`, `"say ""hi"""`,
			"\"two\nlines\"", "x\ty", "\ufeffk", LongKey, "\x01", "a\r", "\x7f")
	}
	return PickOf(g.R, " a", "a ", "\u00a0a", "a\u3000", "a\u0085", "é", "a é", "a,b", `a"b`, `"a,b"`, `"say ""hi"""`,
		"\"two\nlines\"", "\"open", "x\ty", "\ufeffk", LongKey, "\x01", "a\r", "\x7f")
}

// LongKey is longer than the line buffer starts.
var LongKey = strings.Repeat("k", 70_000)

// ChunkReader reads Text in chunks of random sizes up to Max (and now and then none) and, if
// FailAt >= 0, fails with ErrBroken there.
type ChunkReader struct {
	R      *rand.Rand
	Text   string
	Max    int // the longest chunk
	FailAt int // -1: none
	off    int
}

var ErrBroken = errors.New("broken pipe")

func (c *ChunkReader) Read(p []byte) (int, error) {
	end := len(c.Text)
	if c.FailAt >= 0 {
		end = min(end, c.FailAt)
	}
	if c.off >= end {
		if c.FailAt >= 0 {
			return 0, ErrBroken
		}
		return 0, io.EOF
	}
	n := min(len(p), end-c.off, 1+c.R.IntN(c.Max))
	if c.R.IntN(10) == 0 {
		return 0, nil // nothing this time
	}
	copy(p, c.Text[c.off:c.off+n])
	c.off += n
	return n, nil
}

// EndlessTail is Prefix, then Tail repeated for ever; N counts the bytes read.
type EndlessTail struct {
	Prefix string
	Tail   string
	N      int64 // bytes read
}

func (e *EndlessTail) Read(p []byte) (int, error) {
	var n int
	if int(e.N) < len(e.Prefix) {
		n = copy(p, e.Prefix[e.N:])
	} else {
		n = copy(p, e.Tail[(int(e.N)-len(e.Prefix))%len(e.Tail):])
		for n < len(p) {
			n += copy(p[n:], e.Tail)
		}
	}
	e.N += int64(n)
	return n, nil
}

// Generated is a trace of Rows rows made as it is read by Format, after Header. At the rows in Marks it runs the garbage collector and keeps the
// memory statistics.
type Generated struct {
	Header  string
	Format  func(dst []byte, i int, at int64) []byte // appends row i
	Rows    int
	Marks   map[int]*runtime.MemStats
	pending []byte
	i       int
	at      int64
}

func (g *Generated) Read(p []byte) (int, error) {
	if g.Header != "" {
		g.pending, g.Header = append(g.pending, g.Header...), ""
	}
	for len(g.pending) < len(p) && g.i < g.Rows {
		if m, ok := g.Marks[g.i]; ok {
			runtime.GC()
			runtime.ReadMemStats(m)
		}
		g.at += int64(g.i%7) * 1000
		g.pending = g.Format(g.pending, g.i, g.at)
		g.i++
	}
	if len(g.pending) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.pending)
	g.pending = g.pending[:copy(g.pending, g.pending[n:])]
	return n, nil
}

// KeyedRows are the three row writers the flat-memory tests read at length (a Generated's
// Format), each row i at time at with 1 to 3 permits and one of 100 keys "tenant-N", written
// without allocating: plain ("at,n,tenant-7", the reader's fast path), quoted ("at,n,\"tenant-7\"",
// the CSV path) and seconds ("12.000000345,n,tenant-7", the general path).
func KeyedRows() (plain, quoted, seconds func(b []byte, i int, at int64) []byte) {
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = "tenant-" + strconv.Itoa(i)
	}
	plain = func(b []byte, i int, at int64) []byte {
		b = strconv.AppendInt(b, at, 10)
		b = append(b, ',', byte('1'+i%3), ',')
		return append(append(b, keys[i%100]...), '\n')
	}
	quoted = func(b []byte, i int, at int64) []byte {
		b = strconv.AppendInt(b, at, 10)
		b = append(b, ',', byte('1'+i%3), ',', '"')
		return append(append(b, keys[i%100]...), '"', '\n')
	}
	seconds = func(b []byte, i int, at int64) []byte {
		b = strconv.AppendInt(b, at/1e9, 10)
		b = strconv.AppendInt(b, 1e9+at%1e9, 10) // "1" and nine digits: the "1" becomes "."
		b[len(b)-10] = '.'
		b = append(b, ',', byte('1'+i%3), ',')
		return append(append(b, keys[i%100]...), '\n')
	}
	return plain, quoted, seconds
}

// LongLine is a trace whose line passes the reader's 1 MiB cap (trace.MaxLine): Prefix,
// then Tail repeated for ever (an EndlessTail), the error Want, after Rows rows read.
type LongLine struct {
	Name, Prefix, Tail, Want string
	Rows                     int
}

// LongLines are the cases both trace's reader and engine.Replay must refuse with one line
// naming where the long line began, on every path of the reader (plain, general, CSV).
func LongLines() []LongLine {
	long := "line %d: the line is longer than 1 MiB (1048576 bytes)"
	return []LongLine{
		{"plain path, digits", "t_ns,permits\n1,1\n", "1", fmt.Sprintf(long, 3), 1},
		{"plain path, key", "t_ns,permits,key\n1,1,a\n2,1,", "k", fmt.Sprintf(long, 3), 1},
		{"plain path, blank line first", "t_ns\n1\n\n\n", "1", fmt.Sprintf(long, 5), 1},
		{"general path", "t,permits\n1,1\n2,1,", "x", fmt.Sprintf(long, 3), 1},
		{"header", "", "t", fmt.Sprintf(long, 1), 0},
		{"csv path: a quoted header", `"t_ns",permits` + "\n1,1\n", "1", fmt.Sprintf(long, 3), 1},
		{"csv path: a quoted field", "t_ns,key\n1,a\n2,\"", "a", fmt.Sprintf(long, 3), 1},
		{"csv path: a quote left open", "t_ns,key\n1,a\n2,\"", "a\n", "line 524289: the row that began on line 3 is longer " +
			"than 1 MiB (1048576 bytes): is a quote left open?", 1},
	}
}
