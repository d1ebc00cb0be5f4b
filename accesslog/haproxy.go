package accesslog

import (
	"bytes"
	"strings"
)

// haproxyFormat reads HAProxy's HTTP log (option httplog), with or without a syslog header
// before it:
//
//	127.0.0.1:41710 [06/Feb/2009:12:14:14.655] http-in static/srv1 10/0/30/69/109 200 2750 - - ---- 1/1/1/1/0 0/0 {1wt.eu} {} "GET /index.html HTTP/1.1"
//
// The date in brackets (%tr) is when the request's first byte arrived, to the millisecond,
// in the HAProxy host's local time with no zone written. An RFC 5424 syslog header before it
// (log ... format rfc5424) carries the zone: "<134>1 2026-12-02T17:02:09.021214+05:30 - haproxy
// 13675 - - …" makes [02/Dec/2026:17:02:08.005] 11:32:08.005 UTC. Without one (format raw,
// rfc3164: "<134>Dec  2 17:02:11 localhost haproxy[13745]: …") the stamp is read in
// Options.Zone, UTC by default: a fixed offset shifts every time alike and the rebased trace
// not at all, but a daylight-saving change inside the log shifts the times after it by an
// hour unless the zone is named. The line is written when the response ends, %Ta (the fifth
// timer, 109 ms) after it. Captured headers ({…}, with "capture request header X-Client len
// 32") are the fields hr and hs, several captures joined by |; when only response headers
// are captured their {…} is read as hr, as the line cannot tell them apart.
type haproxyFormat struct{}

// HAProxy's fields, by index.
var haproxyFields = []string{"client_ip", "client_port", "date", "frontend", "backend", "server",
	"TR", "Tw", "Tc", "Tr", "Ta", "status", "bytes", "termination_state", "request", "method", "path",
	"hr", "hs", "syslog_time"}

const (
	hClientIP = iota
	hClientPort
	hDate
	hFrontend
	hBackend
	hServer
	hTR
	hTw
	hTc
	hTr
	hTa
	hStatus
	hBytes
	hTermination
	hRequest
	hMethod
	hPath
	hCapturedRequest  // hr: the first {…}
	hCapturedResponse // hs: the second {…}
	hSyslogTime       // an RFC 5424 header's timestamp, which carries the zone
)

func (haproxyFormat) label() string        { return "haproxy" }
func (haproxyFormat) nfields() int         { return len(haproxyFields) }
func (haproxyFormat) fieldNames() []string { return haproxyFields }
func (haproxyFormat) need(int)             {}

func (haproxyFormat) lookup(name string) (int, bool) {
	for i, n := range haproxyFields {
		if strings.EqualFold(n, name) && (n == name || len(n) > 2) {
			return i, true
		}
	}
	return 0, false
}

func haproxyRoles() roles {
	r := noRoles()
	r.time, r.timeKind, r.timeName = hDate, timeCLF, "the accept date %tr"
	r.dur, r.durKind, r.durName = hTa, durMillis, "%Ta"
	r.status = hStatus
	r.key, r.keyName = []int{hClientIP}, "client_ip"
	r.zone = hSyslogTime
	return r
}

// isDate is whether b holds "[dd/Mon/yyyy:hh:mm:ss" at i.
func isDate(b []byte, i int) bool {
	return i+21 <= len(b) && b[i] == '[' && b[i+3] == '/' && b[i+7] == '/' && b[i+12] == ':' && b[i+15] == ':' && b[i+18] == ':'
}

// notice is whether line is one of HAProxy's own messages, which it logs beside the requests
// ("Proxy lab stopped (cumulated conns: FE: 14, BE: 8).", "Server app/go is DOWN"): a line
// with no [dd/Mon/yyyy:hh:mm:ss date, which every request's line has.
func (haproxyFormat) notice(line []byte) bool {
	for i := 0; i < len(line); {
		j := bytes.IndexByte(line[i:], '[')
		if j < 0 {
			return true
		}
		if isDate(line, i+j) {
			return false
		}
		i += j + 1
	}
	return true
}

