package tui

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
)

func TestSentence(t *testing.T) {
	clock := virtualclock.New()
	bucket, err := limiters.Parse("token-bucket:capacity=3,rate=100/1s", clock)
	if err != nil {
		t.Fatal(err)
	}
	bulkhead, err := limiters.Parse("concurrency:max=2", clock)
	if err != nil {
		t.Fatal(err)
	}
	// The state the example in the issue describes: 100/s, capacity 3, the schedule 20ms ahead.
	st := limiters.State{Kind: limiters.KindTokenBucket, At: 20 * time.Millisecond, Arrival: 40 * time.Millisecond,
		Interval: 10 * time.Millisecond, Tolerance: 10 * time.Millisecond, MaxPermits: 1}
	reason := st.Explain(1, limiters.Rejected)
	one := []limiters.Limiter{bucket}
	two := []limiters.Limiter{bucket, bulkhead}
	ms := time.Millisecond
	tests := []struct {
		name   string
		stages []limiters.Limiter
		rec    engine.Record
		want   string
	}{
		{"rejection, with the limiter's own reason", one,
			engine.Record{At: 20 * ms, Request: 4, Attempt: 1, Permits: 1, Outcome: engine.OutcomeRejected, Reason: reason, State: &st},
			"t=20ms req #4 (1 permit) rejected by token-bucket: " + reason},
		{"a retry names its attempt; permits are plural", one,
			engine.Record{At: 21 * ms, Request: 4, Attempt: 2, Permits: 2, Outcome: engine.OutcomeAdmitted, Reason: "fits", State: &st},
			"t=21ms req #4 attempt 2 (2 permits) admitted by token-bucket: fits"},
		{"a stack names the refusing stage", two,
			engine.Record{At: 5 * ms, Request: 9, Attempt: 1, Permits: 1, Outcome: engine.OutcomeRejected, Stage: 1, Reason: "2 of 2 in flight"},
			"t=5ms req #9 (1 permit) rejected by stage 2 (concurrency): 2 of 2 in flight"},
		{"a stack's admission passed every stage", two,
			engine.Record{At: 5 * ms, Request: 9, Attempt: 1, Permits: 1, Outcome: engine.OutcomeAdmitted, Reason: "bucket full", State: &st},
			"t=5ms req #9 (1 permit) admitted by all 2 stages; token-bucket: bucket full"},
		{"never", one,
			engine.Record{At: 0, Request: 1, Attempt: 1, Permits: 5, Outcome: engine.OutcomeNever, Reason: "asks for 5 permits, more than the 3"},
			"t=0s req #1 (5 permits) refused for good by token-bucket: asks for 5 permits, more than the 3"},
		{"queued", one, engine.Record{At: ms, Request: 2, Attempt: 1, Permits: 1, Outcome: engine.OutcomeQueued},
			"t=1ms req #2 (1 permit) waits in the client queue"},
		{"timed out", one, engine.Record{At: 501 * ms, Request: 2, Attempt: 1, Permits: 1, Outcome: engine.OutcomeTimedOut},
			"t=501ms req #2 (1 permit) timed out in the client queue"},
		{"gave up after retries", one, engine.Record{At: 9 * ms, Request: 3, Attempt: 6, Permits: 1, Outcome: engine.OutcomeGaveUp},
			"t=9ms req #3 attempt 6 (1 permit) gave up after 6 attempts"},
		{"the downstream's pool", one,
			engine.Record{At: 10 * time.Second, Request: 7, Attempt: 1, Permits: 1, Outcome: engine.OutcomeFailed, Reason: "downstream pool of 20 is full"},
			"t=10s req #7 (1 permit) failed at the downstream: downstream pool of 20 is full"},
	}
	for _, tt := range tests {
		if got := sentence(tt.stages, tt.rec); got != tt.want {
			t.Errorf("%s:\n got  %s\n want %s", tt.name, got, tt.want)
		}
	}
}

func TestShort(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1010526300 * time.Nanosecond:          "1.011s",
		57500 * time.Microsecond:              "57.5ms",
		250 * time.Microsecond:                "250µs",
		85*time.Second + 500*time.Millisecond: "1m25.5s",
		0:                                     "0s",
	} {
		if got := short(d); got != want {
			t.Errorf("short(%v) = %s, want %s", d, got, want)
		}
	}
}

// A shaped request reads as admitted after a wait when decided, and as going on when its wait
// ends.
func TestSentenceOfAShapedRequest(t *testing.T) {
	bucket, err := limiters.Parse("token-bucket:capacity=3,rate=100/1s", virtualclock.New())
	if err != nil {
		t.Fatal(err)
	}
	one := []limiters.Limiter{bucket}
	st := bucket.Snapshot(0)
	delayed := sentence(one, engine.Record{At: 0, Request: 4, Attempt: 1, Permits: 1, Outcome: engine.OutcomeDelayed,
		State: &st, Reason: "next permit due at 30ms; waits 10ms"})
	if want := "t=0s req #4 (1 permit) admitted after a wait by token-bucket: next permit due at 30ms; waits 10ms"; delayed != want {
		t.Errorf("got %q, want %q", delayed, want)
	}
	ended := sentence(one, engine.Record{At: 10 * time.Millisecond, Request: 4, Attempt: 1, Permits: 1,
		Outcome: engine.OutcomeAdmitted, Reason: engine.ReasonWaitEnded})
	if want := "t=10ms req #4 (1 permit) goes on: its wait ended"; ended != want {
		t.Errorf("got %q, want %q", ended, want)
	}
}
