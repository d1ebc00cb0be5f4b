package accesslog

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// recordsOf reads log through Open and returns each record as "at key status verdict line",
// with the notes.
func recordsOf(t *testing.T, log string, opt Options) ([]string, []string) {
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
		rows = append(rows, fmt.Sprintf("%v %s %d %v %d", rec.At, rec.Key, rec.Status, rec.Logged, rec.Line))
	}
	return rows, in.Notes()
}

// keysOf is each record's key, in arrival order.
func keysOf(t *testing.T, log string, opt Options) []string {
	t.Helper()
	in, err := Open(strings.NewReader(log), opt)
	require.NoError(t, err)
	var keys []string
	for {
		rec, err := in.Log().Next()
		if err == io.EOF {
			return keys
		}
		require.NoError(t, err)
		keys = append(keys, string(rec.Key))
	}
}

// readErr is the error reading log ends in.
func readErr(t *testing.T, log string, opt Options) error {
	t.Helper()
	in, err := Open(strings.NewReader(log), opt)
	if err != nil {
		return err
	}
	_, err = io.ReadAll(in)
	require.Error(t, err)
	return err
}

// AWS's documented example line (an http request, its target 10.0.0.1), then an https one
// no target took (-1 processing times, 503), then one from the first client again: keyed by
// client_ip, each arriving at time less its processing times (0.000+0.001+0.000).
const albLog = `http 2018-07-02T22:23:00.186641Z app/my-loadbalancer/50dc6c495c0c9188 192.168.131.39:2817 10.0.0.1:80 0.000 0.001 0.000 200 200 34 366 "GET http://www.example.com:80/ HTTP/1.1" "curl/7.46.0" - - arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 "Root=1-58337262-36d228ad5d99923122bbe354" "-" "-" 0 2018-07-02T22:22:48.364000Z "forward" "-" "-" "10.0.0.1:80" "200" "-" "-"
https 2018-07-02T22:23:00.300000Z app/my-loadbalancer/50dc6c495c0c9188 192.168.131.40:51234 - -1 -1 -1 503 - 34 366 "GET https://www.example.com:443/x?y=1 HTTP/1.1" "curl/7.46.0" ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 - "Root=1-58337262-36d228ad5d99923122bbe355" "www.example.com" "arn:aws:acm:us-east-2:123456789012:certificate/12345678-1234-1234-1234-123456789012" 1 2018-07-02T22:23:00.299000Z "forward" "-" "-" "-" "-" "-" "-"
h2 2018-07-02T22:23:00.700000Z app/my-loadbalancer/50dc6c495c0c9188 192.168.131.39:2818 10.0.0.1:80 0.001 0.250 0.000 429 429 34 100 "POST https://www.example.com:443/api/items HTTP/2.0" "curl/7.46.0" ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 "Root=1-58337262-36d228ad5d99923122bbe356" "www.example.com" "-" 0 2018-07-02T22:23:00.449000Z "forward" "-" "-" "10.0.0.1:80" "429" "-" "-" TID_1234
`

// ALB's lines, told by their content: arrival is time less the processing times, a line with
// all three -1 keeps its time (said in the notes), the key is client_ip, the status
// elb_status_code; the fields are --key's by their documented names.
func TestALB(t *testing.T) {
	rows, notes := recordsOf(t, albLog, Options{RefusedStatus: "429"})
	require.Equal(t, []string{
		"0s 192.168.131.39 200 admitted 1",        // 22:23:00.186641 - 0.001s = 00.185641
		"114.359ms 192.168.131.40 503 admitted 2", // no duration: its time, 22:23:00.300
		"263.359ms 192.168.131.39 429 refused 3",  // 22:23:00.700 - 0.251s = 00.449
	}, rows)
	all := strings.Join(notes, "\n")
	require.Contains(t, all, "read as alb (detected), 3 requests, keyed by client_ip")
	require.Contains(t, all, "arrival = time - processing_time; 1 requests logged no processing_time")
	require.Contains(t, all, "1µs resolution")

	for key, want := range map[string]string{
		"method+path":             "GET /,GET /x,POST /api/items",
		"elb_status_code":         "200,503,429",
		"target:port":             "10.0.0.1:80,-,10.0.0.1:80",
		"user_agent":              "curl/7.46.0,curl/7.46.0,curl/7.46.0",
		"client_port":             "2817,51234,2818",
		"domain_name":             "-,www.example.com,www.example.com",
		"request_creation_time":   "2018-07-02T22:22:48.364000Z,2018-07-02T22:23:00.299000Z,2018-07-02T22:23:00.449000Z",
		"remote_addr":             "192.168.131.39,192.168.131.40,192.168.131.39",
		"conn_trace_id":           ",,TID_1234",
		"request_processing_time": "0.000,-1,0.001",
	} {
		require.Equal(t, want, strings.Join(keysOf(t, albLog, Options{Format: "alb", Key: key}), ","), key)
	}
}

// A line that stops being ALB's is named by line and column, with what was expected there.
func TestALBErrorsNameLineAndColumn(t *testing.T) {
	first := strings.SplitAfter(albLog, "\n")[0]
	for _, c := range []struct{ line, want string }{
		{"http 2018-07-02T22:23:00.186641Z app/x 1.2.3.4:5 - 0.1 0.1 0.1 200 200 1 2 \"GET / HTTP/1.1\"",
			`line 2, column 92: alb: expected ALB's fields up to "user_agent" (14), but the line ends after 13`},
		{"tcp 2018-07-02T22:23:00.186641Z", "line 2, column 1: alb: expected the request's type"},
		{"http 2018-07-02 app", "line 2, column 6: alb: expected the time such as 2018-07-02T22:23:00.186641Z"},
		{"http 2018-07-02T22:23:00.186641Z app/x 1.2.3.4:5 - 0.1 0.1 0.1 2000 200 1 2 \"GET / HTTP/1.1\" \"ua\"", "line 2, column 64: alb: expected elb_status_code"},
		{"http 2018-07-02T22:23:00.186641Z app/x 1.2.3.4:5 - 0.1 0.1 0.1 200 200 1 2 \"GET / HTTP/1.1 ua", "line 2, column 76: alb: a quoted field with no closing quote"},
		{"http 2018-07-02T22:23:00.186641Z app/x 1.2.3.4:5 - 0.1 x 0.1 200 200 1 2 \"GET / HTTP/1.1\" \"ua\"", `line 2, column 52: alb: processing_time "0.1 x 0.1" is not a duration`},
	} {
		err := readErr(t, first+c.line+"\n", Options{Format: "alb"})
		require.ErrorContains(t, err, c.want)
	}
}
