package main

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/engine"
)

// keySection is what the run table says about keys, under it: for each lane whose requests
// carry keys, how many, Jain's fairness index of what they were admitted, what a keyed
// stage's table did, and the most refused keys. "" when no lane has keys.
//
//	per key (fairness: Jain's index of admitted permits, 1 = every key alike, 1/keys = one key took all)
//	  token-bucket:capacity=20,rate=200/1s  101 keys  fairness 0.19  most refused: noisy-neighbour 5402, client-17 9
func keySection(res *engine.Results) string {
	var b strings.Builder
	width := 0
	for _, r := range res.Lanes {
		if r.Keys != nil {
			width = max(width, len(r.Name))
		}
	}
	for _, r := range res.Lanes {
		k := r.Keys
		if k == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\nper key (fairness: Jain's index of admitted permits, 1 = every key alike, 1/keys = one key took all)\n")
		}
		fmt.Fprintf(&b, "  %-*s  %d keys  fairness %.2f", width, r.Name, k.Distinct, k.Fairness)
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
		b.WriteByte('\n')
	}
	return b.String()
}
