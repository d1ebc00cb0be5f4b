//go:build race

package main

// raceDetector is true when the tests run under -race: the report test then regenerates only
// some of docs/REPORT.md (the detector makes every run many times slower), and all of it
// without.
const raceDetector = true
