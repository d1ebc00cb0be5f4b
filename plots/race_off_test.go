//go:build !race

package plots

// raceDetector is true when the tests run under -race.
const raceDetector = false
