package main

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/engine"
)

// classSection is what the run table says about request classes (the sources' class:), under
// it: for each lane, each class's refusals and its answered requests' p99 latency (admission
// to answer). "" when the sources name no class.
//
//	classes (refused of offered; p99: admission to answer)
//	  concurrency:max=32                                   user 355/1958 refused (18%), p99 604ms  prefetch …
//	  partition(user=0.9,prefetch=0.1):concurrency:max=32  user 0/1958 refused (0%), p99 638ms  prefetch …
func classSection(res *engine.Results, width int) string {
	return laneSection(res, width, "classes (refused of offered; p99: admission to answer)", func(r *engine.LaneResult) (string, bool) {
		if len(r.Classes) == 0 {
			return "", false
		}
		items := make([]string, len(r.Classes))
		for i, c := range r.Classes {
			pct := 0.0
			if c.Offered > 0 {
				pct = 100 * float64(c.Refused) / float64(c.Offered)
			}
			items[i] = fmt.Sprintf("%s %d/%d refused (%.0f%%), p99 %s", c.Class, c.Refused, c.Offered, pct, roundedDuration(c.LatencyP99))
		}
		return strings.Join(items, "  "), true
	})
}
