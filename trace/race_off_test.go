//go:build !race

package trace

// raceDetector is true when the tests run under -race.
const raceDetector = false
