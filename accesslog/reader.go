package accesslog

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Options say how to read a log. The zero value reads any format it recognises, with the
// default reorder window and no spreading.
type Options struct {
	// Format is auto ("" too), csv, combined, common, nginx:FORMAT (an nginx log_format
	// string), caddy, json, haproxy, alb, cloudfront, envoy or har.
	Format string
	// Fields names a JSON log's fields by role: time=ts,key=request.remote_ip,
	// duration=duration,permits=size,status=status (and completion=false when the time is
	// stamped at arrival). For caddy it overrides Caddy's defaults.
	Fields string
	// Key is the field (or fields joined by +, such as method+path) whose value is a
	// request's key; "" is the format's client address.
	Key string
	// Permits is a numeric field each request is charged (body_bytes_sent, for a bandwidth
	// limit); "" charges 1.
	Permits string
	// Reorder is how far, in time, rows may be out of arrival order in the file; 0 is the
	// longest duration logged in the first 10,000 rows plus 1s.
	Reorder time.Duration
	// Spread is "uniform" to spread the requests that share a stamp evenly over its tick.
	Spread string
	// RefusedStatus names the HTTP statuses ("429" or "429,503") by which a log without
	// nginx's $limit_req_status records a refusal (Record.Logged); "" records none.
	RefusedStatus string
	// Zone is the time zone of stamps written without one (HAProxy's %tr, in its host's
	// local time): "" or UTC, Local, an offset (+0530, -07:00) or a zone name (Europe/Paris).
	// An RFC 5424 syslog header's offset, where a line has one, is used before it.
	Zone string
}

// Formats lists what Format may name, for help texts.
const Formats = "auto, csv, combined, common, nginx:FORMAT, caddy, json, haproxy, alb, cloudfront, envoy, har"

// Check reports a setting that cannot be right whatever the log: an unknown format or
// spread, a negative window, a field given to a format that has no fields (csv).
func (o Options) Check() error {
	switch f := o.Format; {
	case f == "", f == "auto", f == "csv", f == "combined", f == "common", f == "caddy", f == "json", f == "haproxy",
		f == "alb", f == "cloudfront", f == "envoy", f == "har":
	case strings.HasPrefix(f, "nginx:"):
		if _, err := compileNginx("nginx", f[len("nginx:"):]); err != nil {
			return fmt.Errorf("--log-format: %v", err)
		}
	default:
		return fmt.Errorf("--log-format %s: unknown format (%s)", f, Formats)
	}
	switch o.Spread {
	case "", "none", "uniform":
	default:
		return fmt.Errorf("--spread %s: expected none or uniform", o.Spread)
	}
	if _, err := parseStatuses(o.RefusedStatus); err != nil {
		return err
	}
	if _, err := parseZone(o.Zone); err != nil {
		return err
	}
	if o.Reorder < 0 {
		return fmt.Errorf("--reorder %v: must be 0 (the default window) or more", o.Reorder)
	}
	if o.Format == "csv" && (o.Key != "" || o.Permits != "" || o.Fields != "" || o.Spread == "uniform" || o.Zone != "" || o.RefusedStatus != "") {
		return fmt.Errorf("--log-format csv: a CSV trace's key and permits are its own columns; --key, --permits, --field, --spread, --log-zone and --refused-status apply to access logs")
	}
	if o.Fields != "" && o.Format != "" && o.Format != "auto" && o.Format != "json" && o.Format != "caddy" {
		return fmt.Errorf("--field applies to JSON logs (--log-format json or caddy), not %s", o.Format)
	}
	return nil
}

// Decision is what the logging limiter decided, where the log says (nginx $limit_req_status).
type Decision uint8

const (
	DecisionNone     Decision = iota // not logged, or no limit applied ("-")
	DecisionPassed                   // PASSED
	DecisionDelayed                  // DELAYED: admitted after a wait
	DecisionRejected                 // REJECTED
	DecisionDelayedDryRun
	DecisionRejectedDryRun
)

