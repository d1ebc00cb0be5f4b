package accesslog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The stamps a format may write, each parsed to nanoseconds since the Unix epoch (UTC) and
// the unit of its last digit (1s for "10/Oct/2000:13:55:36 -0700", 1ms for "1700000000.123").
type timeKind uint8

const (
	timeNone   timeKind = iota
	timeCLF             // 10/Oct/2000:13:55:36 -0700 (nginx $time_local), or with .mmm and no zone (HAProxy)
	timeISO             // 2000-10-10T13:55:36-07:00 (nginx $time_iso8601), any RFC 3339 stamp
	timeEpoch           // 1700000000.123: decimal seconds since the epoch (nginx $msec, Caddy's ts)
	timeAnyISO          // a JSON field: decimal epoch seconds (or ms, µs, ns by magnitude) or RFC 3339
	timeW3C             // a date (2019-12-04) and a time of day (21:02:31) in two fields, UTC (CloudFront's)
)

// The durations a format may write, parsed to nanoseconds.
type durKind uint8

const (
	durNone          durKind = iota
	durSeconds               // 0.123 (nginx $request_time, Caddy's duration)
	durMillis                // 123 (HAProxy's Ta)
	durJSON                  // a JSON field: decimal seconds, or a Go duration string such as "12.5ms"
	durSum                   // seconds in space-separated parts, -1 for a part not measured (ALB's three processing times)
	durMillisDecimal         // 123.456 milliseconds (a HAR entry's time)
)

// clfCache remembers the last CLF stamp's minute and zone: a log's stamps change minute once
// per 60 seconds, so the calendar arithmetic runs about once per minute, not per line.
type clfCache struct {
	prefix [17]byte // "10/Oct/2000:13:55"
	zone   [5]byte  // "-0700", or zeros when the stamp has none
	base   int64    // the minute's start in ns since the epoch, zone applied
	ok     bool
	isoOff int64          // parseISO's zone offset
	loc    *time.Location // the zone of a CLF stamp that has none (Options.Zone); nil is UTC

	// The last whole stamp parse read, and what it gave: a log's consecutive lines mostly
	// share their stamp ("[02/Dec/2026:18:03:19 +0000]", the same second), so most lines cost
	// one comparison of its 26 bytes.
	last      [32]byte
	lastLen   int
	lastZone  [5]byte // the fallback zone it was read with
	lastNs    int64
	lastUnit  int64
	lastValid bool
}

// isoZone is the zone that ends an RFC 3339 stamp ("Z", "+05:30") as a CLF zone, "+0530".
func isoZone(b []byte) (zone [5]byte, ok bool) {
	switch n := len(b); {
	case n >= 1 && (b[n-1] == 'Z' || b[n-1] == 'z'):
		return [5]byte{'+', '0', '0', '0', '0'}, true
	case n >= 6 && (b[n-6] == '+' || b[n-6] == '-') && b[n-3] == ':' && num(b[n-5:], 2) >= 0 && num(b[n-2:], 2) >= 0:
		return [5]byte{b[n-6], b[n-5], b[n-4], b[n-2], b[n-1]}, true
	}
	return zone, false
}

// parseZone reads Options.Zone: "" or UTC, Local, a fixed offset (+0530, -07:00) or an IANA
// name (Europe/Paris, from the system's zone database).
func parseZone(text string) (*time.Location, error) {
	switch text {
	case "", "UTC":
		return nil, nil
	case "Local":
		return time.Local, nil
	}
	if t := strings.ReplaceAll(text, ":", ""); len(t) == 5 && (t[0] == '+' || t[0] == '-') {
		h, m := num([]byte(t[1:]), 2), num([]byte(t[3:]), 2)
		if h < 0 || h > 23 || m < 0 || m > 59 {
			return nil, fmt.Errorf("--log-zone %s: an offset is +hhmm or -hh:mm, hours up to 23 and minutes up to 59", text)
		}
		off := (h*60 + m) * 60
		if t[0] == '-' {
			off = -off
		}
		return time.FixedZone(text, off), nil
	}
	loc, err := time.LoadLocation(text)
	if err != nil {
		return nil, fmt.Errorf("--log-zone %s: not a time zone (UTC, Local, an offset such as +0530, or a name such as Europe/Paris): %v", text, err)
	}
	return loc, nil
}

var months = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

func month(b []byte) int {
	for i, m := range months {
		if string(b) == m {
			return i + 1
		}
	}
	return 0
}

// num reads the n ASCII digits at b[0:n] as a number, or -1.
func num(b []byte, n int) int {
	if len(b) < n {
		return -1
	}
	v := 0
	for _, c := range b[:n] {
		d := int(c) - '0'
		if d < 0 || d > 9 {
			return -1
		}
		v = v*10 + d
	}
	return v
}

