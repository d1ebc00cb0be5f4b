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
	"unicode"
	"unicode/utf8"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/internal/linelimit"
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
//
// A CSV with an invalid cell (Row.Invalid) has one more column, error (ErrorHeader): the
// reason, empty for a cell that ran; an invalid cell's columns from offered on are empty (it
// measured nothing, and a 0 would read as "refused none"). A sweep without one writes
// exactly Header, so its CSV is what it always was.
var Header = []string{"sweep", "scenario", "seed", "horizon_ns", "cell", "cells", "lane", "x_field", "x", "y_field", "y", "spec",
	"offered", "admitted", "refused", "timed_out", "gave_up", "waiting", "failed", "wait_p50_ns", "wait_p99_ns",
	"window_ns", "max_in_window", "bound", "nominal_rate", "keys", "fairness", "refused_pct", "not_admitted_pct", "rate_overshoot", "overshoot"}

// ErrorHeader is Header and the error column: the header of a sweep CSV with an invalid cell.
var ErrorHeader = append(slices.Clip(Header), "error")

// colOffered is the first column an invalid cell leaves empty.
const colOffered = 12

// WriteCSV writes rows under Header, or ErrorHeader when one of them is an invalid cell.
func WriteCSV(w io.Writer, rows []Row) error {
	cw := NewCSVWriter(w)
	cw.ErrorColumn = len(InvalidCells(rows)) > 0
	for _, r := range rows {
		if err := cw.Write(r); err != nil {
			return err
		}
	}
	return cw.Flush()
}

// CSVWriter writes rows one at a time under Header, as WriteCSV writes them all: the bytes
// are the same, and it holds no row once written.
type CSVWriter struct {
	cw     *csv.Writer
	header bool
	// ErrorColumn writes ErrorHeader, with the error column (set it before the first row when
	// some row to come is an invalid cell); false writes Header, and refuses an invalid cell.
	ErrorColumn bool
}

// NewCSVWriter writes to w; the header goes out with the first row, or at Flush.
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{cw: csv.NewWriter(w)} }

// Write writes r's line (after the header, the first time).
func (w *CSVWriter) Write(r Row) error {
	if r.Invalid != "" && !w.ErrorColumn {
		return fmt.Errorf("sweep: cell %d is invalid (%s), and the CSV has no error column to say so", r.Cell, r.Invalid)
	}
	w.writeHeader()
	rec := r.record()
	if w.ErrorColumn {
		rec = append(rec, r.Invalid)
	}
	w.cw.Write(rec)
	return w.cw.Error()
}

func (w *CSVWriter) writeHeader() {
	if w.header {
		return
	}
	w.header = true
	if w.ErrorColumn {
		w.cw.Write(ErrorHeader)
	} else {
		w.cw.Write(Header)
	}
}

// Flush writes out what is buffered (the header, when no row was written).
func (w *CSVWriter) Flush() error {
	w.writeHeader()
	w.cw.Flush()
	return w.cw.Error()
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
	rec = append(rec, r.Metrics.derived()...)
	if r.Invalid != "" {
		clear(rec[colOffered:])
	}
	return rec
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
//
// A row is refused unless a sweep could have written it: counts that add up, derived columns
// that follow from them, text with no control byte, and a spec that is its parameters' (each
// value one its field takes, set in the spec) and whose first stage has the nominal rate
// given. The checks cost about 11µs a row: a 100,000-cell merge reads 61,000 cells a second
// (195,000 without them), against the milliseconds each cell takes to run.
func ReadCSV(in io.Reader, name string) ([]Row, error) {
	cr := NewCSVReader(in, name)
	var rows []Row
	for {
		r, err := cr.Next()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
}

// CSVReader reads a sweep CSV one row at a time, as ReadCSV reads it whole (the same
// checks, the same errors), holding one line at a time.
type CSVReader struct {
	name   string
	cr     *csv.Reader
	header bool
	errors bool // the header is ErrorHeader
	line   int  // the line of the last row read
}

// NewCSVReader reads the sweep CSV in; name is what errors call it.
func NewCSVReader(in io.Reader, name string) *CSVReader {
	cr := csv.NewReader(&linelimit.Reader{R: in, Max: MaxCSVLine})
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	return &CSVReader{name: name, cr: cr}
}

// Name is the input's name, as errors give it.
func (c *CSVReader) Name() string { return c.name }

// Line is the line of the last row Next returned.
func (c *CSVReader) Line() int { return c.line }

// Next is the next row; io.EOF after the last.
func (c *CSVReader) Next() (Row, error) {
	name, cr := c.name, c.cr
	if !c.header {
		header, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return Row{}, fmt.Errorf("%s: empty: not a sweep CSV (its first line is the header %s,…)", name, strings.Join(Header[:4], ","))
		}
		if err != nil {
			return Row{}, readError(name, err)
		}
		c.errors = slices.Equal(header, ErrorHeader)
		if !c.errors && !slices.Equal(header, Header) {
			return Row{}, fmt.Errorf("%s:1: not a sweep CSV: the header is not ratelab sweep's (%s,…)", name, strings.Join(Header[:4], ","))
		}
		c.header = true
	}
	rec, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return Row{}, io.EOF
	}
	if err != nil {
		return Row{}, readError(name, err)
	}
	c.line, _ = cr.FieldPos(0)
	want := len(Header)
	if c.errors {
		want = len(ErrorHeader)
	}
	if len(rec) != want {
		return Row{}, fmt.Errorf("%s:%d: %d fields, not the header's %d", name, c.line, len(rec), want)
	}
	r, col, err := parseRecord(rec)
	if err != nil {
		line, column := cr.FieldPos(col)
		return Row{}, fmt.Errorf("%s:%d:%d: %s: %v", name, line, column, Header[col], err)
	}
	return r, nil
}

