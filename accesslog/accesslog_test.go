package accesslog

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// csvOf reads log through Open and returns the CSV trace it makes and the notes.
func csvOf(t *testing.T, log string, opt Options) (string, []string) {
	t.Helper()
	in, err := Open(strings.NewReader(log), opt)
	require.NoError(t, err)
	out, err := io.ReadAll(in)
	require.NoError(t, err)
	return string(out), in.Notes()
}

const combined = `192.0.2.1 - - [02/Dec/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 12 "-" "curl/8"
192.0.2.2 - - [02/Dec/2026:10:00:00 +0000] "GET /b HTTP/1.1" 429 0 "-" "curl/8"
192.0.2.1 - - [02/Dec/2026:10:00:02 +0000] "POST /a HTTP/1.1" 200 7 "-" "curl/8"
`

// nginx's combined log, told by its content: rebased to the first request, keyed by the
// client address, at the stamps' 1s resolution (said in a note), as completion times.
func TestCombinedIsDetectedAndRebased(t *testing.T) {
	out, notes := csvOf(t, combined, Options{})
	require.Equal(t, "t_ns,permits,key\n0,1,192.0.2.1\n0,1,192.0.2.2\n2000000000,1,192.0.2.1\n", out)
	all := strings.Join(notes, "\n")
	require.Contains(t, all, "1s resolution")
}

// The same log gzip-compressed reads the same.
func TestGzipIsReadTransparently(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(combined))
	require.NoError(t, zw.Close())
	in, err := Open(&buf, Options{})
	require.NoError(t, err)
	out, err := io.ReadAll(in)
	require.NoError(t, err)
	plain, _ := csvOf(t, combined, Options{})
	require.Equal(t, plain, string(out))
}

// A log_format with $msec and $request_time: arrival is the completion stamp less the
// request's time, and rows written out of arrival order (a slow request finishing after a
// quick one that came later) are put back in order.
func TestNginxFormatArrivalIsStampLessRequestTime(t *testing.T) {
	format := "nginx:$remote_addr $msec $request_time $status"
	log := "10.0.0.1 1700000000.500 0.500 200\n" + // arrived at 1700000000.000
		"10.0.0.2 1700000000.300 0.100 200\n" + // arrived at .200
		"10.0.0.1 1700000001.000 0.000 503\n" // arrived at 1.000
	out, _ := csvOf(t, log, Options{Format: format})
	require.Equal(t, "t_ns,permits,key\n0,1,10.0.0.1\n200000000,1,10.0.0.2\n1000000000,1,10.0.0.1\n", out)
}

// Read as rows (Reader.NextRow, as replay and fit read a log), each row names its own line of
// the log (RowLine), the line Next's Record gives: rows come out in arrival order, so the 1st
// row here is the log's line 2 and the 2nd its line 1.
func TestRowLineIsTheLogsLine(t *testing.T) {
	format := "nginx:$remote_addr $msec $request_time $status"
	log := "10.0.0.2 1700000000.300 0.100 200\n" + // arrived at .200
		"10.0.0.1 1700000000.500 0.500 200\n" + // arrived at .000
		"10.0.0.1 1700000001.000 0.000 503\n"
	var lines []int
	for _, rows := range []bool{false, true} {
		in, err := Open(strings.NewReader(log), Options{Format: format})
		require.NoError(t, err)
		var got []int
		for {
			var err error
			if rows {
				_, _, _, _, err = in.Log().NextRow()
				if err == nil {
					got = append(got, in.Log().RowLine())
				}
			} else {
				var rec *Record
				rec, err = in.Log().Next()
				if err == nil {
					got = append(got, rec.Line)
				}
			}
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
		}
		lines = append(lines, got...)
		require.Equal(t, []int{2, 1, 3}, got, "read as rows: %v", rows)
	}
	require.Len(t, lines, 6)
}

// --key picks another field, --permits charges a numeric one.
func TestKeyAndPermitsFields(t *testing.T) {
	out, _ := csvOf(t, combined, Options{Key: "request_method", Permits: "body_bytes_sent"})
	require.Contains(t, out, "\n0,12,GET\n")
	require.Contains(t, out, "\n2000000000,7,POST\n")
}

// Caddy's JSON access log: ts is the completion, duration the request's time.
func TestCaddyJSON(t *testing.T) {
	log := `{"level":"info","ts":1700000000.5,"logger":"http.log.access","msg":"handled request","request":{"remote_ip":"127.0.0.1","method":"GET","uri":"/"},"duration":0.5,"size":3,"status":200}
{"level":"info","ts":1700000001.25,"logger":"http.log.access","msg":"handled request","request":{"remote_ip":"127.0.0.2","method":"GET","uri":"/"},"duration":0.25,"size":3,"status":200}
`
	out, _ := csvOf(t, log, Options{})
	require.Equal(t, "t_ns,permits,key\n0,1,127.0.0.1\n1000000000,1,127.0.0.2\n", out)
}

// An unrecognised file gets one line naming the formats tried, where the closest failed and
// the flag that names a format; never a raw encoding/csv message.
func TestUnrecognisedLogSaysWhatWasTried(t *testing.T) {
	_, err := Open(strings.NewReader("hello there\nthis is not a log\n"), Options{})
	require.Error(t, err)
	msg := err.Error()
	require.NotContains(t, msg, "\n")
	require.Contains(t, msg, "--log-format")
	require.Contains(t, msg, "combined")
	require.Contains(t, msg, "line 1")
	require.NotContains(t, msg, "bare \"")
}

// A CSV trace passes through untouched.
func TestCSVPassesThrough(t *testing.T) {
	out, notes := csvOf(t, "t_ns,permits,key\n0,1,a\n5,2,b\n", Options{})
	require.Equal(t, "t_ns,permits,key\n0,1,a\n5,2,b\n", out)
	require.Empty(t, notes)
}
