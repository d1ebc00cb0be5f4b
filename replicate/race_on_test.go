//go:build race

package replicate

// raceDetector is true when the tests run under -race: the analytic runs are sized down
// there (the detector makes every event many times slower), and run in full without it.
const raceDetector = true
