package limiters

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

// A Go user imports limiters into a production server: it must pull in nothing beyond the
// standard library (the peers' real libraries live in limiters/peers). Every import of its
// non-test files is the standard library's (no dot in the first path element) or one of this
// module's internal helpers, whose imports are followed in turn.
func TestOnlyTheStandardLibrary(t *testing.T) {
	const module = "github.com/ratelab/ratelab/"
	seen := map[string]bool{}
	var walk func(dir, path string)
	walk = func(dir, path string) {
		if seen[path] {
			return
		}
		seen[path] = true
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, imp := range pkg.Imports {
			first, _, _ := strings.Cut(imp, "/")
			switch {
			case strings.HasPrefix(imp, module) && strings.Contains(imp, "/internal/"):
				walk(filepath.Join("..", strings.TrimPrefix(imp, module)), imp) // this module's own, followed
			case strings.HasPrefix(imp, module):
				t.Errorf("%s imports %s: limiters must not import the workbench", path, imp)
			case strings.Contains(first, "."):
				t.Errorf("%s imports %s: limiters must import only the standard library", path, imp)
			}
		}
	}
	walk(".", module+"limiters")
	if len(seen) < 2 {
		t.Fatalf("walked %d packages: the walk did not reach limiters/internal", len(seen))
	}
}
