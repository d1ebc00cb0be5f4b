package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

// roundNonNegative is int64(math.Round(v)) bit for bit: at the halves, next to them, at the
// edge of exact integers (2^52, 2^53) and on a million random times of every magnitude.
func TestRoundNonNegativeIsMathRound(t *testing.T) {
	vs := []float64{0, 0.5, 1.5, 2.5, 0.49999999999999994, math.Nextafter(0.5, 0), math.Nextafter(0.5, 1),
		1<<52 - 0.5, 1 << 52, 1<<52 + 1, 1<<53 - 1, 1 << 53, 1 << 62, math.Nextafter(1<<63, 0), 1e9 * 2.01}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1_000_000 {
		vs = append(vs, math.Ldexp(rng.Float64(), rng.IntN(63)))
	}
	for _, v := range vs {
		if got, want := roundNonNegative(v), int64(math.Round(v)); got != want {
			t.Fatalf("roundNonNegative(%v) = %d, math.Round gives %d", v, got, want)
		}
	}
	for k := int64(0); k < 100_000; k++ { // every half and its neighbours up to 10^5
		for _, v := range []float64{float64(k) + 0.5, math.Nextafter(float64(k)+0.5, 0), math.Nextafter(float64(k)+0.5, math.Inf(1))} {
			if got, want := roundNonNegative(v), int64(math.Round(v)); got != want {
				t.Fatalf("roundNonNegative(%v) = %d, math.Round gives %d", v, got, want)
			}
		}
	}
}
