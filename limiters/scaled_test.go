package limiters

import "testing"

// scaled is n calls of a long single-goroutine differential test, a fifth of them under the
// race detector or -short: the detector adds nothing to one goroutine's arithmetic and makes
// each call about 10 times slower, and CI's -race run has the whole suite to get through.
func scaled(n int) int {
	if raceDetector || testing.Short() {
		return max(n/5, 1)
	}
	return n
}
