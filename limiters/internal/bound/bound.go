// Package bound is the saturating arithmetic the kinds' admission bounds share (limiters and
// limiters/peers): a bound past the int64 range saturates at math.MaxInt64 instead of wrapping.
package bound

import (
	"math"
	"time"
)

// Touched is the number of spans of length span that a half-open interval of length L > 0
// can touch: ⌈(L−1ns)/span⌉ + 1.
func Touched(L, span time.Duration) int64 {
	return (int64(L)-1+int64(span)-1)/int64(span) + 1
}

// SaturatingMul is a·b for a, b ≥ 0, or math.MaxInt64 when that overflows: a bound past the
// int64 range bounds nothing a run can reach, and must not wrap negative.
func SaturatingMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// SaturatingAdd is a+b for a, b ≥ 0, or math.MaxInt64 when that overflows.
func SaturatingAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// DivCeil is ⌈a/b⌉ for a ≥ 0, b > 0.
func DivCeil(a, b int64) int64 { return (a + b - 1) / b }
