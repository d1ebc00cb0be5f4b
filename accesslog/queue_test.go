package accesslog

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// queued is a row of the reference queue below.
type queued struct {
	at     int64
	line   int
	key    string
	status int
}

// sortedQueueOrder is the order the reader's queue must give, written as plainly as it can
// be: one slice kept sorted by arrival (a row goes after every row of the same arrival, so
// rows of one arrival keep the file's order), rows released as soon as no row still to come
// may arrive before them (arrival ≤ latest completion − window), a row arriving before one
// already released returned at that one's time and counted late. stamps, durs (ns, < 0: not
// logged) and statuses are the log's rows in the file's order, lines their line numbers.
// window ≤ 0 is the default: fixed after prefixRows rows (or at the end) as the longest
// duration seen plus 1s. spread places the n rows of one stamp at i/n of unit.
func sortedQueueOrder(stamps, durs []int64, lines []int, keys []string, statuses []int, window int64, spread bool, unit int64) (out []queued, reordered, late int) {
	var q []queued
	windowSet, maxDur, prefix := window > 0, int64(0), 0
	watermark, lastOut, released := int64(0), int64(0), false
	release := func(eof bool) {
		for len(q) > 0 && (eof || windowSet && q[0].at <= watermark-window) {
			out = append(out, q[0])
			lastOut, released = q[0].at, true
			q = q[1:]
		}
	}
	place := func(k int, stamp int64) {
		at, written := stamp-max(durs[k], 0), stamp
		if durs[k] < 0 {
			at = stamp
		}
		watermark = max(watermark, written)
		if !windowSet {
			maxDur = max(maxDur, durs[k])
			if prefix++; prefix >= prefixRows {
				window, windowSet = maxDur+int64(time.Second), true
			}
		}
		if released && at < lastOut {
			at = lastOut
			late++
		}
		i := len(q)
		for i > 0 && q[i-1].at > at {
			i--
		}
		if i < len(q) {
			reordered++
		}
		q = slices.Insert(q, i, queued{at: at, line: lines[k], key: keys[k], status: statuses[k]})
	}
	var group []int
	flush := func() {
		for i, k := range group {
			place(k, stamps[k]+int64(i)*unit/int64(len(group)))
		}
		group = group[:0]
	}
	for k := range stamps {
		release(false)
		if spread {
			if len(group) > 0 && stamps[k] != stamps[group[0]] {
				flush()
			}
			group = append(group, k)
			continue
		}
		place(k, stamps[k])
	}
	flush()
	if !windowSet {
		window, windowSet = max(maxDur, 0)+int64(time.Second), true
	}
	release(true)
	return out, reordered, late
}

// The reader's reorder window gives the rows in the order of one sorted queue
// (sortedQueueOrder), with the same arrivals, lines, keys and statuses and the same counts of
// rows reordered and late, on 400 random logs of nginx $msec stamps written at completion
// ($request_time, sometimes "-"): stamps that stand still, step on, and jump back further
// than the window; a default window and named ones from 1ms to 10s; --spread uniform; a few
// logs longer than the default window's prefix; keys of 7 to 15 bytes and, one in 8, of 23
// to 28 (kept apart from the row). Read by Next and by NextRow alike.
func TestQueueOrdersAsOneSortedQueue(t *testing.T) {
	const format = "nginx:$remote_addr $msec $request_time $status"
	rng := rand.New(rand.NewPCG(21, 3))
	windows := []time.Duration{0, time.Millisecond, 300 * time.Millisecond, 2 * time.Second, 10 * time.Second}
	for c := range 400 {
		rows := 1 + rng.IntN(300)
		if c%100 == 7 {
			rows = prefixRows + 2000 + rng.IntN(3000)
		}
		window := windows[rng.IntN(len(windows))]
		spread := rng.IntN(5) == 0
		var log strings.Builder
		stamps, durs := make([]int64, rows), make([]int64, rows)
		lines, keys, statuses := make([]int, rows), make([]string, rows), make([]int, rows)
		ms := int64(1_700_000_000_000)
		line := 0
		for k := range rows {
			switch r := rng.IntN(20); {
			case r < 6: // the same millisecond
			case r < 18:
				ms += 1 + rng.Int64N(80)
			default: // a worker's row late by up to 3s
				ms -= rng.Int64N(3000)
			}
			if rng.IntN(40) == 0 { // a blank line: lines are not rows
				log.WriteString("\n")
				line++
			}
			line++
			keys[k] = fmt.Sprintf("10.0.%d.%d", rng.IntN(3), rng.IntN(256))
			if rng.IntN(8) == 0 { // longer than a row's 16 bytes of key
				keys[k] = fmt.Sprintf("2001:db8:85a3::8a2e:%x:%x", rng.IntN(3), rng.IntN(1<<16))
			}
			statuses[k] = 200 + 229*rng.IntN(2)
			stamps[k], lines[k] = ms*int64(time.Millisecond), line
			dur := "-"
			durs[k] = -1
			if rng.IntN(20) != 0 {
				d := rng.Int64N(2500)
				durs[k] = d * int64(time.Millisecond)
				dur = fmt.Sprintf("%d.%03d", d/1000, d%1000)
			}
			fmt.Fprintf(&log, "%s %d.%03d %s %d\n", keys[k], ms/1000, ms%1000, dur, statuses[k])
		}
		want, reordered, late := sortedQueueOrder(stamps, durs, lines, keys, statuses, int64(window), spread, int64(time.Millisecond))
		opt := Options{Format: format, Reorder: window}
		if spread {
			opt.Spread = "uniform"
		}
		name := fmt.Sprintf("case %d: %d rows, window %v, spread %v", c, rows, window, spread)

		in, err := Open(strings.NewReader(log.String()), opt)
		require.NoError(t, err, name)
		var got []queued
		var base int64
		for {
			rec, err := in.Log().Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err, name)
			if len(got) == 0 {
				base = want[0].at
			}
			got = append(got, queued{at: base + int64(rec.At), line: rec.Line, key: string(rec.Key), status: rec.Status})
		}
		require.Equal(t, want, got, name)
		require.Equal(t, int64(reordered), in.Log().reordered, name+": rows reordered")
		require.Equal(t, int64(late), in.Log().late, name+": rows late")

		in, err = Open(strings.NewReader(log.String()), opt)
		require.NoError(t, err, name)
		for k := 0; ; k++ {
			at, permits, key, _, err := in.Log().NextRow()
			if err == io.EOF {
				require.Equal(t, len(want), k, name)
				break
			}
			require.NoError(t, err, name)
			require.Equal(t, want[k].at-want[0].at, int64(at), name)
			require.Equal(t, 1, permits, name)
			require.Equal(t, want[k].key, string(key), name)
			require.Equal(t, want[k].line, in.Log().RowLine(), name)
		}
	}
}