func (haproxyFormat) parse(line []byte, vals []span, _ bool) (int, string) {
	for i := range vals {
		vals[i] = absent
	}
	// An RFC 5424 header: "<134>1 2026-12-02T17:02:09.021214+05:30 host haproxy pid - - ".
	if len(line) > 0 && line[0] == '<' {
		i := 1
		for i < len(line) && i < 5 && line[i] >= '0' && line[i] <= '9' {
			i++
		}
		if i > 1 && i+2 < len(line) && line[i] == '>' && line[i+1] == '1' && line[i+2] == ' ' {
			ts := i + 3
			if end := bytes.IndexByte(line[ts:], ' '); end > 0 && line[ts] != '-' {
				vals[hSyslogTime] = span{start: int32(ts), end: int32(ts + end)}
			}
		}
	}
	// The client's ip:port is the word before the first bracketed date.
	d := -1
	for i := 0; i < len(line); {
		j := bytes.IndexByte(line[i:], '[')
		if j < 0 {
			break
		}
		if isDate(line, i+j) {
			d = i + j
			break
		}
		i += j + 1
	}
	if d < 0 {
		return 1, "expected HAProxy's client ip:port then its [date], e.g. 127.0.0.1:41710 [06/Feb/2009:12:14:14.655]"
	}
	if d == 0 || line[d-1] != ' ' {
		return d + 1, "expected a space and the client's ip:port before the date"
	}
	cs := bytes.LastIndexByte(line[:d-1], ' ') + 1
	client := line[cs : d-1]
	colon := bytes.LastIndexByte(client, ':')
	if colon <= 0 {
		return cs + 1, "expected the client as ip:port"
	}
	vals[hClientIP] = span{start: int32(cs), end: int32(cs + colon)}
	vals[hClientPort] = span{start: int32(cs + colon + 1), end: int32(d - 1)}
	e := bytes.IndexByte(line[d:], ']')
	if e < 0 {
		return d + 1, "expected ']' after the date"
	}
	vals[hDate] = span{start: int32(d + 1), end: int32(d + e)}
	pos := d + e + 1
	// The space-separated words that follow.
	word := func(what string) (span, int, string) {
		if pos >= len(line) || line[pos] != ' ' {
			return absent, pos + 1, "expected a space then " + what
		}
		pos++
		end := bytes.IndexByte(line[pos:], ' ')
		if end < 0 {
			end = len(line) - pos
		}
		if end == 0 {
			return absent, pos + 1, "expected " + what
		}
		s := span{start: int32(pos), end: int32(pos + end)}
		pos += end
		return s, 0, ""
	}
	var col int
	var msg string
	if vals[hFrontend], col, msg = word("the frontend's name"); col > 0 {
		return col, msg
	}
	bs, col, msg := word("backend/server")
	if col > 0 {
		return col, msg
	}
	slash := bytes.IndexByte(line[bs.start:bs.end], '/')
	if slash < 0 {
		return int(bs.start) + 1, "expected backend/server"
	}
	vals[hBackend] = span{start: bs.start, end: bs.start + int32(slash)}
	vals[hServer] = span{start: bs.start + int32(slash) + 1, end: bs.end}
	ts, col, msg := word("the timers TR/Tw/Tc/Tr/Ta")
	if col > 0 {
		return col, msg
	}
	at := ts.start
	for k := hTR; k <= hTa; k++ {
		end := at
		for end < ts.end && line[end] != '/' {
			end++
		}
		if end == at || (k < hTa) == (end == ts.end) {
			return int(at) + 1, "expected five timers TR/Tw/Tc/Tr/Ta such as 0/0/1/2/3"
		}
		s := at
		if line[s] == '+' { // option logasap
			s++
		}
		vals[k] = span{start: s, end: end}
		at = end + 1
	}
	if vals[hStatus], col, msg = word("the status"); col > 0 {
		return col, msg
	}
	if st := line[vals[hStatus].start:vals[hStatus].end]; (len(st) != 3 || num(st, 3) < 0) && string(st) != "-1" {
		return int(vals[hStatus].start) + 1, "expected a 3-digit status"
	}
	if vals[hBytes], col, msg = word("the bytes read"); col > 0 {
		return col, msg
	}
	for _, what := range []string{"the request cookie", "the response cookie"} {
		if _, col, msg = word(what); col > 0 {
			return col, msg
		}
	}
	if vals[hTermination], col, msg = word("the termination state"); col > 0 {
		return col, msg
	}
	for _, what := range []string{"the connection counts", "the queues"} {
		if _, col, msg = word(what); col > 0 {
			return col, msg
		}
	}
	for k := hCapturedRequest; k <= hCapturedResponse && pos+1 < len(line) && line[pos] == ' ' && line[pos+1] == '{'; k++ {
		end := bytes.IndexByte(line[pos+1:], '}') // HAProxy writes a captured } as #7D
		if end < 0 {
			return pos + 2, "expected '}' closing the captured headers"
		}
		vals[k] = span{start: int32(pos + 2), end: int32(pos + 1 + end)}
		pos += end + 2
	}
	q := bytes.IndexByte(line[pos:], '"')
	if q < 0 || !bytes.HasSuffix(line, []byte{'"'}) || pos+q == len(line)-1 {
		return pos + 1, `expected the request line in quotes, "GET / HTTP/1.1", at the line's end`
	}
	rs := pos + q + 1
	vals[hRequest] = span{start: int32(rs), end: int32(len(line) - 1)}
	req := line[rs : len(line)-1]
	if sp := bytes.IndexByte(req, ' '); sp > 0 {
		vals[hMethod] = span{start: int32(rs), end: int32(rs + sp)}
		rest := req[sp+1:]
		end := bytes.IndexByte(rest, ' ')
		if end < 0 {
			end = len(rest)
		}
		if qm := bytes.IndexByte(rest[:end], '?'); qm >= 0 {
			end = qm
		}
		vals[hPath] = span{start: int32(rs + sp + 1), end: int32(rs + sp + 1 + end)}
	}
	return 0, ""
}
