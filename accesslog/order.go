package accesslog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Next returns the next request in arrival order, io.EOF after the last, or an error naming
// the line. The record (and its Key) is valid until the next call.
//
// Rows wait in a queue sorted by arrival until no row still to come can arrive before them:
// a row written at w (its completion: its stamp for nginx and Caddy, its arrival plus its
// duration for HAProxy) arrived no earlier than w less the reorder window, so a queued row
// whose arrival is at most the latest w less the window is final. A row that arrives earlier
// than one already returned (later than the window allows) is returned at that one's time,
// counted, and its line listed in the notes.
func (r *Reader) Next() (*Record, error) {
	s, err := r.nextSlot()
	if err != nil {
		return nil, err
	}
	r.rec = Record{At: time.Duration(s.at - r.base), Line: s.line, Key: r.curKey, Permits: int(s.permits), Status: int(s.status), Decision: s.decision,
		Logged: verdict(r.ro.decision >= 0, s.decision, int(s.status), r.refused)}
	return &r.rec, nil
}

// NextRow is Next as engine.Replay reads a log (engine.RowReader): the next request's arrival,
// permits and key (valid until the next call), with no Record made. The key is the one the
// CSV trace "t_ns,permits,key" that Input.Read writes gives back once read (see csvKey):
// replaying the rows and replaying that text decide alike. latency is 0: a log's durations
// place its arrivals, and are not replayed as latencies.
func (r *Reader) NextRow() (at time.Duration, permits int, key []byte, latency time.Duration, err error) {
	s, err := r.nextSlot()
	if err != nil {
		return 0, 0, nil, 0, err
	}
	r.rowLine = s.line
	k := r.curKey
	if !s.plain {
		k = r.csvKey(k)
	}
	return time.Duration(s.at - r.base), int(s.permits), k, 0, nil
}

// RowLine is the log line of the row NextRow last returned (trace.LineReader), so that an
// error about that row names the line of the log it was read from: rows come out in arrival
// order, not the log's, so the n-th row is not the log's line n + 1.
func (r *Reader) RowLine() int { return r.rowLine }

// Columns says what NextRow's rows carry (engine.RowReader): a key, and no latency.
func (r *Reader) Columns() (key, latency bool) { return true, false }

// csvKey is key as a CSV trace's reader gives it back once Input.Read has written it: with
// "\r\n" read as "\n" (encoding/csv does so in a quoted field) and the spaces at either end
// trimmed (a trace's fields are). Most keys (an address, an API key) are neither and are
// returned as they are.
func (r *Reader) csvKey(key []byte) []byte {
	n := len(key)
	if n == 0 {
		return key
	}
	if plainKey(key) {
		return key
	}
	if first, last := key[0], key[n-1]; first > ' ' && first < 0x80 && last > ' ' && last < 0x80 && !hasCR(key) {
		return key
	}
	if bytes.Contains(key, []byte("\r\n")) {
		r.keyBuf = r.keyBuf[:0]
		for i, c := range key {
			if c != '\r' || i+1 == n || key[i+1] != '\n' {
				r.keyBuf = append(r.keyBuf, c)
			}
		}
		key = r.keyBuf
	}
	return bytes.TrimSpace(key)
}

// plainKey is whether every byte of key, of 8 bytes or more, is printable ASCII other than a
// space (0x21 to 0x7F), so that csvKey returns it as it is: tested 8 bytes at a time, the
// words at 0, 8, … and the last 8 (y − 0x21·0x01… &^ y & 0x80… marks a byte below 0x21,
// y & 0x80… one of 0x80 or more), where hasCR's loop paid a compare and a branch a byte. A
// shorter key is false, left to csvKey's own test.
func plainKey(key []byte) bool {
	const lo21, hi = 0x2121212121212121, 0x8080808080808080
	n := len(key)
	if n < 8 {
		return false
	}
	for off := 0; ; off += 8 {
		if off > n-8 {
			off = n - 8
		}
		w := binary.LittleEndian.Uint64(key[off:])
		if ((w-lo21)&^w|w)&hi != 0 {
			return false
		}
		if off == n-8 {
			return true
		}
	}
}