// parseRecord reads one record, of Header's columns or ErrorHeader's; on error, col is the
// column at fault.
func parseRecord(rec []string) (r Row, col int, err error) {
	if len(rec) == len(ErrorHeader) && rec[len(Header)] != "" {
		return parseInvalid(rec)
	}
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
	if col, err := r.checkText(); err != nil {
		return r, col, err
	}
	if col, err := r.checkCell(); err != nil {
		return r, col, err
	}
	return r, 0, nil
}

// parseInvalid reads the record of an invalid cell: its place in the grid and its spec, checked
// as a valid cell's are, its reason, and nothing measured.
func parseInvalid(rec []string) (r Row, col int, err error) {
	seed, e := strconv.ParseUint(rec[2], 10, 64)
	if e != nil {
		return r, 2, fmt.Errorf("%q is not a seed", rec[2])
	}
	var n [3]int64
	for i, c := range []int{3, 4, 5} {
		least := int64(0)
		if c != 4 {
			least = 1
		}
		if n[i], e = strconv.ParseInt(rec[c], 10, 64); e != nil || n[i] < least {
			return r, c, fmt.Errorf("%q is not a whole number of at least %d", rec[c], least)
		}
	}
	r = Row{Sweep: rec[0], Scenario: rec[1], Seed: seed, Horizon: time.Duration(n[0]), Cell: int(n[1]), Cells: int(n[2]), Lane: rec[6],
		Fields: [MaxDims]string{rec[7], rec[9]}, Values: [MaxDims]string{rec[8], rec[10]}, Spec: rec[11], Invalid: rec[len(Header)]}
	for c := colOffered; c < len(Header); c++ {
		if rec[c] != "" {
			return r, c, fmt.Errorf("%q in an invalid cell's row (its error is %q): a cell that did not run measured nothing", rec[c], r.Invalid)
		}
	}
	switch {
	case r.Cell >= r.Cells:
		return r, 4, fmt.Errorf("cell %d of a grid of %d", r.Cell, r.Cells)
	case r.Fields[0] == "":
		return r, 7, fmt.Errorf("empty: a sweep varies at least one field")
	case !utf8.ValidString(r.Invalid) || strings.IndexFunc(r.Invalid, unicode.IsControl) >= 0:
		return r, len(Header), fmt.Errorf("%q is not one line of UTF-8 text", r.Invalid)
	}
	if col, err := r.checkText(); err != nil {
		return r, col, err
	}
	if _, col, err := r.checkSpec(); err != nil {
		return r, col, err
	}
	return r, 0, nil
}

// The columns of a row's text, by index in Header.
const (
	colSweep, colScenario, colLane, colXField, colX, colYField, colY, colSpec = 0, 1, 6, 7, 8, 9, 10, 11
	colNominal                                                                = 24
)