// Record is one request as the log tells it.
type Record struct {
	At       time.Duration // arrival, since the first arrival
	Line     int           // the line it was read from, 1-based
	Key      []byte        // valid until the next call to Next
	Permits  int
	Status   int // the HTTP status logged, 0 when none
	Decision Decision
	Logged   Verdict // what production decided: from Decision, or Status (Options.RefusedStatus)
}

// LineError is a line a log's format does not fit: where, and what was expected there.
type LineError struct {
	Line, Col int
	Format    string
	Msg       string
	// Where, when set, says where instead of Line and Col: a HAR's entry, "log.entries[3]".
	Where string
}

func (e *LineError) Error() string {
	if e.Where != "" {
		return fmt.Sprintf("%s: %s: %s", e.Where, e.Format, e.Msg)
	}
	return fmt.Sprintf("line %d, column %d: %s: %s", e.Line, e.Col, e.Format, e.Msg)
}

// maxLine is the longest line read, 1 MiB, as for CSV traces.
const maxLine = 1 << 20

// prefixRows is how many rows the default reorder window looks at.
const prefixRows = 10000

// maxPermits is engine.MaxPermits (2^31-1), which this package cannot import.
const maxPermits = 1<<31 - 1

// Reader reads a log's requests in arrival order.
type Reader struct {
	rowLine int // the line of the row NextRow last returned (RowLine)
	in      *bufio.Reader
	src     *harSource // a HAR's entries, each made a line; nil for a log of lines
	f       format
	// f's optional interfaces, asserted once rather than per line
	directives directiver
	noticer    noticer
	ro         roles
	how        string // "detected" or "named"
	vals       []span
	line       int
	lines      []byte // read from in: the lines from lh to lt (readLine)
	lh, lt     int
	linesErr   error // what in's last Read returned, once the lines before it are read
	zeroReads  int   // Reads in a row that returned nothing and no error
	scratch    []byte
	clf, iso   clfCache
	spread     bool
	clfFast    bool // decode may take decodeCLF (clfRoles)
	// lines decodeCombined read itself, without decodeCLF (TestDecodeCLFTakesCombinedLines)
	combinedLines int64

	dec        slot  // the line being read
	q          []row // the queue: rows in arrival order, from qh on
	qh         int
	longKeys   [][]byte  // the keys of rows longer than a row's keyBuf (keep)
	longFree   []int32   // longKeys not held by a row
	curLong    int32     // the longKeys of the row nextSlot last returned, or -1
	curKey     []byte    // the key of the row nextSlot last returned
	group      []grouped // --spread: the rows of the current stamp
	groupStamp int64
	window     int64
	windowSet  bool
	prefix     int
	maxDur     int64
	watermark  int64
	lastOut    int64
	base       int64
	out        bool
	eof        bool
	rec        Record
	keyBuf     []byte // NextRow's key, when it differs from the slot's (csvKey)

	rows, reordered, late, noDur, zeroPermits int64
	zoneless, headerZoned                     int64 // stamps with no zone of their own: read in zoneName, or in their syslog header's
	zoneName                                  string
	refused                                   []int // Options.RefusedStatus
	lateLines                                 []int
	notices                                   int64 // lines that are not requests (noticer)
	noKey                                     int64 // requests whose key is empty or "-"
	noticeLines                               []int
	unit                                      int64
	maxUnit                                   int64
	firstStamp, lastStamp                     int64
}

// slot is what decode reads of a line: its stamp and the stamp's unit, its duration (< 0:
// not logged), and what a row (the queue's) keeps.
type slot struct {
	stamp, dur int64
	unit       int64
	line       int
	permits    int
	status     int
	decision   Decision
	key        []byte
	plain      bool // key is printable ASCII other than a space, as csvKey returns it (clfKey)
}

// Input is a log (or a CSV trace) as the CSV trace trace.Reader reads: a header
// "t_ns,permits,key" and a row per request, made as they are read (no goroutine, no
// buffering beyond the reorder window). A CSV trace is passed through untouched.
type Input struct {
	log    *Reader
	src    io.Reader
	buf    []byte
	off    int
	header bool
	err    error
}