// hasCR is whether key holds a '\r': a loop over a key's few bytes, not a call to
// bytes.IndexByte per row.
func hasCR(key []byte) bool {
	for _, c := range key {
		if c == '\r' {
			return true
		}
	}
	return false
}

// nextSlot is the row of the next request in arrival order (see Next), valid until the next
// call.
func (r *Reader) nextSlot() (*row, error) {
	if r.curLong >= 0 {
		r.longFree = append(r.longFree, r.curLong)
		r.curLong = -1
	}
	for {
		if r.qh < len(r.q) {
			if h := &r.q[r.qh]; r.eof || r.windowSet && h.at <= r.watermark-r.window {
				return r.pop(h)
			}
		} else if r.eof {
			return nil, io.EOF
		}
		line, err := r.readLine()
		if err == io.EOF {
			r.eof = true
			r.flushGroup()
			r.setWindow()
			continue
		}
		if err != nil {
			return nil, err
		}
		// A line that starts with a letter or digit is not blank (bytes.TrimSpace, a call
		// and a loop per line, only for the others).
		if len(line) == 0 || (line[0] <= ' ' || line[0] >= 0x80) && len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if d := r.directives; d != nil {
			if is, col, msg := d.directive(line); is {
				if col > 0 {
					return nil, &LineError{Line: r.line, Col: col, Format: r.f.label(), Msg: msg}
				}
				continue
			}
		}
		if n := r.noticer; n != nil && n.notice(line) {
			r.notices++
			if len(r.noticeLines) < 5 {
				r.noticeLines = append(r.noticeLines, r.line)
			}
			continue
		}
		s := &r.dec
		if err := r.decode(r.line, line, s, false); err != nil {
			var le *LineError
			if r.src != nil && errors.As(err, &le) {
				le.Where = r.src.where(r.line)
			}
			return nil, err
		}
		r.rows++
		if len(r.ro.key) > 0 && (len(s.key) == 0 || len(s.key) == 1 && s.key[0] == '-') {
			r.noKey++
		}
		if r.rows == 1 {
			r.firstStamp = s.stamp
		}
		r.lastStamp = s.stamp
		r.unit = min(r.unit, s.unit)
		r.maxUnit = max(r.maxUnit, s.unit)
		if s.dur < 0 && r.ro.dur >= 0 {
			r.noDur++
		}
		if r.spread {
			if len(r.group) > 0 && s.stamp != r.groupStamp {
				r.flushGroup()
			}
			r.groupStamp = s.stamp
			r.group = append(r.group, grouped{stamp: s.stamp, unit: s.unit, dur: s.dur})
			r.keep(&r.group[len(r.group)-1].row, s)
			continue
		}
		r.keep(r.place(s.line, s.stamp, s.dur), s)
	}
}

// row is a request in the queue: what Next and NextRow return of it. It holds no pointer
// (a key of up to 16 bytes, every IPv4 address and most others, is in keyBuf; a longer one
// in longKeys), so that the second of a busy log the reorder window holds, 10,000 rows of 48
// bytes, costs the garbage collector nothing to scan and 10,000 key buffers nothing to
// allocate: with a slice per row, replaying the 262,144-line benchmark log made 11,154
// allocations against 89 now (BenchmarkNginxCombinedVsCSV).
type row struct {
	at       int64
	line     int
	permits  int32
	status   int32
	long     int32 // the key's index in longKeys when keyLen is longKey
	decision Decision
	plain    bool  // key is as csvKey returns it (slot.plain)
	keyLen   uint8 // key is keyBuf[:keyLen], or longKeys[long] when keyLen is longKey
	keyBuf   [16]byte
}

// longKey is the keyLen of a row whose key is longer than keyBuf.
const longKey = 255

