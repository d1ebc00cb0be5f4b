//go:build race

package golden

// raceDetector is true when the tests run under -race: the long runs are sized down there
// (the detector makes each simulated event about 20 times slower), and run in full without it.
const raceDetector = true
