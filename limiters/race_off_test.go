//go:build !race

package limiters

// raceDetector is true when the tests run under -race.
const raceDetector = false