// Open reads r, a log or a CSV trace, gzip-compressed or not (told by its first bytes), as
// opt says; with Format auto, the format is told by the first lines.
func Open(r io.Reader, opt Options) (*Input, error) {
	if err := opt.Check(); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if head, err := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %v", err)
		}
		br = bufio.NewReaderSize(gz, 64<<10)
	} else if err != nil && err != io.EOF {
		return nil, err
	}
	if opt.Format == "csv" {
		return &Input{src: br}, nil
	}
	// The first line tells a CSV trace, read at once; a log's first 8 lines (or 64 KiB) tell
	// its format. Only what the source has given is waited for: a pipe that pauses after its
	// header is passed on.
	sample, atEOF, err := peekLines(br, 1)
	if err != nil {
		return nil, err
	}
	auto := opt.Format == "" || opt.Format == "auto"
	if auto && isHAR(sample) { // one JSON document, perhaps one line longer than the sample
		opt.Format = "har"
		rd, err := newReader(br, opt)
		if err != nil {
			return nil, err
		}
		rd.how = "detected"
		return &Input{log: rd}, nil
	}
	if lines := sampleLines(sample, atEOF); !auto || len(lines) > 0 && !isCSVHeader(lines[0].text) {
		if sample, atEOF, err = peekLines(br, 8); err != nil {
			return nil, err
		}
	}
	lines := sampleLines(sample, atEOF)
	if auto {
		if len(lines) == 0 || isCSVHeader(lines[0].text) {
			if opt.Key != "" || opt.Permits != "" || opt.Fields != "" || opt.Spread == "uniform" || opt.Zone != "" || opt.RefusedStatus != "" {
				return nil, fmt.Errorf("this is a CSV trace: its key and permits are its own columns; --key, --permits, --field, --spread, --log-zone and --refused-status apply to access logs")
			}
			return &Input{src: br}, nil
		}
		name, err := detect(lines, opt)
		if err != nil {
			return nil, err
		}
		opt.Format = name
		rd, err := newReader(br, opt)
		if err != nil {
			return nil, err
		}
		rd.how = "detected"
		return &Input{log: rd}, nil
	}
	rd, err := newReader(br, opt)
	if err != nil {
		return nil, err
	}
	rd.how = "named"
	return &Input{log: rd}, nil
}

// Read reads the CSV trace.
func (in *Input) Read(p []byte) (int, error) {
	if in.log == nil {
		return in.src.Read(p)
	}
	for in.off == len(in.buf) {
		if in.err != nil {
			return 0, in.err
		}
		in.buf, in.off = in.buf[:0], 0
		if !in.header {
			in.buf = append(in.buf, "t_ns,permits,key\n"...)
			in.header = true
		}
		for len(in.buf) < 32<<10 {
			rec, err := in.log.Next()
			if err != nil {
				in.err = err
				break
			}
			in.buf = strconv.AppendInt(in.buf, int64(rec.At), 10)
			in.buf = append(in.buf, ',')
			in.buf = strconv.AppendInt(in.buf, int64(rec.Permits), 10)
			in.buf = append(in.buf, ',')
			if needsQuotes(rec.Key) {
				in.buf = append(in.buf, '"')
				for _, c := range rec.Key {
					if c == '"' {
						in.buf = append(in.buf, '"')
					}
					in.buf = append(in.buf, c)
				}
				in.buf = append(in.buf, '"')
			} else {
				in.buf = append(in.buf, rec.Key...)
			}
			in.buf = append(in.buf, '\n')
		}
	}
	n := copy(p, in.buf[in.off:])
	in.off += n
	return n, nil
}

// needsQuotes is whether a key holds a comma, a quote or a line break, which a CSV field
// must quote (bytes.ContainsAny, without building its byte set per row).
func needsQuotes(key []byte) bool {
	for _, c := range key {
		if c == ',' || c == '"' || c == '\r' || c == '\n' {
			return true
		}
	}
	return false
}

// Log is the log being read, nil for a CSV trace.
func (in *Input) Log() *Reader { return in.log }

// Notes are what the reading found that the results depend on (the format, the stamps'
// resolution, completion times, rows reordered or late), one sentence each; complete once
// the log has been read to its end.
func (in *Input) Notes() []string {
	if in.log == nil {
		return nil
	}
	return in.log.Notes()
}

