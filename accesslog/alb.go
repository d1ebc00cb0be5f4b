package accesslog

import (
	"bytes"
	"strconv"
	"strings"
)

// albFormat reads an AWS Application Load Balancer's access log: one line per request,
// space-separated fields, some of them quoted, in the order AWS documents (fields it adds
// later come at the end, and are read by position as far as they are known here):
//
//	http 2018-07-02T22:23:00.186641Z app/my-loadbalancer/50dc6c495c0c9188 192.168.131.39:2817 10.0.0.1:80 0.000 0.001 0.000 200 200 34 366 "GET http://www.example.com:80/ HTTP/1.1" "curl/7.46.0" - - arn:aws:elasticloadbalancing:us-east-2:123456789012:targetgroup/my-targets/73e2d6bc24d8a067 "Root=1-58337262-36d228ad5d99923122bbe354" "-" "-" 0 2018-07-02T22:22:48.364000Z "forward" "-" "-" "10.0.0.1:80" "200" "-" "-"
//
// time (2018-07-02T22:23:00.186641Z, to the microsecond, UTC) is when the load balancer
// generated the response, so it is a completion time; the request took the sum of its three
// processing times (request, target, response: 0.000 + 0.001 + 0.000 = 1ms), each of them -1
// when not measured (no target could take the request: the sum is of the others, and a line
// whose three are -1 has no duration, its time a completion time). Its arrival is time less
// that sum: 22:23:00.185641 (request_creation_time is a field of its own, not used as the
// time). The key is the
// client's address (client_ip, the proxy's when a proxy is in front: then key by a field of
// its own); the status is elb_status_code. ALB refuses nothing on a rate: a WAF rate-based
// rule's block is its 403, named with Options.RefusedStatus.
type albFormat struct{}

// ALB's fields: its positional fields by their documented names, then those read out of them.
var albFields = []string{"type", "time", "elb", "client:port", "target:port",
	"request_processing_time", "target_processing_time", "response_processing_time",
	"elb_status_code", "target_status_code", "received_bytes", "sent_bytes", "request", "user_agent",
	"ssl_cipher", "ssl_protocol", "target_group_arn", "trace_id", "domain_name", "chosen_cert_arn",
	"matched_rule_priority", "request_creation_time", "actions_executed", "redirect_url",
	"error_reason", "target:port_list", "target_status_code_list", "classification",
	"classification_reason", "conn_trace_id",
	// read out of the fields above
	"client_ip", "client_port", "target_ip", "target_port", "method", "path", "processing_time"}

const (
	albType         = 0
	albTime         = 1
	albClient       = 3
	albTarget       = 4
	albReqProc      = 5
	albRespProc     = 7
	albStatus       = 8
	albRequest      = 12
	albUserAgent    = 13
	albPositional   = 30 // fields read by position; those after are derived
	albClientIP     = 30
	albClientPort   = 31
	albTargetIP     = 32
	albTargetPort   = 33
	albMethod       = 34
	albPath         = 35
	albProcessing   = 36
	albMinimumCount = albUserAgent + 1 // every ALB line has at least its fields up to user_agent
)

func (albFormat) label() string        { return "alb" }
func (albFormat) nfields() int         { return len(albFields) }
func (albFormat) fieldNames() []string { return albFields }
func (albFormat) need(int)             {}

// albAliases are the names the other formats give ALB's fields.
var albAliases = map[string]string{"remote_addr": "client_ip", "status": "elb_status_code",
	"user-agent": "user_agent", "http_user_agent": "user_agent", "bytes": "sent_bytes", "body_bytes_sent": "sent_bytes",
	"duration": "processing_time", "request_method": "method", "uri": "path"}

func (albFormat) lookup(name string) (int, bool) {
	name = strings.ToLower(name)
	if a, ok := albAliases[name]; ok {
		name = a
	}
	for i, n := range albFields {
		if n == name {
			return i, true
		}
	}
	return 0, false
}

func albRoles() roles {
	r := noRoles()
	r.time, r.timeKind, r.timeName = albTime, timeISO, "time"
	r.dur, r.durKind, r.durName = albProcessing, durSum, "processing_time"
	r.completion = true
	r.status = albStatus
	r.key, r.keyName = []int{albClientIP}, "client_ip"
	return r
}

