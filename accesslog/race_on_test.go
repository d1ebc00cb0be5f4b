//go:build race

package accesslog_test

// raceDetector is true under -race, whose instrumentation allocates and slows: the
// allocation and memory tests skip there.
const raceDetector = true
