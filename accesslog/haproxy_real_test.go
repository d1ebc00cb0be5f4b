//go:build unix

package accesslog

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// realHAProxyConf logs every request twice to standard output: raw (no header, so its %tr has
// no zone) and under an RFC 5424 header (whose time carries the zone). A stick table counts
// each X-Client's requests over 1s and refuses (429) a request when the count is above 3.
const realHAProxyConf = `global
    log stdout format raw local0
    log stdout format rfc5424 local0
    maxconn 64
defaults
    mode http
    log global
    option httplog
    option dontlognull
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend lab
    bind 127.0.0.1:{{port}}
    capture request header X-Client len 32
    http-request track-sc0 req.hdr(X-Client) table per_client
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 3 }
    default_backend app
backend per_client
    stick-table type string len 32 size 1k expire 10s store http_req_rate(1s)
backend app
    server go 127.0.0.1:{{backend}}
`

// A real HAProxy (Debian's 2.6) with a per-client stick table, in a time zone 5h30 east of
// UTC: its option httplog lines, read back (detected, and named haproxy) keyed by the
// captured X-Client, hold every request sent, in order, with its key and the status it got,
// arriving while the client was sending it (within realLogSlack). The raw lines' %tr has no zone: read
// in Options.Zone Asia/Kolkata they give the true instants, read as UTC (the default) the
// same trace 5h30 later, as the notes say; the RFC 5424 lines' header gives the zone itself.
func TestRealHAProxyLogIsReadBack(t *testing.T) {
	bin := realBinary(t, "haproxy", "/usr/sbin/haproxy", "haproxy")
	if _, err := time.LoadLocation("Asia/Kolkata"); err != nil {
		t.Skipf("no zone database for HAProxy's TZ: %v", err)
	}
	srv, addr, logPath := startHAProxy(t, bin, realHAProxyConf, "Asia/Kolkata")

	// Two groups 600ms apart: client a sends 6 at once, b and c 2 each; then a, a, c. The
	// table counts the request being decided, so a's 4th is refused (observed: a's last 3 of
	// the first group and both of the second, 5 × 429), or its 5th when one of the table's 1s
	// periods ends between a's 3rd and 4th (the count then weighs the 3 before by what is
	// left of the period, rounded down to 2).
	sent := sendGroups(t, "http://"+addr+"/api", 600*time.Millisecond,
		[]string{"a", "b", "c", "a", "b", "c", "a", "a", "a", "a"}, []string{"a", "a", "c"})
	refused := 0
	for _, s := range sent {
		require.Contains(t, []int{200, 429}, s.status)
		if s.status == 429 {
			refused++
		}
	}
	require.GreaterOrEqual(t, refused, 1, "the stick table refuses a's 4th or 5th request")
	isHeader := func(l string) bool { return strings.HasPrefix(l, "<") }
	waitLines(t, logPath, len(sent), isHeader)
	waitLines(t, logPath, len(sent), func(l string) bool { return !isHeader(l) })
	srv.stop(syscall.SIGUSR1) // HAProxy's soft stop
	all, err := os.ReadFile(logPath)
	require.NoError(t, err)
	var raw, rfc5424 strings.Builder
	for _, l := range strings.SplitAfter(string(all), "\n") {
		if isHeader(l) {
			rfc5424.WriteString(l)
		} else {
			raw.WriteString(l)
		}
	}

	for _, format := range []string{"auto", "haproxy"} {
		notes := readBack(t, []byte(rfc5424.String()), Options{Format: format, Key: "hr"}, sent, 0, true)
		require.Contains(t, strings.Join(notes, "\n"), fmt.Sprintf("%d stamps carry no time zone (the accept date %%tr) and were read in the offset of their line's RFC 5424 syslog header", len(sent)))
		readBack(t, []byte(raw.String()), Options{Format: format, Key: "hr", Zone: "Asia/Kolkata"}, sent, 0, true)
		notes = readBack(t, []byte(raw.String()), Options{Format: format, Key: "hr"}, sent, -(5*time.Hour + 30*time.Minute), false)
		require.Contains(t, strings.Join(notes, "\n"), fmt.Sprintf("%d stamps carry no time zone (the accept date %%tr) and were read in UTC", len(sent)))
	}
	var got []string
	for _, s := range sent {
		got = append(got, fmt.Sprintf("%s:%d", s.key, s.status))
	}
	t.Logf("%d requests, %d refused by the stick table (429): %s", len(sent), refused, strings.Join(got, " "))
}

// startHAProxy starts HAProxy (bin) in the foreground on a free loopback port with conf, a
// configuration whose {{port}} and {{backend}} are filled in (the backend a local server
// answering "ok"), its log written to standard output with the zone tz; it returns the
// server, its address and the log's path. The test stops it (srv.stop) or its cleanup does.
func startHAProxy(t *testing.T, bin, conf, tz string) (srv *realServer, addr, logPath string) {
	t.Helper()
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) }))
	t.Cleanup(app.Close)
	dir := t.TempDir()
	port := freePort(t)
	conf = strings.NewReplacer("{{port}}", fmt.Sprint(port), "{{backend}}", strings.TrimPrefix(app.URL, "http://127.0.0.1:")).Replace(conf)
	confPath := filepath.Join(dir, "haproxy.cfg")
	require.NoError(t, os.WriteFile(confPath, []byte(conf), 0o644))
	logPath = filepath.Join(dir, "haproxy.log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	t.Cleanup(func() { logFile.Close() })
	cmd := exec.Command(bin, "-db", "-f", confPath)
	cmd.Stdout = logFile
	cmd.Env = append(os.Environ(), "TZ="+tz)
	srv = startReal(t, "haproxy", cmd)
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	srv.waitListening(t, addr)
	return srv, addr, logPath
}
