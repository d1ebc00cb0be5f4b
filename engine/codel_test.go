package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCoDelSteps drives CoDel's state through a table worked out by hand from RFC 8289's
// dequeue (target 5ms, interval 100ms): each row a request judged at the front at a time,
// having waited sojourn, and whether the queue drops it.
func TestCoDelSteps(t *testing.T) {
	const ms = int64(time.Millisecond)
	rows := []struct {
		at, sojourn int64
		alone       bool
		drop        bool
		why         string
	}{
		{0, 1 * ms, false, false, "below target"},
		{10 * ms, 6 * ms, false, false, "first above target: firstAbove = 110ms"},
		{50 * ms, 20 * ms, false, false, "above, but not yet for an interval"},
		{110 * ms, 30 * ms, false, true, "above for 100ms: enter dropping, count 1, dropNext = 210ms"},
		{110 * ms, 25 * ms, false, false, "the request after the entering drop goes on"},
		{150 * ms, 40 * ms, false, false, "dropping, before dropNext"},
		{210 * ms, 50 * ms, false, true, "dropNext reached: count 2"},
		{210 * ms, 45 * ms, false, false, "dropNext = 210 + 100/√2 = 280.710678ms"},
		{281 * ms, 30 * ms, false, true, "past 280.71ms: count 3"},
		{281 * ms, 3 * ms, false, false, "below target: leave dropping"},
		{300 * ms, 10 * ms, false, false, "above again: firstAbove = 400ms"},
		{400 * ms, 10 * ms, false, true, "re-enter 119ms after the last dropNext: count = 3 − 1 = 2, dropNext = 470.710678ms"},
		{400 * ms, 8 * ms, true, false, "alone: the clock resets (and the entering drop's successor goes on)"},
		{420 * ms, 9 * ms, false, false, "dropping, but okToDrop restarted: firstAbove = 520ms, leave dropping"},
		{520 * ms, 9 * ms, false, true, "above for 100ms: enter; delta = 2 − 2 = 0, count 1, dropNext = 620ms"},
	}
	var c codel
	for k, row := range rows {
		if got := c.next(row.at, row.sojourn, row.alone); got != row.drop {
			t.Fatalf("row %d (%s): drop = %v, want %v (state %+v)", k, row.why, got, row.drop, c)
		}
		switch k {
		case 7:
			if c.dropNext != 280_710_678 {
				t.Fatalf("row %d: dropNext = %d, want 280710678", k, c.dropNext)
			}
		case 11:
			if c.count != 2 || c.dropNext != 470_710_678 {
				t.Fatalf("row %d: count %d dropNext %d, want 2 and 470710678", k, c.count, c.dropNext)
			}
		case 14:
			if c.count != 1 || c.dropNext != 620*ms {
				t.Fatalf("row %d: count %d dropNext %d, want 1 and 620ms", k, c.count, c.dropNext)
			}
		}
	}
	c.idle()
	if c.dropping || c.firstAbove != 0 {
		t.Fatalf("idle kept the dropping state: %+v", c)
	}
}

// TestControlLaw is interval/√count: 100ms, 70.71ms, 57.74ms, 50ms, and 10ms at 100 drops.
func TestControlLaw(t *testing.T) {
	for _, c := range []struct {
		count uint32
		want  int64
	}{{1, 100_000_000}, {2, 70_710_678}, {3, 57_735_026}, {4, 50_000_000}, {100, 10_000_000}} {
		if got := controlLaw(0, c.count); got != c.want {
			t.Errorf("controlLaw(0, %d) = %d, want %d", c.count, got, c.want)
		}
	}
}

// TestQueueOrder pushes and takes requests at given times and checks which one each
// discipline hands out, and the queue timeout adaptive-lifo gives each joiner.
func TestQueueOrder(t *testing.T) {
	const ms = int64(time.Millisecond)
	type op struct {
		at   int64
		push int32 // the slot to push, or -1 to take the next one
		want int32 // take: the slot handed out; push: the timeout given, in ms
	}
	cases := []struct {
		disc QueueDiscipline
		ops  []op
	}{
		{QueueFIFO, []op{{0, 1, 1000}, {1 * ms, 2, 1000}, {2 * ms, 3, 1000}, {3 * ms, -1, 1}, {4 * ms, -1, 2}, {5 * ms, 4, 1000}, {6 * ms, -1, 3}, {7 * ms, -1, 4}}},
		{QueueLIFO, []op{{0, 1, 1000}, {1 * ms, 2, 1000}, {2 * ms, 3, 1000}, {3 * ms, -1, 3}, {4 * ms, 4, 1000}, {5 * ms, -1, 4}, {6 * ms, -1, 2}, {7 * ms, -1, 1}}},
		// Not empty since 0: congested from 101ms (lastEmpty 0 < now − 100ms). Before, oldest
		// first and a 100ms timeout; after, newest first and a 5ms one. Empty at 302ms, then
		// not congested again.
		{QueueAdaptiveLIFO, []op{
			{0, 1, 100}, {50 * ms, 2, 100}, {100 * ms, -1, 1}, {100 * ms, 3, 100},
			{101 * ms, 4, 5}, {150 * ms, 5, 5}, {200 * ms, -1, 5}, {300 * ms, -1, 4},
			{301 * ms, -1, 3}, {302 * ms, -1, 2}, {303 * ms, 6, 100}, {304 * ms, 7, 100}, {305 * ms, -1, 6},
		}},
	}
	for _, c := range cases {
		reqs := make([]request, 8)
		q := newClientQueue()
		q.disc = c.disc
		for k, o := range c.ops {
			if o.push >= 0 {
				if got := q.timeout(o.at, time.Second); got != int64(o.want)*ms {
					t.Fatalf("%s op %d: timeout %v, want %dms", c.disc, k, time.Duration(got), o.want)
				}
				reqs[o.push].state = reqQueued
				q.push(o.at, o.push, 0)
				continue
			}
			got := q.next(reqs, o.at)
			if got != o.want {
				t.Fatalf("%s op %d at %v: next = %d, want %d", c.disc, k, time.Duration(o.at), got, o.want)
			}
			reqs[got].state = reqPending
			q.pop(o.at)
		}
	}
}

