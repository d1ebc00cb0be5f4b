package trace

import (
	"fmt"
	"strconv"
	"time"
)

// Reading without a Row: Scan reads the next row and the methods below read its fields, with
// no allocation on the plain path (engine.Replay reads a trace this way). Each is small enough
// to be inlined, so a row costs the one call to Scan's parser.

// Scan reads the next row: io.EOF after the last, or an error naming the line. Its fields
// are then read by At, Permits, Key, Latency, Line and Text, until the next Scan.
func (t *Reader) Scan() error { return t.next() }

// Line is the scanned row's 1-based line in the file (the header is line 1).
func (t *Reader) Line() int { return t.cur.line }

// At is the scanned row's time since the trace's start.
func (t *Reader) At() time.Duration { return t.cur.at }

// Permits is the scanned row's permits (1 when the trace has no permits column).
func (t *Reader) Permits() int { return t.cur.permits }

// Latency is the scanned row's latency_ns, 0 without that column.
func (t *Reader) Latency() time.Duration { return t.cur.latency }

// Key is the scanned row's key, "" without a key column. A trace's first 4096 distinct keys
// are interned: each costs one string, however many rows name it.
func (t *Reader) Key() string {
	if t.keyCol < 0 {
		return ""
	}
	return t.key()
}

// Text is the scanned row's own "t_ns,permits" as the input holds it, written as
// strconv.AppendInt would write them, or its "t_ns" alone when onePermit (a trace without
// permits: the row asks for 1). It is nil for a row not read on the plain path, whose numbers
// are to be written from At and Permits. engine.Replay copies it rather than formatting the
// numbers again. Valid until the next Scan.
func (t *Reader) Text() (text []byte, onePermit bool) {
	if t.cur.textEnd == 0 {
		return nil, false
	}
	return t.text(), t.cur.onePermit
}

// NextRow is Next as an engine.RowReader: the key is not interned, and is valid until the
// next call.
func (t *Reader) NextRow() (at time.Duration, permits int, key []byte, latency time.Duration, err error) {
	if err := t.next(); err != nil {
		return 0, 0, nil, 0, err
	}
	switch {
	case t.keyCol < 0:
	case t.keyIsText:
		t.keyBytes = append(t.keyBytes[:0], t.keyText...)
		key = t.keyBytes
	default:
		key = t.src.buf[t.keyStart:t.keyEnd]
	}
	return t.cur.at, t.cur.permits, key, t.cur.latency, nil
}

// Columns says whether the trace has a key and a latency_ns column.
func (t *Reader) Columns() (key, latency bool) { return t.keyCol >= 0, t.latencyCol >= 0 }

// RowReader is a trace read as rows rather than as CSV text: the requests themselves, so that
// a source that is not a CSV file (an access log: accesslog.Reader is a RowReader) is read
// without being written as "t_ns,permits,key" text and parsed again. A Reader is one too.
type RowReader interface {
	// NextRow returns the next row, io.EOF after the last: its time since the trace's start
	// (in time order, less than MaxTime), its permits (1 to MaxPermits), its key (valid
	// until the next call) and its latency once admitted (latency_ns; 0 when the rows carry
	// none).
	NextRow() (at time.Duration, permits int, key []byte, latency time.Duration, err error)
	// Columns says whether the rows carry a key and a latency (a CSV trace's key and
	// latency_ns columns).
	Columns() (key, latency bool)
}

// Rows reads a RowReader's rows as Next reads the CSV trace t_ns,permits[,key][,latency_ns]
// holding them: the same Rows (a row's Line is the line it would have in that text, the
// header being line 1), a trace's first 4096 distinct keys interned as Next does, and the same
// errors for a row out of time order or out of range; an error of the RowReader's own (an
// access log's line it cannot read, which names that line) is returned as it is. Read so, an
// nginx combined log of 1M requests is fit in 580 CPU ns a request (561-600) where it took 686
// (679-702) through its CSV text (BenchmarkFitLogRows in fit: 6 interleaved runs, 2 shared
// cores at load 2.5-3.1): the log's parsing is most of what is left.
type Rows struct {
	src            RowReader
	keyed, latency bool
	rows           int64
	last           time.Duration
	keys           map[string]string
	lines          LineReader // src, when it names its own lines
}

// LineReader is a RowReader that knows the line of its own input each row came from (an
// access log: accesslog.Reader). Rows then names that line in a row's Line and its errors,
// rather than the line the row would have in CSV text: a log's rows are put in arrival order,
// and lines the log skips (a health check, a blank line) are not rows, so the 1000th row may
// be the log's line 1007.
type LineReader interface {
	RowReader
	// RowLine is the 1-based line of the row NextRow last returned.
	RowLine() int
}

// NewRows reads src's rows as a CSV trace's.
func NewRows(src RowReader) *Rows {
	r := &Rows{src: src}
	r.keyed, r.latency = src.Columns()
	r.lines, _ = src.(LineReader)
	return r
}

// Next returns the next row, io.EOF after the last, or an error naming the row's line.
func (r *Rows) Next() (Row, error) {
	at, permits, key, latency, err := r.src.NextRow()
	if err != nil {
		return Row{}, err
	}
	line := int(min(r.rows+2, 1<<62)) // the header is line 1
	if r.lines != nil {
		line = r.lines.RowLine()
	}
	switch {
	case r.rows >= MaxRows:
		return Row{}, fmt.Errorf("line %d: a trace holds at most %d requests (so that their permits add up exactly)", line, int64(MaxRows))
	case at >= MaxTime:
		return Row{}, fmt.Errorf("line %d: t_ns %d %s", line, at, outOfRange)
	case at < 0:
		return Row{}, fmt.Errorf("line %d: t_ns %q is not a whole number of nanoseconds >= 0", line, strconv.FormatInt(int64(at), 10))
	case at < r.last:
		return Row{}, fmt.Errorf("line %d: time %v is before the previous row's %v: rows must be in time order", line, at, r.last)
	case permits > MaxPermits:
		return Row{}, fmt.Errorf("line %d: permits %d is more than a request may ask for, %d (2^31-1, so that sums of permits stay exact)", line, permits, MaxPermits)
	case permits < 1:
		return Row{}, fmt.Errorf("line %d: permits %q is not a whole number >= 1", line, strconv.Itoa(permits))
	}
	if !r.latency {
		latency = 0
	} else if latency < 0 || latency >= MaxTime {
		text := strconv.FormatInt(int64(latency), 10)
		if latency < 0 {
			return Row{}, fmt.Errorf("line %d: latency_ns %q is not a whole number of nanoseconds >= 0", line, text)
		}
		return Row{}, fmt.Errorf("line %d: latency_ns %s is out of range: a latency must be less than %s", line, text, maxTimeText)
	}
	r.rows++
	r.last = at
	row := Row{Line: line, At: at, Permits: permits, Latency: latency}
	if r.keyed && len(key) > 0 {
		row.Key = r.intern(key)
	}
	return row, nil
}

// intern is key as a string, one string for each of the first maxInterned distinct keys.
func (r *Rows) intern(key []byte) string {
	if s, ok := r.keys[string(key)]; ok {
		return s
	}
	s := string(key)
	if r.keys == nil {
		r.keys = make(map[string]string)
	}
	if len(r.keys) < maxInterned {
		r.keys[s] = s
	}
	return s
}
