package engine

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/trace"
	"github.com/stretchr/testify/require"
)

// replayRowsStacks are a global, a keyed, a waiting and a concurrency stack: every way a row's
// fields reach a decision.
var replayRowsStacks = []string{
	"token-bucket:capacity=3,rate=2/1s",
	"keys(max=30,evict=lru):token-bucket:capacity=2,rate=1/1s",
	"nginx:rate=5r/s,burst=2,delay=1",
	"concurrency:max=2 + fixed-window:limit=4,window=1s",
}

func replayRowsSpecs(t *testing.T) [][]limiters.Spec {
	var out [][]limiters.Spec
	for _, text := range replayRowsStacks {
		specs, err := ParseStack(text)
		require.NoError(t, err, text)
		out = append(out, specs)
	}
	return out
}

// textOnly hides an accesslog.Input's type, so that Replay reads the CSV text it writes
// rather than its rows.
type textOnly struct{ io.Reader }

// An access log replayed as rows gives, byte for byte, what it gives replayed as the CSV
// text "t_ns,permits,key" that accesslog.Input writes, and the same summary: with keys that
// CSV must quote (a comma, a quote, a line break) or that a trace's reader trims (spaces,
// Unicode spaces), and a "\r\n" that encoding/csv reads as "\n".
func TestReplayOfLogRowsIsReplayOfItsCSVText(t *testing.T) {
	// Keys that are one key once read back from CSV text come in pairs (" spaced " is
	// "spaced"), so that a replay keying them apart would decide otherwise.
	keys := []string{"10.0.0.1", "10.0.0.2", ` spaced `, `spaced`, `a,b`, `say \"hi\"`, `tab\tkey`, `\u00a0nbsp\u00a0`, `nbsp`,
		`line\r\nbreak`, `line\nbreak`, `cr\ronly`, `nl\nonly`, `trailing\r`, `trailing`, ``, `-`, `10.0.0.1`, `Ünïcode`}
	var log strings.Builder
	for i := range 2000 {
		// Caddy's JSON access log: ts (completion), duration, and a key from a JSON string
		// that may hold escapes.
		ts := 1700000000.0 + float64(i)*0.05 + float64(i%7)*0.01
		fmt.Fprintf(&log, `{"ts":%.3f,"duration":%.3f,"request":{"remote_ip":"%s"},"status":200}`+"\n", ts, float64(i%5)*0.02, keys[i%len(keys)])
	}
	specs := replayRowsSpecs(t)
	for _, opt := range []accesslog.Options{{Format: "caddy"}, {Format: "caddy", Spread: "uniform"}, {Format: "caddy", Reorder: 1}} {
		text, err := accesslog.Open(strings.NewReader(log.String()), opt)
		require.NoError(t, err)
		var want bytes.Buffer
		wantSum, err := Replay(textOnly{text}, &want, specs)
		require.NoError(t, err)

		rows, err := accesslog.Open(strings.NewReader(log.String()), opt)
		require.NoError(t, err)
		var got bytes.Buffer
		gotSum, err := Replay(rows, &got, specs)
		require.NoError(t, err)
		require.Equal(t, want.String(), got.String(), "%+v", opt)
		require.Equal(t, wantSum, gotSum)
		require.Equal(t, int64(2000), gotSum.Rows)
		require.Less(t, gotSum.Admitted[1], gotSum.Rows, "the keyed stack refuses some")
		require.Equal(t, text.Notes(), rows.Notes())
		rest, err := io.ReadAll(rows)
		require.NoError(t, err)
		require.Equal(t, "t_ns,permits,key\n", string(rest), "the rows were read as rows, never as text")
	}
}

// A log that fails part way fails the same either way: the rows before it decided and
// written out alike, the same error.
func TestReplayOfLogRowsFailsAsItsCSVText(t *testing.T) {
	var log strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&log, `10.0.0.%d - - [02/Dec/2026:18:03:%02d +0000] "GET / HTTP/1.1" 200 5 "-" "curl"`+"\n", i%9, i/100%60)
	}
	log.WriteString("not a log line\n")
	specs := replayRowsSpecs(t)
	open := func() *accesslog.Input {
		in, err := accesslog.Open(strings.NewReader(log.String()), accesslog.Options{Format: "combined"})
		require.NoError(t, err)
		return in
	}
	var want, got bytes.Buffer
	wantSum, wantErr := Replay(textOnly{open()}, &want, specs)
	gotSum, gotErr := Replay(open(), &got, specs)
	require.Error(t, wantErr)
	require.Equal(t, wantErr.Error(), gotErr.Error())
	require.Contains(t, gotErr.Error(), "line 3001")
	require.Equal(t, want.String(), got.String())
	require.Equal(t, wantSum, gotSum)
}