// checkText refuses text a sweep never writes: a sweep ID that is not 16 hex digits (Grid.ID),
// bytes that are not UTF-8 or are control characters (a NUL, an escape, a line break) in any
// text column, a dimension's name that is not TARGET.FIELD, and a second dimension's name
// without its value or the other way round.
func (r *Row) checkText() (int, error) {
	if len(r.Sweep) != 16 || strings.Trim(r.Sweep, "0123456789abcdef") != "" {
		return colSweep, fmt.Errorf("%q is not a sweep's ID (16 hex digits)", r.Sweep)
	}
	for col, text := range map[int]string{colScenario: r.Scenario, colLane: r.Lane, colXField: r.Fields[0], colX: r.Values[0],
		colYField: r.Fields[1], colY: r.Values[1], colSpec: r.Spec} {
		if !utf8.ValidString(text) {
			return col, fmt.Errorf("%q is not UTF-8 text", text)
		}
		if i := strings.IndexFunc(text, unicode.IsControl); i >= 0 {
			return col, fmt.Errorf("%q holds the control character %U: a sweep writes none", text, []rune(text[i:])[0])
		}
	}
	for k := range MaxDims {
		col := colXField + 2*k
		if r.Fields[k] == "" {
			if r.Values[k] != "" {
				return col + 1, fmt.Errorf("%q without a field: %s is empty", r.Values[k], Header[col])
			}
			continue
		}
		if d := dimensionOf(r.Fields[k]); d.Target == "" || d.Field == "" {
			return col, fmt.Errorf("%q is not TARGET.FIELD, e.g. token-bucket.capacity", r.Fields[k])
		}
		if r.Values[k] == "" {
			return col + 1, fmt.Errorf("empty: %s is %s, so the cell has a value of it", Header[col], r.Fields[k])
		}
	}
	if r.Fields[1] != "" && r.Fields[1] == r.Fields[0] {
		return colYField, fmt.Errorf("%s is varied twice", r.Fields[1])
	}
	return 0, nil
}

// checkCell refuses a row whose spec is not the cell its parameters make: the spec must be a
// limiter stack as sweep writes it, each dimension's value a value of its field (a capacity
// of NaN or -1 is refused as the spec would refuse it) that the spec holds (x = 999 beside a
// spec of capacity=5 is refused), and the nominal rate the first stage's.
func (r *Row) checkCell() (int, error) {
	stack, col, err := r.checkSpec()
	if err != nil {
		return col, err
	}
	nominal := limiters.Rate{}
	if rate, ok := stack[0].NominalRate(); ok {
		nominal = rate
	}
	if r.Nominal != nominal {
		text := func(rate limiters.Rate) string {
			if rate.Permits > 0 {
				return rate.String()
			}
			return ""
		}
		return colNominal, fmt.Errorf("%q is not the first stage's nominal rate (%q)", text(r.Nominal), text(nominal))
	}
	return 0, nil
}

// checkSpec refuses a spec that is not a limiter stack as sweep writes it, or not the one the
// row's values make (see checkCell), and returns its stack.
func (r *Row) checkSpec() ([]limiters.Spec, int, error) {
	stack, err := engine.ParseStack(r.Spec)
	if err != nil {
		return nil, colSpec, fmt.Errorf("not a limiter stack: %v", err)
	}
	if text := engine.StackString(stack); text != r.Spec {
		return nil, colSpec, fmt.Errorf("%q is not written as sweep writes it (%q)", r.Spec, text)
	}
	if _, col, err := r.withValues(stack); err != nil {
		return nil, col, err
	}
	return stack, 0, nil
}

// withValues is stack (the row's lane's) with each of the row's dimensions set to the row's
// value, as Grid.New sets them: when stack is the row's own spec the result is that spec
// again, and when it is another cell's of the lane, the spec this row must have.
// On error, col is the column at fault.
func (r *Row) withValues(stack []limiters.Spec) (out []limiters.Spec, col int, err error) {
	out = slices.Clone(stack)
	lane := engine.LaneSpec{Name: r.Lane, Stack: out}
	for k := range MaxDims {
		if r.Fields[k] == "" {
			break
		}
		d := dimensionOf(r.Fields[k])
		stage, ok, err := stageOf(lane, d)
		if err != nil || !ok {
			return nil, colXField + 2*k, fmt.Errorf("no single stage of %q (lane %s) has the field %s", r.Spec, r.Lane, r.Fields[k])
		}
		set, err := setField(out[stage], d.Field, r.Values[k])
		if err != nil {
			return nil, colX + 2*k, fmt.Errorf("%q is not a value of %s: %v", r.Values[k], r.Fields[k], err)
		}
		out[stage] = set
	}
	if text := engine.StackString(out); r.Spec != text {
		return nil, colSpec, fmt.Errorf("the cell's parameters %s make the spec %q, not %q", r.Parameters(), text, r.Spec)
	}
	return out, 0, nil
}

// Part is one input of Merge: a shard's rows and the name errors call it by.
type Part struct {
	Name string
	Rows []Row
}