// keep fills row w, placed, with what the decoder s read (all but its arrival).
func (r *Reader) keep(w *row, s *slot) {
	w.line, w.permits, w.status, w.decision, w.plain = s.line, int32(s.permits), int32(s.status), s.decision, s.plain
	if len(s.key) <= 16 && cap(s.key) >= 16 {
		w.keyBuf, w.keyLen = [16]byte(s.key[:16]), uint8(len(s.key))
		return
	}
	// A key longer than keyBuf: in a buffer of longKeys, free again once its row has been
	// returned (curLong).
	w.keyLen = longKey
	if n := len(r.longFree); n > 0 {
		w.long = r.longFree[n-1]
		r.longFree = r.longFree[:n-1]
	} else {
		w.long = int32(len(r.longKeys))
		r.longKeys = append(r.longKeys, nil)
	}
	r.longKeys[w.long] = append(r.longKeys[w.long][:0], s.key...)
}

// grouped is a row of --spread's current stamp, with what placing it needs.
type grouped struct {
	row              row
	stamp, unit, dur int64
}

// flushGroup places the rows of one stamp, the i-th of n at i/n of the stamp's tick.
func (r *Reader) flushGroup() {
	n := int64(len(r.group))
	for k := range r.group {
		g := &r.group[k]
		w := r.place(g.row.line, g.stamp+int64(k)*g.unit/n, g.dur)
		at := w.at
		*w = g.row
		w.at = at
	}
	r.group = r.group[:0]
}

// place queues a row of line, stamped at stamp (spread or not), its duration dur (< 0: not
// logged), and returns it, its arrival set, for the caller to fill. Rows are queued by value
// in q, sorted by arrival, a row after any row of the same time (rows are in the file's order
// otherwise); most go at the end.
func (r *Reader) place(line int, stamp, dur int64) *row {
	at, written := stamp, stamp
	if dur >= 0 {
		if r.ro.completion {
			at = stamp - dur
		} else {
			written = stamp + dur
		}
	}
	r.watermark = max(r.watermark, written)
	if !r.windowSet {
		r.maxDur = max(r.maxDur, dur)
		if r.prefix++; r.prefix >= prefixRows {
			r.setWindow()
		}
	}
	if r.out && at < r.lastOut {
		at = r.lastOut
		r.late++
		if len(r.lateLines) < 5 {
			r.lateLines = append(r.lateLines, line)
		}
	}
	if r.qh > 0 && r.qh >= len(r.q)/2 { // move the queue to the front of its array
		m := copy(r.q, r.q[r.qh:])
		r.q, r.qh = r.q[:m], 0
	}
	n := len(r.q)
	if n < cap(r.q) {
		r.q = r.q[:n+1]
	} else {
		r.q = append(r.q, row{})
	}
	k := n
	if k > r.qh && r.q[k-1].at > at { // out of order: after any row of the same time
		for k > r.qh && r.q[k-1].at > at {
			k--
		}
		r.reordered++
		copy(r.q[k+1:], r.q[k:n])
	}
	w := &r.q[k]
	w.at = at
	return w
}

// setWindow fixes the default window once the prefix is read: its longest duration plus 1s.
func (r *Reader) setWindow() {
	if !r.windowSet {
		r.window, r.windowSet = max(r.maxDur, 0)+int64(time.Second), true
	}
}

// pop takes h, the queue's first row.
func (r *Reader) pop(h *row) (*row, error) {
	r.qh++
	if !r.out {
		r.base, r.out = h.at, true
	}
	r.lastOut = h.at
	if h.keyLen != longKey {
		r.curKey = h.keyBuf[:h.keyLen]
	} else {
		r.curKey, r.curLong = r.longKeys[h.long], h.long
	}
	if h.at-r.base >= 1<<62 {
		return nil, fmt.Errorf("line %d: the request arrives more than 2^62ns (146 years) after the first", h.line)
	}
	return h, nil
}

// Start is the instant of the first arrival, the zero of every Record's At, once Next has
// returned a record.
func (r *Reader) Start() (time.Time, bool) {
	if !r.out {
		return time.Time{}, false
	}
	return time.Unix(0, r.base).UTC(), true
}

