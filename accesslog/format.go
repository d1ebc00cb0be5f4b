package accesslog

import (
	"fmt"
	"slices"
	"strings"
)

// span is a field's value in a line: line[start:end], or absent when start < 0. esc marks a
// JSON string holding backslash escapes (its text is unescaped when used).
type span struct {
	start, end int32
	esc        bool
}

var absent = span{start: -1, end: -1}

// format is one log format: it splits a line into its fields' spans.
type format interface {
	// label names the format in notes and errors: "nginx combined", "caddy", "haproxy".
	label() string
	// lookup is the index of the field name (an nginx variable without its $, a JSON path,
	// a HAProxy field), adding it when the format's fields are open-ended (JSON paths).
	lookup(name string) (int, bool)
	// fieldNames lists the fields an error may suggest.
	fieldNames() []string
	// need marks field i as used: a parser may stop once every used field is read.
	need(i int)
	// parse fills vals (one span per field) from line. full asks for the whole line to be
	// checked (detection); otherwise parsing may stop after the last needed field. A line
	// that does not fit returns the 1-based column where it stops fitting and what was
	// expected there.
	parse(line []byte, vals []span, full bool) (col int, msg string)
	nfields() int
}

// directiver is a format whose logs carry directives among the records (W3C's "#Version: 1.0"
// and "#Fields: date time …" lines in CloudFront's logs): directive tells one, takes what it
// says (the columns that follow) and returns a column and message when it cannot be read.
// A directive is not a request and is not counted.
type directiver interface {
	directive(line []byte) (is bool, col int, msg string)
}

// noticer is a format whose logs hold lines that are not requests (HAProxy's own messages):
// notice tells them, and they are counted and skipped.
type noticer interface {
	notice(line []byte) bool
}

// roles says which fields a format's records are made of.
type roles struct {
	time       int // -1: none
	timeKind   timeKind
	clock      int    // timeW3C: the field with the time of day that goes with time's date; else -1
	timeName   string // as the log names it: "$msec", "ts"
	dur        int    // -1: none
	durKind    durKind
	durName    string
	completion bool // the stamp is written when the response ends (nginx, Caddy), not at arrival
	status     int  // -1: none
	decision   int  // -1: none (nginx $limit_req_status, Envoy's %RESPONSE_FLAGS%)
	flags      bool // decision is a list of flags, "RL" among them a refusal (Envoy's %RESPONSE_FLAGS%)
	zone       int  // -1: none; the field whose RFC 3339 time gives a zone-less stamp its zone (HAProxy's syslog header)
	key        []int
	keyName    string
	permits    int // -1: every request is 1 permit
	permitName string
}

func noRoles() roles {
	return roles{time: -1, clock: -1, dur: -1, status: -1, decision: -1, zone: -1, permits: -1}
}

// resolveFields is the list of field indexes a --key or --permits names: one name, or several
// joined by + (method+path), each looked up in f, with aliases: remote_addr and client_ip are
// one, method and path are request_method/uri or parts of the request line.
func resolveFields(f format, flag, text string) ([]int, error) {
	var out []int
	for _, name := range strings.Split(text, "+") {
		name = strings.TrimPrefix(strings.TrimSpace(name), "$")
		name = strings.TrimSuffix(strings.TrimPrefix(name, "{"), "}")
		if name == "" {
			return nil, fmt.Errorf("--%s %q: a field name is empty", flag, text)
		}
		i, ok := f.lookup(name)
		if !ok {
			for _, alt := range aliases[name] {
				if i, ok = f.lookup(alt); ok {
					break
				}
			}
		}
		if !ok {
			names := slices.Clone(f.fieldNames())
			return nil, fmt.Errorf("--%s %s: %s has no field %q (its fields: %s)", flag, text, f.label(), name, strings.Join(names, ", "))
		}
		f.need(i)
		out = append(out, i)
	}
	return out, nil
}

// aliases are the other names a field goes by in other formats.
var aliases = map[string][]string{
	"remote_addr":     {"client_ip", "request.remote_ip", "remote_ip"},
	"client_ip":       {"remote_addr", "request.remote_ip"},
	"remote_ip":       {"remote_addr", "client_ip", "request.remote_ip"},
	"method":          {"request_method", "request.method"},
	"request_method":  {"method", "request.method"},
	"path":            {"uri", "request.uri", "request_uri"},
	"uri":             {"path", "request.uri"},
	"status":          {"status"},
	"bytes":           {"body_bytes_sent", "bytes_sent", "size"},
	"body_bytes_sent": {"bytes", "size"},
	"bytes_sent":      {"bytes", "size"},
	"size":            {"body_bytes_sent", "bytes"},
}
