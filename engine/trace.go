package engine

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// TraceRow is one request of a recorded trace.
type TraceRow struct {
	Line    int           // 1-based line in the file (the header is line 1)
	At      time.Duration // since the trace's start
	Permits int
	Key     string
}

// TraceReader streams a CSV trace: a header row, then one request per row, in time order.
//
// Columns (by header name; others are ignored):
//   - t_ns: integer nanoseconds since the trace start, or
//   - t: an RFC 3339 timestamp (times are taken relative to the first row) or decimal
//     seconds since the start ("12.5");
//   - permits (optional, default 1): a whole number from 1 to MaxPermits;
//   - key (optional).
//
// Times must be less than MaxTime (2^62ns, about 146 years, after the start) and a trace
// holds at most MaxTraceRows rows, so that its permits add up exactly in an int64. Memory
// does not depend on the trace's length: one row is held at a time.
type TraceReader struct {
	csv        *csv.Reader
	timeCol    int
	nsColumn   bool // t_ns rather than t
	permitsCol int
	keyCol     int
	line       int
	first      time.Time
	haveFirst  bool
	last       time.Duration
	rows       int64 // rows read
	maxRows    int64 // MaxTraceRows; lower in tests
}

// MaxTraceRows is the most rows a trace may hold: 2^32 rows of at most MaxPermits permits
// each add up to less than 2^63.
const MaxTraceRows = 1 << 32

// outOfRange ends a time's error message.
const outOfRange = "is out of range: times must be less than " + maxTimeText + " after the start"

// NewTraceReader reads the header and prepares to stream rows.
func NewTraceReader(r io.Reader) (*TraceReader, error) {
	c := csv.NewReader(r)
	c.ReuseRecord = true
	c.FieldsPerRecord = -1
	header, err := c.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("line 1: empty trace: a header with a t_ns or t column is required")
		}
		return nil, fmt.Errorf("line 1: %w", err)
	}
	t := &TraceReader{csv: c, timeCol: -1, permitsCol: -1, keyCol: -1, line: 1, maxRows: MaxTraceRows}
	for i, name := range header {
		if i == 0 {
			name = strings.TrimPrefix(name, "\ufeff") // the byte-order mark spreadsheets write
		}
		switch strings.TrimSpace(strings.ToLower(name)) {
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
		}
	}
	if t.timeCol < 0 {
		return nil, fmt.Errorf("line 1: the header %q has no t_ns or t column", strings.Join(header, ","))
	}
	return t, nil
}

// Next returns the next row, io.EOF at the end, or an error naming the line.
func (t *TraceReader) Next() (TraceRow, error) {
	record, err := t.csv.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return TraceRow{}, io.EOF
		}
		var parseErr *csv.ParseError
		if errors.As(err, &parseErr) {
			return TraceRow{}, fmt.Errorf("line %d: %v", parseErr.Line, parseErr.Err)
		}
		return TraceRow{}, err
	}
	line, _ := t.csv.FieldPos(0)
	t.line = line
	if t.rows >= t.maxRows {
		return TraceRow{}, fmt.Errorf("line %d: a trace holds at most %d requests (so that their permits add up exactly)", line, t.maxRows)
	}
	field := func(col int) string {
		if col < 0 || col >= len(record) {
			return ""
		}
		return strings.TrimSpace(record[col])
	}
	row := TraceRow{Line: line, Permits: 1}
	text := field(t.timeCol)
	if text == "" {
		return TraceRow{}, fmt.Errorf("line %d: the time column is empty", line)
	}
	if row.At, err = t.parseTime(text); err != nil {
		return TraceRow{}, fmt.Errorf("line %d: %v", line, err)
	}
	if row.At < t.last {
		return TraceRow{}, fmt.Errorf("line %d: time %v is before the previous row's %v: rows must be in time order", line, row.At, t.last)
	}
	t.last = row.At
	if p := field(t.permitsCol); p != "" {
		n, err := strconv.ParseInt(p, 10, 64)
		if (err == nil && n > MaxPermits) || (errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(p, "-")) {
			return TraceRow{}, fmt.Errorf("line %d: permits %s is more than a request may ask for, %d (2^31-1, so that sums of permits stay exact)", line, p, MaxPermits)
		}
		if err != nil || n < 1 {
			return TraceRow{}, fmt.Errorf("line %d: permits %q is not a whole number >= 1", line, p)
		}
		row.Permits = int(n)
	}
	t.rows++
	if t.keyCol >= 0 {
		row.Key = strings.Clone(field(t.keyCol))
	}
	return row, nil
}

func (t *TraceReader) parseTime(text string) (time.Duration, error) {
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
	bad := fmt.Errorf("t %q is neither RFC 3339 nor decimal seconds", text)
	if whole == "" && frac == "" {
		return 0, bad
	}
	var secs int64
	if whole != "" {
		v, err := strconv.ParseInt(whole, 10, 64)
		if (err == nil && v > int64(MaxTime/time.Second)) || (errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(whole, "-")) {
			return 0, fmt.Errorf("t %s %s", text, outOfRange)
		}
		if err != nil || v < 0 {
			return 0, bad
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
			return 0, bad
		}
		ns = v
	}
	if d := time.Duration(secs*1e9 + ns); d < MaxTime {
		return d, nil
	}
	return 0, fmt.Errorf("t %s %s", text, outOfRange)
}
