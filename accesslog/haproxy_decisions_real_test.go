//go:build unix

package accesslog

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
	"github.com/stretchr/testify/require"
)

// haproxyDecisionsConf is HAProxy's usual per-client limit, 4 requests per 1s per X-Client,
// on one thread (one event loop, one clock). Besides the key, each request's line captures
// HAProxy's own view of it, taken by the rules between track-sc0 (which counts it) and the
// deny (which reads the same rate): date(0,us), the event loop's wall clock when the rules ran
// (read once per turn of the loop), and sc_http_req_rate(0) itself.
const haproxyDecisionsConf = `global
    log stdout format raw local0
    nbthread 1
    maxconn 256
defaults
    mode http
    log global
    option httplog
    option dontlognull
    timeout connect 2s
    timeout client 5s
    timeout server 5s
frontend lab
    bind 127.0.0.1:{{port}}
    capture request header X-Client len 32
    http-request track-sc0 req.hdr(X-Client) table per_client
    http-request capture date(0,us) len 20
    http-request capture sc_http_req_rate(0) len 12
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 4 }
    default_backend app
backend per_client
    stick-table type string len 32 size 1k expire 60s store http_req_rate(1s)
backend app
    server go 127.0.0.1:{{backend}}
`

// haproxyDecisionsSpec is haproxyDecisionsConf's limit as the haproxy kind.
const haproxyDecisionsSpec = "haproxy:period=1s,limit=4"

// haproxyClients is when each client sends, in ms after the start: bursts (several at one
// instant, sent one after the other on fresh connections, a ms or so apart), steady streams
// over and under the limit, bursts on both sides of a client's period boundary (c's first
// request starts its periods, ~200ms, so ~1200ms and ~2200ms are boundaries), and a client
// quiet for more than two periods (d), whose next request starts a new period.
var haproxyClients = map[string][]int{
	"a": burst(8, 0, 3, 600, 5, 1100, 4, 1500, 6, 2300, 3, 2950),
	"b": every(50, 3000, 120),
	"c": burst(5, 200, 5, 1190, 5, 1212, 5, 2210),
	"d": burst(6, 100, 4, 900, 6, 3400),
	"e": every(0, 3000, 300),
	"f": burst(10, 500, 10, 1700),
}

// burst is count, at, count, at, …: count requests at each instant.
func burst(pairs ...int) []int {
	var out []int
	for i := 0; i+1 < len(pairs); i += 2 {
		for range pairs[i] {
			out = append(out, pairs[i+1])
		}
	}
	return out
}

// every is one request each step ms from from to to.
func every(from, to, step int) []int {
	var out []int
	for at := from; at <= to; at += step {
		out = append(out, at)
	}
	return out
}

// sendClients runs one goroutine per client, each sending its requests one after the other,
// each no earlier than its offset from a common start, and returns how many it sent and the
// statuses per client. A request is a fresh connection (no keep-alive), so each is accepted
// and decided apart.
func sendClients(t *testing.T, url string, clients map[string][]int) map[string][]int {
	t.Helper()
	httpc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	var mu sync.Mutex
	statuses := map[string][]int{}
	var errs []error
	var wg sync.WaitGroup
	start := time.Now().Add(50 * time.Millisecond)
	for key, offsets := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, ms := range offsets {
				time.Sleep(time.Until(start.Add(time.Duration(ms) * time.Millisecond)))
				req, err := http.NewRequest("GET", url, nil)
				if err == nil {
					req.Header.Set("X-Client", key)
					var resp *http.Response
					if resp, err = httpc.Do(req); err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						mu.Lock()
						statuses[key] = append(statuses[key], resp.StatusCode)
						mu.Unlock()
					}
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("client %s: %w", key, err))
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	require.Empty(t, errs)
	return statuses
}

// haproxyLine is what one line of the log says of a request: the client, the wall clock
// HAProxy's rules ran at (µs), the rate they read, and the record (arrival %tr, status).
type haproxyLine struct {
	key  string
	us   int64
	rate int
	rec  Record
}

