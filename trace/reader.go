package trace

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Row is one request of a recorded trace.
type Row struct {
	Line    int           // 1-based line in the file (the header is line 1)
	At      time.Duration // since the trace's start
	Permits int
	Key     string
	// Latency is the row's latency_ns: how long the request took once admitted (a recorded
	// response time), 0 without that column.
	Latency time.Duration
}

// Reader streams a CSV trace (see the package doc for the format): one row is held at a
// time, so memory does not depend on the trace's length. Read rows with Next, NextRow or
// Scan.
type Reader struct {
	src        lineReader
	csv        *csv.Reader // the general reader, from the first line holding a quote on
	csvLines   int         // lines before the csv reader's first line
	plain      int         // columns of the plain layout t_ns[,permits[,key]]; 0 for another layout
	timeCol    int
	nsColumn   bool // t_ns rather than t
	permitsCol int
	keyCol     int
	latencyCol int // -1: none
	first      time.Time
	haveFirst  bool
	last       time.Duration
	rows       int64 // rows read
	decoded    int64 // rows read by decode rather than on the plain path
	maxRows    int64 // MaxRows; lower in tests
	record     []string
	cur        row // the last row read

	// The last row's key: t.src.buf[keyStart:keyEnd] (valid until the next row) on the plain
	// path, keyText on the others.
	keyStart  int
	keyEnd    int
	keyText   string
	keyIsText bool
	keyBytes  []byte              // NextRow's key on the other paths: keyText's bytes
	keys      map[string]string   // interned keys, at most maxInterned
	recent    *[recentKeys]string // interned keys by keyHash: most rows' key found without the map
}

// row is a row as next reads it: Row without the key (see key) and, on the plain path,
// with its text.
type row struct {
	line    int
	at      time.Duration
	permits int
	latency time.Duration // latency_ns, on the decode path only (the plain layout has none)
	// textEnd, when not 0, ends the row's own "t_ns,permits" (or "t_ns" when onePermit) at
	// the start of the line buffer, as strconv.AppendInt writes them (valid until the next row).
	textEnd   int
	onePermit bool
}

// text is the row's own "t_ns,permits" or "t_ns" (see row.textEnd).
func (t *Reader) text() []byte { return t.src.buf[t.src.start : t.src.start+t.cur.textEnd] }

// MaxTime bounds a trace's times and latencies: each must be below 2^62ns, about 146 years
// after the start, so that two of them add up without overflowing an int64 (engine.MaxTime
// is the same bound).
const MaxTime = time.Duration(1) << 62

// MaxPermits is the most permits one row may ask for: 2^31−1, so that the permits of up to
// MaxRows rows add up exactly in an int64 (engine.MaxPermits is the same bound).
const MaxPermits = 1<<31 - 1

// maxTimeText is how errors name MaxTime.
const maxTimeText = "2^62ns (about 146 years)"

// MaxRows is the most rows a trace may hold: 2^32 rows of at most MaxPermits permits
// each add up to less than 2^63.
const MaxRows = 1 << 32

// MaxLine is the most bytes a line of a trace may hold, its newline aside (a row of
// fields quoted across lines counts from its first line).
const MaxLine = 1 << 20

// maxInterned bounds the distinct keys Next shares a string for.
const maxInterned = 4096

// outOfRange ends a time's error message.
const outOfRange = "is out of range: times must be less than " + maxTimeText + " after the start"

