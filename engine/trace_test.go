package engine

import (
	"bytes"
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
)

func readAll(t *testing.T, text string) ([]TraceRow, error) {
	t.Helper()
	r, err := NewTraceReader(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	var rows []TraceRow
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
	assert.Equal(t, []TraceRow{
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
	assert.Equal(t, []TraceRow{{Line: 2, At: 7, Permits: 2}}, rows)

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

func TestReplayOutput(t *testing.T) {
	tb, err := ParseStack("token-bucket:capacity=2,rate=10/1s")
	require.NoError(t, err)
	stacked, err := ParseStack("concurrency:max=1+fixed-window:limit=3,window=1s")
	require.NoError(t, err)
	in := "t_ns,permits,key\n0,1,a\n0,1,a\n0,1,a\n50000000,2,b\n100000000,1,c\n1000000000,1,d\n"
	var out bytes.Buffer
	sum, err := Replay(strings.NewReader(in), &out, [][]limiters.Spec{tb, stacked})
	require.NoError(t, err)
	recs, err := csv.NewReader(&out).ReadAll()
	require.NoError(t, err, "the output is valid CSV: specs with commas are quoted")
	require.Len(t, recs, 7)
	assert.Equal(t, []string{"t_ns", "permits", "token-bucket:capacity=2,rate=10/1s", "concurrency:max=1+fixed-window:limit=3,window=1s"}, recs[0])
	want := [][]string{
		{"0", "1", "1", "1"},
		{"0", "1", "1", "1"}, // open loop: the concurrency permit came back at once
		{"0", "1", "0", "1"},
		{"50000000", "2", "0", "0"}, // fixed window full
		{"100000000", "1", "1", "0"},
		{"1000000000", "1", "1", "1"},
	}
	assert.Equal(t, want, recs[1:])
	assert.Equal(t, int64(6), sum.Rows)
	assert.Equal(t, int64(7), sum.Permits)
	assert.Equal(t, sec, sum.Duration)
	assert.Equal(t, []int64{4, 4}, sum.Admitted)

	_, err = Replay(strings.NewReader("t_ns\n5\n4\n"), io.Discard, [][]limiters.Spec{tb})
	assert.ErrorContains(t, err, "line 3")
	assert.Equal(t, `"a,b"`, csvField("a,b"))
	assert.Equal(t, `"say ""hi"""`, csvField(`say "hi"`))
	assert.Equal(t, "plain", csvField("plain"))
}

// Replay agrees with a simulation of the same trace with a dropping client and no downstream.
func TestReplayMatchesRun(t *testing.T) {
	sc := &Scenario{Horizon: 10 * sec, Seed: 9, Client: Client{Policy: PolicyDrop},
		Lanes:   stacks(t, "sliding-window:limit=50,window=1s,slots=10", "token-bucket:capacity=5,rate=50/1s+concurrency:max=3"),
		Sources: []Source{{Kind: SourcePoisson, Rate: 80}}}
	st, err := newStream(sc.Sources[0], 0, sc.Seed, sc.Horizon)
	require.NoError(t, err)
	var trace strings.Builder
	trace.WriteString("t_ns\n")
	for {
		a, ok, err := st.next()
		require.NoError(t, err)
		if !ok {
			break
		}
		trace.WriteString(strconv.FormatInt(a.at, 10) + "\n")
	}
	res := run(t, sc)
	var stackList [][]limiters.Spec
	for _, l := range sc.Lanes {
		stackList = append(stackList, l.Stack)
	}
	sum, err := Replay(strings.NewReader(trace.String()), io.Discard, stackList)
	require.NoError(t, err)
	assert.Equal(t, res.Lanes[0].Totals.Offered, sum.Rows)
	assert.Equal(t, []int64{res.Lanes[0].Totals.Admitted, res.Lanes[1].Totals.Admitted}, sum.Admitted)
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
	assert.Equal(t, []TraceRow{{Line: 2, At: 0, Permits: MaxPermits}, {Line: 3, At: MaxTime - 1, Permits: MaxPermits}}, rows)
	rows, err = readAll(t, "t_ns,permits\n00000000000000000005,0000000001\n0000000000000000000000000000000000000006,1\n")
	require.NoError(t, err)
	assert.Equal(t, []TraceRow{{Line: 2, At: 5, Permits: 1}, {Line: 3, At: 6, Permits: 1}}, rows)
	rows, err = readAll(t, "t\n1900-01-01T00:00:00Z\n2046-01-01T00:00:00Z\n")
	require.NoError(t, err)
	assert.Equal(t, 146*365*24*time.Hour+36*24*time.Hour, rows[1].At, "146 years and the leap days")
}

// Replayed permits add up exactly: two rows of the most permits are 2·(2^31−1), where two
// rows of 2^63−1 used to report "-2 permits".
func TestReplayedPermitsAddUpExactly(t *testing.T) {
	tb, err := ParseStack("token-bucket:capacity=3,rate=100/1s")
	require.NoError(t, err)
	sum, err := Replay(strings.NewReader("t_ns,permits\n0,2147483647\n1,2147483647\n"), io.Discard, [][]limiters.Spec{tb})
	require.NoError(t, err)
	assert.Equal(t, int64(2*MaxPermits), sum.Permits)

	_, err = Replay(strings.NewReader("t_ns,permits\n0,9223372036854775807\n1,9223372036854775807\n"), io.Discard, [][]limiters.Spec{tb})
	assert.ErrorContains(t, err, "line 2: permits 9223372036854775807 is more than a request may ask for")

	// And a trace holds at most MaxTraceRows rows (lowered here to 3).
	r, err := NewTraceReader(strings.NewReader("t_ns\n0\n1\n2\n3\n"))
	require.NoError(t, err)
	r.maxRows = 3
	for range 3 {
		_, err := r.Next()
		require.NoError(t, err)
	}
	_, err = r.Next()
	assert.EqualError(t, err, "line 5: a trace holds at most 3 requests (so that their permits add up exactly)")
}