// readHAProxyLines reads the log in arrival order, the captures X-Client|date(0,us)|rate.
func readHAProxyLines(t *testing.T, log []byte) (lines []haproxyLine, start time.Time) {
	t.Helper()
	in, err := Open(strings.NewReader(string(log)), Options{Format: "haproxy", Key: "hr", RefusedStatus: "429"})
	require.NoError(t, err)
	for {
		rec, err := in.Log().Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		parts := strings.Split(string(rec.Key), "|")
		require.Len(t, parts, 3, "line %d: captures %q: X-Client|date(0,us)|sc_http_req_rate(0)", rec.Line, rec.Key)
		us, err := strconv.ParseInt(parts[1], 10, 64)
		require.NoError(t, err, "line %d: date(0,us) in %q", rec.Line, rec.Key)
		rate, err := strconv.Atoi(parts[2])
		require.NoError(t, err, "line %d: sc_http_req_rate(0) in %q", rec.Line, rec.Key)
		r := *rec
		r.Key = []byte(parts[0])
		lines = append(lines, haproxyLine{key: parts[0], us: us, rate: rate, rec: r})
	}
	start, ok := in.Log().Start()
	require.True(t, ok)
	// A client's requests stamped the same ms are in the order their lines were written,
	// which is not always the order HAProxy decided them in (a proxied request is logged when
	// its stream closes, after the client has its answer and may have sent the next): within
	// such a tie they are put in the order HAProxy counted them, by the rate each read, which
	// rises by one with each request at one ms.
	byKey := map[string][]int{}
	for i, l := range lines {
		byKey[l.key] = append(byKey[l.key], i)
	}
	for _, idx := range byKey {
		for a := 0; a < len(idx); {
			b := a + 1
			for b < len(idx) && lines[idx[b]].rec.At == lines[idx[a]].rec.At {
				b++
			}
			tie := make([]haproxyLine, 0, b-a)
			for _, i := range idx[a:b] {
				tie = append(tie, lines[i])
			}
			slices.SortStableFunc(tie, func(x, y haproxyLine) int { return x.rate - y.rate })
			for k, i := range idx[a:b] {
				lines[i] = tie[k]
			}
			a = b
		}
	}
	return lines, start
}

// haproxyRates runs spec, one limiter per client, over the lines at the times at(i), and
// returns the rate each request read (the level before it, plus it) and whether it passed.
func haproxyRates(t *testing.T, spec string, lines []haproxyLine, at func(i int) time.Duration) (rates []int, admitted []bool) {
	t.Helper()
	clock := virtualclock.New()
	models := map[string]limiters.Limiter{}
	for i, l := range lines {
		m := models[l.key]
		if m == nil {
			var err error
			m, err = limiters.Parse(spec, clock)
			require.NoError(t, err)
			models[l.key] = m
		}
		rates = append(rates, int(m.Snapshot(at(i)).Level)+l.rec.Permits)
		admitted = append(admitted, m.AcquireAt(at(i), l.rec.Permits) == limiters.Admitted)
	}
	return rates, admitted
}

