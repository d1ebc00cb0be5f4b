package accesslog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// harFormat reads a HAR file (HTTP Archive 1.2, what a browser's developer tools save): one
// JSON document, not lines, whose log.entries are the requests, each
//
//	{"startedDateTime": "2026-12-02T10:00:00.125+01:00", "time": 52.375,
//	 "request": {"method": "GET", "url": "https://api.example.com/v1/items?page=2", "httpVersion": "HTTP/2",
//	             "headers": [{"name": "X-Api-Key", "value": "k1"}], …},
//	 "response": {"status": 429, …}, "serverIPAddress": "203.0.113.9", …}
//
// startedDateTime (an ISO 8601 time with its zone, here to the millisecond: 09:00:00.125
// UTC) is when the request began, an arrival; time is its total in milliseconds (52.375),
// absent or -1 when not known. A HAR is recorded by one client, so the default key is the
// server each request went to, host (api.example.com), whose limiter counted it; --key takes
// method, url, path, status, serverIPAddress, or a header, request.headers.X-Api-Key
// (response.headers.NAME too). Entries are read one at a time (encoding/json's streaming
// decoder), so memory does not grow with the file; a record's Line is its entry's position,
// 1-based, and errors name the entry (log.entries[3].startedDateTime), and the line and column
// where the file stops being JSON.
type harFormat struct {
	headers []string // the headers asked for: "request.headers.x-api-key", lower case
}

// HAR's fields: those every entry has, then the headers asked for.
var harFields = []string{"startedDateTime", "time", "method", "url", "host", "path", "status", "httpVersion", "serverIPAddress"}

const (
	harStarted = iota
	harTime
	harMethod
	harURL
	harHost
	harPath
	harStatus
	harVersion
	harServerIP
	harFixed
)

var harAliases = map[string]string{"starteddatetime": "startedDateTime", "request.method": "method", "request.url": "url",
	"response.status": "status", "request.httpversion": "httpVersion", "httpversion": "httpVersion",
	"serveripaddress": "serverIPAddress", "server_ip": "serverIPAddress", "uri": "path", "request_method": "method",
	"duration": "time"}

func (f *harFormat) label() string { return "har" }
func (f *harFormat) nfields() int  { return harFixed + len(f.headers) }
func (f *harFormat) fieldNames() []string {
	return append(slices.Clone(harFields), "request.headers.NAME", "response.headers.NAME")
}
func (f *harFormat) need(int) {}

func (f *harFormat) lookup(name string) (int, bool) {
	if a, ok := harAliases[strings.ToLower(name)]; ok {
		name = a
	}
	for i, n := range harFields {
		if n == name {
			return i, true
		}
	}
	lower := strings.ToLower(name)
	for _, prefix := range []string{"request.headers.", "response.headers."} {
		if h, ok := strings.CutPrefix(lower, prefix); ok && h != "" {
			for i, have := range f.headers {
				if have == lower {
					return harFixed + i, true
				}
			}
			f.headers = append(f.headers, lower)
			return harFixed + len(f.headers) - 1, true
		}
	}
	return 0, false
}

func harRoles() roles {
	r := noRoles()
	r.time, r.timeKind, r.timeName = harStarted, timeISO, "startedDateTime"
	r.dur, r.durKind, r.durName = harTime, durMillisDecimal, "time"
	r.status = harStatus
	r.key, r.keyName = []int{harHost}, "host"
	return r
}

// parse splits the line harSource made of an entry: its fields separated by tabs, in the
// order of harFields then the headers asked for.
func (f *harFormat) parse(line []byte, vals []span, _ bool) (int, string) {
	pos := 0
	for i := range vals {
		if pos > len(line) {
			return len(line) + 1, "an entry with fewer fields than expected"
		}
		end := bytes.IndexByte(line[pos:], '\t')
		if end < 0 {
			end = len(line) - pos
		}
		vals[i] = span{start: int32(pos), end: int32(pos + end)}
		if end == 0 || end == 1 && line[pos] == '-' {
			vals[i] = absent
		}
		pos += end + 1
	}
	return 0, ""
}