// Notes are the reading's notes (see Input.Notes).
func (r *Reader) Notes() []string {
	var notes []string
	d := func(ns int64) string { return fmtDur(time.Duration(ns)) }
	notes = append(notes, fmt.Sprintf("read as %s (%s), %d requests, keyed by %s", r.f.label(), r.how, r.rows, orNone(r.ro.keyName)))
	ro := r.ro
	switch {
	case ro.completion && ro.dur >= 0 && r.noDur == 0:
		notes = append(notes, fmt.Sprintf("arrival = %s - %s: %s stamps a request when its response ends", ro.timeName, ro.durName, r.f.label()))
	case ro.completion && ro.dur >= 0:
		notes = append(notes, fmt.Sprintf("arrival = %s - %s; %d requests logged no %s, so their times are completion times (late by their own duration)",
			ro.timeName, ro.durName, r.noDur, ro.durName))
	case ro.completion:
		notes = append(notes, fmt.Sprintf("times are completion times: %s is stamped when the response ends and the log has no request duration ($request_time), so each request appears late by its own duration", ro.timeName))
	case ro.dur >= 0:
		notes = append(notes, fmt.Sprintf("times are arrivals: %s is taken when the request begins", ro.timeName))
	}
	if r.rows > 0 {
		u := d(r.unit)
		notes = append(notes, fmt.Sprintf("timestamps have %s resolution: bursts shorter than %s are invisible, so σ(ρ) is a lower bound", u, u))
	}
	if r.spread && r.rows > 0 {
		notes = append(notes, fmt.Sprintf("--spread uniform: the requests sharing a stamp were spread evenly over its %s tick (the i-th of n at i/n of it)", d(r.maxUnit)))
	}
	if r.reordered > 0 {
		notes = append(notes, fmt.Sprintf("%d requests were out of arrival order in the file and were sorted (reorder window %s)", r.reordered, d(r.window)))
	}
	if r.late > 0 {
		notes = append(notes, fmt.Sprintf("%d requests arrived earlier than the reorder window (%s) allows and were placed at the time of the request before them: line %s (a larger --reorder sorts them)",
			r.late, d(r.window), lineList(r.lateLines, r.late)))
	}
	if r.zoneless > 0 {
		notes = append(notes, fmt.Sprintf("%d stamps carry no time zone (%s) and were read in %s: a daylight-saving change inside the log would shift the times after it by an hour unless the log's zone is named (--log-zone)",
			r.zoneless, ro.timeName, r.zoneName))
	}
	if r.headerZoned > 0 {
		notes = append(notes, fmt.Sprintf("%d stamps carry no time zone (%s) and were read in the offset of their line's RFC 5424 syslog header", r.headerZoned, ro.timeName))
	}
	if r.notices > 0 {
		notes = append(notes, fmt.Sprintf("%d lines are %s's own messages, not requests (no [date]), and were skipped: line %s", r.notices, r.f.label(), lineList(r.noticeLines, r.notices)))
	}
	if r.noKey > 0 {
		notes = append(notes, fmt.Sprintf("%d requests logged no %s, so they share one key (- or empty): a per-client limit counts them as one client (--key names another field)",
			r.noKey, ro.keyName))
	}
	if r.zeroPermits > 0 {
		notes = append(notes, fmt.Sprintf("%d requests logged no permits in %s (0 or -) and were charged 1", r.zeroPermits, ro.permitName))
	}
	return notes
}

// lineList is "3, 7, 9", or "3, 7, 9, …" when there were more than those listed.
func lineList(lines []int, count int64) string {
	text := make([]string, len(lines))
	for i, l := range lines {
		text[i] = fmt.Sprint(l)
	}
	if count > int64(len(lines)) {
		text = append(text, "…")
	}
	return strings.Join(text, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "nothing (no client field)"
	}
	return s
}

// fmtDur writes 1s, 1ms, 100ns, 1.5s.
func fmtDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	return s
}
