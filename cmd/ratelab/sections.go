package main

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// laneSection is a section under the run table: heading, then a line for each lane that
// line describes (line says false for the others), the lanes' names padded to one width.
// "" when no lane has a line. On a terminal (width > 0) too narrow for a lane's line, the lane's
// name goes on a line of its own and its items (the parts of its line two spaces apart) under
// it, packed into lines of width, each wrapped at spaces if it alone is wider.
func laneSection(res *engine.Results, width int, heading string, line func(r *engine.LaneResult) (string, bool)) string {
	var lines, names []string
	nameWidth := 0
	for i := range res.Lanes {
		if text, ok := line(&res.Lanes[i]); ok {
			names, lines = append(names, res.Lanes[i].Name), append(lines, text)
			nameWidth = max(nameWidth, len(res.Lanes[i].Name))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n" + heading + "\n")
	for i, text := range lines {
		fmt.Fprintf(&b, "  %-*s  %s\n", nameWidth, names[i], text)
	}
	if width <= 0 || fits(b.String(), width) {
		return b.String()
	}
	b.Reset()
	b.WriteString("\n" + wrapHanging(heading, width) + "\n")
	const indent = "      "
	for i, text := range lines {
		b.WriteString("  " + names[i] + "\n")
		row := indent
		for _, item := range strings.Split(text, "  ") {
			if row != indent && len([]rune(row))+2+len([]rune(item)) > width {
				b.WriteString(row + "\n")
				row = indent
			}
			if row != indent {
				row += "  "
			}
			row += item
		}
		b.WriteString(wrapHanging(row, width) + "\n")
	}
	return b.String()
}

// fleetSection is what the run table says about fleet lanes, under it: for each, the most the
// fleet admitted in one natural window against what one limiter of the spec could (the
// overshoot), each instance's share, and the store's operations, failures and added latency.
// "" when no lane runs on a fleet. The request counts stay in the table above, where offered
// is admitted + refused + timed out + gave up + waiting.
//
//	fleet (overshoot: the most admitted in one window over one limiter's bound for it)
//	  local  3 instances round-robin  300 in 1s, bound 179: overshoot 1.68  shares 33% 33% 33%
//	  central fail-open  …  store: 3000 ops, 600 failed, latency p50 2.49ms p99 20ms max 20ms
func fleetSection(res *engine.Results, width int) string {
	return laneSection(res, width, "fleet (overshoot: the most admitted in one window over one limiter's bound for it)", func(r *engine.LaneResult) (string, bool) {
		f := r.Fleet
		if f == nil {
			return "", false
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s, %d instances %s", f.Model, len(f.Instances), f.Balancer)
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
				roundedDuration(f.StoreLatency.P50), roundedDuration(f.StoreLatency.P99), roundedDuration(f.StoreLatency.Max))
		case engine.CoordAsync:
			fmt.Fprintf(&b, "  sync: %d messages, %d lost, %d broadcasts", f.StoreOps, f.StoreFailures, f.Syncs)
		}
		return b.String(), true
	})
}

// keySection is what the run table says about keys, under it: for each lane whose requests
// carry keys, how many, Jain's fairness index of what they were admitted, what a keyed
// stage's table did, and the most refused keys. "" when no lane has keys.
//
//	per key (fairness: Jain's index of admitted permits, 1 = every key alike, 1/keys = one key took all)
//	  token-bucket:capacity=20,rate=200/1s  101 keys  fairness 0.19  most refused: noisy-neighbour 5402, client-17 9
func keySection(res *engine.Results, width int) string {
	return laneSection(res, width, "per key (fairness: Jain's index of admitted permits, 1 = every key alike, 1/keys = one key took all)", func(r *engine.LaneResult) (string, bool) {
		k := r.Keys
		if k == nil {
			return "", false
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%d keys  fairness %.2f", k.Distinct, k.Fairness)
		for _, t := range k.Tables {
			fmt.Fprintf(&b, "  stage %d table: %d/%d held, %d evicted, %d full", t.Stage, t.Held, t.MaxKeys, t.Evicted, t.Full)
		}
		if len(k.TopRefused) > 0 {
			top := make([]string, 0, 3)
			for _, c := range k.TopRefused[:min(3, len(k.TopRefused))] {
				top = append(top, fmt.Sprintf("%s %d", c.Key, c.NotAdmitted()))
			}
			more := ""
			if len(k.TopRefused) > 3 {
				more = ", …"
			}
			fmt.Fprintf(&b, "  most refused: %s%s", strings.Join(top, ", "), more)
		}
		return b.String(), true
	})
}