// ReplayRows of a CSV trace's reader is Replay of its text, latencies and keys included; a
// RowReader's row out of order or range is refused naming the row.
func TestReplayRowsOfATraceReader(t *testing.T) {
	text := "t_ns,permits,key,latency_ns\n0,1,a,5000000\n1000,2,b,0\n1000,1,\" a \",300000000\n200000000,3,c,1\n900000000,1,a,7\n"
	specs := replayRowsSpecs(t)
	var want, got bytes.Buffer
	wantSum, err := Replay(strings.NewReader(text), &want, specs)
	require.NoError(t, err)
	r, err := trace.NewReader(strings.NewReader(text))
	require.NoError(t, err)
	gotSum, err := ReplayRows(r, &got, specs)
	require.NoError(t, err)
	require.Equal(t, want.String(), got.String())
	require.Equal(t, wantSum, gotSum)

	for _, c := range []struct {
		rows fakeRows
		err  string
	}{
		{fakeRows{{at: 5}, {at: 4}}, "row 2: time 4ns is before the previous row's 5ns"},
		{fakeRows{{at: MaxTime}}, "row 1: time"},
		{fakeRows{{at: 1, permits: 0}}, "row 1: permits 0 is not from 1 to"},
		{fakeRows{{at: 1, permits: MaxPermits + 1}}, "row 1: permits 2147483648"},
	} {
		for i := range c.rows {
			if c.rows[i].permits == 0 && !strings.Contains(c.err, "permits 0") {
				c.rows[i].permits = 1
			}
		}
		_, err := ReplayRows(&c.rows, io.Discard, specs[:1])
		require.ErrorContains(t, err, c.err)
	}
	_, err = ReplayRows(&fakeRows{{at: 1, permits: 1}}, io.Discard, specs[1:2])
	require.ErrorContains(t, err, "the rows carry no key, and keys(max=30,evict=lru):token-bucket")
}

type fakeRow struct {
	at      time.Duration
	permits int
}

// fakeRows is a RowReader of rows without keys or latencies.
type fakeRows []fakeRow

func (f *fakeRows) NextRow() (time.Duration, int, []byte, time.Duration, error) {
	if len(*f) == 0 {
		return 0, 0, nil, 0, io.EOF
	}
	r := (*f)[0]
	*f = (*f)[1:]
	return r.at, r.permits, nil, 0, nil
}

func (f *fakeRows) Columns() (key, latency bool) { return false, false }

// Any input read as a log replays as rows exactly as it replays as the CSV text it stands for:
// the same output, the same summary, the same error (or none).
func FuzzReplayOfLogRowsIsReplayOfItsCSVText(f *testing.F) {
	for _, seed := range []string{
		`10.0.0.1 - - [02/Dec/2026:18:03:19 +0000] "GET / HTTP/1.1" 200 5 "-" "curl"` + "\n" +
			`10.0.0.2 - - [02/Dec/2026:18:03:19 +0000] "GET / HTTP/1.1" 429 5 "-" "curl"` + "\n",
		`{"ts":1700000000.5,"request":{"remote_ip":" a,\"b\"\r\n"},"duration":0.5,"status":200}` + "\n" +
			`{"ts":1700000000.25,"request":{"remote_ip":"a"},"duration":0.1,"status":200}` + "\n",
		"t_ns,permits,key\n0,1,a\n",
	} {
		f.Add(seed)
	}
	stacks := [][]limiters.Spec{}
	for _, text := range replayRowsStacks {
		specs, err := ParseStack(text)
		if err != nil {
			f.Fatal(err)
		}
		stacks = append(stacks, specs)
	}
	f.Fuzz(func(t *testing.T, log string) {
		for _, opt := range []accesslog.Options{{}, {Format: "combined"}, {Format: "caddy"}, {Format: "caddy", Spread: "uniform"}} {
			text, err := accesslog.Open(strings.NewReader(log), opt)
			if err != nil {
				continue
			}
			rows, err := accesslog.Open(strings.NewReader(log), opt)
			if err != nil {
				t.Fatal(err)
			}
			var want, got bytes.Buffer
			wantSum, wantErr := Replay(textOnly{text}, &want, stacks)
			gotSum, gotErr := Replay(rows, &got, stacks)
			if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
				t.Fatalf("%+v: error %v as text, %v as rows", opt, wantErr, gotErr)
			}
			if want.String() != got.String() {
				t.Fatalf("%+v: output\n%s as text,\n%s as rows", opt, want.String(), got.String())
			}
			if fmt.Sprint(wantSum) != fmt.Sprint(gotSum) {
				t.Fatalf("%+v: summary %+v as text, %+v as rows", opt, wantSum, gotSum)
			}
		}
	})
}