// parse reads "dd/Mon/yyyy:hh:mm:ss" followed by an optional fraction (".655") and an
// optional zone (" -0700"). A stamp without a zone is read in fallback ("+0530", from a
// syslog header) when given, else in c.loc (UTC when nil).
func (c *clfCache) parse(b []byte, fallback []byte) (ns, unit int64, msg string) {
	var fb [5]byte
	copy(fb[:], fallback)
	if c.lastValid && len(b) == c.lastLen && fb == c.lastZone && c.sameAsLast(b) {
		return c.lastNs, c.lastUnit, ""
	}
	ns, unit, msg = c.parseStamp(b, fallback)
	if msg == "" && len(b) <= len(c.last) {
		c.lastLen = copy(c.last[:], b)
		c.lastZone, c.lastNs, c.lastUnit, c.lastValid = fb, ns, unit, true
	}
	return ns, unit, msg
}

// sameAsLast is whether b, as long as the last stamp, is the last stamp: for the 16 to 32
// bytes of a stamp ("02/Dec/2026:18:03:19 +0000" is 26), the 8-byte words at 0, 8, 16 (or
// n-8, if less) and n-8, which cover them all, rather than a call to compare bytes.
func (c *clfCache) sameAsLast(b []byte) bool {
	n := len(b)
	if n < 16 || n > len(c.last) {
		return string(b) == string(c.last[:n])
	}
	le, third := binary.LittleEndian, min(16, n-8)
	return le.Uint64(b) == le.Uint64(c.last[:]) && le.Uint64(b[8:]) == le.Uint64(c.last[8:]) &&
		le.Uint64(b[third:]) == le.Uint64(c.last[third:]) && le.Uint64(b[n-8:]) == le.Uint64(c.last[n-8:n])
}

// parseStamp is parse without the last stamp's cache.
func (c *clfCache) parseStamp(b []byte, fallback []byte) (ns, unit int64, msg string) {
	if len(b) < 20 || b[2] != '/' || b[6] != '/' || b[11] != ':' || b[14] != ':' || b[17] != ':' {
		return 0, 0, "expected a time such as 10/Oct/2000:13:55:36 -0700"
	}
	frac, fracUnit, rest, ok := secondsFraction(b[20:])
	if !ok {
		return 0, 0, "expected digits after the seconds' '.'"
	}
	var zone [5]byte
	switch {
	case len(rest) == 0:
		copy(zone[:], fallback)
	case len(rest) == 6 && rest[0] == ' ' && (rest[1] == '+' || rest[1] == '-') && num(rest[2:], 4) >= 0:
		copy(zone[:], rest[1:])
	default:
		return 0, 0, "expected the time zone as +hhmm or -hhmm after the seconds"
	}
	sec := num(b[18:], 2)
	if sec < 0 || sec > 60 {
		return 0, 0, "expected seconds 00 to 60"
	}
	if !c.ok || !bytes.Equal(c.prefix[:], b[:17]) || c.zone != zone {
		day, mon, year, hour, min := num(b, 2), month(b[3:6]), num(b[7:], 4), num(b[12:], 2), num(b[15:], 2)
		if day < 1 || day > 31 || mon == 0 || year < 0 || hour < 0 || hour > 23 || min < 0 || min > 59 {
			return 0, 0, "expected a time such as 10/Oct/2000:13:55:36 -0700"
		}
		loc := time.UTC
		if zone[0] == 0 && c.loc != nil {
			loc = c.loc // its offset at that minute: a daylight-saving change is honoured
		}
		base := time.Date(year, time.Month(mon), day, hour, min, 0, 0, loc).UnixNano()
		if zone[0] != 0 {
			off := int64(num(zone[1:], 2)*3600+num(zone[3:], 2)*60) * int64(time.Second)
			if zone[0] == '+' {
				off = -off
			}
			base += off
		}
		copy(c.prefix[:], b[:17])
		c.zone, c.base, c.ok = zone, base, true
	}
	return c.base + int64(sec)*int64(time.Second) + frac, fracUnit, ""
}

// parseISO reads an RFC 3339 stamp, "2000-10-10T13:55:36-07:00", with an optional fraction
// and Z for UTC (a space may stand for the T).
func (c *clfCache) parseISO(b []byte) (ns, unit int64, msg string) {
	const bad = "expected a time such as 2000-10-10T13:55:36-07:00"
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != 't' && b[10] != ' ') || b[13] != ':' || b[16] != ':' {
		return 0, 0, bad
	}
	year, mon, day, hour, min, sec := num(b, 4), num(b[5:], 2), num(b[8:], 2), num(b[11:], 2), num(b[14:], 2), num(b[17:], 2)
	if year < 0 || mon < 1 || mon > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || min < 0 || min > 59 || sec < 0 || sec > 60 {
		return 0, 0, bad
	}
	frac, fracUnit, rest, ok := secondsFraction(b[19:])
	if !ok {
		return 0, 0, bad
	}
	var off int64
	switch {
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':' && num(rest[1:], 2) >= 0 && num(rest[4:], 2) >= 0:
		off = int64(num(rest[1:], 2)*3600+num(rest[4:], 2)*60) * int64(time.Second)
		if rest[0] == '+' {
			off = -off
		}
	default:
		return 0, 0, "expected the time zone (Z, +hh:mm or -hh:mm) after the seconds"
	}
	// The calendar arithmetic runs once per minute, as for CLF stamps.
	var key [17]byte
	copy(key[:], b[:16])
	if !c.ok || c.prefix != key || c.isoOff != off {
		c.prefix, c.isoOff, c.ok = key, off, true
		c.base = time.Date(year, time.Month(mon), day, hour, min, 0, 0, time.UTC).UnixNano() + off
		c.zone = [5]byte{}
	}
	return c.base + int64(sec)*int64(time.Second) + frac, fracUnit, ""
}

