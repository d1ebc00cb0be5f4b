package sweep

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// Header is the sweep CSV's columns, the same for every sweep (one or two dimensions, any
// metric), so that shards concatenate and tools read every sweep alike:
//
//   - sweep, scenario, seed, horizon_ns: which grid (sweep is Grid.ID);
//   - cell, cells: the row's cell and the grid's size, so merge knows when it has them all;
//   - lane, x_field, x, y_field, y, spec: the template lane, each dimension's name and value
//     (y_field and y empty for one dimension), the cell's stack;
//   - the counts (offered = admitted + refused + timed_out + gave_up + waiting), failed,
//     the waits in ns, the window meter, the first stage's nominal rate;
//   - keys, fairness: the distinct keys and Jain's index of what they were admitted
//     (Metrics.Keys, Metrics.Fairness; 0 and empty when the cell kept no per-key results),
//     the index in the shortest form that reads back to the same float;
//   - refused_pct, not_admitted_pct, rate_overshoot, overshoot: derived from the columns
//     before them, for reading (empty when a cell has none); merge checks them.
var Header = []string{"sweep", "scenario", "seed", "horizon_ns", "cell", "cells", "lane", "x_field", "x", "y_field", "y", "spec",
	"offered", "admitted", "refused", "timed_out", "gave_up", "waiting", "failed", "wait_p50_ns", "wait_p99_ns",
	"window_ns", "max_in_window", "bound", "nominal_rate", "keys", "fairness", "refused_pct", "not_admitted_pct", "rate_overshoot", "overshoot"}

// WriteCSV writes rows under Header.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	cw.Write(Header)
	for _, r := range rows {
		cw.Write(r.record())
	}
	cw.Flush()
	return cw.Error()
}

func (r Row) record() []string {
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	rate := ""
	if r.Nominal.Permits > 0 {
		rate = r.Nominal.String()
	}
	rec := []string{r.Sweep, r.Scenario, strconv.FormatUint(r.Seed, 10), n(int64(r.Horizon)), strconv.Itoa(r.Cell), strconv.Itoa(r.Cells),
		r.Lane, r.Fields[0], r.Values[0], r.Fields[1], r.Values[1], r.Spec,
		n(r.Offered), n(r.Admitted), n(r.Refused), n(r.TimedOut), n(r.GaveUp), n(r.Waiting), n(r.Failed),
		n(int64(r.WaitP50)), n(int64(r.WaitP99)), n(int64(r.Window)), n(r.MaxInWindow), n(r.Bound), rate, strconv.Itoa(r.Keys), ""}
	if r.Keys > 0 {
		rec[len(rec)-1] = strconv.FormatFloat(r.Fairness, 'g', -1, 64)
	}
	return append(rec, r.Metrics.derived()...)
}

// derived is the record's last four columns, from the metrics.
func (m Metrics) derived() []string {
	f := func(v float64, ok bool) string {
		if !ok {
			return ""
		}
		return strconv.FormatFloat(v, 'f', 6, 64)
	}
	over, okOver := m.RateOvershoot()
	bound, okBound := m.Overshoot()
	return []string{f(m.Share(m.Refused), true), f(m.Share(m.Refused+m.TimedOut+m.GaveUp), true), f(over, okOver), f(bound, okBound)}
}

// derivedColumn is the first of the columns derived from the others (refused_pct).
const derivedColumn = 27