// TestQueueSkipsLeavers: a request that timed out in the middle is skipped from either end.
func TestQueueSkipsLeavers(t *testing.T) {
	for _, disc := range []QueueDiscipline{QueueFIFO, QueueLIFO} {
		reqs := make([]request, 4)
		q := newClientQueue()
		q.disc = disc
		for i := int32(1); i <= 3; i++ {
			reqs[i].state = reqQueued
			q.push(0, i, 0)
		}
		reqs[2].state = reqFree // timed out
		q.left(1)
		var order []int32
		for q.len() > 0 {
			i := q.next(reqs, 2)
			order = append(order, i)
			reqs[i].state = reqPending
			q.pop(2)
		}
		want := []int32{1, 3}
		if disc == QueueLIFO {
			want = []int32{3, 1}
		}
		if len(order) != 2 || order[0] != want[0] || order[1] != want[1] {
			t.Errorf("%s: order %v, want %v", disc, order, want)
		}
		if len(q.waiting) != 0 || q.head != 0 {
			t.Errorf("%s: an empty queue kept %d entries from %d", disc, len(q.waiting), q.head)
		}
	}
}

// TestQueueDisciplinesAllocateNothingPerEvent: once their slices have grown, lanes whose
// callers queue under each discipline, and a partitioned lane counting two classes, run
// events without allocating.
func TestQueueDisciplinesAllocateNothingPerEvent(t *testing.T) {
	for _, disc := range append(QueueDisciplines, "partition") {
		t.Run(string(disc), func(t *testing.T) {
			sc := mm(Server{Cores: 2, Timeout: 400 * time.Millisecond, Network: time.Millisecond}, 300,
				Distribution{Kind: DistExponential, Mean: 10 * time.Millisecond}, 1000*time.Second, 3)
			sc.Bins = 100
			sc.Lanes = []LaneSpec{{Stack: mustParse("concurrency:max=4")}}
			sc.Client = Client{Policy: PolicyQueue, QueueSize: 50, Timeout: 200 * time.Millisecond, Discipline: disc}
			if disc == "partition" {
				sc.Client = Client{}
				sc.Lanes = []LaneSpec{{Stack: mustParse("partition(user=0.7,prefetch=0.3):gradient2:initial=4,min=2,max=50")}}
				sc.Sources[0].Class = "user"
				sc.Sources = append(sc.Sources, Source{Kind: SourcePoisson, Rate: 200, Class: "prefetch"})
			}
			require.NoError(t, sc.Validate())
			l, err := NewLane(sc, 0)
			require.NoError(t, err)
			require.NoError(t, l.RunUntil(20*time.Second))
			at := 20 * time.Second
			allocs := testing.AllocsPerRun(50, func() {
				at += time.Second
				_ = l.RunUntil(at)
			})
			require.Zero(t, allocs)
		})
	}
}

// TestQueueDisciplinesAreDeterministic: a seed gives the same run twice, every discipline.
func TestQueueDisciplinesAreDeterministic(t *testing.T) {
	sc := func(disc QueueDiscipline) *Scenario {
		s := mm(Server{Cores: 2, Timeout: 300 * time.Millisecond}, 260, Distribution{Kind: DistExponential, Mean: 10 * time.Millisecond}, 30*time.Second, 5)
		s.Lanes = []LaneSpec{{Stack: mustParse("concurrency:max=3")}}
		s.Client = Client{Policy: PolicyQueue, QueueSize: 100, Timeout: time.Second, Discipline: disc}
		return s
	}
	for _, disc := range QueueDisciplines {
		a, b := run(t, sc(disc)).Lanes[0], run(t, sc(disc)).Lanes[0]
		require.Equal(t, a.Totals, b.Totals, disc)
		require.Equal(t, a.Wait, b.Wait, disc)
		require.Positive(t, a.Totals.Admitted, disc)
	}
}
