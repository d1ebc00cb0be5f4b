package trace

// Differential tests of the trace reader: on random traces of every layout, with
// rows that stress the plain path's edges (digits at its limits, leading zeros, spaces,
// CRLF, blank lines, quotes, keys with commas or Unicode spaces, errors of every kind), read
// in chunks of random sizes, the plain path, the general path and the seed's encoding/csv
// reader (ref_test.go) must agree on every row, key and error. (engine's trace_diff_test.go
// holds Replay to the same standard.)

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/ratelab/ratelab/internal/tracegen"
	"github.com/stretchr/testify/require"
)

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
	if fmt.Sprint(want.err) != fmt.Sprint(got.err) || (want.err == tracegen.ErrBroken) != (got.err == tracegen.ErrBroken) {
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
				g := &tracegen.Gen{R: r, Nasty: max(nasty, -nasty), Benign: nasty < 0, Layout: layout}
				rows := tracegen.PickOf(r, 0, 1, 2, 5, 50, 300)
				if r.IntN(40) == 0 && nasty < 20 {
					rows = 20_000 // past the first 64 KiB buffer
				}
				text := g.Trace(rows)
				failAt := -1
				if r.IntN(8) == 0 {
					failAt = r.IntN(len(text) + 1)
				}
				maxChunk := tracegen.PickOf(r, 1, 7, 100, 5000, 1<<20)
				if len(text) > 50_000 {
					maxChunk = tracegen.PickOf(r, 1000, 5000, 1<<20) // (a byte at a time takes long)
				}
				input := func() io.Reader {
					return &tracegen.ChunkReader{R: rand.New(rand.NewPCG(uint64(len(text)), 1)), Text: text, Max: maxChunk, FailAt: failAt}
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
				if g.Benign && failAt < 0 {
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
				b[k] = tracegen.PickOf[byte](rand.New(rand.NewPCG(uint64(c), uint64(k))), '\n', '"', ',', 0, 0x80)
			}
			check(b)
		}
	}
	r := rand.New(rand.NewPCG(9, 9))
	for range diffRuns(1_000_000) {
		for k := range b {
			b[k] = tracegen.PickOf[byte](r, byte(r.IntN(256)), 'a', '\n', '"', ',', 0x2b, 0x2d, 0x0b, 0x21, 0x23)
		}
		check(b)
	}
}

// tracegen, which cannot import this package, keeps its own copy of MaxTime.
func TestTracegenMaxTimeIsMaxTime(t *testing.T) {
	require.Equal(t, int64(MaxTime), tracegen.MaxTime)
}
