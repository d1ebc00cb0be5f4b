package accesslog

import (
	"bytes"
	"fmt"
	"strings"
)

// cloudFrontFormat reads Amazon CloudFront's standard access logs, W3C extended log files:
// directive lines that begin with '#', of which "#Fields:" names the columns, then one line
// per request, its values separated by tabs (shown here as →), "-" for none:
//
//	#Version: 1.0
//	#Fields: date time x-edge-location sc-bytes c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query cs(Cookie) x-edge-result-type x-edge-request-id x-host-header cs-protocol cs-bytes time-taken x-forwarded-for ssl-protocol ssl-cipher x-edge-response-result-type cs-protocol-version fle-status fle-encrypted-fields c-port time-to-first-byte x-edge-detailed-result-type sc-content-type sc-content-len sc-range-start sc-range-end
//	2019-12-04→21:02:31→LAX1→392→192.0.2.100→GET→d111111abcdef8.cloudfront.net→/index.html→200→-→Mozilla/5.0%20(Windows%20NT%2010.0;%20Win64;%20x64)→-→-→Hit→SOX4xwn4XV6Q4rgb7XiVGOHms_BGlTAC4KyHmureZmBNrjGdRLiNIQ==→d111111abcdef8.cloudfront.net→https→23→0.001→-→TLSv1.2→ECDHE-RSA-AES128-GCM-SHA256→Hit→HTTP/2.0→-→-→11040→0.001→Hit→text/html→78→-→-
//
// The columns are read as the #Fields line names them, in its order (a file that has none,
// its header cut off, is read in the 33 columns' documented order above, as far as a line
// goes); a later #Fields line (files concatenated) names the columns from there on. date and
// time (21:02:31, to the second, UTC) are when the edge finished responding, a completion
// time; time-taken (0.001 s, to the millisecond) is from the request's arrival at the edge,
// so the arrival is 21:02:30.999. The key is c-ip, the viewer's address; the status is
// sc-status (000 when the viewer went away before a response). x-edge-result-type
// (Hit, Miss, Error, LimitExceeded, CapacityExceeded, …) is a field, --key's like any other.
type cloudFrontFormat struct {
	cols   []int // each column's field, -1 for a column named here by no field
	header bool  // a #Fields line has named the columns
}

// CloudFront's fields, in the documented order of its 33 columns.
var cloudFrontFields = []string{"date", "time", "x-edge-location", "sc-bytes", "c-ip", "cs-method",
	"cs(Host)", "cs-uri-stem", "sc-status", "cs(Referer)", "cs(User-Agent)", "cs-uri-query", "cs(Cookie)",
	"x-edge-result-type", "x-edge-request-id", "x-host-header", "cs-protocol", "cs-bytes", "time-taken",
	"x-forwarded-for", "ssl-protocol", "ssl-cipher", "x-edge-response-result-type", "cs-protocol-version",
	"fle-status", "fle-encrypted-fields", "c-port", "time-to-first-byte", "x-edge-detailed-result-type",
	"sc-content-type", "sc-content-len", "sc-range-start", "sc-range-end"}

const (
	cfDate      = 0
	cfTime      = 1
	cfClientIP  = 4
	cfStatus    = 8
	cfTimeTaken = 18
)

// cloudFrontAliases are the names other formats give CloudFront's fields.
var cloudFrontAliases = map[string]string{"remote_addr": "c-ip", "client_ip": "c-ip", "status": "sc-status",
	"method": "cs-method", "request_method": "cs-method", "path": "cs-uri-stem", "uri": "cs-uri-stem",
	"host": "cs(host)", "user_agent": "cs(user-agent)", "bytes": "sc-bytes", "body_bytes_sent": "sc-bytes",
	"duration": "time-taken"}

func newCloudFront() *cloudFrontFormat {
	f := &cloudFrontFormat{cols: make([]int, len(cloudFrontFields))}
	for i := range f.cols {
		f.cols[i] = i
	}
	return f
}