// isHAR is whether a file begins as a HAR does: a JSON object whose first key is "log", its
// value an object.
func isHAR(b []byte) bool {
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if !bytes.HasPrefix(b[i:], []byte(`"log"`)) {
		return false
	}
	i = skipSpace(b, i+5)
	if i >= len(b) || b[i] != ':' {
		return false
	}
	i = skipSpace(b, i+1)
	return i < len(b) && b[i] == '{'
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// harSource reads a HAR's entries one at a time, each made a tab-separated line harFormat
// parses.
type harSource struct {
	dec     *json.Decoder
	in      *countingReader
	base    int64 // where the entry being decoded begins
	f       *harFormat
	started bool
	done    bool
	n       int // entries read
	line    []byte
}

type harHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type harEntry struct {
	StartedDateTime *string         `json:"startedDateTime"`
	Time            json.RawMessage `json:"time"`
	Request         struct {
		Method      string      `json:"method"`
		URL         string      `json:"url"`
		HTTPVersion string      `json:"httpVersion"`
		Headers     []harHeader `json:"headers"`
	} `json:"request"`
	Response struct {
		Status  json.RawMessage `json:"status"`
		Headers []harHeader     `json:"headers"`
	} `json:"response"`
	ServerIPAddress string `json:"serverIPAddress"`
}

func newHARSource(in *bufio.Reader, f *harFormat) *harSource {
	h := &harSource{f: f, in: &countingReader{r: in}}
	h.dec = json.NewDecoder(h.in)
	return h
}

// countingReader keeps the last bytes read (64 to 128 KiB) and the count of newlines before
// them, so that a byte offset near the decoder's position can be told as a line and column.
type countingReader struct {
	r        io.Reader
	win      []byte
	winStart int64 // the offset of win[0]
	lines    int   // newlines before win
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.win = append(c.win, p[:n]...)
	if len(c.win) > 128<<10 {
		drop := len(c.win) - 64<<10
		c.lines += bytes.Count(c.win[:drop], []byte{'\n'})
		c.winStart += int64(drop)
		c.win = append(c.win[:0], c.win[drop:]...)
	}
	return n, err
}

// position is "line L, column C" of the byte at off, or "byte off" when it is no longer held.
func (c *countingReader) position(off int64) string {
	i := off - c.winStart
	if i < 0 || i > int64(len(c.win)) {
		return fmt.Sprintf("byte %d", off)
	}
	before := c.win[:i]
	line := c.lines + bytes.Count(before, []byte{'\n'}) + 1
	nl := bytes.LastIndexByte(before, '\n')
	if nl < 0 && c.winStart > 0 {
		return fmt.Sprintf("line %d (byte %d)", line, off)
	}
	return fmt.Sprintf("line %d, column %d", line, int(i)-nl)
}

// where names entry n (1-based) as its JSON path.
func (h *harSource) where(n int) string { return fmt.Sprintf("log.entries[%d]", n-1) }

// offset says where the decoder is, for an error that is not an entry's.
func (h *harSource) fail(what string, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		// The decoder's offset counts from a point in its buffer; the entry's bytes, still
		// held, are scanned again from its start for where they stop being JSON.
		at := fmt.Sprintf("byte %d of the entry", se.Offset)
		if i := h.base - h.in.winStart; i >= 0 && i <= int64(len(h.in.win)) {
			var raw json.RawMessage
			if err := json.Unmarshal(h.in.win[i:], &raw); errors.As(err, &se) {
				at = h.in.position(h.base + max(se.Offset-1, 0))
			}
		}
		return fmt.Errorf("har: %s: not JSON at %s: %v", what, at, err)
	case errors.As(err, &te):
		return fmt.Errorf("har: %s: %s is a JSON %s, not the %s HAR has there", what, te.Field, te.Value, te.Type)
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("har: %s: the file ends inside the JSON document, at %s", what, h.in.position(h.in.winStart+int64(len(h.in.win))))
	}
	return fmt.Errorf("har: %s: %v", what, err)
}

// seek reads up to the first entry: {"log": {…, "entries": [.
func (h *harSource) seek() error {
	if err := h.delim('{', "the document"); err != nil {
		return err
	}
	if err := h.key("log", "the document"); err != nil {
		return err
	}
	if err := h.delim('{', "log"); err != nil {
		return err
	}
	if err := h.key("entries", "log"); err != nil {
		return err
	}
	return h.delim('[', "log.entries")
}

// delim reads the token d.
func (h *harSource) delim(d json.Delim, what string) error {
	t, err := h.dec.Token()
	if err != nil {
		return h.fail(what, err)
	}
	if t != d {
		return fmt.Errorf("har: %s: expected %q at %s, found %v", what, string(d), h.in.position(h.dec.InputOffset()), t)
	}
	return nil
}

