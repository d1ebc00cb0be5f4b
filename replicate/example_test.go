package replicate_test

import (
	"fmt"

	"github.com/ratelab/ratelab/replicate"
)

// Five replications' admitted counts: their mean and 95% interval, mean ± t(0.975, 4)·s/√5.
func ExampleEstimate() {
	iv := replicate.Estimate([]float64{5012, 4987, 5030, 4998, 5003})
	fmt.Printf("%.0f ± %.1f (s = %.1f, t = %.3f)\n", iv.Mean, iv.HalfWidth, iv.StdDev, replicate.TQuantile975(4))
	// Output: 5006 ± 20.1 (s = 16.2, t = 2.776)
}
