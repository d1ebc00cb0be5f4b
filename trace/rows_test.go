package trace

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// sliceRows is a RowReader of rows held in memory, failing with err (when not nil) after them.
type sliceRows struct {
	rows           []Row
	keyed, latency bool
	err            error
	key            []byte
}

func (s *sliceRows) NextRow() (time.Duration, int, []byte, time.Duration, error) {
	if len(s.rows) == 0 {
		if s.err != nil {
			return 0, 0, nil, 0, s.err
		}
		return 0, 0, nil, 0, io.EOF
	}
	r := s.rows[0]
	s.rows = s.rows[1:]
	s.key = append(s.key[:0], r.Key...) // valid until the next call, as the interface says
	return r.At, r.Permits, s.key, r.Latency, nil
}

func (s *sliceRows) Columns() (key, latency bool) { return s.keyed, s.latency }

// csvOf is the CSV trace of rows, in the columns keyed and latency say.
func csvOf(rows []Row, keyed, latency bool) string {
	var b strings.Builder
	b.WriteString("t_ns,permits")
	if keyed {
		b.WriteString(",key")
	}
	if latency {
		b.WriteString(",latency_ns")
	}
	b.WriteString("\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%d,%d", r.At, r.Permits)
		if keyed {
			b.WriteString("," + r.Key)
		}
		if latency {
			fmt.Fprintf(&b, ",%d", r.Latency)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// readRows is every row of r and its error (nil at io.EOF).
func readRows(r interface{ Next() (Row, error) }) ([]Row, error) {
	var rows []Row
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
}

// Rows reads a RowReader's rows as Reader reads their CSV text: the same rows, lines, keys and
// errors, on random rows with now and then one out of order or out of range.
func TestRowsReadAsTheirCSVText(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 1))
	odd := []func(*Row){
		func(row *Row) { row.At -= 1 + time.Duration(r.IntN(1000)) }, // out of order (or negative)
		func(row *Row) { row.At = MaxTime + time.Duration(r.IntN(3)) },
		func(row *Row) { row.Permits = 0 },
		func(row *Row) { row.Permits = -r.IntN(5) },
		func(row *Row) { row.Permits = MaxPermits },
		func(row *Row) { row.Permits = MaxPermits + 1 + r.IntN(5) },
		func(row *Row) { row.Latency = -1 },
		func(row *Row) { row.Latency = MaxTime },
		func(row *Row) { row.Latency = MaxTime - 1 },
	}
	errorsSeen := map[string]bool{}
	for run := range 2000 {
		keyed, latency := r.IntN(2) == 0, r.IntN(2) == 0
		rows := make([]Row, r.IntN(40))
		at := time.Duration(r.Int64N(1 << 40))
		for i := range rows {
			at += time.Duration(r.Int64N(20_000))
			rows[i] = Row{At: at, Permits: 1 + r.IntN(3)}
			if keyed {
				rows[i].Key = pickKey(r)
			}
			if latency {
				rows[i].Latency = time.Duration(r.Int64N(1e9))
			}
			if r.IntN(60) == 0 {
				odd[r.IntN(len(odd))](&rows[i])
			}
		}
		text := csvOf(rows, keyed, latency)
		tr, err := NewReader(strings.NewReader(text))
		require.NoError(t, err)
		want, wantErr := readRows(tr)
		got, gotErr := readRows(NewRows(&sliceRows{rows: rows, keyed: keyed, latency: latency}))
		require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr), "run %d: %q", run, text)
		require.Equal(t, want, got, "run %d: %q", run, text)
		if wantErr != nil {
			errorsSeen[strings.SplitN(wantErr.Error(), " ", 4)[3][:12]] = true
		}
	}
	require.GreaterOrEqual(t, len(errorsSeen), 6, "the errors compared: %v", errorsSeen)
}

func pickKey(r *rand.Rand) string {
	if r.IntN(10) == 0 {
		return ""
	}
	return "tenant-" + strconv.Itoa(r.IntN(50))
}