// key reads an object's keys, skipping their values, up to the key named (its value next).
func (h *harSource) key(name, what string) error {
	for h.dec.More() {
		t, err := h.dec.Token()
		if err != nil {
			return h.fail(what, err)
		}
		if t == name {
			return nil
		}
		var skip json.RawMessage // a value before the one sought: the creator, the pages
		if err := h.dec.Decode(&skip); err != nil {
			return h.fail(fmt.Sprintf("%s.%v", what, t), err)
		}
	}
	return fmt.Errorf("har: %s has no %q (a HAR's requests are log.entries)", what, name)
}

// next returns entry n's line, or io.EOF after the last entry.
func (h *harSource) next() ([]byte, error) {
	if h.done {
		return nil, io.EOF
	}
	if !h.started {
		h.started = true
		if err := h.seek(); err != nil {
			h.done = true
			return nil, err
		}
	}
	if !h.dec.More() {
		h.done = true
		// The entries' closing ']': a file cut short ends before it.
		if err := h.delim(']', h.where(h.n+1)); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
	var e harEntry
	// A syntax error's offset counts from where the value's scan began: past the ',' that
	// ends the entry before, at the '[' for the first.
	h.base = h.dec.InputOffset()
	if i := h.base - h.in.winStart; i >= 0 && i <= int64(len(h.in.win)) {
		j := skipSpace(h.in.win, int(i))
		if j < len(h.in.win) && h.in.win[j] == ',' {
			h.base += int64(j) - i + 1
		}
	}
	if err := h.dec.Decode(&e); err != nil {
		h.done = true
		return nil, h.fail(h.where(h.n+1), err)
	}
	h.n++
	if e.StartedDateTime == nil {
		h.done = true
		return nil, fmt.Errorf("%s: har: no startedDateTime, when the request began", h.where(h.n))
	}
	// The values, tab-separated (a tab or newline inside one made a space).
	b := h.line[:0]
	field := func(v string) {
		if len(b) > 0 {
			b = append(b, '\t')
		}
		for i := 0; i < len(v); i++ {
			c := v[i]
			if c == '\t' || c == '\n' || c == '\r' {
				c = ' '
			}
			b = append(b, c)
		}
	}
	field(*e.StartedDateTime)
	if len(b) == 0 {
		b = append(b, '-') // an empty time, which decode names
	}
	t := string(e.Time)
	if _, err := strconv.ParseFloat(t, 64); err != nil && t != "" && t != "null" {
		h.done = true
		return nil, fmt.Errorf("%s.time: har: %s is not a number of milliseconds", h.where(h.n), t)
	}
	if strings.HasPrefix(t, "-") || t == "null" {
		t = "" // -1: not known
	}
	field(t)
	field(e.Request.Method)
	field(e.Request.URL)
	host, path := splitURL(e.Request.URL)
	field(host)
	field(path)
	status := string(e.Response.Status)
	if _, err := strconv.Atoi(status); err != nil && status != "" && status != "null" {
		h.done = true
		return nil, fmt.Errorf("%s.response.status: har: %q is not a status", h.where(h.n), status)
	}
	field(status)
	field(e.Request.HTTPVersion)
	field(e.ServerIPAddress)
	for _, want := range h.f.headers {
		list, name := e.Request.Headers, want[len("request.headers."):]
		if strings.HasPrefix(want, "response.") {
			list, name = e.Response.Headers, want[len("response.headers."):]
		}
		v := ""
		for _, hd := range list {
			if strings.EqualFold(hd.Name, name) {
				v = hd.Value
				break
			}
		}
		field(v)
	}
	h.line = b
	return b, nil
}

// splitURL is a URL's host (without its port) and path (without its query):
// https://api.example.com:8443/v1/items?page=2 is api.example.com and /v1/items.
func splitURL(u string) (host, path string) {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		rest = u
	}
	hostPort, p, found := strings.Cut(rest, "/")
	if !ok { // no scheme: all of it a path
		hostPort, p, found = "", strings.TrimPrefix(rest, "/"), true
	}
	if i := strings.LastIndexByte(hostPort, ':'); i >= 0 && !strings.HasSuffix(hostPort, "]") {
		hostPort = hostPort[:i]
	}
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if found {
		p = "/" + p
	}
	return strings.Trim(hostPort, "[]"), p
}