// NewReader reads the header and prepares to stream rows.
func NewReader(r io.Reader) (*Reader, error) {
	t := &Reader{timeCol: -1, permitsCol: -1, keyCol: -1, latencyCol: -1, maxRows: MaxRows}
	t.src.init(r)
	var header []string
	text, err := t.src.nextRow()
	switch {
	case bytes.IndexByte(text, '"') >= 0:
		// A quoted field, or part of one before a read error (which encoding/csv may find
		// malformed first).
		t.startCSV()
		header, err = t.csv.Read()
	case err == nil:
		header = strings.Split(string(text), ",")
	}
	if err != nil {
		var long *lineTooLongError
		switch {
		case errors.Is(err, io.EOF):
			return nil, fmt.Errorf("line 1: empty trace: a header with a t_ns or t column is required")
		case errors.As(err, &long):
			return nil, err
		}
		var parseErr *csv.ParseError
		if errors.As(err, &parseErr) { // the csv reader's lines are the trace's
			parseErr.StartLine += t.csvLines
			parseErr.Line += t.csvLines
		}
		return nil, fmt.Errorf("line 1: %w", err)
	}
	seen := map[string]int{} // a column this reader reads -> its 1-based position
	for i, name := range header {
		if i == 0 {
			name = strings.TrimPrefix(name, "\ufeff") // the byte-order mark spreadsheets write
		}
		name = strings.TrimSpace(strings.ToLower(name))
		switch name {
		case "t_ns", "t", "permits", "key", "latency_ns":
			if first, twice := seen[name]; twice {
				return nil, fmt.Errorf("line 1: the header names the %s column twice (columns %d and %d); keep one", name, first, i+1)
			}
			seen[name] = i + 1
		}
		switch name {
		case "t_ns":
			t.timeCol, t.nsColumn = i, true
		case "t":
			if t.timeCol < 0 {
				t.timeCol = i
			}
		case "permits":
			t.permitsCol = i
		case "key":
			t.keyCol = i
		case "latency_ns":
			t.latencyCol = i
		}
	}
	if t.timeCol < 0 {
		return nil, fmt.Errorf("line 1: the header %q has no t_ns or t column", strings.Join(header, ","))
	}
	if t.nsColumn && t.timeCol == 0 && t.csv == nil {
		switch n := len(header); {
		case n == 1, n == 2 && t.permitsCol == 1, n == 3 && t.permitsCol == 1 && t.keyCol == 2:
			t.plain = n
		}
	}
	return t, nil
}

// startCSV hands the rest of the trace, from the start of the line just read, to encoding/csv.
func (t *Reader) startCSV() {
	t.csvLines = t.src.lines - 1
	t.csv = csv.NewReader(&rowCapReader{r: t.src.rest(), line: t.csvLines, rowStart: t.csvLines})
	t.csv.ReuseRecord = true
	t.csv.FieldsPerRecord = -1
}

// Next returns the next row, io.EOF at the end, or an error naming the line.
func (t *Reader) Next() (Row, error) {
	if err := t.next(); err != nil {
		return Row{}, err
	}
	row := Row{Line: t.cur.line, At: t.cur.at, Permits: t.cur.permits, Latency: t.cur.latency}
	if t.keyCol >= 0 {
		row.Key = t.key()
	}
	return row, nil
}

// HasLatency reports whether the trace has a latency_ns column.
func (t *Reader) HasLatency() bool { return t.latencyCol >= 0 }

// key is the last row's key, interned: a trace's few distinct keys cost one string each.
// An interned key is looked for first in recent, at its keyHash, then in the map: with 1,000
// clients, the map's hashing and probing was 40 ns of a row that fit --clients reads.
func (t *Reader) key() string {
	if t.keyIsText {
		if k, ok := t.keys[t.keyText]; ok {
			return k
		}
		return t.intern(strings.Clone(t.keyText))
	}
	b := t.src.buf[t.keyStart:t.keyEnd]
	var slot *string
	if t.recent != nil {
		if slot = &t.recent[keyHash(b)]; *slot == string(b) && len(b) > 0 {
			return *slot
		}
	}
	if k, ok := t.keys[string(b)]; ok {
		if slot != nil {
			*slot = k
		}
		return k
	}
	return t.intern(string(b))
}

// recentKeys is the size of Reader.recent: 1024 strings, 16 KiB.
const recentKeys = 1 << 10

// keyHash is b's slot in Reader.recent: its length and its first and last 8 bytes (all of
// it when shorter), mixed by a multiplication, the top 10 bits. Two keys of one slot only
// cost the map's lookup.
func keyHash(b []byte) uint64 {
	n := len(b)
	var x uint64
	if n >= 8 {
		x = binary.LittleEndian.Uint64(b) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(b[n-8:]), 29)
	} else {
		for _, c := range b {
			x = x<<8 | uint64(c)
		}
	}
	return ((x ^ uint64(n)) * 0x9e3779b97f4a7c15) >> (64 - 10)
}

func (t *Reader) intern(k string) string {
	if t.keys == nil {
		t.keys = make(map[string]string)
		t.recent = new([recentKeys]string)
	}
	if len(t.keys) < maxInterned {
		t.keys[k] = k
	}
	return k
}

