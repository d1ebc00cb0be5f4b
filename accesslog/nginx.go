package accesslog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"strings"
)

// The nginx formats every nginx writes without a log_format of its own (ngx_http_log_module).
const (
	nginxCombined = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`
	nginxCommon   = `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent`
)

// nginxFormat is a log_format string compiled into a parser: literals and variables in turn.
// A variable's value runs to the next literal (nginx escapes a '"' in a value as \x22, so a
// quote after "$request" ends it), except $time_local and $time_iso8601, whose widths are
// fixed (26 and 25 bytes) and may hold the literal that follows them.
type nginxFormat struct {
	name   string
	items  []nginxItem
	fields []string // variable names without $, then "method" and "path" (parts of $request)
	used   []bool
	last   int // the last item parse must read (the last needed variable's)
	// derive: method and path are read from $request (field index request), not logged apart.
	request      int
	deriveMethod bool
	derivePath   bool
	absent       []span // every field absent: what parse starts from
	// clfPrefix: the format begins as combined and common do (clfPrefixText), so a parse that
	// stops at $status may take parseCLFPrefix's straight path.
	clfPrefix bool
	primed    *span // the first span of the slice parse last reset, for a parse that stops early
}

type nginxItem struct {
	lit   []byte // a literal, or nil for a variable
	field int
	width int // a fixed-width variable's width, else 0
	// A literal of at most 8 bytes as a little-endian word and the mask of its bytes: a
	// line's next 8 bytes w begin with it when w&mask == word (mask 0: longer, compared
	// byte by byte). first is its first byte in every byte of a word (indexLit).
	word, mask, first uint64
	kind              itemKind
}

// itemKind is how parse reads an item, told once when the format is compiled.
type itemKind uint8

const (
	itemLit    itemKind = iota // a literal, compared
	itemFixed                  // a fixed-width variable ($time_local)
	itemRest                   // the last item, a variable: the rest of the line
	itemSuffix                 // a variable before the last literal, which ends the line
	itemSearch                 // a variable that runs to the next literal, searched for
)

// litWord is lit's word and mask (see nginxItem), or zeros for a literal longer than 8 bytes.
func litWord(lit []byte) (word, mask uint64) {
	if len(lit) > 8 {
		return 0, 0
	}
	for i := len(lit) - 1; i >= 0; i-- {
		word = word<<8 | uint64(lit[i])
		mask = mask<<8 | 0xFF
	}
	return word, mask
}

// litItem is the item of a literal.
func litItem(lit []byte) nginxItem {
	it := nginxItem{lit: lit, field: -1, kind: itemLit, first: 0x0101010101010101 * uint64(lit[0])}
	it.word, it.mask = litWord(lit)
	return it
}

// at is whether b begins with the literal of item it: one load and compare when b holds 8
// bytes, where hasLit compares byte by byte.
func (it *nginxItem) at(b []byte) bool {
	if it.mask != 0 && len(b) >= 8 {
		return binary.LittleEndian.Uint64(b)&it.mask == it.word
	}
	return hasLit(b, it.lit)
}

// compileNginx compiles a log_format string. name labels it ("nginx combined").
func compileNginx(name, text string) (*nginxFormat, error) {
	f := &nginxFormat{name: name, request: -1}
	var lit []byte
	for i := 0; i < len(text); {
		c := text[i]
		if c != '$' {
			lit = append(lit, c)
			i++
			continue
		}
		j, v := i+1, ""
		if j < len(text) && text[j] == '{' {
			k := strings.IndexByte(text[j:], '}')
			if k < 0 {
				return nil, fmt.Errorf("log format column %d: ${ without its }", i+1)
			}
			v, j = text[j+1:j+k], j+k+1
		} else {
			for j < len(text) && (text[j] == '_' || text[j] >= 'a' && text[j] <= 'z' || text[j] >= 'A' && text[j] <= 'Z' || text[j] >= '0' && text[j] <= '9') {
				j++
			}
			v = text[i+1 : j]
		}
		if v == "" {
			return nil, fmt.Errorf("log format column %d: a $ with no variable name after it", i+1)
		}
		if len(lit) > 0 {
			f.items = append(f.items, nginxItem{lit: lit, field: -1})
			lit = nil
		} else if n := len(f.items); n > 0 && f.items[n-1].lit == nil && f.items[n-1].width == 0 {
			return nil, fmt.Errorf("log format column %d: $%s follows $%s with nothing between them, so where one ends cannot be told", i+1, v, f.fields[f.items[n-1].field])
		}
		v = strings.ToLower(v)
		idx := len(f.fields)
		f.fields = append(f.fields, v)
		width := 0
		switch v {
		case "time_local":
			width = len("10/Oct/2000:13:55:36 -0700")
		case "time_iso8601":
			width = len("2000-10-10T13:55:36-07:00")
		case "request":
			f.request = idx
		}
		f.items = append(f.items, nginxItem{field: idx, width: width})
		i = j
	}
	if len(lit) > 0 {
		f.items = append(f.items, nginxItem{lit: lit, field: -1})
	}
	for i := range f.items {
		it := &f.items[i]
		switch {
		case it.lit != nil:
			*it = litItem(it.lit)
		case it.width > 0:
			it.kind = itemFixed
		case i == len(f.items)-1:
			it.kind = itemRest
		case i == len(f.items)-2:
			it.kind = itemSuffix
		default:
			it.kind = itemSearch
		}
	}
	if len(f.fields) == 0 {
		return nil, fmt.Errorf("log format %q has no $variable", text)
	}
	// (the literal after $status exactly " ", and $status searched for, not a suffix)
	f.clfPrefix = strings.HasPrefix(text, clfPrefixText) && len(f.items) > clfStatusItem+2 &&
		f.items[clfStatusItem].kind == itemSearch && string(f.items[clfStatusItem+1].lit) == " "
	f.fields = append(f.fields, "method", "path")
	f.used = make([]bool, len(f.fields))
	f.last = -1
	return f, nil
}

func (f *nginxFormat) label() string { return f.name }
func (f *nginxFormat) nfields() int  { return len(f.fields) }
func (f *nginxFormat) fieldNames() []string {
	var out []string
	for i, n := range f.fields {
		if i < len(f.fields)-2 || f.request >= 0 {
			out = append(out, n)
		}
	}
	return out
}

func (f *nginxFormat) lookup(name string) (int, bool) {
	name = strings.ToLower(name)
	n := len(f.fields) - 2
	for i, v := range f.fields[:n] {
		if v == name {
			return i, true
		}
	}
	switch {
	case name == "method" && f.request >= 0:
		return n, true
	case name == "path" && f.request >= 0:
		return n + 1, true
	}
	return 0, false
}

func (f *nginxFormat) need(i int) {
	f.used[i] = true
	n := len(f.fields) - 2
	switch i {
	case n:
		f.deriveMethod = true
		f.need(f.request)
		return
	case n + 1:
		f.derivePath = true
		f.need(f.request)
		return
	}
	for k, it := range f.items {
		if it.lit == nil && it.field == i {
			f.last = max(f.last, k)
		}
	}
}

// parse reads line's variables in order; with full false it stops after the last needed one.
// A variable that runs to the next literal is found with that literal (indexLit), which is
// then passed over without being compared again.
func (f *nginxFormat) parse(line []byte, vals []span, full bool) (int, string) {
	if len(f.absent) != len(vals) {
		f.absent = make([]span, len(vals))
		for i := range f.absent {
			f.absent[i] = absent
		}
	}
	// Every field up to the last needed one is set below (or the line fails), and parse with
	// full false sets none after it: the spans need resetting only when the slice is new to
	// this format, a full parse set more, or method and path are derived.
	if full || f.derived() || len(vals) == 0 || f.primed != &vals[0] {
		copy(vals, f.absent)
		f.primed = nil
		if !full && len(vals) > 0 {
			f.primed = &vals[0]
		}
	}
	if !full && f.clfPrefix && f.last == clfStatusItem && !f.derived() && f.parseCLFPrefix(line, vals) {
		return 0, ""
	}
	pos := 0
	last := len(f.items) - 1
	if !full {
		last = f.last
	}
	items := f.items[:last+1]
	for k := 0; k < len(items); k++ {
		it := &items[k]
		if it.kind == itemLit {
			if !it.at(line[pos:]) {
				return pos + 1, fmt.Sprintf("expected %q", it.lit)
			}
			pos += len(it.lit)
			continue
		}
		end := -1
		skip := 0 // the literal after the variable, found with it
		switch it.kind {
		case itemFixed:
			if pos+it.width > len(line) {
				return pos + 1, fmt.Sprintf("expected $%s (%d bytes) but the line ends", f.fields[it.field], it.width)
			}
			end = pos + it.width
		case itemRest:
			end = len(line)
		case itemSuffix:
			lit := f.items[k+1].lit
			if !bytes.HasSuffix(line[pos:], lit) {
				return len(line) + 1, fmt.Sprintf("expected the line to end with %q after $%s", lit, f.fields[it.field])
			}
			end = len(line) - len(lit)
		default: // itemSearch: indexLit, its word loop written out here
			next := &f.items[k+1]
			b := line[pos:]
			j, off := -1, 0
			for off+8 <= len(b) {
				const lo, hi = 0x0101010101010101, 0x8080808080808080
				x := binary.LittleEndian.Uint64(b[off:]) ^ next.first
				if m := (x - lo) &^ x & hi; m != 0 {
					c := off + bits.TrailingZeros64(m)/8
					if next.at(b[c:]) {
						j = c
						break
					}
					off = c + 1
					continue
				}
				off += 8
			}
			if j < 0 {
				if j = indexLitFrom(b, off, next); j < 0 {
					return pos + 1, fmt.Sprintf("expected $%s then %q, which the rest of the line does not hold", f.fields[it.field], next.lit)
				}
			}
			end = pos + j
			if k+1 < len(items) {
				skip = len(next.lit)
			}
		}
		vals[it.field] = span{start: int32(pos), end: int32(end)}
		pos = end + skip
		if skip > 0 {
			k++
		}
	}
	if full && pos != len(line) {
		return pos + 1, "expected the line to end here"
	}
	if f.derived() {
		f.split(line, vals)
	}
	return 0, ""
}

// clfPrefixText is how combined and common begin: parseCLFPrefix reads these fields.
const clfPrefixText = `$remote_addr - $remote_user [$time_local] "$request" $status `

// clfStatusItem is the index of $status's item in a format that begins with clfPrefixText
// (its fields are 0 to 4: remote_addr, remote_user, time_local, request, status).
const clfStatusItem = 8

// clfFields are the fields of a line parseCLFPrefix read: $remote_addr is line[:addrEnd],
// $remote_user line[userStart:userEnd], $time_local the 26 bytes at time, $request
// line[reqStart:reqEnd], $status line[statusStart:statusEnd].
type clfFields struct {
	addrEnd, userStart, userEnd, time, reqStart, reqEnd, statusStart, statusEnd int
}

// parseCLFPrefix is parse of a clfPrefix format up to $status, written out (see splitCLF).
func (f *nginxFormat) parseCLFPrefix(line []byte, vals []span) bool {
	var c clfFields
	if !splitCLF(line, &c) {
		return false
	}
	vals[0] = span{start: 0, end: int32(c.addrEnd)}
	vals[1] = span{start: int32(c.userStart), end: int32(c.userEnd)}
	vals[2] = span{start: int32(c.time), end: int32(c.time + clfStampLen)}
	vals[3] = span{start: int32(c.reqStart), end: int32(c.reqEnd)}
	vals[4] = span{start: int32(c.statusStart), end: int32(c.statusEnd)}
	return true
}

// clfStampLen is the width of $time_local, "02/Dec/2026:18:03:19 +0000".
const clfStampLen = 26

// splitCLF splits a line that begins as clfPrefixText says, up to $status: each field's end
// is the first byte of the literal after it, found by bytes.IndexByte, and that literal is
// then checked whole. ok is false when that first byte does not begin the literal (a '"'
// inside $request before its closing `" `) or the line does not fit: parse's loop then reads
// the line, finding later occurrences or the column to name, so what is accepted or refused,
// and the spans, are parse's own. A line of a combined log takes 4 searches and 4 compares
// here, where the loop paid about 25 ns more for its items' dispatch.
func splitCLF(line []byte, c *clfFields) bool {
	const lo3 = 0xFFFFFF
	// $remote_addr, then " - "
	a := indexSpace(line)
	if a < 0 || len(line)-a < 8 || binary.LittleEndian.Uint64(line[a:])&lo3 != ' '|'-'<<8|' '<<16 {
		return false
	}
	// $remote_user, then " [": mostly "-"
	u := a + 3
	b := u + 1
	if line[u] != '-' || line[b] != ' ' {
		if b = bytes.IndexByte(line[u:], ' '); b < 0 {
			return false
		}
		b += u
	}
	// " [" then the 26 bytes of $time_local, then `] "`
	t := b + 2
	if len(line)-b < 2+clfStampLen+3+8 || line[b+1] != '[' ||
		binary.LittleEndian.Uint32(line[t+clfStampLen-1:])>>8 != ']'|' '<<8|'"'<<16 {
		return false
	}
	// "$request", then `" `
	r := t + clfStampLen + 3
	q := bytes.IndexByte(line[r:], '"')
	if q < 0 {
		return false
	}
	q += r
	if q+5 >= len(line) || line[q+1] != ' ' {
		return false
	}
	// $status, then " ": mostly 3 bytes, none of them a space
	st := q + 2
	e := st + 3
	if line[e] != ' ' || line[st] == ' ' || line[st+1] == ' ' || line[st+2] == ' ' {
		if e = bytes.IndexByte(line[st:], ' '); e < 0 {
			return false
		}
		e += st
	}
	*c = clfFields{addrEnd: a, userStart: u, userEnd: b, time: t, reqStart: r, reqEnd: q, statusStart: st, statusEnd: e}
	return true
}

// indexSpace is bytes.IndexByte(b, ' ') for a field of a few bytes (an address): its first
// 16 bytes a word at a time (x ^ ' '·0x01… has a zero byte where b has a space, and
// (y − 0x01…) &^ y & 0x80… marks the first), and bytes.IndexByte past them.
func indexSpace(b []byte) int {
	const lo, hi, spaces = 0x0101010101010101, 0x8080808080808080, 0x2020202020202020
	off := 0
	for ; off < 16 && off+8 <= len(b); off += 8 {
		x := binary.LittleEndian.Uint64(b[off:]) ^ spaces
		if m := (x - lo) &^ x & hi; m != 0 {
			return off + bits.TrailingZeros64(m)/8
		}
	}
	if i := bytes.IndexByte(b[off:], ' '); i >= 0 {
		return off + i
	}
	return -1
}

// clfRoles is whether a reader of format f with roles ro may decode with decodeCLF: f begins
// as combined does, parse would stop at $status, and the roles are combined's defaults (time
// $time_local, key $remote_addr, status $status; no duration, permits, decision or zone).
func clfRoles(f *nginxFormat, ro *roles) bool {
	return f.clfPrefix && f.last == clfStatusItem && !f.derived() &&
		ro.time == 2 && ro.timeKind == timeCLF && len(ro.key) == 1 && ro.key[0] == 0 && ro.status == 4 &&
		ro.dur < 0 && ro.permits < 0 && ro.decision < 0 && ro.zone < 0 && ro.clock < 0
}

// decodeCLF is decode of a line of a clfRoles reader, written out: the fields split by
// splitCLF, the stamp compared with the last one read (most lines share their second), the
// key copied once. It reports false, having changed nothing decode would not, when the line
// is not one it reads straight (then decode reads it, and names what does not fit).
func (r *Reader) decodeCLF(n int, line []byte, s *slot) bool {
	var c clfFields
	if !splitCLF(line, &c) {
		return false
	}
	tv := line[c.time : c.time+clfStampLen]
	cache := &r.clf
	var stamp, unit int64
	if cache.lastValid && cache.lastLen == clfStampLen && cache.lastZone == [5]byte{} && cache.sameAsLast(tv) {
		stamp, unit = cache.lastNs, cache.lastUnit
	} else {
		var msg string
		if stamp, unit, msg = cache.parse(tv, nil); msg != "" {
			return false
		}
	}
	if tv[clfStampLen-6] != ' ' { // no zone: ".fraction" fills the 26 bytes (see decode)
		r.zoneless++
	}
	s.stamp, s.unit, s.dur = stamp, unit, -1
	s.key, s.plain = clfKey(s.key, line, c.addrEnd)
	s.permits = 1
	s.status = 0
	if c.statusEnd-c.statusStart == 3 { // num, written out: three digits or 0
		d0, d1, d2 := line[c.statusStart]-'0', line[c.statusStart+1]-'0', line[c.statusStart+2]-'0'
		if d0 <= 9 && d1 <= 9 && d2 <= 9 {
			s.status = int(d0)*100 + int(d1)*10 + int(d2)
		}
	}
	s.decision = DecisionNone
	s.line = n
	return true
}

// decodeCombined is decodeCLF for the line most combined and common logs are made of, read
// in one pass with no call but the search for $request's closing quote:
//
//	ADDR - - [02/Dec/2026:18:03:19 +0000] "REQUEST" STATUS ...
//
// an address of up to 15 bytes (its space found in the two words its key is copied from),
// " - - [" compared as one word, the stamp compared with the last one's 26 bytes as four
// words, a status of three bytes then a space. Any other line (a $remote_user, a longer
// address, a new stamp, a status longer than three bytes) goes to decodeCLF, so what is read,
// and how, is decodeCLF's own (TestDecodeCLFIsDecode). The stamp cache's zone is not checked:
// a clfRoles format has no syslog header to lend a zone. This path is about half decodeCLF's
// instructions.
func (r *Reader) decodeCombined(n int, line []byte, s *slot) bool {
	const lo, hi, spaces = 0x0101010101010101, 0x8080808080808080, 0x2020202020202020
	const dashes, dashesMask = ' ' | '-'<<8 | ' '<<16 | '-'<<24 | ' '<<32 | '['<<40, 1<<48 - 1
	le := binary.LittleEndian
	cache := &r.clf
	if len(line) < 64 || !cache.lastValid || cache.lastLen != clfStampLen || cap(s.key) < 16 {
		return r.decodeCLF(n, line, s)
	}
	w0, w1 := le.Uint64(line), le.Uint64(line[8:])
	var a int
	if m := (w0 ^ spaces - lo) &^ (w0 ^ spaces) & hi; m != 0 {
		a = bits.TrailingZeros64(m) / 8
	} else if m := (w1 ^ spaces - lo) &^ (w1 ^ spaces) & hi; m != 0 {
		a = 8 + bits.TrailingZeros64(m)/8
	} else {
		return r.decodeCLF(n, line, s)
	}
	// a ≤ 15 and len(line) ≥ 64: the stamp and the three bytes after it are in the line.
	t := a + 6
	if le.Uint64(line[a:])&dashesMask != dashes || le.Uint32(line[t+clfStampLen-1:])>>8 != ']'|' '<<8|'"'<<16 {
		return r.decodeCLF(n, line, s)
	}
	tv, last := line[t:t+clfStampLen], &cache.last
	if le.Uint64(tv) != le.Uint64(last[:]) || le.Uint64(tv[8:]) != le.Uint64(last[8:]) ||
		le.Uint64(tv[16:]) != le.Uint64(last[16:]) || le.Uint64(tv[18:]) != le.Uint64(last[18:]) {
		return r.decodeCLF(n, line, s)
	}
	rq := t + clfStampLen + 3
	q := bytes.IndexByte(line[rq:], '"')
	if q < 0 {
		return r.decodeCLF(n, line, s)
	}
	q += rq
	if q+6 >= len(line) || line[q+1] != ' ' || line[q+5] != ' ' {
		return r.decodeCLF(n, line, s)
	}
	if tv[clfStampLen-6] != ' ' { // no zone: ".fraction" fills the 26 bytes (see decode)
		r.zoneless++
	}
	s.stamp, s.unit, s.dur = cache.lastNs, cache.lastUnit, -1
	s.key, s.plain = wordsKey(s.key, w0, w1, a)
	// $status is line[q+2:q+5] when none of the three is a space, and otherwise shorter;
	// either way it is a status only if all three are digits (see decodeCLF).
	s.permits, s.status = 1, 0
	if d0, d1, d2 := line[q+2]-'0', line[q+3]-'0', line[q+4]-'0'; d0 <= 9 && d1 <= 9 && d2 <= 9 {
		s.status = int(d0)*100 + int(d1)*10 + int(d2)
	}
	s.decision = DecisionNone
	s.line = n
	r.combinedLines++
	return true
}

// clfKey is $remote_addr, line[:end], copied into buf, and whether it is plain: every byte
// printable ASCII other than a space (0x21 to 0x7F), so that csvKey would return it as it is
// (NextRow then skips csvKey). An address of up to 16 bytes (every IPv4 address, most IPv6
// ones) is copied as two words, with no call to memmove, and tested in them as plainKey tests
// its words, the bytes past end masked off (keyMasks); a longer one is appended and left to
// csvKey. buf's capacity is at least 16 (the reader's decoder's is 64).
func clfKey(buf, line []byte, end int) (key []byte, plain bool) {
	if end > 16 || len(line) < 16 || cap(buf) < 16 {
		return append(buf[:0], line[:end]...), false
	}
	return wordsKey(buf, binary.LittleEndian.Uint64(line), binary.LittleEndian.Uint64(line[8:]), end)
}

// wordsKey is clfKey's copy and test of the key's first end ≤ 16 bytes, the line's first two
// words w0 and w1, into buf (capacity 16 or more); decodeCombined has loaded them already.
func wordsKey(buf []byte, w0, w1 uint64, end int) (key []byte, plain bool) {
	const lo21, hi = 0x2121212121212121, 0x8080808080808080
	buf = buf[:16]
	binary.LittleEndian.PutUint64(buf, w0)
	binary.LittleEndian.PutUint64(buf[8:], w1)
	m := &keyMasks[end]
	return buf[:end], end > 0 && (((w0-lo21)&^w0|w0)&m[0]|((w1-lo21)&^w1|w1)&m[1])&hi == 0
}

// keyMasks[n] keeps the first n bytes of two little-endian words: 0xFF in each of them.
var keyMasks = func() (m [17][2]uint64) {
	for n := range m {
		for i := range n {
			m[n][i/8] |= 0xFF << (8 * (i % 8))
		}
	}
	return m
}()

// derived is whether method or path is read from $request.
func (f *nginxFormat) derived() bool { return f.deriveMethod || f.derivePath }

// indexLit is bytes.Index(b, lit) for the short literal of item lit, one of those between
// variables (`" `, " - "), found a few bytes on in a log's line: eight bytes at a time in a
// word (x ^ c·0x01… has a zero byte where b has c, and (y − 0x01…) &^ y & 0x80… marks the
// first), where bytes.Index and IndexByte pay for a call and a vector set-up per field.
func indexLit(b []byte, lit *nginxItem) int { return indexLitFrom(b, 0, lit) }

// indexLitFrom is indexLit from b[off:] on (an index in b).
func indexLitFrom(b []byte, off int, lit *nginxItem) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	for off+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[off:]) ^ lit.first
		m := (x - lo) &^ x & hi // its lowest set bit marks the first byte equal to c
		if m == 0 {
			off += 8
			continue
		}
		k := off + bits.TrailingZeros64(m)/8
		if lit.at(b[k:]) {
			return k
		}
		off = k + 1
	}
	c := lit.lit[0]
	for ; off < len(b); off++ {
		if b[off] == c && hasLit(b[off:], lit.lit) {
			return off
		}
	}
	return -1
}