// token reads the space-separated field at line[pos:]. A quoted field runs to the quote that
// ends the line or is followed by a space (ALB and Envoy write a value's quotes as they are);
// its span is its text inside the quotes. next is where the field after it starts (past one
// space), beyond len(line) when the line ends with it. ok is false where no field starts at
// pos (the line ends, two spaces) or a quote does not close.
func token(line []byte, pos int) (s span, quoted bool, next int, ok bool) {
	if pos >= len(line) || line[pos] == ' ' {
		return absent, false, pos, false
	}
	if line[pos] == '"' {
		for j := pos + 1; j < len(line); j++ {
			if line[j] == '"' && (j+1 == len(line) || line[j+1] == ' ') {
				return span{start: int32(pos + 1), end: int32(j)}, true, j + 2, true
			}
		}
		return absent, true, pos, false
	}
	end := bytes.IndexByte(line[pos:], ' ')
	if end < 0 {
		end = len(line) - pos
	}
	return span{start: int32(pos), end: int32(pos + end)}, false, pos + end + 1, true
}

// hostPort splits "192.168.131.39:2817" (or "[2001:db8::1]:443") at its last colon into
// address and port; a field with no colon ("-") is all address.
func hostPort(line []byte, s span) (host, port span) {
	v := line[s.start:s.end]
	c := bytes.LastIndexByte(v, ':')
	if c < 0 {
		return s, absent
	}
	host, port = span{start: s.start, end: s.start + int32(c)}, span{start: s.start + int32(c) + 1, end: s.end}
	if c >= 2 && v[0] == '[' && v[c-1] == ']' {
		host = span{start: s.start + 1, end: s.start + int32(c) - 1}
	}
	return host, port
}

// requestLine reads method and path out of a request line's span ("GET
// http://www.example.com:80/a?b=1 HTTP/1.1" is GET and /a): a URL's scheme and host are left
// out, and so is its query. A request line that is not words ("- - -") leaves them absent.
func requestLine(line []byte, r span, vals []span, method, path int) {
	req := line[r.start:r.end]
	sp := bytes.IndexByte(req, ' ')
	if sp <= 0 {
		return
	}
	vals[method] = span{start: r.start, end: r.start + int32(sp)}
	start := int(r.start) + sp + 1
	rest := line[start:r.end]
	end := bytes.IndexByte(rest, ' ')
	if end < 0 {
		end = len(rest)
	}
	rest = rest[:end]
	if i := bytes.Index(rest, []byte("://")); i > 0 {
		j := bytes.IndexByte(rest[i+3:], '/')
		if j < 0 {
			vals[path] = span{start: int32(start + len(rest)), end: int32(start + len(rest))} // no path: "/"'s empty
			return
		}
		start += i + 3 + j
		rest = rest[i+3+j:]
	}
	if q := bytes.IndexByte(rest, '?'); q >= 0 {
		rest = rest[:q]
	}
	vals[path] = span{start: int32(start), end: int32(start + len(rest))}
}

func (albFormat) parse(line []byte, vals []span, _ bool) (int, string) {
	for i := range vals {
		vals[i] = absent
	}
	pos, k := 0, 0
	for ; pos < len(line); k++ {
		s, quoted, next, ok := token(line, pos)
		if !ok {
			if quoted {
				return pos + 1, "a quoted field with no closing quote"
			}
			return pos + 1, "expected a field (ALB separates its fields by one space)"
		}
		if k < albPositional {
			vals[k] = s
		}
		switch k {
		case albType:
			switch string(line[s.start:s.end]) {
			case "http", "https", "h2", "grpcs", "ws", "wss":
			default:
				return pos + 1, "expected the request's type (http, https, h2, grpcs, ws or wss) as an ALB line begins"
			}
		case albTime:
			if s.end-s.start < 20 || line[s.start+4] != '-' || line[s.start+10] != 'T' {
				return pos + 1, "expected the time such as 2018-07-02T22:23:00.186641Z"
			}
		case albStatus:
			if st := line[s.start:s.end]; (len(st) != 3 || num(st, 3) < 0) && string(st) != "-" {
				return pos + 1, "expected elb_status_code, 3 digits or -"
			}
		case albRequest, albUserAgent:
			if !quoted {
				return pos + 1, "expected the " + albFields[k] + " in quotes"
			}
		}
		pos = next
	}
	if k < albMinimumCount {
		return len(line) + 1, "expected ALB's fields up to \"user_agent\" (14), but the line ends after " + strconv.Itoa(k)
	}
	vals[albClientIP], vals[albClientPort] = hostPort(line, vals[albClient])
	vals[albTargetIP], vals[albTargetPort] = hostPort(line, vals[albTarget])
	vals[albProcessing] = span{start: vals[albReqProc].start, end: vals[albRespProc].end}
	requestLine(line, vals[albRequest], vals, albMethod, albPath)
	return 0, ""
}
