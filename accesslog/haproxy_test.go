package accesslog

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// HAProxy's lines as Debian's HAProxy 2.6 writes them to "log stdout format rfc5424" with
// TZ=Asia/Kolkata (+05:30), a header captured ("capture request header X-Client len 32"), the
// second request refused by a stick table (429, PR--, no server).
const haproxyRFC5424 = `<134>1 2026-12-02T17:02:09.021214+05:30 - haproxy 13675 - - 127.0.0.1:39934 [02/Dec/2026:17:02:08.005] fe be/s1 0/0/0/12/15 200 500 - - ---- 1/1/0/0/0 0/0 {a} "GET /x HTTP/1.1"
<134>1 2026-12-02T17:02:09.092367+05:30 - haproxy 13675 - - 127.0.0.1:39950 [02/Dec/2026:17:02:09.086] fe fe/<NOSRV> 0/-1/-1/-1/0 429 225 - - PR-- 1/1/0/0/0 0/0 {b|x} "GET /x HTTP/1.1"
`

// The same requests logged raw or with an RFC 3164 header: no zone anywhere on the line.
const haproxyRaw = `127.0.0.1:39934 [02/Dec/2026:17:02:08.005] fe be/s1 0/0/0/12/15 200 500 - - ---- 1/1/0/0/0 0/0 {a} "GET /x HTTP/1.1"
<134>Dec  2 17:02:09 localhost haproxy[13745]: 127.0.0.1:39950 [02/Dec/2026:17:02:09.086] fe fe/<NOSRV> 0/-1/-1/-1/0 429 225 - - PR-- 1/1/0/0/0 0/0 {b|x} "GET /x HTTP/1.1"
`

// startOf reads log through a Reader and returns the instant of its first arrival, its
// records' times, keys and statuses, and its notes.
func startOf(t *testing.T, log string, opt Options) (time.Time, []string, []string) {
	t.Helper()
	in, err := Open(strings.NewReader(log), opt)
	require.NoError(t, err)
	var rows []string
	for {
		rec, err := in.Log().Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		rows = append(rows, fmt.Sprintf("%v %s %d", rec.At, rec.Key, rec.Status))
	}
	start, ok := in.Log().Start()
	require.True(t, ok)
	return start, rows, in.Notes()
}

// The RFC 5424 header's +05:30 is the zone of HAProxy's %tr: 17:02:08.005 there is 11:32:08.005
// UTC. The captured header {a} (and {b|x}, two captures) is the key hr.
func TestHAProxyZoneFromSyslogHeader(t *testing.T) {
	start, rows, notes := startOf(t, haproxyRFC5424, Options{Key: "hr"})
	require.Equal(t, time.Date(2026, 12, 2, 11, 32, 8, 5e6, time.UTC), start)
	require.Equal(t, []string{"0s a 200", "1.081s b|x 429"}, rows)
	require.Contains(t, strings.Join(notes, "\n"), "2 stamps carry no time zone (the accept date %tr) and were read in the offset of their line's RFC 5424 syslog header")
	// Named, the format reads the same; an explicit zone does not override the header's.
	named, _, _ := startOf(t, haproxyRFC5424, Options{Format: "haproxy", Key: "hr", Zone: "America/New_York"})
	require.Equal(t, start, named)
}

// Without a zone on the line, %tr is read in Options.Zone: UTC by default (said in a note),
// an offset, or a named zone with its daylight-saving rules.
func TestHAProxyZonelessStampsReadInOptionsZone(t *testing.T) {
	start, rows, notes := startOf(t, haproxyRaw, Options{Key: "hr"})
	require.Equal(t, time.Date(2026, 12, 2, 17, 2, 8, 5e6, time.UTC), start)
	require.Equal(t, []string{"0s a 200", "1.081s b|x 429"}, rows)
	require.Contains(t, strings.Join(notes, "\n"), "2 stamps carry no time zone (the accept date %tr) and were read in UTC")

	start, _, notes = startOf(t, haproxyRaw, Options{Key: "hr", Zone: "+05:30"})
	require.Equal(t, time.Date(2026, 12, 2, 11, 32, 8, 5e6, time.UTC), start)
	require.Contains(t, strings.Join(notes, "\n"), "read in +05:30")

	// 30 Mar 2025, 01:59:59.500 UTC+1 then 03:00:00.250 UTC+2 in Paris: 750ms apart, not
	// 1h00m00.750s as the wall clock says.
	dst := `127.0.0.1:1 [30/Mar/2025:01:59:59.500] fe be/s1 0/0/0/1/1 200 5 - - ---- 1/1/0/0/0 0/0 "GET / HTTP/1.1"
127.0.0.1:2 [30/Mar/2025:03:00:00.250] fe be/s1 0/0/0/1/1 200 5 - - ---- 1/1/0/0/0 0/0 "GET / HTTP/1.1"
`
	if _, err := time.LoadLocation("Europe/Paris"); err != nil {
		t.Skipf("no zone database: %v", err)
	}
	start, rows, _ = startOf(t, dst, Options{Zone: "Europe/Paris"})
	require.Equal(t, time.Date(2025, 3, 30, 0, 59, 59, 5e8, time.UTC), start)
	require.Equal(t, []string{"0s 127.0.0.1 200", "750ms 127.0.0.1 200"}, rows)
	_, rows, _ = startOf(t, dst, Options{})
	require.Equal(t, []string{"0s 127.0.0.1 200", "1h0m0.75s 127.0.0.1 200"}, rows)
}

// A zone that is not one is refused by name; a header time without its zone names the line.
func TestHAProxyBadZones(t *testing.T) {
	for _, z := range []string{"Mars/Olympus", "+2500", "+05:61"} {
		err := Options{Zone: z}.Check()
		require.ErrorContains(t, err, "--log-zone "+z)
	}
	_, err := Open(strings.NewReader(combined), Options{Format: "csv", Zone: "UTC"})
	require.ErrorContains(t, err, "--log-zone")
	bad := strings.Replace(haproxyRFC5424, "021214+05:30", "021214", 1)
	in, err := Open(strings.NewReader(bad), Options{Format: "haproxy"})
	require.NoError(t, err)
	_, err = io.ReadAll(in)
	require.ErrorContains(t, err, `line 1, column 8: haproxy: the syslog header's time "2026-12-02T17:02:09.021214" ends in no zone`)
}

// HAProxy's own messages among the requests (it logs them to the same target) are skipped,
// counted and named by line; detection looks past them.
func TestHAProxyNoticesAreSkippedAndSaid(t *testing.T) {
	log := "Proxy lab started.\n" + haproxyRaw + "Proxy lab stopped (cumulated conns: FE: 14, BE: 8).\n" +
		"<132>1 2026-12-02T17:05:33.981298+05:30 - haproxy 19125 - - Proxy app stopped (cumulated conns: FE: 0, BE: 8).\n"
	_, rows, notes := startOf(t, log, Options{Key: "hr"})
	require.Equal(t, []string{"0s a 200", "1.081s b|x 429"}, rows)
	require.Contains(t, strings.Join(notes, "\n"), "3 lines are haproxy's own messages, not requests (no [date]), and were skipped: line 1, 4, 5")
	// A file of nothing but messages is not taken for a HAProxy log.
	_, err := Open(strings.NewReader("Proxy lab started.\nProxy app started.\n"), Options{})
	require.ErrorContains(t, err, "not a format ratelab reads")
}