// next reads the next row into t.cur (see also key): Next without allocating on the plain
// path.
func (t *Reader) next() error {
	if t.csv != nil {
		return t.nextCSV()
	}
	if t.plain > 0 && t.rows < t.maxRows {
		for {
			r := t.plainRow()
			if r == plainOK {
				return nil
			}
			// A row the buffer ends in is read again after more of it is, unless it is long:
			// the line path reads that without reading its start again.
			if r == plainNo || t.src.err != nil || t.src.w-t.src.r >= 4096 {
				break
			}
			t.src.fill()
		}
	}
	t.cur.textEnd = 0
	text, err := t.src.nextRow()
	if bytes.IndexByte(text, '"') >= 0 {
		// From a line with a quote on, encoding/csv reads the trace; it reads a line cut
		// short by a read error too, and may find it malformed before it returns the error.
		t.startCSV()
		return t.nextCSV()
	}
	if err != nil {
		return err
	}
	line := t.src.lines
	if t.rows >= t.maxRows {
		return fmt.Errorf("line %d: a trace holds at most %d requests (so that their permits add up exactly)", line, t.maxRows)
	}
	// A row without quotes: its fields are what lies between its commas.
	s := string(text)
	t.record = t.record[:0]
	for {
		i := strings.IndexByte(s, ',')
		if i < 0 {
			break
		}
		t.record = append(t.record, s[:i])
		s = s[i+1:]
	}
	t.record = append(t.record, s)
	return t.decode(line, t.record)
}

// What plainRow found.
const (
	plainOK   = iota // a plain row, read
	plainNo          // not a plain row
	plainMore        // the buffer ends before the row can be told plain or not
)

// plainRow reads the row at the start of the line buffer into t.cur if it is plain: t_ns of
// 1 to 19 digits (less than MaxTime) and, when the header has them, permits of up to 9 digits
// (none is the default, 1) and a key with no comma, no quote and nothing TrimSpace would trim,
// ended by "\n" or "\r\n". A row that is plain is one decode reads the same; decode reads
// every other (and says what is wrong with it).
func (t *Reader) plainRow() int {
	l := &t.src
	b := l.buf[l.r:l.w]
	i, ns := 0, uint64(0) // 19 digits fit in a uint64
	if len(b) >= 16 {     // eight digits at a time
		if v, n := digits8(binary.LittleEndian.Uint64(b)); n > 0 {
			i, ns = n, v
			if v, n = digits8(binary.LittleEndian.Uint64(b[8:])); i == 8 && n > 0 {
				i, ns = 8+n, ns*pow10[n]+v
			}
		}
	}
	if i == 0 || i == 16 {
		for ; i < len(b) && i < 20; i++ {
			c := b[i] - '0'
			if c > 9 {
				break
			}
			ns = ns*10 + uint64(c)
		}
	}
	nsEnd := i
	if i == len(b) {
		return plainMore
	}
	if i == 0 || i > 19 || ns >= uint64(MaxTime) || time.Duration(ns) < t.last {
		return plainNo
	}
	n, pStart, pEnd, kStart, kEnd := 1, i, i, 0, 0
	c := b[i]
	if c == ',' && t.plain >= 2 {
		i++
		pStart, n = i, 0
		for ; i < len(b); i++ {
			d := b[i] - '0'
			if d > 9 {
				break
			}
			n = n*10 + int(d)
		}
		pEnd = i
		if i == len(b) {
			return plainMore
		}
		switch {
		case pEnd == pStart:
			n = 1
		case pEnd-pStart > 9 || n < 1:
			return plainNo
		}
		c = b[i]
		if c == ',' && t.plain == 3 {
			i++
			kStart = i
			for ; i+8 <= len(b); i += 8 { // eight bytes at a time, to the first '\n', '"' or ','
				if m := special8(binary.LittleEndian.Uint64(b[i:])); m != 0 {
					i += bits.TrailingZeros64(m) >> 3
					break
				}
			}
			for ; i < len(b); i++ {
				if d := b[i]; d == '\n' || d == '"' || d == ',' {
					break
				}
			}
			if i == len(b) {
				return plainMore
			}
			if b[i] != '\n' {
				return plainNo // a quote, or more fields
			}
			kEnd = i
			if kEnd > kStart && b[kEnd-1] == '\r' {
				kEnd--
			}
			if kEnd > kStart {
				if first, last := b[kStart], b[kEnd-1]; first <= ' ' || first >= 0x80 || last <= ' ' || last >= 0x80 {
					return plainNo // maybe space that TrimSpace removes
				}
			}
			c = '\n'
		}
	}
	switch {
	case c == '\n':
	case c == '\r' && i+1 < len(b) && b[i+1] == '\n':
		i++
	case c == '\r' && i+1 == len(b):
		return plainMore
	default:
		return plainNo
	}
	t.last = time.Duration(ns)
	l.lines++
	t.rows++
	t.cur.line, t.cur.at, t.cur.permits = l.lines, time.Duration(ns), n
	// The row's own digits are the output's when they have no leading zero.
	t.cur.textEnd, t.cur.onePermit = 0, false
	if nsEnd == 1 || b[0] != '0' {
		switch {
		case pEnd == pStart:
			t.cur.textEnd, t.cur.onePermit = nsEnd, true
		case pEnd-pStart == 1 || b[pStart] != '0':
			t.cur.textEnd = pEnd
		}
	}
	t.keyStart, t.keyEnd, t.keyIsText = l.r+kStart, l.r+kEnd, false
	l.start, l.r, l.seen = l.r, l.r+i+1, 0
	return plainOK
}