// Merge joins the shards of one sweep into its rows in cell order: what WriteCSV of the
// sweep run on one machine writes, byte for byte. It refuses rows of different sweeps, a
// cell given twice, and a grid with cells missing (a shard left out), naming them. It trusts
// no row: rows of one sweep share its scenario, seed, horizon and dimensions, and each
// lane's cells are its first cell's spec with the cell's own values set, as Grid.New made
// them (a CSV row's own text is checked as it is read: see ReadCSV). A part's rows may come
// in any order.
func Merge(parts []Part) ([]Row, error) {
	sources := make([]source, len(parts))
	for i, p := range parts {
		rows := slices.Clone(p.Rows)
		slices.SortStableFunc(rows, func(a, b Row) int { return a.Cell - b.Cell })
		sources[i] = &partSource{n: p.Name, rows: rows}
	}
	var out []Row
	err := merge(sources, func(r Row) error { out = append(out, r); return nil })
	return out, err
}

// MergeCSV is Merge of shards' CSV files, read as it goes: emit is given every row in cell
// order, and memory does not grow with the cells (a row of each shard at a time). A shard's
// rows come in cell order, as ratelab sweep --shard writes them; one out of order is refused
// where it stands. The rows emit sees are those of a whole sweep only once MergeCSV returns
// nil: a shard left out is found at its first missing cell, and emit is not called after it.
func MergeCSV(inputs []*CSVReader, emit func(Row) error) error {
	sources := make([]source, len(inputs))
	for i, in := range inputs {
		sources[i] = &csvSource{in}
	}
	return merge(sources, emit)
}

// source is one shard's rows, in cell order.
type source interface {
	name() string
	next() (Row, bool, error) // false after the last
	where() string            // where the last row was, for errors: "a.csv:12"
}

type partSource struct {
	n    string
	rows []Row
	at   int
}

func (p *partSource) name() string  { return p.n }
func (p *partSource) where() string { return p.n }
func (p *partSource) next() (Row, bool, error) {
	if p.at == len(p.rows) {
		return Row{}, false, nil
	}
	p.at++
	return p.rows[p.at-1], true, nil
}

type csvSource struct{ r *CSVReader }

func (c *csvSource) name() string  { return c.r.Name() }
func (c *csvSource) where() string { return fmt.Sprintf("%s:%d", c.r.Name(), c.r.Line()) }
func (c *csvSource) next() (Row, bool, error) {
	r, err := c.r.Next()
	if errors.Is(err, io.EOF) {
		return Row{}, false, nil
	}
	return r, err == nil, err
}

