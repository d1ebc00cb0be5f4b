package golden

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

var keyedNginxZone = &Guarantee{
	ID:         "keyed-nginx-zone",
	Algorithms: []limiters.Kind{peers.KindNginx},
	Claim: "keys(evict=nginx) expires nodes as NGINX's limit_req_zone does: a new key at a full zone takes the least " +
		"recently used node however recently it was seen (and that key comes back with a whole burst); a new key, full " +
		"or not, removes at most 2 least recently used nodes idle 60s whose excess has decayed to 0; a node still " +
		"holding excess is kept and its excess still counts; a hit removes nothing, and no new key is refused",
	Scenario: "keys(max=4,evict=nginx):nginx:rate=1r/m,burst=5,delay=nodelay (R = 16 milli-requests per second), direct " +
		"AcquireKeyAt calls: a sends 6 at 0s, b, c, d 1 each at 0s, x 1 at 1s, a 6 at 2s, e 1 and f 1 at 100s, a 6 at " +
		"101s; and keys(max=10,evict=nginx):nginx:rate=1r/m: a at 0s and again at 60s, alone or after b's first at 60s",
	Bound: "admitted 6/6, 1/1, 1/1, 1/1, 1/1, 6/6, 1/1, 1/1, 1/6; zone after each step as listed (x takes a's node at 1s, a takes b's " +
		"at 2s, e removes c and d at 100s, not x, f removes x and stops at a: 5000 − ⌊16·98000/1000⌋ = 3432 > 0); at " +
		"101s a is accounted at 4416, so 1 of 6 passes; 5 removed, 0 full; 1r/m: a refused at 60s alone (its own lookup " +
		"expires nothing: 0 − 960 + 1000 = 40 > 0), admitted after b (whose arrival expired a's node: 0 − 960 ≤ 0)",
	Checker: "each step's admitted count, the keys the table holds (Peek) and its removal count, against the bound",
	run: func(r *run) error {
		const spec = "nginx:rate=1r/m,burst=5,delay=nodelay"
		table, err := r.keyedTable(spec, limiters.KeyedConfig{MaxKeys: 4, Evict: limiters.EvictNginx})
		if err != nil {
			return err
		}
		names := []string{"a", "b", "c", "d", "e", "f", "x"}
		holds := func() []string {
			var held []string
			for _, name := range names {
				if _, ok := table.Peek(name); ok {
					held = append(held, name)
				}
			}
			return held
		}
		r.linef("keys(max=4,evict=nginx):%s", spec)
		r.linef("%8s %-4s %9s  %-12s %s", "at", "key", "admitted", "zone", "removed")
		for _, s := range []struct {
			at      time.Duration
			key     string
			n, want int
			zone    string
			removed uint64
			why     string
		}{
			{0, "a", 6, 6, "a", 0, "a new node's first is free: burst + 1"},
			{0, "b", 1, 1, "a b", 0, ""},
			{0, "c", 1, 1, "a b c", 0, ""},
			{0, "d", 1, 1, "a b c d", 0, "full"},
			{sec, "x", 1, 1, "b c d x", 1, "expire(1) stops at a (1s < 60s); expire(0) takes it anyway"},
			{2 * sec, "a", 6, 6, "a c d x", 2, "a is new again: 6, where its node would have refused all 6 (5968 > 5000)"},
			{100 * sec, "e", 1, 1, "a e x", 4, "expire(1) removes c and d (idle 100s, excess 0) and stops at 2, though x qualifies: room, nothing forced"},
			{100 * sec, "f", 1, 1, "a e f", 5, "room (3 of 4), yet expire(1) removes x (99s, 0); a stops it: 5000 − 1568 = 3432 > 0"},
			{101 * sec, "a", 6, 1, "a e f", 5, "a's node: 5000 − 1584 + 1000 = 4416, then 5416 > 5000"},
		} {
			admitted := 0
			for range s.n {
				if table.AcquireKeyAt(s.at, s.key, 1) == limiters.Admitted {
					admitted++
				}
			}
			zone := strings.Join(holds(), " ")
			removed := table.Stats().Evicted
			if admitted != s.want || zone != s.zone || removed != s.removed {
				r.failf("%s at %s: %d of %d admitted, zone [%s], %d removed: the bound is exactly %d, [%s], %d",
					s.key, limiters.FormatDuration(s.at), admitted, s.n, zone, removed, s.want, s.zone, s.removed)
			}
			line := fmt.Sprintf("%8s %-4s %9s  %-12s %d  %s", limiters.FormatDuration(s.at), s.key, fmt.Sprintf("%d/%d", admitted, s.n),
				"["+zone+"]", removed, s.why)
			r.linef("%s", strings.TrimRight(line, " "))
		}
		if st := table.Stats(); st.Full != 0 || st.Created != 8 || st.Keys != 3 {
			r.failf("stats %+v: the bound is exactly 8 created, 3 held, 0 full (a new key always gets a node)", st)
		}

		r.linef("")
		r.linef("keys(max=10,evict=nginx):nginx:rate=1r/m (one per 62.5s, burst 0)")
		for _, c := range []struct {
			before []string
			want   limiters.Decision
		}{{nil, limiters.Rejected}, {[]string{"b"}, limiters.Admitted}} {
			table, err := r.keyedTable("nginx:rate=1r/m", limiters.KeyedConfig{MaxKeys: 10, Evict: limiters.EvictNginx})
			if err != nil {
				return err
			}
			table.AcquireKeyAt(0, "a", 1)
			for _, key := range c.before {
				table.AcquireKeyAt(time.Minute, key, 1)
			}
			got := table.AcquireKeyAt(time.Minute, "a", 1)
			label := "a at 60s, alone"
			if len(c.before) > 0 {
				label = "a at 60s, after " + strings.Join(c.before, ", ") + "'s first at 60s"
			}
			if got != c.want {
				r.failf("1r/m: %s: %s: the bound is exactly %s", label, got, c.want)
			}
			r.linef("  %-36s %s", label, got)
		}
		return nil
	},
}
