//go:build race

package trace

// raceDetector is true when the tests run under -race: the trace reader's long differential
// runs are sized down there (the detector makes each row many times slower), and run in full
// without it.
const raceDetector = true
