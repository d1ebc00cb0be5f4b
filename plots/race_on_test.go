//go:build race

package plots

// raceDetector is true when the tests run under -race: the GIF tests render fewer scenarios.
const raceDetector = true
