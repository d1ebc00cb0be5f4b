//go:build !race

package golden

// raceDetector is true when the tests run under -race.
const raceDetector = false