// peekLines is the start of br, holding n lines (or 64 KiB, or all of it), unread; atEOF
// when it is all of it.
func peekLines(br *bufio.Reader, n int) (b []byte, atEOF bool, err error) {
	for want := 1; ; want = br.Buffered() + 1 {
		_, err = br.Peek(want)
		if err == io.EOF || err == bufio.ErrBufferFull {
			b, _ = br.Peek(br.Buffered())
			return b, err == io.EOF, nil
		}
		if err != nil {
			return nil, false, err
		}
		b, _ = br.Peek(br.Buffered())
		if bytes.Count(b, []byte{'\n'}) >= n {
			return b, false, nil
		}
	}
}

type sampleLine struct {
	n    int
	text []byte
}

// sampleLines are the first 8 lines with text (only whole ones, unless the input ends).
func sampleLines(b []byte, atEOF bool) []sampleLine {
	var out []sampleLine
	for n := 1; len(b) > 0 && len(out) < 8; n++ {
		i := bytes.IndexByte(b, '\n')
		if i < 0 && !atEOF {
			break
		}
		text := b
		if i >= 0 {
			text, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		text = bytes.TrimSuffix(text, []byte{'\r'})
		if len(bytes.TrimSpace(text)) > 0 {
			out = append(out, sampleLine{n, text})
		}
	}
	return out
}

// isCSVHeader is whether line is a CSV trace's header: a t_ns or t column.
func isCSVHeader(line []byte) bool {
	line = bytes.TrimPrefix(line, []byte("\ufeff"))
	for _, f := range bytes.Split(line, []byte{','}) {
		f = bytes.ToLower(bytes.Trim(bytes.TrimSpace(f), `"`))
		if string(f) == "t_ns" || string(f) == "t" {
			return true
		}
	}
	return false
}

// detect tries each format on the sample lines: the first that reads all of them is the
// log's. Otherwise the error says what was tried and where the closest stopped fitting.
func detect(lines []sampleLine, opt Options) (string, error) {
	candidates := []string{"combined", "common", "haproxy", "alb", "envoy", "cloudfront", "caddy"}
	tried := []string{"csv (line " + strconv.Itoa(lines[0].n) + " is not a header naming a t_ns or t column)",
		`har (not a JSON document that begins {"log": {)`}
	var best *LineError
	bestName := ""
	for _, name := range candidates {
		o := Options{Format: name}
		if name == "caddy" {
			o.Fields = opt.Fields
		}
		rd, err := newReader(nil, o)
		if err != nil {
			continue
		}
		var fail *LineError
		requests := 0
		for k, l := range lines {
			if d, ok := rd.f.(directiver); ok {
				if is, col, msg := d.directive(l.text); is {
					if col > 0 {
						fail = &LineError{Line: l.n, Col: col, Format: rd.f.label(), Msg: msg}
						break
					}
					continue
				}
			}
			if n, ok := rd.f.(noticer); ok && n.notice(l.text) && (requests > 0 || k < len(lines)-1) {
				continue // not a request; the last line read must not be one if none was
			}
			requests++
			var s slot
			if err := rd.decode(l.n, l.text, &s, true); err != nil {
				errors.As(err, &fail)
				break
			}
		}
		if fail == nil {
			return name, nil
		}
		tried = append(tried, rd.f.label())
		if best == nil || fail.Line > best.Line || fail.Line == best.Line && fail.Col > best.Col {
			best, bestName = fail, rd.f.label()
		}
	}
	hint := ""
	if t := bytes.TrimSpace(lines[0].text); len(t) > 0 && t[0] == '{' {
		hint = " (a JSON log other than Caddy's: --log-format json --field time=PATH,key=PATH)"
	}
	return "", fmt.Errorf("not a format ratelab reads: tried %s; the closest, %s, stops at line %d, column %d: %s; name the format with --log-format (%s)%s",
		strings.Join(tried, ", "), bestName, best.Line, best.Col, best.Msg, Formats, hint)
}

// newReader builds the reader of a named format (not auto, not csv); in is nil for detection.
func newReader(in *bufio.Reader, opt Options) (*Reader, error) {
	var f format
	var ro roles
	switch name := opt.Format; {
	case name == "combined" || name == "common" || strings.HasPrefix(name, "nginx:"):
		text, label := nginxCombined, "nginx combined"
		switch {
		case name == "common":
			text, label = nginxCommon, "nginx common"
		case strings.HasPrefix(name, "nginx:"):
			text, label = name[len("nginx:"):], "nginx log_format"
		}
		nf, err := compileNginx(label, text)
		if err != nil {
			return nil, fmt.Errorf("--log-format: %v", err)
		}
		f, ro = nf, nginxRoles(nf)
		if ro.time < 0 {
			return nil, fmt.Errorf("--log-format %s: the format logs no time ($msec, $time_iso8601 or $time_local)", name)
		}
	case name == "haproxy":
		f, ro = haproxyFormat{}, haproxyRoles()
	case name == "alb":
		f, ro = albFormat{}, albRoles()
	case name == "envoy":
		f, ro = envoyFormat{}, envoyRoles()
	case name == "cloudfront":
		cf := newCloudFront()
		f, ro = cf, cf.roles()
	case name == "har":
		hf := &harFormat{}
		f, ro = hf, harRoles()
	case name == "caddy" || name == "json":
		jf, r, err := jsonSetup(name, name == "caddy", opt.Fields)
		if err != nil {
			return nil, err
		}
		f, ro = jf, r
	default:
		return nil, fmt.Errorf("--log-format %s: unknown format (%s)", name, Formats)
	}
	if opt.Key != "" {
		keys, err := resolveFields(f, "key", opt.Key)
		if err != nil {
			return nil, err
		}
		ro.key, ro.keyName = keys, opt.Key
	}
	if opt.Permits != "" {
		p, err := resolveFields(f, "permits", opt.Permits)
		if err != nil {
			return nil, err
		}
		if len(p) != 1 {
			return nil, fmt.Errorf("--permits %s: one numeric field, not several", opt.Permits)
		}
		ro.permits, ro.permitName = p[0], opt.Permits
	}
	for _, i := range append([]int{ro.time, ro.clock, ro.dur, ro.status, ro.decision, ro.zone, ro.permits}, ro.key...) {
		if i >= 0 {
			f.need(i)
		}
	}
	r := &Reader{in: in, f: f, ro: ro, vals: make([]span, f.nfields()), curLong: -1, spread: opt.Spread == "uniform",
		unit: int64(time.Hour)}
	r.dec.key = make([]byte, 0, 64) // at least a row's keyBuf, which takes its first 16 bytes whole
	if opt.Reorder > 0 {
		r.window, r.windowSet = int64(opt.Reorder), true
	}
	loc, err := parseZone(opt.Zone)
	if err != nil {
		return nil, err
	}
	if r.refused, err = parseStatuses(opt.RefusedStatus); err != nil {
		return nil, err
	}
	if nf, ok := f.(*nginxFormat); ok {
		r.clfFast = clfRoles(nf, &r.ro)
	}
	r.directives, _ = f.(directiver)
	r.noticer, _ = f.(noticer)
	if hf, ok := f.(*harFormat); ok && in != nil {
		r.src = newHARSource(in, hf)
	}
	r.clf.loc, r.zoneName = loc, "UTC"
	if loc != nil {
		r.zoneName = opt.Zone
	}
	return r, nil
}

// Format is the format's name as notes say it: "nginx combined".
func (r *Reader) Format() string { return r.f.label() }

// readLine returns the next line without its newline, valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	if r.src != nil {
		b, err := r.src.next()
		if err == nil {
			r.line++
		}
		return b, err
	}
	for {
		var b []byte
		if i := bytes.IndexByte(r.lines[r.lh:r.lt], '\n'); i >= 0 {
			b = r.lines[r.lh : r.lh+i]
			r.lh += i + 1
		} else if r.lt-r.lh > maxLine+1 { // too long even if a "\r\n" came next
			return nil, r.longLine()
		} else if err := r.linesErr; err == nil {
			r.fill()
			continue
		} else if err != io.EOF || r.lh == r.lt {
			return nil, err
		} else { // the last line, with no newline
			b = r.lines[r.lh:r.lt]
			r.lh = r.lt
		}
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
		if len(b) > maxLine {
			return nil, r.longLine()
		}
		r.line++
		return b, nil
	}
}

