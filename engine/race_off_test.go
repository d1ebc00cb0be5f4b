//go:build !race

package engine

// raceDetector is true when the tests run under -race.
const raceDetector = false
