package scenarios

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Aliases, anchors and merge keys are resolved: a file that uses them loads as the same
// file written out in full (they used to be refused as "got nothing").
func TestLoadResolvesAliases(t *testing.T) {
	const full = `horizon: 10s
sources:
  - {kind: poisson, rate: 50, key: a, permits: 2}
  - {kind: poisson, rate: 50, key: b, permits: 2}
  - {kind: poisson, rate: 80, key: c, permits: 2}
client: {policy: retry, delay: 5ms, max_attempts: 3}
limiters:
  - token-bucket:capacity=3,rate=10/1s
  - spec: token-bucket:capacity=3,rate=10/1s
    client: {policy: retry, delay: 5ms, max_attempts: 3}
windows: [1s, 1s]
`
	const aliased = `horizon: 10s
sources:
  - &src {kind: poisson, rate: &rate 50, key: a, permits: 2}
  - {<<: *src, key: b}
  - <<: [{rate: 80, key: c}, *src]
client: &retry {policy: retry, delay: &d 5ms, max_attempts: 3}
limiters:
  - &tb token-bucket:capacity=3,rate=10/1s
  - spec: *tb
    client: *retry
windows: [&w 1s, *w]
`
	want, err := Load("f.yaml", []byte(full))
	require.NoError(t, err)
	got, err := Load("f.yaml", []byte(aliased))
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// A document whose aliases expand past MaxAliasNodes (the "billion laughs") is refused at
// once, naming the alias that crossed the bound; so is an alias inside the node it names.
func TestLoadRefusesAliasBombs(t *testing.T) {
	var b strings.Builder
	b.WriteString("horizon: 10s\nsources:\n  - kind: script\n    arrivals: &l0 [{at: 1s}, {at: 1s}, {at: 1s}, {at: 1s}, {at: 1s}, {at: 1s}, {at: 1s}, {at: 1s}, {at: 1s}, {at: 1s}]\n")
	b.WriteString("limiters: [concurrency:max=1]\nwindows:\n")
	for i := 1; i <= 9; i++ { // 10^9 arrivals written out
		fmt.Fprintf(&b, "  - &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n", i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	start := time.Now()
	_, err := Load("f.yaml", []byte(b.String()))
	require.Error(t, err)
	assert.Regexp(t, `^f\.yaml:\d+:\d+: alias \*l\d: the document's aliases expand to more than 100000 nodes \(an alias bomb\?\)$`, err.Error())
	assert.Less(t, time.Since(start), 2*time.Second)

	for _, tc := range []struct{ yaml, want string }{
		{"horizon: 10s\nsources: &s [*s]\n", "f.yaml:2:14: alias *s is inside the node it names"},
		{"horizon: 10s\nclient: &c {policy: drop, <<: *c}\n", "f.yaml:2:31: alias *c is inside the node it names"},
		{"horizon: 10s\nclient: {<<: 5}\n", `f.yaml:2:14: <<: expected a mapping or a list of mappings to merge, got "5"`},
		{"horizon: 10s\nclient: {<<: [{policy: drop}, [1]]}\n", "f.yaml:2:31: <<: expected a mapping or a list of mappings to merge, got a list"},
	} {
		_, err := Load("f.yaml", []byte(tc.yaml))
		require.Error(t, err, tc.yaml)
		assert.True(t, strings.HasPrefix(err.Error(), tc.want), "got  %s\nwant %s…", err, tc.want)
	}
}

// A second YAML document is refused where it starts (it used to be ignored silently); an
// empty one, such as a trailing "---", is harmless, and a broken one is a syntax error.
func TestLoadRefusesASecondDocument(t *testing.T) {
	const one = "horizon: 10s\nsources: [{kind: constant, rate: 5}]\nlimiters: [concurrency:max=1]\n"
	for _, tc := range []struct{ yaml, want string }{
		{one + "---\nhorizon: 20s\n", `f.yaml:4:1: a second YAML document starts here: a scenario file holds one document`},
		{"---\n" + one + "--- # the next\nseed: 3\n", `f.yaml:5:1: a second YAML document starts here`},
		{one + "---\n---\n# nothing\n---\n[1]\n", `f.yaml:7:1: a second YAML document starts here`},
		{one + "...\n---\n~\n", `f.yaml:5:1: a second YAML document starts here`},
		{one + "---\nseed: [\n", `f.yaml:5:1: did not find expected node content`},
	} {
		_, err := Load("f.yaml", []byte(tc.yaml))
		require.Error(t, err, tc.yaml)
		assert.True(t, strings.HasPrefix(err.Error(), tc.want), "got  %s\nwant %s…", err, tc.want)
		var fe *FileError
		assert.True(t, errors.As(err, &fe), "a *FileError")
	}
	for _, ok := range []string{one + "---\n", one + "---\n# a comment\n", one + "...\n", "---\n" + one, one + "---\n---\n"} {
		_, err := Load("f.yaml", []byte(ok))
		assert.NoError(t, err, "%q", ok)
	}
}

// LoadFile reads regular files only, of at most MaxFileSize bytes: a directory, a device or a
// FIFO (which would block the open until a writer came) is refused before it is opened.
func TestLoadFileRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	refused := func(path, want string) {
		t.Helper()
		done := make(chan error, 1)
		go func() { _, err := LoadFile(path); done <- err }()
		select {
		case err := <-done:
			require.Error(t, err, path)
			assert.Equal(t, path+": "+want, err.Error())
		case <-time.After(10 * time.Second):
			t.Fatalf("LoadFile(%s) blocked", path)
		}
	}
	refused(dir, "is a directory, not a scenario file")
	if _, err := os.Stat(os.DevNull); err == nil && os.DevNull == "/dev/null" {
		refused(os.DevNull, "is a device, not a scenario file: only regular files are read")
	}
	if fifo := filepath.Join(dir, "pipe.yaml"); mkfifo(fifo) == nil {
		refused(fifo, "is a FIFO (named pipe), not a scenario file: only regular files are read")
	}

	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(MaxFileSize+1)) // sparse: nothing is written
	require.NoError(t, f.Close())
	refused(big, "is 16777217 bytes: a scenario file may hold at most 16777216 (16 MiB)")

	_, err = Load("mem.yaml", make([]byte, MaxFileSize+1))
	assert.EqualError(t, err, "mem.yaml: is 16777217 bytes: a scenario file may hold at most 16777216 (16 MiB)")

	// A symlink to a regular file is followed.
	real := filepath.Join(dir, "real.yaml")
	require.NoError(t, os.WriteFile(real, []byte("horizon: 1s\nsources: [{kind: constant, rate: 5}]\nlimiters: [concurrency:max=1]\n"), 0o644))
	if link := filepath.Join(dir, "link.yaml"); os.Symlink(real, link) == nil {
		sc, err := LoadFile(link)
		require.NoError(t, err)
		assert.Equal(t, "link", sc.Name)
	}
}
