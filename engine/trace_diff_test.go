package engine

// Differential tests of Replay: on random traces of every layout, with rows that stress the
// trace reader's plain path's edges (digits at its limits, leading zeros, spaces, CRLF, blank
// lines, quotes, keys with commas or Unicode spaces, errors of every kind), read in chunks of
// random sizes, Replay's output and summary must be the seed's (trace_ref_test.go) byte for
// byte. The reader's own paths are held to the seed's reader in trace/diff_test.go, with the
// same generator.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
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

// diffRuns is n, or a fifth of it under -race or -short.
func diffRuns(n int) int {
	if raceDetector || testing.Short() {
		return max(n/5, 1)
	}
	return n
}

// TestReplayPathsAgree: Replay's output, summary and error are the seed's, byte for byte, on
// plain traces (whose numbers it copies) and others (whose numbers it writes), with a stack of
// several stages and several stacks.
func TestReplayPathsAgree(t *testing.T) {
	var specs [][]limiters.Spec
	for _, text := range []string{"token-bucket:capacity=5,rate=50/1s", "sliding-window:limit=50,window=1s,slots=10",
		"fixed-window:limit=50,window=1s+concurrency:max=3", "leaky-bucket:rate=1000/1s"} {
		st, err := ParseStack(text)
		require.NoError(t, err)
		specs = append(specs, st)
	}
	r := rand.New(rand.NewPCG(14, 4))
	for _, layout := range []string{"plain", "plain", "ns", "t"} {
		for _, nasty := range []int{0, 2, 20, -20, -200} {
			for range diffRuns(25) {
				g := &traceGen{r: r, nasty: max(nasty, -nasty), benign: nasty < 0, layout: layout}
				rows := pickOf(r, 0, 1, 50, 500, 2000)
				if r.IntN(15) == 0 {
					rows = 30_000 // several 64 KiB writes
				}
				text := g.trace(rows)
				stacks := specs[:1+r.IntN(len(specs))]
				var want, got bytes.Buffer
				wantSum, wantErr := refReplay(strings.NewReader(text), &want, stacks)
				sum, err := Replay(&chunkReader{r: rand.New(rand.NewPCG(1, 1)), text: text, max: 70_000, failAt: -1}, &got, stacks)
				require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(err), "trace %.300q", text)
				require.Equal(t, wantSum, sum)
				if !bytes.Equal(want.Bytes(), got.Bytes()) {
					require.Equal(t, want.String(), got.String(), "trace %.300q", text)
				}
			}
		}
	}
}

// A writer that fails part way stops Replay where the seed's stopped, having written the same.
func TestReplayWriteErrorAsBefore(t *testing.T) {
	spec, err := ParseStack("token-bucket:capacity=5,rate=50/1s")
	require.NoError(t, err)
	text := string(benchTrace(50_000, true))
	for _, limit := range []int{0, 1, 65535, 65536, 65537, 3*65536 - 1, 3 * 65536, 3*65536 + 1} {
		var want, got failingWriter
		want.limit, got.limit = limit, limit
		wantSum, wantErr := refReplay(strings.NewReader(text), &want, [][]limiters.Spec{spec})
		sum, err := Replay(strings.NewReader(text), &got, [][]limiters.Spec{spec})
		require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(err), "limit %d", limit)
		require.Equal(t, wantSum, sum, "limit %d", limit)
		require.Equal(t, want.buf.String(), got.buf.String(), "limit %d", limit)
		require.Equal(t, want.writes, got.writes, "limit %d", limit)
	}
}

// failingWriter takes at most limit bytes, then fails; it counts the calls.
type failingWriter struct {
	buf    bytes.Buffer
	limit  int
	writes int
}

func (f *failingWriter) Write(p []byte) (int, error) {
	f.writes++
	n := min(len(p), f.limit-f.buf.Len())
	f.buf.Write(p[:n])
	if n < len(p) {
		return n, errBroken
	}
	return n, nil
}

// When a row fills the output's 64 KiB exactly and the next row is malformed, what has been
// written is what the seed's bufio.Writer had written: nothing of that 64 KiB.
func TestReplayStopsAtAFullBufferAsBefore(t *testing.T) {
	spec, err := ParseStack("token-bucket:capacity=5,rate=50/1s")
	require.NoError(t, err)
	header := "t_ns,permits," + csvField(StackString(spec)) + "\n"
	for _, extra := range []int{-1, 0, 1} {
		var trace strings.Builder
		trace.WriteString("t_ns,permits\n")
		size := len(header)
		at := int64(1_000_000_000)
		for outChunk+extra-size >= 15+30 { // rows of 10 digits, ",1", ",d", "\n"
			trace.WriteString(strconv.FormatInt(at, 10) + ",1\n")
			size += 15
			at++
		}
		rest := outChunk + extra - size // 30 to 44: two rows of 10 to 17 digits, the second wider
		for _, width := range []int{rest / 2, rest - rest/2} {
			trace.WriteString(strconv.FormatInt(at, 10) + strings.Repeat("0", width-15) + ",1\n")
			size += width
			at++
		}
		require.Equal(t, outChunk+extra, size)
		trace.WriteString("bad\n")
		var want, got failingWriter
		want.limit, got.limit = 1<<30, 1<<30
		_, wantErr := refReplay(strings.NewReader(trace.String()), &want, [][]limiters.Spec{spec})
		_, err := Replay(strings.NewReader(trace.String()), &got, [][]limiters.Spec{spec})
		require.Error(t, wantErr)
		require.Equal(t, wantErr.Error(), err.Error())
		require.Equal(t, want.writes, got.writes, "extra %d: output %d", extra, size)
		require.Equal(t, want.buf.String(), got.buf.String())
	}
}