// parseDecimal reads decimal seconds, "1700000000.123" or "0.004", exactly (no floating
// point): nanoseconds and the unit of the last digit (digits past the ninth are dropped). An
// exponent ("1.7e9", which JSON allows) is read through float64.
func parseDecimal(b []byte) (ns, unit int64, ok bool) {
	if len(b) == 0 || len(b) > 40 {
		return 0, 0, false
	}
	if bytes.ContainsAny(b, "eE") {
		f, err := strconv.ParseFloat(string(b), 64)
		if err != nil || f < 0 || f > 9e9 {
			return 0, 0, false
		}
		return int64(f * 1e9), 1, true
	}
	var whole int64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if whole > 1e11 {
			return 0, 0, false // past the year 5138: not a stamp
		}
		whole = whole*10 + int64(b[i]-'0')
	}
	unit = int64(time.Second)
	var frac int64
	if i < len(b) && b[i] == '.' {
		j := i + 1
		for ; j < len(b) && b[j] >= '0' && b[j] <= '9'; j++ {
			if j-i <= 9 {
				frac = frac*10 + int64(b[j]-'0')
				unit /= 10
			}
		}
		if j == i+1 && i == 0 {
			return 0, 0, false
		}
		frac *= unit
		i = j
	} else if i == 0 {
		return 0, 0, false
	}
	if i != len(b) {
		return 0, 0, false
	}
	return whole*int64(time.Second) + frac, unit, true
}

// parseEpochAny reads a JSON time field: decimal seconds since the epoch, or an integer in
// ms, µs or ns told apart by size (more than 10^11 is ms: seconds that large would be past
// the year 5000), or an RFC 3339 string.
func (c *clfCache) parseEpochAny(b []byte) (ns, unit int64, msg string) {
	if len(b) > 0 && b[0] >= '0' && b[0] <= '9' && bytes.IndexByte(b, '-') < 0 {
		if bytes.IndexByte(b, '.') < 0 && len(b) > 11 && len(b) <= 19 {
			v, err := strconv.ParseInt(string(b), 10, 64)
			if err == nil {
				switch {
				case len(b) <= 14:
					return v * int64(time.Millisecond), int64(time.Millisecond), ""
				case len(b) <= 17:
					return v * int64(time.Microsecond), int64(time.Microsecond), ""
				}
				return v, 1, ""
			}
		}
		if ns, unit, ok := parseDecimal(b); ok {
			return ns, unit, ""
		}
		return 0, 0, "expected epoch seconds such as 1700000000.123"
	}
	return c.parseISO(b)
}

// parseDuration reads a logged duration in nanoseconds.
func parseDuration(kind durKind, b []byte) (int64, bool) {
	switch kind {
	case durSeconds:
		ns, _, ok := parseDecimal(b)
		return ns, ok
	case durMillis:
		v := 0
		if len(b) == 0 || len(b) > 12 {
			return 0, false
		}
		for _, c := range b {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return int64(v) * int64(time.Millisecond), true
	case durMillisDecimal:
		ns, _, ok := parseDecimal(b)
		return ns / 1e3, ok
	case durSum:
		// "0.000 0.001 0.000": the parts not measured (-1) are left out; all of them -1 is
		// no duration, -1 returned.
		var sum int64
		measured := false
		for len(b) > 0 {
			part := b
			if sp := bytes.IndexByte(b, ' '); sp >= 0 {
				part, b = b[:sp], b[sp+1:]
			} else {
				b = nil
			}
			if string(part) == "-1" {
				continue
			}
			ns, _, ok := parseDecimal(part)
			if !ok {
				return 0, false
			}
			sum += ns
			measured = true
		}
		if !measured {
			return -1, true
		}
		return sum, true
	case durJSON:
		if ns, _, ok := parseDecimal(b); ok {
			return ns, true
		}
		d, err := time.ParseDuration(string(b))
		return int64(d), err == nil && d >= 0
	}
	return 0, false
}

// secondsFraction reads an optional fraction of a second at the start of rest (".123"): its
// value in ns, the unit of its last digit (digits past the ninth are dropped), and what
// follows. ok is false for a '.' with no digit after it.
func secondsFraction(rest []byte) (frac, unit int64, after []byte, ok bool) {
	unit = int64(time.Second)
	if len(rest) == 0 || rest[0] != '.' {
		return 0, unit, rest, true
	}
	i := 1
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		if i <= 9 {
			frac = frac*10 + int64(rest[i]-'0')
			unit /= 10
		}
		i++
	}
	if i == 1 {
		return 0, 0, nil, false
	}
	return frac * unit, unit, rest[i:], true
}