// ReadCSV reads a sweep CSV that WriteCSV wrote (a shard's, or a whole sweep's). Errors name
// the input, its line and column, and the column's name: "a.csv:3:14: offered: "x" is not
// a whole number".
//
// A line longer than MaxCSVLine is refused where it starts, so that a file that is not a
// sweep CSV (/dev/zero, a binary) is not read into memory looking for its end.
func ReadCSV(in io.Reader, name string) ([]Row, error) {
	lines := &lineLimit{r: in, line: 1}
	cr := csv.NewReader(lines)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty: not a sweep CSV (its first line is the header %s,…)", name, strings.Join(Header[:4], ","))
	}
	if err != nil {
		return nil, readError(name, err)
	}
	if !slices.Equal(header, Header) {
		return nil, fmt.Errorf("%s:1: not a sweep CSV: the header is not ratelab sweep's (%s,…)", name, strings.Join(Header[:4], ","))
	}
	var rows []Row
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, readError(name, err)
		}
		if len(rec) != len(Header) {
			line, _ := cr.FieldPos(0)
			return nil, fmt.Errorf("%s:%d: %d fields, not the header's %d", name, line, len(rec), len(Header))
		}
		r, col, err := parseRecord(rec)
		if err != nil {
			line, column := cr.FieldPos(col)
			return nil, fmt.Errorf("%s:%d:%d: %s: %v", name, line, column, Header[col], err)
		}
		rows = append(rows, r)
	}
}

// parseRecord reads one record; on error, col is the column at fault.
func parseRecord(rec []string) (r Row, col int, err error) {
	integer := func(i int, least int64) int64 {
		if err != nil {
			return 0
		}
		v, e := strconv.ParseInt(rec[i], 10, 64)
		if e != nil || v < least {
			col, err = i, fmt.Errorf("%q is not a whole number of at least %d", rec[i], least)
		}
		return v
	}
	seed, e := strconv.ParseUint(rec[2], 10, 64)
	if e != nil {
		return r, 2, fmt.Errorf("%q is not a seed", rec[2])
	}
	r = Row{Sweep: rec[0], Scenario: rec[1], Seed: seed, Horizon: time.Duration(integer(3, 1)),
		Cell: int(integer(4, 0)), Cells: int(integer(5, 1)), Lane: rec[6],
		Fields: [MaxDims]string{rec[7], rec[9]}, Values: [MaxDims]string{rec[8], rec[10]}, Spec: rec[11]}
	m := &r.Metrics
	for i, p := range []*int64{&m.Offered, &m.Admitted, &m.Refused, &m.TimedOut, &m.GaveUp, &m.Waiting, &m.Failed} {
		*p = integer(12+i, 0)
	}
	m.WaitP50, m.WaitP99 = time.Duration(integer(19, 0)), time.Duration(integer(20, 0))
	m.Window, m.MaxInWindow, m.Bound = time.Duration(integer(21, 0)), integer(22, 0), integer(23, -1)
	if err != nil {
		return r, col, err
	}
	if rec[24] != "" {
		if m.Nominal, err = limiters.ParseRate(rec[24]); err != nil {
			return r, 24, err
		}
	}
	if m.Keys = int(integer(25, 0)); err != nil {
		return r, col, err
	}
	switch {
	case m.Keys == 0 && rec[26] != "":
		return r, 26, fmt.Errorf("%q for no keys: a cell without keys has no fairness", rec[26])
	case m.Keys > 0:
		// Jain's index lies in [1/keys, 1]; the float may pass 1 by a rounding.
		f, e := strconv.ParseFloat(rec[26], 64)
		if e != nil || !(f > 0 && f <= 1+1e-9) {
			return r, 26, fmt.Errorf("%q is not a fairness index, a number in (0, 1]", rec[26])
		}
		m.Fairness = f
	}
	switch {
	case r.Cell >= r.Cells:
		return r, 4, fmt.Errorf("cell %d of a grid of %d", r.Cell, r.Cells)
	case r.Fields[0] == "":
		return r, 7, fmt.Errorf("empty: a sweep varies at least one field")
	case m.Admitted+m.Refused+m.TimedOut+m.GaveUp+m.Waiting != m.Offered:
		return r, 12, fmt.Errorf("%d offered is not admitted + refused + timed_out + gave_up + waiting = %d", m.Offered, m.Admitted+m.Refused+m.TimedOut+m.GaveUp+m.Waiting)
	}
	for i, want := range m.derived() {
		if rec[derivedColumn+i] != want {
			return r, derivedColumn + i, fmt.Errorf("%q does not follow from the counts (%q)", rec[derivedColumn+i], want)
		}
	}
	return r, 0, nil
}