// hasLit is bytes.HasPrefix(b, lit) for short literals, compared byte by byte in place.
func hasLit(b, lit []byte) bool {
	if len(b) < len(lit) {
		return false
	}
	for i, c := range lit {
		if b[i] != c {
			return false
		}
	}
	return true
}

// split reads method and path from $request: "GET /a/b?x=1 HTTP/1.1" is method GET, path
// /a/b (the query left out). A request line that is not three words leaves them "-".
func (f *nginxFormat) split(line []byte, vals []span) {
	r := vals[f.request]
	n := len(f.fields) - 2
	if r.start < 0 {
		return
	}
	req := line[r.start:r.end]
	sp := bytes.IndexByte(req, ' ')
	if sp <= 0 {
		return
	}
	vals[n] = span{start: r.start, end: r.start + int32(sp)}
	rest := req[sp+1:]
	end := bytes.IndexByte(rest, ' ')
	if end < 0 {
		end = len(rest)
	}
	if q := bytes.IndexByte(rest[:end], '?'); q >= 0 {
		end = q
	}
	start := r.start + int32(sp) + 1
	vals[n+1] = span{start: start, end: start + int32(end)}
}

// nginxRoles picks the time (the finest stamp logged: $msec, then $time_iso8601, then
// $time_local), $request_time, $status, $limit_req_status and the default key, $remote_addr
// (else $binary_remote_addr).
func nginxRoles(f *nginxFormat) roles {
	r := noRoles()
	r.completion = true
	for _, want := range []struct {
		name string
		kind timeKind
	}{{"msec", timeEpoch}, {"time_iso8601", timeISO}, {"time_local", timeCLF}} {
		if i, ok := f.lookup(want.name); ok {
			r.time, r.timeKind, r.timeName = i, want.kind, "$"+want.name
			break
		}
	}
	if i, ok := f.lookup("request_time"); ok {
		r.dur, r.durKind, r.durName = i, durSeconds, "$request_time"
	}
	if i, ok := f.lookup("status"); ok {
		r.status = i
	}
	if i, ok := f.lookup("limit_req_status"); ok {
		r.decision = i
	}
	for _, k := range []string{"remote_addr", "binary_remote_addr"} {
		if i, ok := f.lookup(k); ok {
			r.key, r.keyName = []int{i}, "$"+k
			break
		}
	}
	return r
}