// longLine is the error of a line longer than maxLine, the next one.
func (r *Reader) longLine() error {
	return fmt.Errorf("line %d: the line is longer than 1 MiB (%d bytes)", r.line+1, maxLine)
}

// linesRead is the most readLine asks of in at once: bufio.Reader reads into a buffer of its
// own size or more (64 KiB) straight from the source, with no copy through its own.
const linesRead = 64 << 10

// fill reads more of in after the line begun at lh, moved to the front (lines grows only
// for a line longer than it already holds, up to maxLine).
func (r *Reader) fill() {
	if r.lh > 0 {
		r.lt = copy(r.lines, r.lines[r.lh:r.lt])
		r.lh = 0
	}
	if len(r.lines)-r.lt < linesRead {
		r.lines = slices.Grow(r.lines[:r.lt], max(len(r.lines), 2*linesRead))
		r.lines = r.lines[:cap(r.lines)]
	}
	n, err := r.in.Read(r.lines[r.lt:])
	r.lt += n
	switch {
	case err != nil:
		r.linesErr = err
	case n > 0:
		r.zeroReads = 0
	default:
		if r.zeroReads++; r.zeroReads >= 100 {
			r.linesErr = io.ErrNoProgress
		}
	}
}

// value is field i's text in line (a JSON string unescaped), or nil when absent.
func (r *Reader) value(line []byte, i int) []byte {
	if s := &r.vals[i]; s.start >= 0 && !s.esc {
		return line[s.start:s.end]
	}
	return r.valueElse(line, i)
}

