package trace

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readAll(t *testing.T, text string) ([]Row, error) {
	t.Helper()
	r, err := NewReader(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	var rows []Row
	for {
		row, err := r.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
}

func TestTraceReaderColumns(t *testing.T) {
	rows, err := readAll(t, "extra,key,t_ns,permits,more\nx,alice,100,2,y\nx,bob,250,,y\n, ,250,1,\n")
	require.NoError(t, err)
	assert.Equal(t, []Row{
		{Line: 2, At: 100, Permits: 2, Key: "alice"},
		{Line: 3, At: 250, Permits: 1, Key: "bob"},
		{Line: 4, At: 250, Permits: 1, Key: ""},
	}, rows)

	rows, err = readAll(t, "t,key\n2026-01-02T03:04:05Z,a\n2026-01-02T03:04:05.5Z,b\n2026-01-02T04:04:06+01:00,c\n")
	require.NoError(t, err, "RFC 3339, relative to the first row; an offset is honoured")
	assert.Equal(t, []time.Duration{0, 500 * ms, sec}, []time.Duration{rows[0].At, rows[1].At, rows[2].At})

	rows, err = readAll(t, "T\n0\n0.5\n12\n12.000000001\n.25x\n")
	require.Error(t, err)
	assert.Len(t, rows, 4)
	assert.Equal(t, []time.Duration{0, 500 * ms, 12 * sec, 12*sec + 1}, []time.Duration{rows[0].At, rows[1].At, rows[2].At, rows[3].At})
	assert.ErrorContains(t, err, "line 6")

	// A spreadsheet's byte-order mark before the header.
	rows, err = readAll(t, "\ufefft_ns,permits\n7,2\n")
	require.NoError(t, err)
	assert.Equal(t, []Row{{Line: 2, At: 7, Permits: 2}}, rows)

	// t_ns wins over t wherever it is.
	rows, err = readAll(t, "t,t_ns\n99,5\n")
	require.NoError(t, err)
	assert.Equal(t, time.Duration(5), rows[0].At)
}

func TestTraceReaderErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"out of order", "t_ns\n10\n20\n15\n", "line 4: time 15ns is before the previous row's 20ns"},
		{"malformed ns", "t_ns\n10\n1.5\n", `line 3: t_ns "1.5"`},
		{"negative ns", "t_ns\n-1\n", `line 2: t_ns "-1"`},
		{"malformed seconds", "t\n1\nabc\n", `line 3: t "abc" is neither`},
		{"too precise", "t\n0.0000000001\n", "line 2: t \"0.0000000001\" has more than 9 decimal places"},
		{"bad rfc3339", "t\n2026-13-01T00:00:00Z\n", "line 2"},
		{"missing time column", "time,permits\n1,1\n", "line 1: the header \"time,permits\" has no t_ns or t column"},
		{"empty", "", "line 1: empty trace"},
		{"empty time", "t_ns,key\n5,a\n,b\n", "line 3: the time column is empty"},
		{"bad permits", "t_ns,permits\n1,1\n2,0\n", `line 3: permits "0" is not a whole number >= 1`},
		{"bad permits word", "t_ns,permits\n1,two\n", `line 2: permits "two"`},
		{"csv quote", "t_ns,key\n1,\"a\n", "line 2"},
		{"t_ns twice", "t_ns,permits,t_ns\n1,1,2\n", "line 1: the header names the t_ns column twice (columns 1 and 3)"},
		{"t twice", "t,T\n1,2\n", "line 1: the header names the t column twice (columns 1 and 2)"},
		{"permits twice", "t_ns,permits, permits\n1,1,2\n", "line 1: the header names the permits column twice (columns 2 and 3)"},
		{"key twice quoted", "\"key\",t_ns,key\n\"a\",1,b\n", "line 1: the header names the key column twice (columns 1 and 3)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(t, tc.text)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A trace's times are below MaxTime and its permits at most MaxPermits; a value above int64
// is out of range, not "not a whole number".
func TestTraceReaderRefusesValuesPastTheRange(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"t_ns at 2^62", "t_ns\n0\n4611686018427387904\n",
			"line 3: t_ns 4611686018427387904 is out of range: times must be less than 2^62ns (about 146 years) after the start"},
		{"t_ns at 2^63-1", "t_ns\n9223372036854775807\n", "line 2: t_ns 9223372036854775807 is out of range"},
		{"t_ns above int64", "t_ns\n9223372036854775808\n", "line 2: t_ns 9223372036854775808 is out of range"},
		{"t_ns far above int64", "t_ns\n99999999999999999999999\n", "line 2: t_ns 99999999999999999999999 is out of range"},
		{"t_ns at 2^64+5", "t_ns\n18446744073709551621\n", "line 2: t_ns 18446744073709551621 is out of range"},
		{"t_ns at 2^64+5 after a row", "t_ns,permits\n0,1\n18446744073709551621,1\n", "line 3: t_ns 18446744073709551621 is out of range"},
		{"seconds past 2^62ns", "t\n4611686019\n", "line 2: t 4611686019 is out of range"},
		{"seconds just past 2^62ns", "t\n4611686018.427387904\n", "line 2: t 4611686018.427387904 is out of range"},
		{"seconds above int64", "t\n99999999999999999999\n", "line 2: t 99999999999999999999 is out of range"},
		{"RFC 3339 over 146 years apart", "t\n1800-01-01T00:00:00Z\n2000-01-01T00:00:00Z\n",
			"line 3: t 2000-01-01T00:00:00Z is out of range: times must be less than 2^62ns (about 146 years) after the start (the first row's time)"},
		{"RFC 3339 over 292 years apart", "t\n1500-01-01T00:00:00Z\n2000-01-01T00:00:00Z\n", "line 3: t 2000-01-01T00:00:00Z is out of range"},
		{"permits of 2^63-1", "t_ns,permits\n0,9223372036854775807\n",
			"line 2: permits 9223372036854775807 is more than a request may ask for, 2147483647 (2^31-1, so that sums of permits stay exact)"},
		{"permits above int64", "t_ns,permits\n0,99999999999999999999\n", "line 2: permits 99999999999999999999 is more than a request may ask for"},
		{"permits of 2^31", "t_ns,permits\n0,1\n1,2147483648\n", "line 3: permits 2147483648 is more than a request may ask for"},
		{"negative huge permits", "t_ns,permits\n0,-99999999999999999999\n", `line 2: permits "-99999999999999999999" is not a whole number >= 1`},
		{"negative huge t_ns", "t_ns\n-99999999999999999999\n", `line 2: t_ns "-99999999999999999999" is not a whole number of nanoseconds >= 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(t, tc.text)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error()[:min(len(err.Error()), len(tc.want))], "%v", err)
		})
	}
	// The largest accepted values read as they are, and so do leading zeros.
	rows, err := readAll(t, "t_ns,permits\n0,2147483647\n4611686018427387903,2147483647\n")
	require.NoError(t, err)
	assert.Equal(t, []Row{{Line: 2, At: 0, Permits: MaxPermits}, {Line: 3, At: MaxTime - 1, Permits: MaxPermits}}, rows)
	rows, err = readAll(t, "t_ns,permits\n00000000000000000005,0000000001\n0000000000000000000000000000000000000006,1\n")
	require.NoError(t, err)
	assert.Equal(t, []Row{{Line: 2, At: 5, Permits: 1}, {Line: 3, At: 6, Permits: 1}}, rows)
	rows, err = readAll(t, "t\n1900-01-01T00:00:00Z\n2046-01-01T00:00:00Z\n")
	require.NoError(t, err)
	assert.Equal(t, 146*365*24*time.Hour+36*24*time.Hour, rows[1].At, "146 years and the leap days")
}

const (
	ms  = time.Millisecond
	sec = time.Second
)

// A trace holds at most MaxRows rows: past them, the error names the line.
func TestReaderStopsAtMaxRows(t *testing.T) {
	// A trace holds at most MaxRows rows (lowered here to 3).
	r, err := NewReader(strings.NewReader("t_ns\n0\n1\n2\n3\n"))
	require.NoError(t, err)
	r.maxRows = 3
	for range 3 {
		_, err := r.Next()
		require.NoError(t, err)
	}
	_, err = r.Next()
	assert.EqualError(t, err, "line 5: a trace holds at most 3 requests (so that their permits add up exactly)")
}

// TestReaderLatencyColumn: latency_ns is read on the general path (the plain layout stays
// t_ns[,permits[,key]]), its errors name the line, and it may appear once.
func TestReaderLatencyColumn(t *testing.T) {
	r, err := NewReader(strings.NewReader("t_ns,permits,latency_ns\n5,2,700\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !r.HasLatency() || r.plain != 0 {
		t.Fatalf("HasLatency %v, plain %d", r.HasLatency(), r.plain)
	}
	row, err := r.Next()
	if err != nil || row.At != 5 || row.Permits != 2 || row.Latency != 700 {
		t.Fatalf("row %+v, %v", row, err)
	}
	for _, c := range []struct{ trace, want string }{
		{"t_ns,latency_ns\n1,-3\n", `line 2: latency_ns "-3" is not a whole number of nanoseconds >= 0`},
		{"t_ns,latency_ns\n1,\n", `line 2: latency_ns "" is not a whole number`},
		{"t_ns,latency_ns\n1,9999999999999999999\n", "line 2: latency_ns 9999999999999999999 is out of range"},
		{"t_ns,latency_ns,latency_ns\n1,2,3\n", "names the latency_ns column twice"},
	} {
		r, err := NewReader(strings.NewReader(c.trace))
		if err == nil {
			_, err = r.Next()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.trace, err, c.want)
		}
	}
}

// Scan's accessors read what Next reads, and Text is the row's "t_ns,permits" as strconv
// writes them (engine.Replay copies it): on the plain path (with and without a permits
// column) it is the input's own bytes, elsewhere nil.
func TestScanReadsWhatNextReads(t *testing.T) {
	for _, tc := range []struct {
		text  string
		plain bool
	}{
		{"t_ns,permits,key\n5,2,a\n70,1,bb\n70,300,a\n", true},
		{"t_ns\n5\n9000000000\n", true},
		{"t_ns,permits\n5,2\n7,1\n", true},
		{"t_ns,permits,key,latency_ns\n5,2,a,9\n70,1,bb,0\n", false},
		{"t,permits,key\n0.5,2,a\n1.25,1,\" b\"\n", false},
	} {
		rows, err := readAll(t, tc.text)
		require.NoError(t, err)
		r, err := NewReader(strings.NewReader(tc.text))
		require.NoError(t, err)
		for i := 0; ; i++ {
			err := r.Scan()
			if err == io.EOF {
				require.Len(t, rows, i, "%q", tc.text)
				break
			}
			require.NoError(t, err)
			want := rows[i]
			assert.Equal(t, want, Row{Line: r.Line(), At: r.At(), Permits: r.Permits(), Key: r.Key(), Latency: r.Latency()}, "%q", tc.text)
			text, onePermit := r.Text()
			if !tc.plain {
				assert.Nil(t, text, "%q row %d", tc.text, i)
				continue
			}
			got := string(text)
			if onePermit {
				got += ",1"
			}
			assert.Equal(t, strconv.FormatInt(int64(want.At), 10)+","+strconv.Itoa(want.Permits), got, "%q row %d", tc.text, i)
		}
	}
}