// merge is a k-way merge of the sources by cell: a heap of each source's next row, O(log k)
// a row, holding k rows. It checks what Merge promises as the rows go by, and calls emit
// with each row while no cell is missing.
func merge(sources []source, emit func(Row) error) error {
	heads := make([]Row, len(sources))
	var h mergeHeap
	var first *Row
	firstName := ""
	check := func(i int, r *Row) error {
		if first == nil {
			first, firstName = r, sources[i].name()
			return nil
		}
		if r.Sweep != first.Sweep || r.Cells != first.Cells {
			return fmt.Errorf("sweep merge: %s cell %d is of sweep %s (%s, %d cells), %s cell %d of sweep %s (%s, %d cells): shards of different sweeps",
				firstName, first.Cell, first.Sweep, first.Scenario, first.Cells, sources[i].name(), r.Cell, r.Sweep, r.Scenario, r.Cells)
		}
		// The columns that say which grid: one sweep's rows share them (its ID hashes them).
		for _, c := range []struct {
			name      string
			got, want any
		}{{"scenario", r.Scenario, first.Scenario}, {"seed", r.Seed, first.Seed}, {"horizon_ns", int64(r.Horizon), int64(first.Horizon)},
			{"x_field", r.Fields[0], first.Fields[0]}, {"y_field", r.Fields[1], first.Fields[1]}} {
			if c.got != c.want {
				return fmt.Errorf("sweep merge: %s: cell %d's %s is %q, where %s cell %d of the same sweep %s has %q: a row was changed",
					sources[i].where(), r.Cell, c.name, fmt.Sprint(c.got), firstName, first.Cell, first.Sweep, fmt.Sprint(c.want))
			}
		}
		return nil
	}
	// Each lane's cells are one template with the dimensions' values set (Grid.New): the
	// first cell of a lane is its reference, and every later cell's spec must be the
	// reference with the cell's own values set. Lanes come one after another.
	templates := map[string][]limiters.Spec{}
	lastLane := ""
	sameTemplate := func(i int, r *Row) error {
		ref, seen := templates[r.Lane]
		switch {
		case !seen:
			stack, err := engine.ParseStack(r.Spec)
			if err != nil {
				return fmt.Errorf("sweep merge: %s: spec: not a limiter stack: %v", sources[i].where(), err)
			}
			templates[r.Lane], lastLane = stack, r.Lane
			return nil
		case r.Lane != lastLane:
			return fmt.Errorf("sweep merge: %s: cell %d is of lane %s again, after lane %s: a sweep's cells run lane by lane", sources[i].where(), r.Cell, r.Lane, lastLane)
		}
		if _, _, err := r.withValues(ref); err != nil {
			return fmt.Errorf("sweep merge: %s: cell %d is not its lane's template with its own parameters: %v", sources[i].where(), r.Cell, err)
		}
		return nil
	}
	for i, s := range sources {
		r, ok, err := s.next()
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		heads[i] = r
		if err := check(i, &heads[i]); err != nil {
			return err
		}
		h.push(mergeItem{cell: r.Cell, source: i})
	}
	if first == nil {
		names := make([]string, len(sources))
		for i, s := range sources {
			names[i] = s.name()
		}
		return fmt.Errorf("sweep merge: no rows in %s", strings.Join(names, ", "))
	}
	cells, firstRow := first.Cells, *first
	first = &firstRow // heads[i] is overwritten as its source moves on
	rows, expected := 0, 0
	prevName := ""
	var missing []string
	for len(h) > 0 {
		top := h.pop()
		i := top.source
		r := heads[i]
		switch {
		case r.Cell < 0 || r.Cell >= cells:
			return fmt.Errorf("sweep merge: %s: cell %d is not of sweep %s's %d cells", sources[i].where(), r.Cell, first.Sweep, cells)
		case rows > 0 && r.Cell == expected-1:
			return fmt.Errorf("sweep merge: cell %d is in %s and in %s: a shard given twice, or shards of different --shard counts", r.Cell, prevName, sources[i].name())
		}
		for ; expected < r.Cell; expected++ {
			if len(missing) < 6 {
				missing = append(missing, strconv.Itoa(expected))
			}
		}
		if err := sameTemplate(i, &r); err != nil {
			return err
		}
		expected, prevName = r.Cell+1, sources[i].name()
		rows++
		if len(missing) == 0 {
			if err := emit(r); err != nil {
				return err
			}
		}
		next, ok, err := sources[i].next()
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if next.Cell < r.Cell {
			return fmt.Errorf("sweep merge: %s: cell %d after cell %d: a shard's rows are in cell order (as ratelab sweep --shard writes them)", sources[i].where(), next.Cell, r.Cell)
		}
		heads[i] = next
		if err := check(i, &heads[i]); err != nil {
			return err
		}
		h.push(mergeItem{cell: next.Cell, source: i})
	}
	for ; expected < cells && len(missing) < 6; expected++ {
		missing = append(missing, strconv.Itoa(expected))
	}
	if len(missing) > 0 {
		if len(missing) == 6 {
			missing[5] = "…"
		}
		return fmt.Errorf("sweep merge: %d of %d cells, missing %s: a shard left out?", rows, cells, strings.Join(missing, ", "))
	}
	return nil
}

// mergeItem is a source's next cell in the merge's heap; ties go to the earlier source, so a
// cell given twice is named in the order of the inputs.
type mergeItem struct{ cell, source int }

func (a mergeItem) less(b mergeItem) bool {
	return a.cell < b.cell || a.cell == b.cell && a.source < b.source
}

// mergeHeap is a binary min-heap of mergeItems: h[i] ≤ h[2i+1] and h[2i+2].
type mergeHeap []mergeItem

func (h *mergeHeap) push(x mergeItem) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !s[i].less(s[parent]) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *mergeHeap) pop() mergeItem {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		small, l, r := i, 2*i+1, 2*i+2
		if l < len(s) && s[l].less(s[small]) {
			small = l
		}
		if r < len(s) && s[r].less(s[small]) {
			small = r
		}
		if small == i {
			break
		}
		s[i], s[small] = s[small], s[i]
		i = small
	}
	*h = s
	return top
}

// MaxCSVLine is the longest line ReadCSV reads: a sweep CSV's rows are a few hundred bytes
// (the longest field is a lane's spec), so 1 MiB is far more than any.
const MaxCSVLine = 1 << 20

func readError(name string, err error) error {
	var long *linelimit.TooLongError
	if errors.As(err, &long) {
		return fmt.Errorf("%s:%d: the line is longer than 1 MiB (%d bytes): not a sweep CSV", name, long.Line, MaxCSVLine)
	}
	return fmt.Errorf("%s: %w", name, err)
}