// Part is one input of Merge: a shard's rows and the name errors call it by.
type Part struct {
	Name string
	Rows []Row
}

// Merge joins the shards of one sweep into its rows in cell order: what WriteCSV of the
// sweep run on one machine writes, byte for byte. It refuses rows of different sweeps, a
// cell given twice, and a grid with cells missing (a shard left out), naming them.
func Merge(parts []Part) ([]Row, error) {
	type from struct {
		row  Row
		name string
	}
	var all []from
	for _, p := range parts {
		for _, r := range p.Rows {
			all = append(all, from{r, p.Name})
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("sweep merge: no rows in %s", names(parts))
	}
	first := all[0]
	for _, f := range all[1:] {
		if f.row.Sweep != first.row.Sweep || f.row.Cells != first.row.Cells {
			return nil, fmt.Errorf("sweep merge: %s cell %d is of sweep %s (%s, %d cells), %s cell %d of sweep %s (%s, %d cells): shards of different sweeps",
				first.name, first.row.Cell, first.row.Sweep, first.row.Scenario, first.row.Cells, f.name, f.row.Cell, f.row.Sweep, f.row.Scenario, f.row.Cells)
		}
	}
	slices.SortStableFunc(all, func(a, b from) int { return a.row.Cell - b.row.Cell })
	for i := 1; i < len(all); i++ {
		if all[i].row.Cell == all[i-1].row.Cell {
			return nil, fmt.Errorf("sweep merge: cell %d is in %s and in %s: a shard given twice, or shards of different --shard counts", all[i].row.Cell, all[i-1].name, all[i].name)
		}
	}
	if len(all) != first.row.Cells {
		var missing []string
		have := 0
		for c := 0; c < first.row.Cells && len(missing) < 6; c++ {
			if have < len(all) && all[have].row.Cell == c {
				have++
				continue
			}
			missing = append(missing, strconv.Itoa(c))
		}
		if len(missing) == 6 {
			missing[5] = "…"
		}
		return nil, fmt.Errorf("sweep merge: %d of %d cells, missing %s: a shard left out?", len(all), first.row.Cells, strings.Join(missing, ", "))
	}
	out := make([]Row, len(all))
	for i, f := range all {
		out[i] = f.row
	}
	return out, nil
}

func names(parts []Part) string {
	n := make([]string, len(parts))
	for i, p := range parts {
		n[i] = p.Name
	}
	return strings.Join(n, ", ")
}

// MaxCSVLine is the longest line ReadCSV reads: a sweep CSV's rows are a few hundred bytes
// (the longest field is a lane's spec), so 1 MiB is far more than any.
const MaxCSVLine = 1 << 20

// lineTooLongError is a line of more than MaxCSVLine bytes, at line.
type lineTooLongError struct{ line int }

func (e *lineTooLongError) Error() string {
	return fmt.Sprintf("line %d: the line is longer than 1 MiB (%d bytes): not a sweep CSV", e.line, MaxCSVLine)
}

func readError(name string, err error) error {
	var long *lineTooLongError
	if errors.As(err, &long) {
		return fmt.Errorf("%s:%d: the line is longer than 1 MiB (%d bytes): not a sweep CSV", name, long.line, MaxCSVLine)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// lineLimit passes r through, failing once a line passes MaxCSVLine bytes.
type lineLimit struct {
	r    io.Reader
	line int // the line being read, from 1
	run  int // its bytes so far
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for i, b := range p[:n] {
		if b == '\n' {
			l.line++
			l.run = 0
			continue
		}
		if l.run++; l.run > MaxCSVLine {
			return i, &lineTooLongError{l.line}
		}
	}
	return n, err
}
