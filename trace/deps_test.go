package trace

import (
	"go/build"
	"strings"
	"testing"
)

// trace is read by engine, fit, cmd and the log readers: it must import nothing of ratelab
// (the dependencies point one way, into it) and nothing beyond the standard library.
func TestOnlyTheStandardLibrary(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkg.Imports) == 0 {
		t.Fatal("no imports read: the test reads the wrong directory")
	}
	for _, imp := range pkg.Imports {
		first, _, _ := strings.Cut(imp, "/")
		if strings.Contains(first, ".") {
			t.Errorf("trace imports %s: it must import only the standard library", imp)
		}
	}
}
