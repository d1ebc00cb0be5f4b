//go:build !race

package peers

// raceDetector is true when the tests run under -race: the race tests run fewer rounds there.
const raceDetector = false
