package accesslog

import (
	"bytes"
	"strconv"
	"strings"
)

// envoyFormat reads Envoy's default access log format, the line an HTTP connection manager's
// access log writes when no format is configured:
//
//	[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS% "%UPSTREAM_TRANSPORT_FAILURE_REASON%" %BYTES_RECEIVED% %BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%"
//
// which writes, for a request the local rate limit filter refused:
//
//	[2026-12-02T10:00:00.250Z] "GET /api/items HTTP/1.1" 429 RL local_rate_limited - "-" 0 18 0 - "203.0.113.7, 10.0.0.2" "curl/8.5.0" "2c1e8a4e-4d0b-4b9e-9f0e-5c3c1d6d2f10" "api.example.com" "-"
//
// and the shorter default of earlier Envoys, which had neither the response code details
// nor the connection termination details and transport failure reason (11 fields after the
// request line instead of 14):
//
//	[2016-04-15T20:17:00.310Z] "POST /api/v1/locations HTTP/2" 204 - 154 0 226 100 "10.0.35.28" "nsq2http" "cc21d9b0-cf5c-432b-8c7e-98aeb7988cd2" "locations" "tcp://10.0.2.1:80"
//
// START_TIME (to the millisecond, UTC) is when the request began, an arrival; DURATION is
// milliseconds from then to the last byte out, so the line is written about then. The
// default format logs no client address of its own: the key is client, the first address of
// X-Forwarded-For (203.0.113.7 above; Envoy appends the peer's address to it when
// use_remote_address is set, so at the edge it is the client), "-" where the request had
// none. The response flags are the logged decision: RL ("rate limited locally by the HTTP
// rate limit filter", with its 429) is a refusal, any other flags or none an admission, as
// nginx's $limit_req_status is.
type envoyFormat struct{}

var envoyFields = []string{"start_time", "request", "response_code", "response_flags",
	"response_code_details", "connection_termination_details", "upstream_transport_failure_reason",
	"bytes_received", "bytes_sent", "duration", "upstream_service_time", "x_forwarded_for",
	"user_agent", "request_id", "authority", "upstream_host",
	// read out of the fields above
	"method", "path", "protocol", "client"}

const (
	eStart = iota
	eRequest
	eCode
	eFlags
	eDetails
	eTermination
	eTransport
	eReceived
	eSent
	eDuration
	eUpstreamTime
	eXFF
	eUserAgent
	eRequestID
	eAuthority
	eUpstreamHost
	eMethod
	ePath
	eProtocol
	eClient
)

// The fields after the request line in each default, in order; quoted ones marked.
var (
	envoyLong  = []envoyField{{eCode, false}, {eFlags, false}, {eDetails, false}, {eTermination, false}, {eTransport, true}, {eReceived, false}, {eSent, false}, {eDuration, false}, {eUpstreamTime, false}, {eXFF, true}, {eUserAgent, true}, {eRequestID, true}, {eAuthority, true}, {eUpstreamHost, true}}
	envoyShort = []envoyField{{eCode, false}, {eFlags, false}, {eReceived, false}, {eSent, false}, {eDuration, false}, {eUpstreamTime, false}, {eXFF, true}, {eUserAgent, true}, {eRequestID, true}, {eAuthority, true}, {eUpstreamHost, true}}
)

type envoyField struct {
	field  int
	quoted bool
}

func (envoyFormat) label() string        { return "envoy" }
func (envoyFormat) nfields() int         { return len(envoyFields) }
func (envoyFormat) fieldNames() []string { return envoyFields }
func (envoyFormat) need(int)             {}

// envoyAliases are the names other formats (and Envoy's own command operators) give its fields.
var envoyAliases = map[string]string{"remote_addr": "client", "client_ip": "client", "status": "response_code",
	"x-forwarded-for": "x_forwarded_for", "http_x_forwarded_for": "x_forwarded_for", "user-agent": "user_agent",
	"http_user_agent": "user_agent", "x-request-id": "request_id", ":authority": "authority", "host": "authority",
	"request_method": "method", "uri": "path", "bytes": "bytes_sent", "body_bytes_sent": "bytes_sent"}

