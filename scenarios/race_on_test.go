//go:build race

package scenarios

// raceDetector is true when the tests run under -race: the property test runs fewer and
// shorter scenarios there (the detector makes each simulated event about 20 times slower).
const raceDetector = true
