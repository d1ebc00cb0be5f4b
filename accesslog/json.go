package accesslog

import (
	"fmt"
	"strings"
)

// jsonFormat reads JSON lines, one object per line, picking fields by dotted path
// (request.remote_ip). It scans each line once, without decoding what it does not pick: a
// picked string's span is its text between the quotes; an array's, its first element's (Caddy
// logs each header as an array of its values).
type jsonFormat struct {
	name  string
	paths []string
	root  jnode
	alias map[string]string // other names of paths: Caddy's method is request.method
}

type jnode struct {
	name string
	leaf int // the field index, or -1
	kids []*jnode
}

func newJSON(name string) *jsonFormat { return &jsonFormat{name: name, root: jnode{leaf: -1}} }

func (f *jsonFormat) label() string { return f.name }
func (f *jsonFormat) nfields() int  { return len(f.paths) }
func (f *jsonFormat) fieldNames() []string {
	return []string{"any dotted path, such as request.remote_ip"}
}
func (f *jsonFormat) need(int) {}

func (f *jsonFormat) lookup(path string) (int, bool) {
	if p, ok := f.alias[path]; ok {
		path = p
	}
	for i, p := range f.paths {
		if p == path {
			return i, true
		}
	}
	if path == "" || strings.HasPrefix(path, ".") || strings.HasSuffix(path, ".") || strings.Contains(path, "..") {
		return 0, false
	}
	n := &f.root
	for _, part := range strings.Split(path, ".") {
		var next *jnode
		for _, k := range n.kids {
			if k.name == part {
				next = k
			}
		}
		if next == nil {
			next = &jnode{name: part, leaf: -1}
			n.kids = append(n.kids, next)
		}
		n = next
	}
	n.leaf = len(f.paths)
	f.paths = append(f.paths, path)
	return n.leaf, true
}

// jsonError is where a line stops being JSON the scanner reads.
type jsonError struct {
	at  int
	msg string
}

func (f *jsonFormat) parse(line []byte, vals []span, _ bool) (int, string) {
	for i := range vals {
		vals[i] = absent
	}
	i := skipWS(line, 0)
	if i >= len(line) || line[i] != '{' {
		return i + 1, "expected a JSON object, '{'"
	}
	end, err := f.object(line, i, &f.root, vals)
	if err != nil {
		return err.at + 1, err.msg
	}
	if j := skipWS(line, end); j != len(line) {
		return j + 1, "expected the line to end after its JSON object"
	}
	return 0, ""
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// object reads the object at b[i] ('{'), recording the spans of node's leaves; it returns the
// index after its '}'.
func (f *jsonFormat) object(b []byte, i int, node *jnode, vals []span) (int, *jsonError) {
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, &jsonError{i, "expected a quoted key"}
		}
		kEnd, _, err := str(b, i)
		if err != nil {
			return 0, err
		}
		key := b[i+1 : kEnd-1]
		i = skipWS(b, kEnd)
		if i >= len(b) || b[i] != ':' {
			return 0, &jsonError{i, "expected ':' after a key"}
		}
		i = skipWS(b, i+1)
		var child *jnode
		for _, k := range node.kids {
			if k.name == string(key) {
				child = k
				break
			}
		}
		switch {
		case child != nil && child.leaf >= 0:
			end, s, err := leafValue(b, i)
			if err != nil {
				return 0, err
			}
			vals[child.leaf] = s
			i = end
		case child != nil && i < len(b) && b[i] == '{':
			end, err := f.object(b, i, child, vals)
			if err != nil {
				return 0, err
			}
			i = end
		default:
			end, err := skipValue(b, i)
			if err != nil {
				return 0, err
			}
			i = end
		}
		i = skipWS(b, i)
		if i >= len(b) {
			return 0, &jsonError{i, "expected ',' or '}' but the line ends"}
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, &jsonError{i, "expected ',' or '}'"}
		}
	}
}

// str reads the string at b[i] ('"'), returning the index after its closing quote and
// whether it holds escapes.
func str(b []byte, i int) (int, bool, *jsonError) {
	esc := false
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			esc = true
			j++
		case '"':
			return j + 1, esc, nil
		}
	}
	return 0, false, &jsonError{i, "a string with no closing quote"}
}

