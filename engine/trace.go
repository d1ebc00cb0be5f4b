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
//   - permits (optional, default 1): a whole number ≥ 1;
//   - key (optional).
//
// Memory does not depend on the trace's length: one row is held at a time.
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
}

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
	t := &TraceReader{csv: c, timeCol: -1, permitsCol: -1, keyCol: -1, line: 1}
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
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return TraceRow{}, fmt.Errorf("line %d: permits %q is not a whole number >= 1", line, p)
		}
		row.Permits = n
	}
	if t.keyCol >= 0 {
		row.Key = strings.Clone(field(t.keyCol))
	}
	return row, nil
}

func (t *TraceReader) parseTime(text string) (time.Duration, error) {
	if t.nsColumn {
		ns, err := strconv.ParseInt(text, 10, 64)
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
		return ts.Sub(t.first), nil
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
		if err != nil || v < 0 || v > 9e9 {
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
	return time.Duration(secs*1e9 + ns), nil
}