var pow10 = [9]uint64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000}

// digits8 is the value and number of the decimal digits that begin the 8 bytes of w (the
// first byte lowest), the value being meaningless when n is 0: SWAR, with no branch. A byte
// is a digit when its high nibble is 3 and stays 3 with 6 added (no carry crosses into a byte
// before the first that is not a digit).
func digits8(w uint64) (value uint64, n int) {
	const ones = 0x0101010101010101
	y := (w&(0xF0*ones) ^ 0x30*ones) | ((w+0x06*ones)&(0xF0*ones) ^ 0x30*ones) // 0 for a digit
	notDigit := ((y&(0x7F*ones) + 0x7F*ones) | y) & (0x80 * ones)
	n = bits.TrailingZeros64(notDigit) >> 3 // 8 when all are digits
	// The digits, moved up so that the bytes after them fall off; the lanes below are
	// leading zeros. Then pairs, fours and eights are combined.
	x := (w & (0x0F * ones)) << ((64 - 8*uint(n)) & 63)
	x = (x * (10<<8 + 1)) >> 8 & 0x00FF00FF00FF00FF
	x = (x * (100<<16 + 1)) >> 16 & 0x0000FFFF0000FFFF
	return (x * (10000<<32 + 1)) >> 32, n
}

// special8 has the high bit set in the first byte of w (the first byte lowest) that is '\n',
// '"' or ',', if any (and perhaps in bytes after it): a byte is zero in w^c exactly where it
// is c, and (x−1)&^x sets the high bit of the lowest zero byte of x and of none before it.
func special8(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	nl, quote, comma := w^('\n'*ones), w^('"'*ones), w^(','*ones)
	return ((nl - ones) &^ nl & highs) | ((quote - ones) &^ quote & highs) | ((comma - ones) &^ comma & highs)
}

// nextCSV reads a row with encoding/csv.
func (t *Reader) nextCSV() error {
	record, err := t.csv.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		var parseErr *csv.ParseError
		if errors.As(err, &parseErr) {
			return fmt.Errorf("line %d: %v", parseErr.Line+t.csvLines, parseErr.Err)
		}
		return err
	}
	line, _ := t.csv.FieldPos(0)
	line += t.csvLines
	if t.rows >= t.maxRows {
		return fmt.Errorf("line %d: a trace holds at most %d requests (so that their permits add up exactly)", line, t.maxRows)
	}
	return t.decode(line, record)
}