// leafValue reads a picked value: a string's text, an array's first element, a scalar.
func leafValue(b []byte, i int) (int, span, *jsonError) {
	if i >= len(b) {
		return 0, absent, &jsonError{i, "expected a value but the line ends"}
	}
	switch b[i] {
	case '"':
		end, esc, err := str(b, i)
		if err != nil {
			return 0, absent, err
		}
		return end, span{start: int32(i + 1), end: int32(end - 1), esc: esc}, nil
	case '[':
		end, err := skipValue(b, i)
		if err != nil {
			return 0, absent, err
		}
		j := skipWS(b, i+1)
		if j < len(b) && b[j] != ']' {
			_, s, err := leafValue(b, j)
			if err != nil {
				return 0, absent, err
			}
			return end, s, nil
		}
		return end, absent, nil
	case '{':
		end, err := skipValue(b, i)
		return end, span{start: int32(i), end: int32(end)}, err
	}
	end, err := skipValue(b, i)
	if err != nil {
		return 0, absent, err
	}
	if string(b[i:end]) == "null" {
		return end, absent, nil
	}
	return end, span{start: int32(i), end: int32(end)}, nil
}

// skipValue returns the index after the value at b[i].
func skipValue(b []byte, i int) (int, *jsonError) {
	if i >= len(b) {
		return 0, &jsonError{i, "expected a value but the line ends"}
	}
	switch b[i] {
	case '"':
		end, _, err := str(b, i)
		return end, err
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _, err := str(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, &jsonError{i, "an object or array with no end on this line"}
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\r' {
		j++
	}
	if j == i {
		return 0, &jsonError{i, "expected a value"}
	}
	switch c := b[i]; {
	case c == '-' || c >= '0' && c <= '9', string(b[i:j]) == "true", string(b[i:j]) == "false", string(b[i:j]) == "null":
		return j, nil
	}
	return 0, &jsonError{i, "expected a value"}
}

// Caddy's access log (caddyserver/caddy, modules/caddyhttp/server.go): one JSON object per
// request, written by a deferred call when the handler returns, so ts (float epoch seconds)
// is the completion and duration (float seconds) the handler's time.
const (
	caddyTime     = "ts"
	caddyDuration = "duration"
	caddyKey      = "request.remote_ip"
	caddyStatus   = "status"
)

// jsonSetup builds a JSON format from role=path assignments (--field), on top of Caddy's
// defaults for the caddy format.
func jsonSetup(name string, caddy bool, fields string) (*jsonFormat, roles, error) {
	f := newJSON(name)
	r := noRoles()
	assign := map[string]string{}
	if caddy {
		f.alias = map[string]string{"method": "request.method", "path": "request.uri", "uri": "request.uri",
			"remote_addr": "request.remote_ip", "client_ip": "request.remote_ip", "host": "request.host", "bytes": "size"}
		assign = map[string]string{"time": caddyTime, "duration": caddyDuration, "key": caddyKey, "status": caddyStatus}
		r.completion = true
	}
	if fields != "" {
		for _, kv := range strings.Split(fields, ",") {
			k, v, ok := strings.Cut(kv, "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || v == "" {
				return nil, r, fmt.Errorf("--field %s: expected ROLE=PATH pairs separated by commas, e.g. time=ts,key=request.remote_ip", fields)
			}
			switch k {
			case "time", "key", "duration", "permits", "status", "completion":
			default:
				return nil, r, fmt.Errorf("--field %s: unknown role %q (time, duration, key, permits, status, completion)", fields, k)
			}
			assign[k] = v
		}
	}
	if assign["time"] == "" {
		return nil, r, fmt.Errorf("a JSON log needs its time field named: --field time=PATH (e.g. time=ts)")
	}
	if c, ok := assign["completion"]; ok {
		switch c {
		case "true", "yes":
			r.completion = true
		case "false", "no":
			r.completion = false
		default:
			return nil, r, fmt.Errorf("--field completion=%s: expected true (the time is stamped when the response ends) or false", c)
		}
	} else if !caddy && assign["duration"] != "" {
		r.completion = true // a log with a duration stamps its line at the end, as Caddy does
	}
	r.time, _ = f.lookup(assign["time"])
	r.timeKind, r.timeName = timeAnyISO, assign["time"]
	if d := assign["duration"]; d != "" {
		r.dur, _ = f.lookup(d)
		r.durKind, r.durName = durJSON, d
	}
	if s := assign["status"]; s != "" {
		r.status, _ = f.lookup(s)
	}
	if k := assign["key"]; k != "" {
		keys, err := resolveFields(f, "field key", k)
		if err != nil {
			return nil, r, err
		}
		r.key, r.keyName = keys, k
	}
	if p := assign["permits"]; p != "" {
		r.permits, _ = f.lookup(p)
		r.permitName = p
	}
	return f, r, nil
}
