package limiters_test

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
)

const ms = time.Millisecond

// show prints each request's time, size and decision.
func show(l limiters.Limiter, steps ...any) {
	for i := 0; i < len(steps); i += 2 {
		at, n := steps[i].(time.Duration), steps[i+1].(int)
		fmt.Printf("%6s  n=%d  %s\n", limiters.FormatDuration(at), n, l.AcquireAt(at, n))
	}
}

// 100/s with capacity 3: three pass at once, a fourth is refused, then one per 10ms; 50ms
// of idle refills the whole burst and no more.
func ExampleTokenBucket() {
	b, _ := limiters.NewTokenBucket(3, limiters.PerSecond(100), virtualclock.New())
	show(b, 0*ms, 1, 0*ms, 1, 0*ms, 1, 0*ms, 1, 10*ms, 1, 15*ms, 1, 20*ms, 1)
	wait, _ := b.RetryAfterAt(20*ms, 1)
	fmt.Println("retry after", wait)
	fmt.Println("available at 80ms:", b.AvailableAt(80*ms))
	// Output:
	//     0s  n=1  admitted
	//     0s  n=1  admitted
	//     0s  n=1  admitted
	//     0s  n=1  rejected
	//   10ms  n=1  admitted
	//   15ms  n=1  rejected
	//   20ms  n=1  admitted
	// retry after 10ms
	// available at 80ms: 3
}

// 100/s, strictly paced: one permit per 10ms however long the idle.
func ExampleLeakyBucket() {
	l, _ := limiters.NewLeakyBucket(limiters.PerSecond(100), virtualclock.New())
	show(l, 0*ms, 1, 0*ms, 1, 9*ms, 1, 10*ms, 1, 500*ms, 1, 500*ms, 1, 500*ms, 2)
	fmt.Println("available at 1s:", l.AvailableAt(time.Second))
	// Output:
	//     0s  n=1  admitted
	//     0s  n=1  rejected
	//    9ms  n=1  rejected
	//   10ms  n=1  admitted
	//  500ms  n=1  admitted
	//  500ms  n=1  rejected
	//  500ms  n=2  never
	// available at 1s: 1
}

// 100 per 1s in 10 slots of 100ms: the last nanosecond of slot 0 and the instant it
// expires, 900.000001ms apart, both take the whole limit.
func ExampleSlidingWindow() {
	s, _ := limiters.NewSlidingWindow(100, time.Second, 10, virtualclock.New())
	show(s, 100*ms-1, 100, 500*ms, 1, time.Second-1, 1, time.Second, 100, time.Second, 1)
	wait, _ := s.RetryAfterAt(time.Second, 1)
	fmt.Println("retry after", wait)
	// Output:
	// 99.999999ms  n=100  admitted
	//  500ms  n=1  rejected
	// 999.999999ms  n=1  rejected
	//     1s  n=100  admitted
	//     1s  n=1  rejected
	// retry after 1s
}

// 100 per aligned 1s window: the boundary burst lets 200 through within 1ms.
func ExampleFixedWindow() {
	f, _ := limiters.NewFixedWindow(100, time.Second, virtualclock.New())
	show(f, 999*ms, 100, 999*ms, 1, time.Second, 100, time.Second, 1)
	wait, _ := f.RetryAfterAt(1500*ms, 1)
	fmt.Println("retry after", wait)
	// Output:
	//  999ms  n=100  admitted
	//  999ms  n=1  rejected
	//     1s  n=100  admitted
	//     1s  n=1  rejected
	// retry after 500ms
}

// Capacity 10 at 100/s warming over 10s: the cold burst is 3 (interval 30ms), at 5s the
// interval is 20ms and the burst 5, from 10s on it is a plain token bucket.
func ExampleWarmUpTokenBucket() {
	w, _ := limiters.NewWarmUpTokenBucket(10, limiters.PerSecond(100), 10*time.Second, virtualclock.New())
	for _, at := range []time.Duration{0, 5 * time.Second, 10 * time.Second, time.Hour} {
		st := w.Snapshot(at)
		fmt.Printf("age %-4s interval %-4s burst %d\n", limiters.FormatDuration(st.Age),
			limiters.FormatDuration(st.Interval), st.Available)
	}
	show(w, 0*ms, 3, 0*ms, 1, 30*ms, 1)
	// Output:
	// age 0s   interval 30ms burst 3
	// age 5s   interval 20ms burst 5
	// age 10s  interval 10ms burst 10
	// age 1h   interval 10ms burst 10
	//     0s  n=3  admitted
	//     0s  n=1  rejected
	//   30ms  n=1  admitted
}

// At most 2 in flight; no time axis: permits come back only through Release or TryDo.
func ExampleConcurrency() {
	c, _ := limiters.NewConcurrency(2)
	fmt.Println(c.TryAcquire(1), c.TryAcquire(1), c.TryAcquire(1))
	c.Release(1)
	ran := c.TryDo(1, func() { fmt.Println("in flight while running:", c.InFlight()) })
	fmt.Println("ran:", ran, "in flight after:", c.InFlight())
	// Output:
	// true true false
	// in flight while running: 2
	// ran: true in flight after: 1
}

// Explain turns the state before a decision into the sentence that justifies it.
func ExampleState_Explain() {
	b, _ := limiters.NewTokenBucket(2, limiters.PerSecond(100), virtualclock.New())
	for _, at := range []time.Duration{0, 0, 0, 15 * ms} {
		st := b.Snapshot(at)
		d := b.AcquireAt(at, 1)
		fmt.Printf("%s: %s: %s\n", limiters.FormatDuration(at), d, st.Explain(1, d))
	}
	f, _ := limiters.NewFixedWindow(1, time.Second, virtualclock.New())
	f.AcquireAt(200*ms, 1)
	st := f.Snapshot(300 * ms)
	fmt.Println(st.Explain(1, f.AcquireAt(300*ms, 1)))
	fmt.Println(st.Explain(2, limiters.Never))
	// Output:
	// 0s: admitted: bucket full, next permit due now; 1 more (T=10ms) would put it 10ms ahead, within the 20ms tolerance
	// 0s: admitted: next permit due at 10ms, 10ms ahead; 1 more (T=10ms) would put it 20ms ahead, within the 20ms tolerance
	// 0s: rejected: next permit due at 20ms, 20ms ahead; 1 more (T=10ms) would put it 30ms ahead, over the 20ms tolerance
	// 15ms: admitted: next permit due at 20ms, 5ms ahead; 1 more (T=10ms) would put it 15ms ahead, within the 20ms tolerance
	// window [0s, 1s) has used 1 of 1; 1 more would exceed it until the window resets in 700ms
	// asks for 2 permits, more than the 1 this fixed-window can ever grant at once
}
