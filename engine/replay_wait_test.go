package engine

// Replay's waiting callers: a stack with a stage that makes callers wait decides by
// reservation and writes each admitted caller's wait.

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/ratelab/ratelab/limiters"
)

func replayRecords(t *testing.T, trace string, specs ...string) (ReplaySummary, [][]string) {
	t.Helper()
	var stacks [][]limiters.Spec
	for _, text := range specs {
		st, err := ParseStack(text)
		require.NoError(t, err, text)
		stacks = append(stacks, st)
	}
	var out bytes.Buffer
	sum, err := Replay(strings.NewReader(trace), &out, stacks)
	require.NoError(t, err)
	recs, err := csv.NewReader(&out).ReadAll()
	require.NoError(t, err)
	return sum, recs
}

// The NGINX example: 10r/s, burst=5, delay=2, ten requests at once — three pass now,
// three wait 100, 200 and 300ms, four are refused (and have no wait).
func TestReplayWritesNginxDelays(t *testing.T) {
	sum, recs := replayRecords(t, "t_ns\n"+strings.Repeat("0\n", 10),
		"nginx:rate=10r/s,burst=5,delay=2", "token-bucket:capacity=3,rate=10/1s")
	assert.Equal(t, []string{"t_ns", "permits", "nginx:rate=10r/s,burst=5,delay=2", "nginx:rate=10r/s,burst=5,delay=2 wait_ns",
		"token-bucket:capacity=3,rate=10/1s"}, recs[0], "only the waiting stack has a wait column")
	var decided, waits []string
	for _, r := range recs[1:] {
		decided = append(decided, r[2])
		waits = append(waits, r[3])
	}
	assert.Equal(t, strings.Split("1 1 1 1 1 1 0 0 0 0", " "), decided)
	assert.Equal(t, []string{"0", "0", "0", "100000000", "200000000", "300000000", "", "", "", ""}, waits)
	assert.Equal(t, []bool{true, false}, sum.Waits)
	assert.Equal(t, []int64{6, 3}, sum.Admitted)
	assert.Equal(t, []int64{3, 0}, sum.Delayed)
	assert.Equal(t, []time.Duration{300 * time.Millisecond, 0}, sum.MaxWait)
}

// x/time/rate with mode=wait is the real library's ReserveN: replay's wait column equals
// DelayFrom of a direct ReserveN at each row's time, on a random trace, to the nanosecond.
func TestReplayWaitsAreTheLibrarysReservations(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	var trace strings.Builder
	trace.WriteString("t_ns,permits\n")
	epoch := time.Unix(0, 0)
	lib := rate.NewLimiter(rate.Limit(100), 3)
	var want []string
	at := time.Duration(0)
	for range 5000 {
		at += time.Duration(r.Int64N(int64(15 * time.Millisecond)))
		n := 1 + r.IntN(3)
		fmt.Fprintf(&trace, "%d,%d\n", at, n)
		now := epoch.Add(at)
		want = append(want, strconv.FormatInt(int64(lib.ReserveN(now, n).DelayFrom(now)), 10))
	}
	_, recs := replayRecords(t, trace.String(), "x-time-rate:rate=100/1s,burst=3,mode=wait")
	require.Len(t, recs, len(want)+1)
	delayed := 0
	for i, r := range recs[1:] {
		require.Equal(t, "1", r[2], "row %d: mode=wait admits everything", i+1)
		require.Equal(t, want[i], r[3], "row %d", i+1)
		if r[3] != "0" {
			delayed++
		}
	}
	assert.Greater(t, delayed, 1000, "the trace runs above the rate, so many callers wait")
}

// A concurrency stage holds a waiting caller's permit through its wait, and no longer: Guava
// at 100/s (mode=wait) before a bulkhead of 2, rows at 0, 0, 0, 0 and 15ms. The first passes
// at once and completes; the second (wait 10ms) and third (20ms) hold both permits; the fourth
// finds the bulkhead full, and its Guava reservation (30ms) is cancelled; at 15ms the second
// has passed and let go, so the fifth is admitted, waiting 30 − 15 = 15ms.
func TestReplayHoldsBulkheadThroughWait(t *testing.T) {
	stack := "guava-bursty:rate=100/1s,mode=wait+concurrency:max=2"
	_, recs := replayRecords(t, "t_ns\n0\n0\n0\n0\n15000000\n", stack)
	var got []string
	for _, r := range recs[1:] {
		got = append(got, r[2]+"/"+r[3])
	}
	assert.Equal(t, []string{"1/0", "1/10000000", "1/20000000", "0/", "1/15000000"}, got)
}
