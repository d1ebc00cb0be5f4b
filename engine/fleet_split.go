package engine

import "github.com/ratelab/ratelab/limiters"

// SplitSpec is spec divided among n instances for the split coordination, so that n
// instances given an even share of the traffic admit exactly what one limiter of spec would:
// limiters.SplitSpec, which asks the spec (limiters.Splittable) for its share.
func SplitSpec(spec limiters.Spec, n int) (limiters.Spec, error) { return limiters.SplitSpec(spec, n) }
