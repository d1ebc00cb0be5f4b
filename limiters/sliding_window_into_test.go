package limiters

import (
	"reflect"
	"testing"
	"time"
)

// SnapshotInto writes what Snapshot returns, into the slots array the state already has:
// after the first, a snapshot allocates nothing (an observed lane takes one per decision).
func TestSlidingWindowSnapshotIntoReusesItsSlots(t *testing.T) {
	s, err := NewSlidingWindow(5, time.Second, 10, benchClock)
	if err != nil {
		t.Fatal(err)
	}
	var st State
	for i := range 40 {
		now := time.Duration(i) * 70 * time.Millisecond
		s.AcquireAt(now, 1)
		s.SnapshotInto(now, &st)
		if want := s.Snapshot(now); !reflect.DeepEqual(st, want) {
			t.Fatalf("at %v: SnapshotInto %+v, Snapshot %+v", now, st, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { s.SnapshotInto(3*time.Second, &st) }); n != 0 {
		t.Errorf("SnapshotInto allocates %v times a call, want 0", n)
	}
}
