// Package goldenfile is the repository's one golden-file check for tests: compare what a test
// produced with a committed file, rewrite the file when the test binary runs with -update, and
// on a mismatch leave what was produced beside the file for a diff.
//
// Each package's tests keep their own -update flag (its usage line says what that package
// rewrites: go test ./plots -update, go test ./golden -update, …) and point Options.Update at
// it; this package defines no flag, so that importing it never clashes with one. A package's
// options are one variable, read when a test compares (after the flags are parsed):
//
//	var update = flag.Bool("update", false, "rewrite the golden files in testdata/")
//	var goldenFiles = goldenfile.Options{Update: update, Rerun: "go test ./plots"}
//
//	goldenfile.Compare(t, "testdata/steady-rate.golden", got, goldenFiles)
package goldenfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Options say how to compare and what to tell the reader.
type Options struct {
	// Update, when it points at true, rewrites the golden file with what the test produced:
	// the package's -update flag. nil is false.
	Update *bool
	// Rerun is the command that runs the check again, without -update ("go test ./plots",
	// "go test ./golden -run 'TestGuarantees/^low-rate$'"): messages say to append -update.
	Rerun string
	// Equal compares the committed file with what was produced; nil is byte equality. Images
	// compare within a tolerance (font rasterisation differs by a few pixels across platforms).
	Equal func(want, got []byte) (bool, error)
	// Diff, when set, is the diff a mismatch's message carries (text files): from want to got,
	// labelled with the two paths.
	Diff func(wantName, gotName, want, got string) string
}

// GotPath is where a mismatch leaves what the test produced, beside the golden file:
// name.got.png for a PNG (so that an image viewer opens it), path + ".got" otherwise
// (testdata/x.golden.got, docs/REPORT.md.got); .gitignore ignores both.
func GotPath(path string) string {
	if base, ok := strings.CutSuffix(path, ".png"); ok {
		return base + ".got.png"
	}
	return path + ".got"
}

// Check compares got with the golden file at path. With Update it writes got to path
// (creating its directory) and removes a got-file left by an earlier mismatch. Without it,
// an equal file removes such a got-file and is nil; a missing file or a different one writes
// got to GotPath and is an error naming both files and the command that accepts the change.
func Check(path string, got []byte, o Options) error {
	gotPath := GotPath(path)
	if o.Update != nil && *o.Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		_ = os.Remove(gotPath)
		return os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		if werr := os.MkdirAll(filepath.Dir(path), 0o755); werr != nil {
			return werr
		}
		if werr := os.WriteFile(gotPath, got, 0o644); werr != nil {
			return werr
		}
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %v\nwrote %s; create the golden file with:\n  %s -update", path, err, gotPath, o.Rerun)
		}
		return fmt.Errorf("%s: %v (wrote %s)", path, err, gotPath)
	}
	equal := o.Equal
	if equal == nil {
		equal = func(want, got []byte) (bool, error) { return bytes.Equal(want, got), nil }
	}
	same, err := equal(want, got)
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if same {
		_ = os.Remove(gotPath)
		return nil
	}
	if err := os.WriteFile(gotPath, got, 0o644); err != nil {
		return err
	}
	diff := ""
	if o.Diff != nil {
		diff = ":\n" + o.Diff(path, gotPath, string(want), string(got))
	}
	return fmt.Errorf("%s differs from this run (wrote %s)%s\nrerun: %s\naccept (after reading the diff): %s -update",
		path, gotPath, diff, o.Rerun, o.Rerun)
}

// Compare is Check as a test's assertion: a mismatch or a missing file is an error of t (the
// test goes on, so that one run reports every golden file that changed).
func Compare(t testing.TB, path string, got []byte, o Options) {
	t.Helper()
	if err := Check(path, got, o); err != nil {
		t.Error(err)
	}
}
