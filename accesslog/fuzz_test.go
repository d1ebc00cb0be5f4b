package accesslog

import (
	"io"
	"strings"
	"testing"
)

// fuzzFormats are the formats FuzzRead reads each input as: every reader, and detection.
var fuzzFormats = []Options{
	{}, {Format: "combined"}, {Format: "common"}, {Format: "haproxy"}, {Format: "caddy"},
	{Format: "json", Fields: "time=t,key=k,duration=d,permits=p,status=s"},
	{Format: "nginx:$remote_addr [$time_local] $msec $request_time \"$request\" $status $limit_req_status"},
	{Format: "alb"}, {Format: "cloudfront"}, {Format: "envoy"}, {Format: "har"},
	{Format: "envoy", Key: "method+path", Spread: "uniform", RefusedStatus: "429"},
	{Format: "har", Key: "request.headers.x-api-key"},
	{Format: "alb", Permits: "sent_bytes"},
}

// Every reader, on any input, returns records or an error: never a panic, and never more
// records than the input has lines (or, for a HAR, than it has bytes).
func FuzzRead(f *testing.F) {
	for _, seed := range []string{combined, haproxyRFC5424, haproxyRaw, albLog, envoyLog, cloudFrontLog,
		cloudFrontSubset, harLog, "t_ns,permits,key\n0,1,a\n",
		`{"ts":1700000000.5,"request":{"remote_ip":"127.0.0.1"},"duration":0.5,"status":200}` + "\n",
		"#Version: 1.0\n#Fields: date time\n2019-12-04\t21:02:31\n",
		`{"log": {"entries": [{"startedDateTime": "2026-12-02T10:00:00Z", "time": 1e400}]}}`,
		`[2026-12-02T10:00:00.000Z] "GET / HTTP/1.1" 200 RL,UH 0 1 2 - "a, b" "-" "-" "-" "-"` + "\n",
		"http 2018-07-02T22:23:00.186641Z a [::1]:2 - -1 -1 -1 - - 0 0 \"- - -\" \"\"\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, log string) {
		for _, opt := range fuzzFormats {
			in, err := Open(strings.NewReader(log), opt)
			if err != nil {
				continue
			}
			if in.Log() == nil {
				_, _ = io.Copy(io.Discard, in)
				continue
			}
			n := 0
			for {
				_, err := in.Log().Next()
				if err != nil {
					break
				}
				n++
			}
			if lines := strings.Count(log, "\n") + 1; n > lines && n > len(log) {
				t.Fatalf("%+v: %d records from %d lines", opt, n, lines)
			}
			_ = in.Notes()
		}
	})
}
