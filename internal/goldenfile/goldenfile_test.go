package goldenfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The cycle a golden file goes through: missing (the got-file is written, the message says
// how to create it), created by -update, equal (the stale got-file is removed), changed (the
// got-file and the command that accepts it), accepted.
func TestCheckLifecycle(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "testdata", "x.golden")
	o := Options{Rerun: "go test ./pkg"}
	err := Check(path, []byte("one\n"), o)
	if err == nil || !strings.Contains(err.Error(), "go test ./pkg -update") {
		t.Fatalf("missing file: %v, want the command that creates it", err)
	}
	update := true
	o.Update = &update
	if err := Check(path, []byte("one\n"), o); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one\n" {
		t.Fatalf("-update wrote %q", b)
	}
	update = false
	if err := Check(path, []byte("one\n"), o); err != nil {
		t.Fatalf("equal: %v", err)
	}
	if _, err := os.Stat(path + ".got"); !os.IsNotExist(err) {
		t.Errorf("an equal run leaves no got-file (stat: %v)", err)
	}
	o.Diff = func(a, b, x, y string) string { return "-" + x + "+" + y }
	err = Check(path, []byte("two\n"), o)
	if err == nil || !strings.Contains(err.Error(), "-one\n+two\n") || !strings.Contains(err.Error(), "accept (after reading the diff): go test ./pkg -update") {
		t.Fatalf("changed: %v", err)
	}
	if b, _ := os.ReadFile(path + ".got"); string(b) != "two\n" {
		t.Errorf("got-file holds %q", b)
	}
	if b, _ := os.ReadFile(path); string(b) != "one\n" {
		t.Errorf("a mismatch changed the golden file to %q", b)
	}
}

// Equal replaces byte equality: a tolerant comparison passes what bytes would not.
func TestCheckEqual(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.png")
	if err := os.WriteFile(path, []byte("AAAA"), 0o644); err != nil {
		t.Fatal(err)
	}
	loose := Options{Equal: func(want, got []byte) (bool, error) { return len(want) == len(got), nil }}
	if err := Check(path, []byte("AAAB"), loose); err != nil {
		t.Errorf("tolerant: %v", err)
	}
	if err := Check(path, []byte("AAAB"), Options{}); err == nil {
		t.Error("bytes differ: want an error")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "x.got.png")); err != nil {
		t.Errorf("a PNG's got-file is x.got.png: %v", err)
	}
}

func TestGotPath(t *testing.T) {
	for path, want := range map[string]string{
		"testdata/a.golden": "testdata/a.golden.got",
		"testdata/b.png":    "testdata/b.got.png",
		"docs/REPORT.md":    "docs/REPORT.md.got",
	} {
		if got := GotPath(path); got != want {
			t.Errorf("GotPath(%q) = %q, want %q", path, got, want)
		}
	}
}
