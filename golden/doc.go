// Package golden pins every promise of every ratelab algorithm with an explicit check and a
// golden file.
//
// Catalogue is the table of guarantees: each has an id, the algorithms it covers, the claim in
// plain words, the scenario and its parameters, the exact bound, a checker and a golden file
// under testdata/. The same table drives the tests (go test ./golden, -update to rewrite the
// golden files and docs/GUARANTEES.md's block), the `ratelab guarantees` command, and the
// table itself.
//
// A guarantee runs its scenario on the simulator (engine) or, for the concurrency promises,
// on real goroutines against a frozen virtual clock. Its checker asserts the bound first and
// independently of the golden text: a wrong behaviour fails the check, so it can never be
// "updated" into a golden file. Every run takes a Factory, so a test can plug a deliberately
// broken limiter into the same harness (through engine.LaneSpec.Build) and see the checker
// fail with the bound and the interval that broke it.
package golden
