package limiters_test

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
)

// A zone of 2 nodes at 1r/s, as limit_req_zone when its memory is full: c at 30s takes a's
// node, though a was seen only 30s ago; c's second request is c's own node's (refused: one per
// second), and a at 30.5s is a new node's first (admitted), taking b's. At 95s d's arrival
// expires c and a, idle 60s with nothing left to drain, although the zone had no need.
func ExampleKeyedLimiter_nginxZone() {
	spec, err := limiters.ParseKeyedSpec("keys(max=2,evict=nginx):nginx:rate=1r/s")
	if err != nil {
		panic(err)
	}
	zone, err := limiters.NewKeyed(spec.Spec, spec.Keys, virtualclock.New())
	if err != nil {
		panic(err)
	}
	held := func() []string {
		var keys []string
		for _, k := range []string{"a", "b", "c", "d"} {
			if _, ok := zone.Peek(k); ok {
				keys = append(keys, k)
			}
		}
		return keys
	}
	fmt.Println("    at key decision zone")
	for _, r := range []struct {
		at  time.Duration
		key string
	}{{0, "a"}, {0, "b"}, {30 * time.Second, "c"}, {30500 * time.Millisecond, "c"}, {30500 * time.Millisecond, "a"},
		{95 * time.Second, "d"}} {
		d := zone.AcquireKeyAt(r.at, r.key, 1)
		fmt.Printf("%6s %-3s %-8s %v\n", limiters.FormatDuration(r.at), r.key, d, held())
	}
	fmt.Printf("%+v\n", zone.Stats())
	// Output:
	//     at key decision zone
	//     0s a   admitted [a]
	//     0s b   admitted [a b]
	//    30s c   admitted [b c]
	//  30.5s c   rejected [b c]
	//  30.5s a   admitted [a c]
	//  1m35s d   admitted [d]
	// {Keys:1 Created:5 Evicted:4 Full:0}
}