// decode reads a row's fields into t.cur: the general path, which says what every error is.
func (t *Reader) decode(line int, record []string) error {
	field := func(col int) string {
		if col < 0 || col >= len(record) {
			return ""
		}
		return strings.TrimSpace(record[col])
	}
	text := field(t.timeCol)
	if text == "" {
		return fmt.Errorf("line %d: the time column is empty", line)
	}
	at, err := t.parseTime(text)
	if err != nil {
		return fmt.Errorf("line %d: %v", line, err)
	}
	if at < t.last {
		return fmt.Errorf("line %d: time %v is before the previous row's %v: rows must be in time order", line, at, t.last)
	}
	t.last = at
	permits := 1
	if p := field(t.permitsCol); p != "" {
		n, err := strconv.ParseInt(p, 10, 64)
		if (err == nil && n > MaxPermits) || (errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(p, "-")) {
			return fmt.Errorf("line %d: permits %s is more than a request may ask for, %d (2^31-1, so that sums of permits stay exact)", line, p, MaxPermits)
		}
		if err != nil || n < 1 {
			return fmt.Errorf("line %d: permits %q is not a whole number >= 1", line, p)
		}
		permits = int(n)
	}
	var latency time.Duration
	if t.latencyCol >= 0 {
		text := field(t.latencyCol)
		ns, err := strconv.ParseInt(text, 10, 64)
		if (err == nil && ns >= int64(MaxTime)) || (errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(text, "-")) {
			return fmt.Errorf("line %d: latency_ns %s is out of range: a latency must be less than %s", line, text, maxTimeText)
		}
		if err != nil || ns < 0 {
			return fmt.Errorf("line %d: latency_ns %q is not a whole number of nanoseconds >= 0", line, text)
		}
		latency = time.Duration(ns)
	}
	t.rows++
	t.decoded++
	t.cur = row{line: line, at: at, permits: permits, latency: latency}
	if t.keyCol >= 0 {
		t.keyText, t.keyIsText = field(t.keyCol), true
	}
	return nil
}

func (t *Reader) parseTime(text string) (time.Duration, error) {
	if t.nsColumn {
		ns, err := strconv.ParseInt(text, 10, 64)
		if (err == nil && ns >= int64(MaxTime)) || (errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(text, "-")) {
			return 0, fmt.Errorf("t_ns %s %s", text, outOfRange)
		}
		if err != nil || ns < 0 {
			return 0, fmt.Errorf("t_ns %q is not a whole number of nanoseconds >= 0", text)
		}
		return time.Duration(ns), nil
	}
	if strings.ContainsAny(text, "T:-") && !strings.HasPrefix(text, "-") {
		ts, err := time.Parse(time.RFC3339Nano, text)
		if err != nil {
			return 0, fmt.Errorf("t %q is neither RFC 3339 nor decimal seconds", text)
		}
		if !t.haveFirst {
			t.first, t.haveFirst = ts, true
		}
		d := ts.Sub(t.first) // clamped to ±292 years
		if d >= MaxTime {
			return 0, fmt.Errorf("t %s %s (the first row's time)", text, outOfRange)
		}
		return d, nil
	}
	return parseDecimalSeconds(text)
}

// parseDecimalSeconds reads "12", "12.5" or "0.000000001" exactly, without floating point.
func parseDecimalSeconds(text string) (time.Duration, error) {
	whole, frac, _ := strings.Cut(text, ".")
	bad := func() error { return fmt.Errorf("t %q is neither RFC 3339 nor decimal seconds", text) }
	if whole == "" && frac == "" {
		return 0, bad()
	}
	var secs int64
	if whole != "" {
		v, err := strconv.ParseInt(whole, 10, 64)
		if (err == nil && v > int64(MaxTime/time.Second)) || (errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(whole, "-")) {
			return 0, fmt.Errorf("t %s %s", text, outOfRange)
		}
		if err != nil || v < 0 {
			return 0, bad()
		}
		secs = v
	}
	if len(frac) > 9 {
		return 0, fmt.Errorf("t %q has more than 9 decimal places (nanoseconds)", text)
	}
	var ns int64
	if frac != "" {
		v, err := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
		if err != nil || v < 0 {
			return 0, bad()
		}
		ns = v
	}
	if d := time.Duration(secs*1e9 + ns); d < MaxTime {
		return d, nil
	}
	return 0, fmt.Errorf("t %s %s", text, outOfRange)
}

// lineTooLongError is a line, or a row quoted across lines, of more than MaxLine bytes.
type lineTooLongError struct{ msg string }

func (e *lineTooLongError) Error() string { return e.msg }

func lineTooLong(line int) error {
	return &lineTooLongError{fmt.Sprintf("line %d: the line is longer than 1 MiB (%d bytes)", line, MaxLine)}
}