func (envoyFormat) lookup(name string) (int, bool) {
	name = strings.ToLower(strings.Trim(name, "%"))
	if a, ok := envoyAliases[name]; ok {
		name = a
	}
	for i, n := range envoyFields {
		if n == name {
			return i, true
		}
	}
	return 0, false
}

func envoyRoles() roles {
	r := noRoles()
	r.time, r.timeKind, r.timeName = eStart, timeISO, "%START_TIME%"
	r.dur, r.durKind, r.durName = eDuration, durMillis, "%DURATION%"
	r.status = eCode
	r.decision, r.flags = eFlags, true
	r.key, r.keyName = []int{eClient}, "client (the first X-Forwarded-For address)"
	return r
}

func (envoyFormat) parse(line []byte, vals []span, _ bool) (int, string) {
	for i := range vals {
		vals[i] = absent
	}
	if len(line) < 2 || line[0] != '[' {
		return 1, "expected Envoy's [%START_TIME%] as the line begins, such as [2016-04-15T20:17:00.310Z]"
	}
	e := bytes.IndexByte(line, ']')
	if e < 21 || line[5] != '-' || line[11] != 'T' {
		return 2, "expected the start time such as 2016-04-15T20:17:00.310Z, then ']'"
	}
	vals[eStart] = span{start: 1, end: int32(e)}
	pos := e + 1
	if pos >= len(line) || line[pos] != ' ' {
		return pos + 1, "expected a space after the start time"
	}
	pos++
	var got [16]span
	var quoted [16]bool
	n := 0
	for ; pos < len(line); n++ {
		s, q, next, ok := token(line, pos)
		if !ok {
			if q {
				return pos + 1, "a quoted field with no closing quote"
			}
			return pos + 1, "expected a field (Envoy's default format separates its fields by one space)"
		}
		if n == len(got) {
			return pos + 1, "expected the line to end: Envoy's default format has 15 fields after the start time (12 in earlier Envoys)"
		}
		got[n], quoted[n] = s, q
		pos = next
	}
	if n == 0 || !quoted[0] {
		return e + 3, `expected the request line in quotes, "GET /path HTTP/1.1"`
	}
	vals[eRequest] = got[0]
	var layout []envoyField
	switch n - 1 {
	case len(envoyLong):
		layout = envoyLong
	case len(envoyShort):
		layout = envoyShort
	default:
		return len(line) + 1, "expected Envoy's default format: 14 fields after the request line (11 in earlier Envoys), found " + strconv.Itoa(n-1)
	}
	for k, f := range layout {
		s := got[k+1]
		if quoted[k+1] != f.quoted {
			want := "without quotes"
			if f.quoted {
				want = "in quotes"
			}
			col := int(s.start) + 1
			if quoted[k+1] {
				col-- // at the quote
			}
			return col, "expected %" + strings.ToUpper(envoyFields[f.field]) + "% " + want
		}
		vals[f.field] = s
	}
	if c := line[vals[eCode].start:vals[eCode].end]; len(c) > 3 || num(c, len(c)) < 0 {
		return int(vals[eCode].start) + 1, "expected %RESPONSE_CODE%, such as 200 (0 when no response began)"
	}
	// The request line: method, path (its query left out) and protocol.
	r := vals[eRequest]
	requestLine(line, r, vals, eMethod, ePath)
	if sp := bytes.LastIndexByte(line[r.start:r.end], ' '); sp > 0 && vals[eMethod].start >= 0 {
		if p := r.start + int32(sp) + 1; p > vals[ePath].end {
			vals[eProtocol] = span{start: p, end: r.end}
		}
	}
	// client: the first address in X-Forwarded-For, "203.0.113.7, 10.0.0.2".
	x := vals[eXFF]
	end := x.end
	if c := bytes.IndexByte(line[x.start:x.end], ','); c >= 0 {
		end = x.start + int32(c)
	}
	vals[eClient] = span{start: x.start, end: end}
	return 0, ""
}
