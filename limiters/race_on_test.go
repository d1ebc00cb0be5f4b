//go:build race

package limiters

// raceDetector is true when the tests run under -race: the race tests run fewer rounds there
// (the detector makes each one about 20 times slower).
const raceDetector = true
