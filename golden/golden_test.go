package golden

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files and the README's Guarantees block")

const readmePath = "../README.md"

// TestGuarantees runs every guarantee of the catalogue: the explicit check first (a failure
// stops there, so a wrong behaviour can never be written into a golden file), then the
// comparison with testdata/ID.golden.
func TestGuarantees(t *testing.T) {
	for _, g := range Catalogue() {
		t.Run(g.ID, func(t *testing.T) {
			if !g.serial {
				t.Parallel()
			}
			v, err := g.Run(context.Background(), nil)
			require.NoError(t, err)
			if !v.OK() {
				t.Fatalf("check failed (golden file not compared, not updated):\n  %s", strings.Join(v.Failures, "\n  "))
			}
			compareGolden(t, g.Golden(), v.Text, "go test ./golden -run 'TestGuarantees/^"+regexp.QuoteMeta(g.ID)+"$'")
		})
	}
}

// compareGolden compares got with the golden file at path. With -update it rewrites the file;
// on a mismatch it writes path.got beside it and prints a unified diff and the command to
// rerun.
func compareGolden(t *testing.T, path, got, rerun string) {
	t.Helper()
	gotPath := path + ".got"
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		_ = os.Remove(gotPath)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		require.NoError(t, os.WriteFile(gotPath, []byte(got), 0o644))
		t.Fatalf("%s: %v\nwrote %s; create the golden file with:\n  %s -update", path, err, gotPath, rerun)
	}
	if string(want) == got {
		_ = os.Remove(gotPath)
		return
	}
	require.NoError(t, os.WriteFile(gotPath, []byte(got), 0o644))
	t.Fatalf("%s differs from this run (wrote %s):\n%s\nrerun: %s\naccept (after reading the diff): %s -update",
		path, gotPath, UnifiedDiff(path, gotPath, string(want), got), rerun, rerun)
}

// TestReadme fails when the README's Guarantees block is not what the catalogue generates.
func TestReadme(t *testing.T) {
	if *update {
		require.NoError(t, UpdateReadme(readmePath))
	}
	data, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	want, err := SpliceReadme(string(data), ReadmeBlock())
	require.NoError(t, err)
	if want != string(data) {
		t.Fatalf("README.md's guarantees block is stale:\n%s\nrewrite it with: go test ./golden -run TestReadme -update",
			UnifiedDiff("README.md", "README.md (generated)", string(data), want))
	}
}

// TestGoldenFilesBelongToCatalogue: no orphan golden file, and every golden file states its
// claim and bound in its first lines.
func TestGoldenFilesBelongToCatalogue(t *testing.T) {
	ids := map[string]*Guarantee{}
	for _, g := range Catalogue() {
		assert.NotContains(t, ids, g.ID, "duplicate id")
		ids[g.ID] = g
		assert.Regexp(t, `^[a-z0-9]+(-[a-z0-9]+)*$`, g.ID)
		assert.NotEmpty(t, g.Algorithms, g.ID)
		if g.Chart != "" {
			assert.FileExists(t, "../"+g.Chart, "%s links a chart that does not exist", g.ID)
		}
		for _, s := range []string{g.Claim, g.Scenario, g.Bound, g.Checker} {
			assert.NotEmpty(t, s, g.ID)
			assert.NotContains(t, s, "\n", g.ID)
		}
	}
	files, err := filepath.Glob("testdata/*.golden")
	require.NoError(t, err)
	for _, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".golden")
		g, ok := ids[id]
		if !assert.True(t, ok, "%s has no guarantee in the catalogue", f) {
			continue
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(data), "# "+id+"\n# claim: "+g.Claim+"\n"), "%s must start with its id and claim", f)
		assert.Contains(t, string(data), "\n# bound: "+g.Bound+"\n", f)
	}
}

func TestUnifiedDiff(t *testing.T) {
	assert.Equal(t, "", UnifiedDiff("a", "b", "x\n", "x\n"))
	d := UnifiedDiff("want", "got", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n")
	assert.Equal(t, "--- want\n+++ got\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n", d)
}
