package accesslog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A HAR as a browser saves it (pretty-printed, pages before entries): three requests to
// api.example.com, the second written before the first though it began after it, and one to
// a CDN whose time is not known (-1).
const harLog = `{
  "log": {
    "version": "1.2",
    "creator": {"name": "WebInspector", "version": "537.36"},
    "pages": [{"startedDateTime": "2026-12-02T09:00:00.000Z", "id": "page_1", "title": "x", "pageTimings": {}}],
    "entries": [
      {
        "startedDateTime": "2026-12-02T10:00:00.125+01:00",
        "time": 52.375,
        "request": {"method": "GET", "url": "https://api.example.com/v1/items?page=2", "httpVersion": "HTTP/2",
          "headers": [{"name": "X-Api-Key", "value": "k1"}, {"name": ":authority", "value": "api.example.com"}],
          "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
        "response": {"status": 200, "statusText": "", "httpVersion": "HTTP/2", "headers": [{"name": "RateLimit-Remaining", "value": "9"}],
          "cookies": [], "content": {"size": 12, "mimeType": "application/json"}, "redirectURL": "", "headersSize": -1, "bodySize": 12},
        "cache": {}, "timings": {"blocked": 1, "dns": -1, "connect": -1, "send": 0, "wait": 50, "receive": 1.375, "ssl": -1},
        "serverIPAddress": "203.0.113.9", "connection": "443"
      },
      {
        "startedDateTime": "2026-12-02T09:00:00.100Z",
        "time": 10,
        "request": {"method": "POST", "url": "https://api.example.com:8443/v1/items", "httpVersion": "HTTP/2",
          "headers": [{"name": "x-api-key", "value": "k2"}]},
        "response": {"status": 429, "headers": [{"name": "RateLimit-Remaining", "value": "0"}]},
        "serverIPAddress": "203.0.113.9"
      },
      {
        "startedDateTime": "2026-12-02T09:00:01.000Z",
        "time": -1,
        "request": {"method": "GET", "url": "https://cdn.example.net/app.js", "httpVersion": "HTTP/1.1", "headers": []},
        "response": {"status": 0, "headers": []}
      }
    ]
  }
}
`

// A HAR, told by its content: one JSON document whose entries are the requests, each
// arriving at its startedDateTime (zones honoured), keyed by the server's host; a header is
// --key request.headers.NAME; a record's Line is its entry's position.
func TestHAR(t *testing.T) {
	rows, notes := recordsOf(t, harLog, Options{RefusedStatus: "429"})
	require.Equal(t, []string{
		"0s api.example.com 429 refused 2",
		"25ms api.example.com 200 admitted 1",
		"900ms cdn.example.net 0 unlogged 3",
	}, rows)
	all := strings.Join(notes, "\n")
	require.Contains(t, all, "read as har (detected), 3 requests, keyed by host")
	require.Contains(t, all, "times are arrivals: startedDateTime is taken when the request begins")
	require.Contains(t, all, "1ms resolution")

	for key, want := range map[string]string{
		"request.headers.X-Api-Key":            "k2,k1,",
		"response.headers.ratelimit-remaining": "0,9,",
		"method+path":                          "POST /v1/items,GET /v1/items,GET /app.js",
		"url":                                  "https://api.example.com:8443/v1/items,https://api.example.com/v1/items?page=2,https://cdn.example.net/app.js",
		"serverIPAddress":                      "203.0.113.9,203.0.113.9,",
		"status":                               "429,200,0",
	} {
		require.Equal(t, want, strings.Join(keysOf(t, harLog, Options{Key: key}), ","), key)
	}
	_, err := Open(strings.NewReader(harLog), Options{Key: "request.cookies"})
	require.ErrorContains(t, err, `har has no field "request.cookies" (its fields: startedDateTime, time, method, url, host, path, status, httpVersion, serverIPAddress, request.headers.NAME, response.headers.NAME)`)

	// Minified, on one line longer than the 64 KiB a format is told from, it reads the same.
	pad := `"comment": "` + strings.Repeat("x", 70000) + `", `
	min := strings.Join(strings.Fields(strings.Replace(harLog, `"version": "1.2",`, `"version": "1.2", `+pad, 1)), " ")
	require.NotContains(t, min, "\n")
	rows2, _ := recordsOf(t, min, Options{RefusedStatus: "429"})
	require.Equal(t, rows, rows2)
}

// A HAR that is not one, or an entry that is not a request, is named by its entry.
func TestHARErrorsNameTheEntry(t *testing.T) {
	for _, c := range []struct{ edit, with, want string }{
		{`"startedDateTime": "2026-12-02T09:00:00.100Z",`, ``, `log.entries[1]: har: no startedDateTime`},
		{`"2026-12-02T09:00:00.100Z"`, `"yesterday"`, `log.entries[1]: har: startedDateTime "yesterday": expected a time such as 2000-10-10T13:55:36-07:00`},
		{`"status": 429`, `"status": 429.5`, `log.entries[1].response.status: har: "429.5" is not a status`},
		{`"status": 429`, `"status": "Too Many"`, `log.entries[1].response.status: har: "\"Too Many\"" is not a status`},
		{`"status": 429`, `"status": true`, `log.entries[1].response.status: har: "true" is not a status`},
		{`"time": 10,`, `"time": "fast",`, `log.entries[1].time: har: "fast" is not a number of milliseconds`},
		{`"entries": [`, `"items": [`, `har: log has no "entries"`},
		{"    ]\n  }\n}\n", "", `har: log.entries[3]: the file ends inside the JSON document, at line 32, column 1`},
		{`"method": "POST",`, `"method": "POST",,`, `har: log.entries[1]: not JSON at line 21, column 38: invalid character ','`},
		{`"method": "POST",`, `"method": ["POST"],`, `har: log.entries[1]: request.method is a JSON array, not the string HAR has there`},
		{`"method": "POST",`, `"method": "POST",!`, `har: log.entries[1]: not JSON at line 21, column 38: invalid character '!'`},
	} {
		log := strings.Replace(harLog, c.edit, c.with, 1)
		require.NotEqual(t, harLog, log, c.edit)
		err := readErr(t, log, Options{Format: "har"})
		require.ErrorContains(t, err, c.want)
		err = readErr(t, log, Options{})
		require.ErrorContains(t, err, c.want, "detected as a HAR too")
	}
}