func (f *cloudFrontFormat) label() string        { return "cloudfront" }
func (f *cloudFrontFormat) nfields() int         { return len(cloudFrontFields) }
func (f *cloudFrontFormat) fieldNames() []string { return cloudFrontFields }
func (f *cloudFrontFormat) need(int)             {}

func (f *cloudFrontFormat) lookup(name string) (int, bool) {
	name = strings.ToLower(name)
	if a, ok := cloudFrontAliases[name]; ok {
		name = a
	}
	for i, n := range cloudFrontFields {
		if strings.ToLower(n) == name {
			return i, true
		}
	}
	return 0, false
}

func (f *cloudFrontFormat) roles() roles {
	r := noRoles()
	r.time, r.clock, r.timeKind, r.timeName = cfDate, cfTime, timeW3C, "date and time"
	r.dur, r.durKind, r.durName = cfTimeTaken, durSeconds, "time-taken"
	r.completion = true
	r.status = cfStatus
	r.key, r.keyName = []int{cfClientIP}, "c-ip"
	return r
}

// directive reads a '#' line: #Fields names the columns; #Version, #Date and the others say
// nothing a request needs.
func (f *cloudFrontFormat) directive(line []byte) (bool, int, string) {
	if len(line) == 0 || line[0] != '#' {
		return false, 0, ""
	}
	names, ok := bytes.CutPrefix(line, []byte("#Fields:"))
	if !ok {
		return true, 0, ""
	}
	f.cols = f.cols[:0]
	seen := [2]bool{}
	for _, name := range strings.Fields(string(names)) {
		i, ok := f.lookup(name)
		if !ok || !strings.EqualFold(name, cloudFrontFields[i]) {
			i = -1 // a column not documented here: read past
		}
		if i == cfDate || i == cfTime {
			seen[i] = true
		}
		f.cols = append(f.cols, i)
	}
	f.header = true
	if !seen[cfDate] || !seen[cfTime] {
		return true, 1, "the #Fields line names no date and time columns, which a request's time is read from"
	}
	return true, 0, ""
}

func (f *cloudFrontFormat) parse(line []byte, vals []span, _ bool) (int, string) {
	for i := range vals {
		vals[i] = absent
	}
	pos, k := 0, 0
	for ; pos <= len(line); k++ {
		end := bytes.IndexByte(line[pos:], '\t')
		if end < 0 {
			end = len(line) - pos
		}
		switch {
		case k < len(f.cols) && f.cols[k] >= 0:
			vals[f.cols[k]] = span{start: int32(pos), end: int32(pos + end)}
		case k >= len(f.cols) && f.header:
			return pos, fmt.Sprintf("expected the line to end after the %d tab-separated values the #Fields line names", len(f.cols))
		}
		pos += end + 1
	}
	switch {
	case f.header && k < len(f.cols):
		return len(line) + 1, fmt.Sprintf("expected %d tab-separated values, as the #Fields line names, but the line ends after %d", len(f.cols), k)
	case !f.header && k <= cfStatus:
		return len(line) + 1, fmt.Sprintf("expected CloudFront's tab-separated values (date, time, x-edge-location, … sc-status: at least 9) but the line ends after %d; a #Fields line names them", k)
	}
	if d := vals[cfDate]; d.start >= 0 {
		if v := line[d.start:d.end]; len(v) != 10 || v[4] != '-' || v[7] != '-' || num(v, 4) < 0 {
			return int(d.start) + 1, "expected the date such as 2019-12-04"
		}
	}
	if t := vals[cfTime]; t.start >= 0 {
		if v := line[t.start:t.end]; len(v) < 8 || v[2] != ':' || v[5] != ':' || num(v, 2) < 0 {
			return int(t.start) + 1, "expected the time such as 21:02:31"
		}
	}
	if s := vals[cfStatus]; s.start >= 0 {
		if v := line[s.start:s.end]; (len(v) != 3 || num(v, 3) < 0) && string(v) != "-" {
			return int(s.start) + 1, "expected sc-status, 3 digits"
		}
	}
	return 0, ""
}
