package main

import (
	"fmt"

	"github.com/ratelab/ratelab/engine"
)

// loopSection is what the run table says about the client loop, under it, for each lane
// whose clients retry or pace themselves: goodput, amplification, the herd, and the time to
// success and end-to-end latency, p50 and p99 (the rest of the loop is in --format json's
// "loop" and --format csv's last columns). "" when no lane's clients do.
//
//	loop (success: first attempt to admission; latency: arrival to answer, every client wait included)
//	  Retry-After obeyed       goodput 10/s  amplification 3.00  herd 400 in 10ms at 10.5s (×2000)  success p50 20.4s p99 40s  latency p50 20.4s p99 40s
func loopSection(sc *engine.Scenario, res *engine.Results, width int) string {
	heading := "loop (success: first attempt to admission; latency: arrival to answer, every client wait included)"
	return laneSection(res, width, heading, func(r *engine.LaneResult) (string, bool) {
		i := 0
		for i < len(res.Lanes) && &res.Lanes[i] != r {
			i++
		}
		client := sc.Client
		if i < len(sc.Lanes) && sc.Lanes[i].Client != nil {
			client = *sc.Lanes[i].Client
		}
		if !client.Retries() {
			return "", false
		}
		l := r.Loop
		herd := "herd 0"
		if l.HerdPeak > 0 {
			sync := fmt.Sprintf("%.3g", l.HerdSynchrony)
			if l.HerdSynchrony >= 1000 {
				sync = fmt.Sprintf("%.0f", l.HerdSynchrony) // 2000, not 2e+03
			}
			herd = fmt.Sprintf("herd %d in 10ms at %s (×%s)", l.HerdPeak, roundedDuration(l.HerdPeakAt), sync)
		}
		return fmt.Sprintf("goodput %.3g/s  amplification %.2f  %s  success p50 %s p99 %s  latency p50 %s p99 %s",
			l.GoodputPerSec, l.Amplification, herd, roundedDuration(l.SuccessP50), roundedDuration(l.SuccessP99),
			roundedDuration(l.LatencyP50), roundedDuration(l.LatencyP99)), true
	})
}
