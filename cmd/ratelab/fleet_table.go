package main

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// fleetSection is what the run table says about fleet lanes, under it: for each, the most the
// fleet admitted in one natural window against what one limiter of the spec could (the
// overshoot), each instance's share, and the store's operations, failures and added latency.
// "" when no lane runs on a fleet. The request counts stay in the table above, where offered
// is admitted + refused + timed out + gave up + waiting.
//
//	fleet (overshoot: the most admitted in one window over one limiter's bound for it)
//	  local  3 instances round-robin  300 in 1s, bound 179: overshoot 1.68  shares 33% 33% 33%
//	  central fail-open  …  store: 3000 ops, 600 failed, latency p50 2.49ms p99 20ms max 20ms
func fleetSection(res *engine.Results) string {
	var b strings.Builder
	width := 0
	for _, r := range res.Lanes {
		if r.Fleet != nil {
			width = max(width, len(r.Name))
		}
	}
	for _, r := range res.Lanes {
		f := r.Fleet
		if f == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\nfleet (overshoot: the most admitted in one window over one limiter's bound for it)\n")
		}
		fmt.Fprintf(&b, "  %-*s  %s, %d instances %s", width, r.Name, f.Model, len(f.Instances), f.Balancer)
		if f.Bound > 0 {
			fmt.Fprintf(&b, "  %d in %s, bound %d: overshoot %.2f", f.MaxAdmitted, limiters.FormatDuration(f.Window), f.Bound, f.Overshoot)
		}
		shares := make([]string, len(f.Instances))
		for i, in := range f.Instances {
			shares[i] = fmt.Sprintf("%.0f%%", 100*in.Share)
		}
		fmt.Fprintf(&b, "  shares %s", strings.Join(shares, " "))
		switch f.Model {
		case engine.CoordCentral:
			fmt.Fprintf(&b, "  store: %d ops, %d failed, latency p50 %s p99 %s max %s", f.StoreOps, f.StoreFailures,
				limiters.FormatDuration(f.StoreLatency.P50), limiters.FormatDuration(f.StoreLatency.P99), limiters.FormatDuration(f.StoreLatency.Max))
		case engine.CoordAsync:
			fmt.Fprintf(&b, "  sync: %d messages, %d lost, %d broadcasts", f.StoreOps, f.StoreFailures, f.Syncs)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