// valueElse is value of an absent field or a JSON string with escapes (apart, to keep value
// short).
func (r *Reader) valueElse(line []byte, i int) []byte {
	s := r.vals[i]
	if s.start < 0 {
		return nil
	}
	r.scratch = unescape(r.scratch[:0], line[s.start:s.end])
	return r.scratch
}

// decode reads a line into s: its stamp, duration, key, permits, status and decision.
func (r *Reader) decode(n int, line []byte, s *slot, full bool) error {
	if r.clfFast && !full && r.decodeCombined(n, line, s) {
		return nil
	}
	fail := func(col int, msg string) error {
		return &LineError{Line: n, Col: col, Format: r.f.label(), Msg: msg}
	}
	if col, msg := r.f.parse(line, r.vals, full); col > 0 {
		return fail(col, msg)
	}
	ro := &r.ro
	tv := r.value(line, ro.time)
	if tv == nil {
		return fail(1, "no time field "+ro.timeName)
	}
	col := int(r.vals[ro.time].start) + 1
	var msg string
	switch ro.timeKind {
	case timeCLF:
		var fallback []byte
		if ro.zone >= 0 {
			if zv := r.value(line, ro.zone); zv != nil {
				z, ok := isoZone(zv)
				if !ok {
					return fail(int(r.vals[ro.zone].start)+1, fmt.Sprintf("the syslog header's time %q ends in no zone (Z, +hh:mm or -hh:mm)", zv))
				}
				fallback = z[:]
			}
		}
		s.stamp, s.unit, msg = r.clf.parse(tv, fallback)
		// A stamp read has a zone when it ends in " -0700"; a fraction holds no space.
		if msg == "" && (len(tv) < 6 || tv[len(tv)-6] != ' ') {
			if fallback != nil {
				r.headerZoned++
			} else {
				r.zoneless++
			}
		}
	case timeISO:
		s.stamp, s.unit, msg = r.iso.parseISO(tv)
	case timeEpoch:
		var ok bool
		if s.stamp, s.unit, ok = parseDecimal(tv); !ok {
			msg = "expected epoch seconds such as 1700000000.123"
		}
	case timeAnyISO:
		s.stamp, s.unit, msg = r.iso.parseEpochAny(tv)
	case timeW3C:
		// "2019-12-04" and "21:02:31", both UTC, read as 2019-12-04T21:02:31Z.
		cv := r.value(line, ro.clock)
		if len(tv) != 10 || len(cv) < 8 || len(cv) > 18 {
			return fail(col, fmt.Sprintf("date %q time %q: expected a date such as 2019-12-04 and a time such as 21:02:31", tv, cv))
		}
		var b [30]byte
		n := copy(b[:], tv)
		b[n] = 'T'
		n += 1 + copy(b[n+1:], cv)
		b[n] = 'Z'
		s.stamp, s.unit, msg = r.iso.parseISO(b[:n+1])
		if msg != "" {
			msg = fmt.Sprintf("with time %q: %s", cv, msg)
		}
	}
	if msg != "" {
		return fail(col, fmt.Sprintf("%s %q: %s", ro.timeName, tv, msg))
	}
	s.dur = -1
	if ro.dur >= 0 {
		if dv := r.value(line, ro.dur); dv != nil && string(dv) != "-" {
			d, ok := parseDuration(ro.durKind, dv)
			if !ok || d < -1 {
				return fail(int(r.vals[ro.dur].start)+1, fmt.Sprintf("%s %q is not a duration", ro.durName, dv))
			}
			s.dur = d // -1: none measured (ALB's processing times all -1)
		}
	}
	s.key, s.plain = s.key[:0], false
	for k, i := range ro.key {
		if k > 0 {
			s.key = append(s.key, ' ')
		}
		s.key = append(s.key, r.value(line, i)...)
	}
	s.permits = 1
	if ro.permits >= 0 {
		pv := r.value(line, ro.permits)
		v, ok := 0, len(pv) > 0
		for _, c := range pv {
			if c < '0' || c > '9' || v > maxPermits {
				ok = false
				break
			}
			v = v*10 + int(c-'0')
		}
		switch {
		case len(pv) == 0 || string(pv) == "-" || ok && v == 0:
			r.zeroPermits++
			v = 1
		case !ok:
			col := 1
			if r.vals[ro.permits].start >= 0 {
				col = int(r.vals[ro.permits].start) + 1
			}
			return fail(col, fmt.Sprintf("--permits %s %q is not a whole number", ro.permitName, pv))
		case v > maxPermits:
			return fail(int(r.vals[ro.permits].start)+1, fmt.Sprintf("--permits %s %s is more than a request may ask for, %d", ro.permitName, pv, maxPermits))
		}
		s.permits = v
	}
	s.status = 0
	if ro.status >= 0 {
		if sv := r.value(line, ro.status); len(sv) == 3 {
			s.status = max(num(sv, 3), 0)
		}
	}
	s.decision = DecisionNone
	if ro.decision >= 0 && ro.flags {
		// Envoy's %RESPONSE_FLAGS%: "-", or flags joined by commas; RL is the rate-limit
		// filter's refusal, anything else an admission as far as a limiter goes.
		s.decision = DecisionPassed
		for v := r.value(line, ro.decision); len(v) > 0; {
			f := v
			if c := bytes.IndexByte(v, ','); c >= 0 {
				f, v = v[:c], v[c+1:]
			} else {
				v = nil
			}
			if string(f) == "RL" {
				s.decision = DecisionRejected
			}
		}
	} else if ro.decision >= 0 {
		switch string(r.value(line, ro.decision)) {
		case "PASSED":
			s.decision = DecisionPassed
		case "DELAYED":
			s.decision = DecisionDelayed
		case "REJECTED":
			s.decision = DecisionRejected
		case "DELAYED_DRY_RUN":
			s.decision = DecisionDelayedDryRun
		case "REJECTED_DRY_RUN":
			s.decision = DecisionRejectedDryRun
		}
	}
	s.line = n
	return nil
}

// unescape appends the JSON string text v, unescaped, to dst.
func unescape(dst, v []byte) []byte {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 == len(v) {
			dst = append(dst, c)
			continue
		}
		i++
		switch v[i] {
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case 'r':
			dst = append(dst, '\r')
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'u':
			if i+4 < len(v) {
				if x, err := strconv.ParseUint(string(v[i+1:i+5]), 16, 32); err == nil {
					dst = utf8.AppendRune(dst, rune(x))
					i += 4
					continue
				}
			}
			dst = append(dst, 'u')
		default:
			dst = append(dst, v[i])
		}
	}
	return dst
}
