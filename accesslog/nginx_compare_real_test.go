//go:build unix

package accesslog

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
	"github.com/stretchr/testify/require"
)

// realNginxSpec is realNginxConf's limit_req (zone perclient, rate=10r/s; burst=2 nodelay)
// as ratelab's nginx kind, one per X-Client.
const realNginxSpec = "nginx:rate=10r/s,burst=2,delay=nodelay"

// boundaryMargin is how far from a decision's boundary a request must be for the model to be
// held to production's decision: the arrival read from the log ($msec − $request_time, whole
// ms of the wall clock) and nginx's own clock (whole ms of the monotonic clock, read once per
// event loop turn) differ by a ms or two; 20ms is ten times that.
const boundaryMargin = 20 * time.Millisecond

// nginxBursts is the schedule sent to the real nginx: a bursts (5 at once, then 2, 3 and 4
// later), b steadily over the rate (one per 80ms for 12.5/s, so one in about 5 is refused
// once its burst is spent), c in bursts of 3 and 2.
var nginxBursts = []sendGroup{
	{0, []string{"a", "a", "a", "a", "a", "b", "c", "c", "c"}},
	{80 * time.Millisecond, []string{"b"}},
	{150 * time.Millisecond, []string{"a", "a"}},
	{160 * time.Millisecond, []string{"b"}},
	{240 * time.Millisecond, []string{"b"}},
	{300 * time.Millisecond, []string{"c", "c", "c"}},
	{320 * time.Millisecond, []string{"b"}},
	{400 * time.Millisecond, []string{"b"}},
	{420 * time.Millisecond, []string{"a", "a", "a"}},
	{480 * time.Millisecond, []string{"b"}},
	{560 * time.Millisecond, []string{"b"}},
	{610 * time.Millisecond, []string{"c", "c"}},
	{640 * time.Millisecond, []string{"b"}},
	{720 * time.Millisecond, []string{"b"}},
	{800 * time.Millisecond, []string{"b"}},
	{880 * time.Millisecond, []string{"b"}},
	{960 * time.Millisecond, []string{"b"}},
	{1000 * time.Millisecond, []string{"a", "a", "a", "a"}},
}

// Production's decisions checked: a real nginx's limit_req (10r/s, burst=2 nodelay, per
// X-Client) decides 35 requests of 3 clients sent in bursts and logs each with
// $limit_req_status; ratelab's nginx kind, one limiter per key, decides the same arrivals,
// read back from that log. Every decision further than boundaryMargin from flipping (the
// request moved earlier or later with the history before it kept) is the one nginx logged;
// the ones nearer are counted and shown, decision by decision.
func TestRealNginxDecisionsMatchTheNginxKind(t *testing.T) {
	srv, base, logPath := startRealNginx(t)
	sent := sendSchedule(t, base+"/api", nginxBursts)
	waitLines(t, logPath, len(sent), func(string) bool { return true })
	srv.stop(syscall.SIGKILL)
	log, err := os.ReadFile(logPath)
	require.NoError(t, err)
	in, err := Open(strings.NewReader(string(log)), Options{Format: "nginx:" + realNginxFormat, Key: "http_x_client"})
	require.NoError(t, err)

	clock := virtualclock.New()
	model := map[string]limiters.Limiter{}
	history := map[string][]time.Duration{} // each key's arrivals before the current one
	type row struct {
		rec      Record
		admitted bool
		margin   time.Duration // how far the request may move before the model decides otherwise
	}
	var rows []row
	cmp, err := Compare(in.Log(), func(rec *Record) bool {
		key := string(rec.Key)
		if model[key] == nil {
			l, err := limiters.Parse(realNginxSpec, clock)
			require.NoError(t, err)
			model[key] = l
		}
		d := model[key].AcquireAt(rec.At, rec.Permits)
		// Margin: the nearest shift, in 1ms steps up to 100ms either way, at which a fresh
		// model fed the key's earlier arrivals decides otherwise.
		margin := 101 * time.Millisecond
		for shift := time.Millisecond; shift <= 100*time.Millisecond && margin > 100*time.Millisecond; shift += time.Millisecond {
			for _, at := range []time.Duration{max(rec.At-shift, 0), rec.At + shift} {
				fresh, err := limiters.Parse(realNginxSpec, clock)
				require.NoError(t, err)
				for _, h := range history[key] {
					fresh.AcquireAt(h, 1)
				}
				if fresh.AcquireAt(at, rec.Permits) != d {
					margin = shift
				}
			}
		}
		history[key] = append(history[key], rec.At)
		r := *rec
		r.Key = []byte(key)
		rows = append(rows, row{rec: r, admitted: d == limiters.Admitted, margin: margin})
		return d == limiters.Admitted
	})
	require.NoError(t, err)
	require.Len(t, rows, len(sent), "every request sent is in the log")

	var table strings.Builder
	fmt.Fprintf(&table, "%4s %8s %3s %6s %-9s %-9s %s\n", "line", "arrival", "key", "status", "nginx", "model", "margin")
	near, farAgreed, far := 0, 0, 0
	var farWrong []string
	seen := map[Verdict]int{}
	for _, r := range rows {
		m := "admitted"
		if !r.admitted {
			m = "refused"
		}
		margin := "> 100ms"
		if r.margin <= 100*time.Millisecond {
			margin = r.margin.String()
		}
		if r.margin <= boundaryMargin {
			near++
			margin += " (near)"
		} else {
			far++
			seen[r.rec.Logged]++
			if (r.rec.Logged == Admitted) == r.admitted {
				farAgreed++
			} else {
				farWrong = append(farWrong, fmt.Sprintf("line %d", r.rec.Line))
			}
		}
		fmt.Fprintf(&table, "%4d %8s %3s %6d %-9s %-9s %s\n", r.rec.Line, r.rec.At.Round(time.Millisecond), r.rec.Key, r.rec.Status, r.rec.Logged, m, margin)
		// nginx refuses with 503 exactly when it logs REJECTED.
		require.Equal(t, r.rec.Logged == Refused, r.rec.Status == 503, "line %d: status %d, logged %s", r.rec.Line, r.rec.Status, r.rec.Logged)
	}
	t.Logf("decision by decision (margin: how far the arrival may move before the model decides otherwise):\n%s", table.String())
	t.Logf("%s; %d of %d decisions further than %v from their boundary agree, %d are nearer", cmp, farAgreed, far, boundaryMargin, near)
	require.Zero(t, cmp.Unlogged, "nginx logs $limit_req_status for every request of /api")
	require.Empty(t, farWrong, "decisions far from any boundary on which the model and nginx disagree")
	require.Positive(t, seen[Admitted], "far decisions include admissions")
	require.Positive(t, seen[Refused], "far decisions include refusals")
	for _, d := range cmp.Disagreements {
		found := false
		for _, r := range rows {
			if r.rec.Line == d.Line {
				found = r.margin <= boundaryMargin
			}
		}
		require.True(t, found, "line %d disagrees and is not near a boundary", d.Line)
	}
}
