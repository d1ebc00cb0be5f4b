//go:build !race

package replicate

// raceDetector is true when the tests run under -race.
const raceDetector = false
