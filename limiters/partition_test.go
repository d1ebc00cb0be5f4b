package limiters

import (
	"strings"
	"testing"
)

// TestPartitionSteps walks Netflix's partition rule by hand: a bulkhead of 10 split
// user=0.8 (⌈8⌉ = 8 guaranteed), prefetch=0.2 (2), and the unknown class (1).
func TestPartitionSteps(t *testing.T) {
	spec, err := ParsePartitionSpec("partition(user=0.8,prefetch=20%):concurrency:max=10")
	if err != nil {
		t.Fatal(err)
	}
	lim, err := spec.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := lim.(*Partitioned)
	const user, prefetch, unknown = 0, 1, 7 // 7: no such class
	type step struct {
		class    int
		release  bool
		want     Decision // for an acquire
		inFlight int      // after the step
		over     int
		why      string
	}
	var steps []step
	for i := range 10 {
		steps = append(steps, step{prefetch, false, Admitted, i + 1, 0, "the whole has room: prefetch borrows"})
	}
	steps = append(steps,
		step{prefetch, false, Rejected, 10, 0, "full, and prefetch holds 10 > its 2"},
		step{user, false, Admitted, 11, 1, "full, but user holds 0 < its 8: over the inner limit"},
	)
	for i := range 7 {
		steps = append(steps, step{user, false, Admitted, 12 + i, 2 + i, "user up to its 8"})
	}
	steps = append(steps,
		step{user, false, Rejected, 18, 8, "user holds its 8"},
		step{unknown, false, Admitted, 19, 9, "the unknown class is guaranteed 1"},
		step{unknown, false, Rejected, 19, 9, "and only 1"},
		step{prefetch, true, 0, 18, 8, "a release gives back one over the limit first"},
		step{prefetch, false, Rejected, 18, 8, "still full"},
	)
	for i := range 9 {
		steps = append(steps, step{prefetch, true, 0, 17 - i, max(7-i, 0), "prefetch leaves"})
	}
	steps = append(steps,
		step{prefetch, false, Admitted, 10, 0, "9 in flight: room for one, by the inner limit"},
		step{prefetch, false, Admitted, 11, 1, "full: prefetch holds 1 < its 2"},
		step{prefetch, false, Rejected, 11, 1, "prefetch holds its 2"},
	)
	for k, s := range steps {
		p.SetClass(s.class)
		if s.release {
			p.Release(1)
		} else if got := p.AcquireAt(0, 1); got != s.want {
			t.Fatalf("step %d (%s): %v, want %v", k, s.why, got, s.want)
		}
		if p.InFlight() != s.inFlight || p.over != s.over {
			t.Fatalf("step %d (%s): in flight %d over %d, want %d and %d", k, s.why, p.InFlight(), p.over, s.inFlight, s.over)
		}
	}
	if got := p.inner.AvailableAt(0); got != 0 {
		t.Errorf("the inner bulkhead has %d free, want 0: it never passes its limit", got)
	}
	p.SetClass(user)
	if got := p.AvailableAt(0); got != 0 {
		t.Errorf("user may take %d more, want 0 (it holds its 8)", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("releasing more than a class holds did not panic")
		}
	}()
	p.SetClass(unknown)
	p.Release(2)
}

// TestPartitionAdaptive: over an adaptive kind the partition is Adaptive, its limit the
// inner one, and the inner limit is what the shares divide.
func TestPartitionAdaptive(t *testing.T) {
	spec, err := ParsePartitionSpec("partition(user=0.5,prefetch=0.5):aimd:initial=4,min=4,max=100")
	if err != nil {
		t.Fatal(err)
	}
	lim, err := spec.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	a, ok := lim.(Adaptive)
	if !ok {
		t.Fatalf("%T is not Adaptive", lim)
	}
	if a.Limit() != 4 {
		t.Fatalf("limit %d, want the initial 4", a.Limit())
	}
	c := lim.(Classed)
	c.SetClass(1)
	for range 4 {
		if d := lim.AcquireAt(0, 1); d != Admitted {
			t.Fatal("prefetch should borrow the 4")
		}
	}
	if d := lim.AcquireAt(0, 1); d != Rejected {
		t.Fatal("prefetch holds 4 > its ⌈4·0.5⌉ = 2")
	}
	c.SetClass(0)
	for range 2 {
		if d := lim.AcquireAt(0, 1); d != Admitted {
			t.Fatal("user is guaranteed 2")
		}
	}
	if d := lim.AcquireAt(0, 1); d != Rejected {
		t.Fatal("user holds its 2")
	}
	if lim.String() != "partition(user=0.5,prefetch=0.5):aimd:initial=4,min=4,max=100" {
		t.Errorf("String %q", lim.String())
	}
}

func TestPartitionSpecErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"partition(user=0.9:concurrency:max=3", "no closing )"},
		{"partition(user=0.9)concurrency:max=3", "expected : and the limiter"},
		{"partition(user=0.9,prefetch=0.2):concurrency:max=3", "add up to more than 1"},
		{"partition(user=lots):concurrency:max=3", "expected a share"},
		{"partition(user=1.5):concurrency:max=3", "a share is in [0, 1]"},
		{"partition(user=0.5,user=0.5):concurrency:max=3", "given twice"},
		{"partition():concurrency:max=3", "needs at least one CLASS=SHARE"},
		{"partition(user=0.9):token-bucket:capacity=3,rate=1/1s", "must release its permits"},
		{"partition(user=0.9):concurency:max=3", `did you mean concurrency?`},
	} {
		_, err := ParsePartitionSpec(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to say %q", c.text, err, c.want)
		}
	}
	s, err := ParsePartitionSpec("partition(user=90%,prefetch=0.1):concurrency:max=32")
	if err != nil {
		t.Fatal(err)
	}
	if s.String() != "partition(user=0.9,prefetch=0.1):concurrency:max=32" {
		t.Errorf("String %q", s.String())
	}
	again, err := ParsePartitionSpec(s.String())
	if err != nil || again.String() != s.String() {
		t.Errorf("round trip: %v %q", err, again.String())
	}
}
