package golden

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/internal/goldenfile"
	"github.com/ratelab/ratelab/limiters"
)

var update = flag.Bool("update", false, "rewrite the golden files and the README's Guarantees block")

const readmePath = "../docs/GUARANTEES.md"

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
			if err := settle(v, g.Golden(), *update, rerunCommand(g)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func rerunCommand(g *Guarantee) string {
	return "go test ./golden -run 'TestGuarantees/^" + regexp.QuoteMeta(g.ID) + "$'"
}

// settle applies a verdict to its golden file at path. A failed check is an error and
// touches no file, with or without update. Otherwise the repository's golden-file check
// (internal/goldenfile) compares: with update the golden file is rewritten; otherwise a
// mismatch writes path.got beside it and the error carries a unified diff and the command to
// rerun.
func settle(v Verdict, path string, update bool, rerun string) error {
	if !v.OK() {
		return fmt.Errorf("check failed (golden file not compared, not updated):\n  %s", strings.Join(v.Failures, "\n  "))
	}
	return goldenfile.Check(path, []byte(v.Text), goldenfile.Options{Update: &update, Rerun: rerun, Diff: UnifiedDiff})
}

// A broken behaviour can never be updated into a golden file: with -update, a failed check
// leaves the golden file as it was and writes no got-file.
func TestUpdateNeverWritesAFailedCheck(t *testing.T) {
	g, err := Get("token-bucket-burst")
	require.NoError(t, err)
	v, err := g.Run(context.Background(), tauTooLarge)
	require.NoError(t, err)
	require.False(t, v.OK())
	path := filepath.Join(t.TempDir(), g.ID+".golden")
	require.NoError(t, os.WriteFile(path, []byte("the reviewed text\n"), 0o644))
	for _, upd := range []bool{true, false} {
		err := settle(v, path, upd, rerunCommand(g))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "check failed (golden file not compared, not updated)")
		data, _ := os.ReadFile(path)
		assert.Equal(t, "the reviewed text\n", string(data))
		assert.NoFileExists(t, path+".got")
	}
}

// A mismatch writes the got-file beside the golden and names the command to rerun.
func TestMismatchWritesGotFileAndDiff(t *testing.T) {
	g, err := Get("low-rate")
	require.NoError(t, err)
	v, err := g.Run(context.Background(), nil)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), g.ID+".golden")
	stale := strings.Replace(v.Text, "smallest gap 1h", "smallest gap 2h", 1)
	require.NoError(t, os.WriteFile(path, []byte(stale), 0o644))
	err = settle(v, path, false, rerunCommand(g))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "\n-token-bucket:capacity=1,rate=1/1h: offered 10801, admitted at 0s 1h 2h 3h; smallest gap 2h\n")
	assert.Contains(t, err.Error(), "\n+token-bucket:capacity=1,rate=1/1h: offered 10801, admitted at 0s 1h 2h 3h; smallest gap 1h\n")
	assert.Contains(t, err.Error(), "go test ./golden -run 'TestGuarantees/^low-rate$' -update")
	got, rerr := os.ReadFile(path + ".got")
	require.NoError(t, rerr)
	assert.Equal(t, v.Text, string(got))
	require.NoError(t, settle(v, path, true, rerunCommand(g)))
	assert.NoFileExists(t, path+".got")
	require.NoError(t, settle(v, path, false, rerunCommand(g)))
}

// TestReadme fails when docs/GUARANTEES.md's block is not what the catalogue generates.
func TestReadme(t *testing.T) {
	if *update {
		require.NoError(t, UpdateReadme(readmePath))
	}
	data, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	want, err := SpliceReadme(string(data), ReadmeBlock())
	require.NoError(t, err)
	if want != string(data) {
		t.Fatalf("docs/GUARANTEES.md's guarantees block is stale:\n%s\nrewrite it with: go test ./golden -run TestReadme -update",
			UnifiedDiff("GUARANTEES.md", "GUARANTEES.md (generated)", string(data), want))
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

// Every kind in the limiters registry is pinned by at least one guarantee, and the guarantees
// that hold for every algorithm (request sizes, no allocation) list every kind: a new kind
// without a guarantee fails here, by name.
func TestEveryKindHasAGuarantee(t *testing.T) {
	pinned := map[limiters.Kind][]string{}
	for _, g := range Catalogue() {
		for _, k := range g.Algorithms {
			pinned[k] = append(pinned[k], g.ID)
		}
	}
	forAll := []string{"request-sizes", "no-alloc"}
	for _, info := range limiters.Kinds() {
		if len(pinned[info.Kind]) == 0 {
			t.Errorf("%s: no guarantee pins it (add it to a guarantee's Algorithms, with a checker)", info.Kind)
		}
		for _, id := range forAll {
			if !slices.Contains(pinned[info.Kind], id) {
				t.Errorf("%s: not covered by %s, which holds for every kind", info.Kind, id)
			}
		}
	}
}
