package trace

import "time"

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
