package accesslog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Envoy's default format as it writes it since the response code details were added (the
// first three lines; the third refused by the local rate limit filter: 429 and RL), and as
// earlier Envoys wrote it (the fourth, 11 fields after the request line).
const envoyLog = `[2026-12-02T10:00:00.000Z] "GET /api/items?page=2 HTTP/1.1" 200 - via_upstream - "-" 0 512 12 10 "203.0.113.7" "curl/8.5.0" "2c1e8a4e-4d0b-4b9e-9f0e-5c3c1d6d2f10" "api.example.com" "10.0.2.1:80"
[2026-12-02T10:00:00.050Z] "POST /api/items HTTP/2" 201 - via_upstream - "-" 154 0 226 220 "198.51.100.2, 10.0.0.2" "Go-http-client/2.0" "0d1e8a4e-4d0b-4b9e-9f0e-5c3c1d6d2f11" "api.example.com" "10.0.2.1:80"
[2026-12-02T10:00:00.250Z] "GET /api/items HTTP/1.1" 429 RL local_rate_limited - "-" 0 18 0 - "203.0.113.7" "curl/8.5.0" "1c1e8a4e-4d0b-4b9e-9f0e-5c3c1d6d2f12" "api.example.com" "-"
[2026-12-02T10:00:00.400Z] "GET /health HTTP/1.1" 503 UH,UF 0 19 1 - "-" "kube-probe/1.29" "3c1e8a4e-4d0b-4b9e-9f0e-5c3c1d6d2f13" "api.example.com" "-"
`

// Envoy's lines, told by their content: START_TIME is the arrival, the key the first
// X-Forwarded-For address, and the RL flag the logged refusal (no --refused-status needed);
// any other flags (UH,UF: no healthy upstream) are an admission by the limiter.
func TestEnvoy(t *testing.T) {
	rows, notes := recordsOf(t, envoyLog, Options{})
	require.Equal(t, []string{
		"0s 203.0.113.7 200 admitted 1",
		"50ms 198.51.100.2 201 admitted 2",
		"250ms 203.0.113.7 429 refused 3",
		"400ms - 503 admitted 4",
	}, rows)
	all := strings.Join(notes, "\n")
	require.Contains(t, all, "read as envoy (detected), 4 requests, keyed by client (the first X-Forwarded-For address)")
	require.Contains(t, all, "times are arrivals: %START_TIME% is taken when the request begins")
	require.Contains(t, all, "1ms resolution")
	require.Contains(t, all, "1 requests logged no client (the first X-Forwarded-For address), so they share one key (- or empty): a per-client limit counts them as one client")

	for key, want := range map[string]string{
		"method+path":           "GET /api/items,POST /api/items,GET /api/items,GET /health",
		"protocol":              "HTTP/1.1,HTTP/2,HTTP/1.1,HTTP/1.1",
		"response_flags":        "-,-,RL,UH,UF",
		"x_forwarded_for":       "203.0.113.7,198.51.100.2, 10.0.0.2,203.0.113.7,-",
		"authority":             "api.example.com,api.example.com,api.example.com,api.example.com",
		"response_code_details": "via_upstream,via_upstream,local_rate_limited,",
		"upstream_host":         "10.0.2.1:80,10.0.2.1:80,-,-",
		"status":                "200,201,429,503",
		"REQ(X-REQUEST-ID)":     "",
	} {
		if key == "REQ(X-REQUEST-ID)" {
			_, err := Open(strings.NewReader(envoyLog), Options{Format: "envoy", Key: key})
			require.ErrorContains(t, err, `envoy has no field "REQ(X-REQUEST-ID)" (its fields: start_time, request,`)
			continue
		}
		require.Equal(t, want, strings.Join(keysOf(t, envoyLog, Options{Format: "envoy", Key: key}), ","), key)
	}
}

// A line that is not Envoy's default format is named by line and column.
func TestEnvoyErrorsNameLineAndColumn(t *testing.T) {
	first := strings.SplitAfter(envoyLog, "\n")[0]
	for _, c := range []struct{ line, want string }{
		{`2026-12-02T10:00:00.000Z "GET / HTTP/1.1" 200`, "line 2, column 1: envoy: expected Envoy's [%START_TIME%]"},
		{`[2026-12-02 10:00] "GET / HTTP/1.1" 200`, "line 2, column 2: envoy: expected the start time"},
		{`[2026-12-02T10:00:00.000Z] GET / HTTP/1.1 200`, `line 2, column 28: envoy: expected the request line in quotes`},
		{`[2026-12-02T10:00:00.000Z] "GET / HTTP/1.1" 200 - 0 512 12 10 "-" "-" "-" "-"`, "line 2, column 78: envoy: expected Envoy's default format: 14 fields after the request line (11 in earlier Envoys), found 10"},
		{`[2026-12-02T10:00:00.000Z] "GET / HTTP/1.1" 200 - 0 512 12 10 "-" "-" "-" "-" -`, `line 2, column 79: envoy: expected %UPSTREAM_HOST% in quotes`},
		{`[2026-12-02T10:00:00.000Z] "GET / HTTP/1.1" 2x0 - 0 512 12 10 "-" "-" "-" "-" "-"`, `line 2, column 45: envoy: expected %RESPONSE_CODE%`},
		{`[2026-12-02T10:00:00.000Z] "GET / HTTP/1.1" 200 - 0 512 1.5 10 "-" "-" "-" "-" "-"`, `line 2, column 57: envoy: %DURATION% "1.5" is not a duration`},
		{`[2026-12-02T10:00:61.000Z] "GET / HTTP/1.1" 200 - 0 512 1 10 "-" "-" "-" "-" "-"`, `line 2, column 2: envoy: %START_TIME% "2026-12-02T10:00:61.000Z": expected a time such as`},
	} {
		err := readErr(t, first+c.line+"\n", Options{Format: "envoy"})
		require.ErrorContains(t, err, c.want)
	}
}