// Production's decisions checked: a real HAProxy (Debian's 2.6) with a stick table on
// http_req_rate(1s) denying (429) above 4 per X-Client decides 121 requests of 6 clients,
// sent concurrently in bursts across the clients' period boundaries and in steady streams,
// and logs each (option httplog), with the wall clock its rules ran at and the rate they
// read. ratelab reads the log back (format haproxy, 429 refused) and the haproxy kind, one
// limiter per client, decides the same requests.
//
// HAProxy's frequency counters read its internal clock (global_now_ms), which is the wall
// clock plus an offset (now_offset, src/clock.c): 0 at start, set when a turn of the event
// loop finds the wall clock outside what the poll's timeout allows (for instance a poll that
// slept its whole timeout on the monotonic clock while the wall clock, slewed by NTP, advanced
// a little less). No sample fetch shows it, so the test finds it: the offsets, in µs within
// ±2ms, at which the model reads exactly the rate HAProxy read for every one of the 121
// requests (one parameter against 121 integers). In the first runs 0 was not among them: the
// wall clock's ms put a request's rate 1 off (e at ms 80678.501, rate 3 read by HAProxy, 4 by
// the model at that ms, 3 at the next); an offset of a fraction of a ms explained every rate
// of the run at once. Then:
//
//   - at HAProxy's clock (the captured wall clock plus that offset, whole ms) the model reads
//     every rate HAProxy read and agrees with every logged decision: 100%;
//   - at the wall clock alone, and at the arrival the log's %tr says (what a user's log has,
//     rebased, fed shifted by the first stamp's ms parity, as HAProxy's periods begin on even
//     ms), it agrees except where a ms matters: each differing decision is of a client one of
//     whose requests so far had a %tr that is not the ms HAProxy's clock read — shown line by
//     line;
//   - the two-counter kind (the same estimate with ratelab's conventions: refused requests
//     count nothing, no rounding, periods anchored for ever) disagrees: a client denied in a
//     burst stays denied by HAProxy, whose count holds its denied requests.
func TestRealHAProxyDecisionsMatchTheHAProxyKind(t *testing.T) {
	bin := realBinary(t, "haproxy", "/usr/sbin/haproxy", "haproxy")
	srv, addr, logPath := startHAProxy(t, bin, haproxyDecisionsConf, "UTC")

	statuses := sendClients(t, "http://"+addr+"/api", haproxyClients)
	total := 0
	for _, offsets := range haproxyClients {
		total += len(offsets)
	}
	require.GreaterOrEqual(t, total, 100)
	waitLines(t, logPath, total, func(string) bool { return true })
	srv.stop(syscall.SIGUSR1)
	log, err := os.ReadFile(logPath)
	require.NoError(t, err)
	lines, start := readHAProxyLines(t, log)
	require.Len(t, lines, total, "every request sent is in the log once")

	// The client saw each status the log holds, in the order it sent its requests; HAProxy
	// denied exactly the requests whose rate it read was above 4.
	sent := map[string]int{}
	for _, l := range lines {
		require.Less(t, sent[l.key], len(statuses[l.key]), "line %d: more lines than client %s sent", l.rec.Line, l.key)
		require.Equal(t, statuses[l.key][sent[l.key]], l.rec.Status, "line %d: client %s's request %d", l.rec.Line, l.key, sent[l.key]+1)
		sent[l.key]++
		require.Equal(t, l.rate > 4, l.rec.Logged == Refused, "line %d: denied exactly when the rate read is above 4", l.rec.Line)
	}
	for key, s := range statuses {
		require.Equal(t, len(s), sent[key], "client %s: every request it sent is in the log", key)
	}

	// HAProxy's clock: the wall clock plus the offsets at which every rate is the model's.
	base := (lines[0].us/1000 - 10) &^ 1 // even, so that rebasing keeps each ms's parity
	for _, l := range lines {
		base = min(base, (l.us/1000-10)&^1)
	}
	clockAt := func(ofs int64) func(i int) time.Duration {
		return func(i int) time.Duration { return time.Duration((lines[i].us+ofs)/1000-base) * time.Millisecond }
	}
	var offsets []int64
	for ofs := int64(-2000); ofs <= 2000; ofs++ {
		rates, _ := haproxyRates(t, haproxyDecisionsSpec, lines, clockAt(ofs))
		if slices.EqualFunc(rates, lines, func(r int, l haproxyLine) bool { return r == l.rate }) {
			offsets = append(offsets, ofs)
		}
	}
	require.NotEmpty(t, offsets, "no offset within ±2ms of the wall clock at which the model reads every rate HAProxy read")
	best := offsets[0]
	for _, o := range offsets {
		if abs64(o) < abs64(best) {
			best = o
		}
	}
	ownRates, own := haproxyRates(t, haproxyDecisionsSpec, lines, clockAt(best))
	wallRates, wall := haproxyRates(t, haproxyDecisionsSpec, lines, clockAt(0))
	parity := time.Duration(start.UnixMilli()%2) * time.Millisecond
	trAt := func(i int) time.Duration { return lines[i].rec.At + parity }
	_, fromLog := haproxyRates(t, haproxyDecisionsSpec, lines, trAt)
	_, two := haproxyRates(t, "two-counter:limit=4,window=1s", lines, trAt)

	// The same decisions through accesslog.CompareAll, as replay --compare counts them.
	in, err := Open(strings.NewReader(string(log)), Options{Format: "haproxy", Key: "hr", RefusedStatus: "429"})
	require.NoError(t, err)
	row := map[int]int{} // a line's row in lines
	for i, l := range lines {
		row[l.rec.Line] = i
	}
	lane := func(decided []bool) func(*Record) bool {
		return func(rec *Record) bool { return decided[row[rec.Line]] }
	}
	cmps, err := CompareAll(in.Log(), []func(*Record) bool{lane(own), lane(wall), lane(fromLog), lane(two)})
	require.NoError(t, err)

	var table strings.Builder
	fmt.Fprintf(&table, "%4s %3s %8s %8s %4s %5s %6s %4s %-8s %-8s %-8s %-8s %s\n", "line", "key", "%tr", "clock", "Δtr", "Δwall", "status", "rate", "model", "at wall", "at %tr", "two-cnt", "")
	verdict := func(ok bool) string {
		if ok {
			return "admitted"
		}
		return "refused"
	}
	skewedTr, skewedWall := map[string]bool{}, map[string]bool{}
	var unexplained []string
	for i, l := range lines {
		logged := l.rec.Logged == Admitted
		require.Equal(t, logged, own[i], "line %d (%s): the haproxy kind at HAProxy's clock", l.rec.Line, l.key)
		require.Equal(t, l.rate, ownRates[i], "line %d (%s): the rate the model reads is the rate HAProxy read", l.rec.Line, l.key)
		clockMs := (l.us + best) / 1000
		dTr := start.UnixMilli() + int64(l.rec.At/time.Millisecond) - clockMs // %tr − HAProxy's clock
		dWall := l.us/1000 - clockMs
		skewedTr[l.key] = skewedTr[l.key] || dTr != 0
		skewedWall[l.key] = skewedWall[l.key] || dWall != 0
		note := ""
		if fromLog[i] != logged || wall[i] != logged {
			note = "differs where a ms of this client's clock differs"
			if fromLog[i] != logged && !skewedTr[l.key] || wall[i] != logged && !skewedWall[l.key] {
				note = "UNEXPLAINED"
				unexplained = append(unexplained, fmt.Sprintf("line %d", l.rec.Line))
			}
		}
		if wallRates[i] != l.rate && !skewedWall[l.key] {
			unexplained = append(unexplained, fmt.Sprintf("line %d (rate at the wall clock)", l.rec.Line))
		}
		fmt.Fprintf(&table, "%4d %3s %8s %8d %4d %5d %6d %4d %-8s %-8s %-8s %-8s %s\n", l.rec.Line, l.key, l.rec.At.Round(time.Millisecond), clockMs-base,
			dTr, dWall, l.rec.Status, l.rate, verdict(own[i]), verdict(wall[i]), verdict(fromLog[i]), verdict(two[i]), note)
	}
	t.Logf("request by request (clock: HAProxy's, ms; Δtr and Δwall: %%tr and the wall clock minus it, ms):\n%s", table.String())
	t.Logf("HAProxy's clock is the wall clock plus %dµs: every rate matches at %d of the 4001 offsets tried (−2ms to +2ms), the nearest to 0 taken", best, len(offsets))
	for i, name := range []string{"haproxy kind at HAProxy's clock", "haproxy kind at the wall clock", "haproxy kind at %tr", "two-counter at %tr"} {
		t.Logf("%s: %s", name, cmps[i])
	}
	require.Zero(t, cmps[0].Unlogged)
	require.Equal(t, cmps[0].Compared(), cmps[0].Agreed(), "the haproxy kind at HAProxy's own clock agrees with every decision")
	require.Positive(t, cmps[0].Matrix[0][0], "admissions")
	require.Positive(t, cmps[0].Matrix[1][1], "denials")
	require.Empty(t, unexplained, "differences where the client's clock and HAProxy's agreed on every ms so far")
	require.Less(t, cmps[3].Agreed(), cmps[3].Compared(), "two-counter does not count denied requests, HAProxy does")
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