// An error of the RowReader's own (an access log's line it cannot read) is returned as it is,
// after the rows before it; a trace's first keys are interned, one string each.
func TestRowsPassTheSourcesErrorAndInternKeys(t *testing.T) {
	broken := errors.New("line 12346, column 1: nginx combined: expected $remote_addr")
	rows := NewRows(&sliceRows{rows: []Row{{At: 1, Permits: 1, Key: "a"}, {At: 2, Permits: 2, Key: "a"}}, keyed: true, err: broken})
	first, err := rows.Next()
	require.NoError(t, err)
	second, err := rows.Next()
	require.NoError(t, err)
	require.Equal(t, Row{Line: 3, At: 2, Permits: 2, Key: "a"}, second)
	require.Same(t, unsafeData(first.Key), unsafeData(second.Key), "one string for a key seen twice")
	_, err = rows.Next()
	require.Same(t, broken, err)
}

func unsafeData(s string) *byte { return unsafe.StringData(s) }

// linedRows is a sliceRows that names each row's line of its own input (a LineReader), as
// an access log does: line[i] for the i-th row.
type linedRows struct {
	sliceRows
	lines []int
	n     int
}

func (l *linedRows) NextRow() (time.Duration, int, []byte, time.Duration, error) {
	at, permits, key, latency, err := l.sliceRows.NextRow()
	if err == nil {
		l.n++
	}
	return at, permits, key, latency, err
}

func (l *linedRows) RowLine() int { return l.lines[l.n-1] }

// A LineReader's rows carry its own lines, and an error about a row names the input's line,
// not the line the row would have in CSV text (the 3rd row is line 4 there, line 31 here).
func TestRowsNameALineReadersOwnLines(t *testing.T) {
	src := &linedRows{sliceRows: sliceRows{rows: []Row{{At: 0, Permits: 1}, {At: 5, Permits: 2}, {At: 3, Permits: 1}}}, lines: []int{2, 17, 31}}
	rows := NewRows(src)
	for _, want := range []int{2, 17} {
		row, err := rows.Next()
		require.NoError(t, err)
		require.Equal(t, want, row.Line)
	}
	_, err := rows.Next()
	require.EqualError(t, err, "line 31: time 3ns is before the previous row's 5ns: rows must be in time order")

	plain := NewRows(&sliceRows{rows: []Row{{At: 0, Permits: 1}, {At: 5, Permits: 2}, {At: 3, Permits: 1}}})
	for range 2 {
		_, err := plain.Next()
		require.NoError(t, err)
	}
	_, err = plain.Next()
	require.EqualError(t, err, "line 4: time 3ns is before the previous row's 5ns: rows must be in time order")
}

// A CSV trace's keys through Reader.recent: 3,000 distinct keys (many to a slot of its 1,024,
// keys of 0 to 20 bytes, some alike but for their length or their middle), read in a random
// order 60,000 times, each row's key is its own, and every repeat of a key among the first
// 4,096 distinct is the one string the first gave.
func TestReaderKeysThroughRecentAreTheirOwn(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	keys := make([]string, 3000)
	for i := range keys {
		switch i % 3 {
		case 0:
			keys[i] = strconv.Itoa(i)
		case 1:
			keys[i] = "client-" + strconv.Itoa(i) + "-eu" // same first and last 8 bytes as others of its length but for the middle
		default:
			keys[i] = strings.Repeat("k", i%21) + strconv.Itoa(i)
		}
	}
	var b strings.Builder
	b.WriteString("t_ns,permits,key\n")
	want := make([]string, 60000)
	for i := range want {
		want[i] = keys[rng.IntN(len(keys))]
		fmt.Fprintf(&b, "%d,1,%s\n", i, want[i])
	}
	r, err := NewReader(strings.NewReader(b.String()))
	require.NoError(t, err)
	seen := map[string]*byte{}
	for i, w := range want {
		row, err := r.Next()
		require.NoError(t, err)
		require.Equal(t, w, row.Key, "row %d", i)
		if p, ok := seen[w]; ok {
			require.Same(t, p, unsafeData(row.Key), "row %d: key %q interned once", i, w)
		} else {
			seen[w] = unsafeData(row.Key)
		}
	}
}