// lineReader reads a trace's lines, at most MaxLine bytes each, from a buffer that holds
// one line at a time: 64 KiB, grown (to MaxLine and a byte) only for a longer line.
type lineReader struct {
	src   io.Reader
	buf   []byte
	r, w  int   // buf[r:w] is unread
	seen  int   // buf[r:r+seen] holds no newline
	start int   // where the last line returned began in buf
	lines int   // lines returned or skipped
	err   error // the source's error, returned once the bytes before it are
}

func (l *lineReader) init(src io.Reader) {
	l.src = src
	l.buf = make([]byte, 64<<10)
}

// nextRow returns the next line that is not empty, without its "\n" or "\r\n" (and, at the
// end of the input, without a last "\r"), and skips empty ones: the lines encoding/csv reads
// a record from. The line is valid until the next call. A read error other than io.EOF part
// way through a line comes with what was read of the line.
func (l *lineReader) nextRow() ([]byte, error) {
	for {
		line, err := l.next()
		if err != nil || len(line) > 0 {
			return line, err
		}
	}
}

func (l *lineReader) next() ([]byte, error) {
	for {
		if i := bytes.IndexByte(l.buf[l.r+l.seen:l.w], '\n'); i >= 0 {
			end := l.r + l.seen + i
			line := l.buf[l.r:end]
			l.start, l.r, l.seen = l.r, end+1, 0
			l.lines++
			if len(line) > MaxLine {
				return nil, lineTooLong(l.lines)
			}
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			return line, nil
		}
		l.seen = l.w - l.r
		if l.seen > MaxLine {
			return nil, lineTooLong(l.lines + 1)
		}
		if l.err != nil {
			if l.r == l.w {
				return nil, l.err
			}
			line := l.buf[l.r:l.w] // the last line, with no newline
			l.start, l.r, l.seen = l.r, l.w, 0
			l.lines++
			if l.err != io.EOF {
				return line, l.err // a read error part way through a line: see Reader.next
			}
			if n := len(line); line[n-1] == '\r' {
				line = line[:n-1]
			}
			return line, nil
		}
		l.fill()
	}
}

// fill reads more of the source after the unread bytes, first moving them to the front and,
// if they fill the buffer, doubling it up to MaxLine and a byte.
func (l *lineReader) fill() {
	if l.r > 0 {
		l.w = copy(l.buf, l.buf[l.r:l.w])
		l.r = 0
	}
	if l.w == len(l.buf) {
		grown := make([]byte, min(2*len(l.buf), MaxLine+1))
		copy(grown, l.buf)
		l.buf = grown
	}
	for range 100 { // as bufio does, give up on a source that returns nothing, and no error
		n, err := l.src.Read(l.buf[l.w:])
		l.w += n
		if err != nil {
			l.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	l.err = io.ErrNoProgress
}

// rest is the input from the start of the last line returned: what is left in the buffer,
// then the rest of the source (or the error it returned).
func (l *lineReader) rest() io.Reader {
	buffered := bytes.NewReader(l.buf[l.start:l.w])
	switch l.err {
	case nil:
		return io.MultiReader(buffered, l.src)
	case io.EOF:
		return buffered
	}
	return io.MultiReader(buffered, errReader{l.err})
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// rowCapReader passes on its source up to the first row of more than MaxLine bytes
// (counting from where the row began, across newlines inside quotes), then fails with an error
// naming the line: encoding/csv, which reads a whole row however long, never buffers more.
type rowCapReader struct {
	r        io.Reader
	line     int  // newlines passed on
	rowStart int  // the line the row under way began on
	size     int  // the row's bytes so far
	quoted   bool // inside a quoted field
	err      error
}

func (c *rowCapReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	for i, b := range p[:n] {
		if b == '\n' && !c.quoted {
			c.line++
			c.size, c.rowStart = 0, c.line
			continue
		}
		if c.size++; c.size > MaxLine { // the byte is on line c.line+1
			if c.rowStart == c.line {
				c.err = lineTooLong(c.line + 1)
			} else {
				c.err = &lineTooLongError{fmt.Sprintf("line %d: the row that began on line %d is longer than 1 MiB (%d bytes): is a quote left open?",
					c.line+1, c.rowStart+1, MaxLine)}
			}
			return i, c.err
		}
		switch b {
		case '"':
			c.quoted = !c.quoted
		case '\n':
			c.line++
		}
	}
	return n, err
}
