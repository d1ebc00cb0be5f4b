package trace

// The seed's trace reader, kept as it was (encoding/csv for every row) as the reference the
// differential tests hold the fast paths to: same rows, same keys, same errors.

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// refTraceReader is the seed's Reader.
type refTraceReader struct {
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
	maxRows    int64 // MaxRows; lower in tests
}

// newRefTraceReader reads the header and prepares to stream rows.
func newRefTraceReader(r io.Reader) (*refTraceReader, error) {
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
	t := &refTraceReader{csv: c, timeCol: -1, permitsCol: -1, keyCol: -1, line: 1, maxRows: MaxRows}
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
func (t *refTraceReader) Next() (Row, error) {
	record, err := t.csv.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return Row{}, io.EOF
		}
		var parseErr *csv.ParseError
		if errors.As(err, &parseErr) {
			return Row{}, fmt.Errorf("line %d: %v", parseErr.Line, parseErr.Err)
		}
		return Row{}, err
	}
	line, _ := t.csv.FieldPos(0)
	t.line = line
	if t.rows >= t.maxRows {
		return Row{}, fmt.Errorf("line %d: a trace holds at most %d requests (so that their permits add up exactly)", line, t.maxRows)
	}
	field := func(col int) string {
		if col < 0 || col >= len(record) {
			return ""
		}
		return strings.TrimSpace(record[col])
	}
	row := Row{Line: line, Permits: 1}
	text := field(t.timeCol)
	if text == "" {
		return Row{}, fmt.Errorf("line %d: the time column is empty", line)
	}
	if row.At, err = t.parseTime(text); err != nil {
		return Row{}, fmt.Errorf("line %d: %v", line, err)
	}
	if row.At < t.last {
		return Row{}, fmt.Errorf("line %d: time %v is before the previous row's %v: rows must be in time order", line, row.At, t.last)
	}
	t.last = row.At
	if p := field(t.permitsCol); p != "" {
		n, err := strconv.ParseInt(p, 10, 64)
		if (err == nil && n > MaxPermits) || (errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(p, "-")) {
			return Row{}, fmt.Errorf("line %d: permits %s is more than a request may ask for, %d (2^31-1, so that sums of permits stay exact)", line, p, MaxPermits)
		}
		if err != nil || n < 1 {
			return Row{}, fmt.Errorf("line %d: permits %q is not a whole number >= 1", line, p)
		}
		row.Permits = int(n)
	}
	t.rows++
	if t.keyCol >= 0 {
		row.Key = strings.Clone(field(t.keyCol))
	}
	return row, nil
}

func (t *refTraceReader) parseTime(text string) (time.Duration, error) {
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
