//go:build !race

package scenarios

// raceDetector is true when the tests run under -race.
const raceDetector = false
