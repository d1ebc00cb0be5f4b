package golden

import (
	"fmt"
	"os"
	"path"
	"strings"
)

// Block markers of docs/GUARANTEES.md: the Guarantees table is generated between them.
const (
	ReadmeBegin = "<!-- guarantees:begin -->"
	ReadmeEnd   = "<!-- guarantees:end -->"
)

// ReadmeBlock is docs/GUARANTEES.md's body, generated from the catalogue so it cannot drift.
// Links are relative to docs/.
func ReadmeBlock() string {
	var b strings.Builder
	b.WriteString("Every promise of every algorithm is pinned by a guarantee in `golden/`: a scenario run on the\n" +
		"simulator, an explicit checker asserting the exact bound, and a golden file whose first lines state\n" +
		"the claim, the parameters and the bound. `go test ./golden` runs them (`-update` rewrites the golden\n" +
		"files and this table); `go run ./cmd/ratelab guarantees` lists them and `guarantees run ID` runs one.\n" +
		"The same checkers run on a seeded randomized run of about a million requests per algorithm (a tenth of\n" +
		"that under the race detector, where the full runs take 45s), and must catch deliberately broken\n" +
		"limiters (τ one interval too large, a window that never resets, a sliding window without rollback,\n" +
		"a bulkhead that forgets a release, a warm-up ramped by traffic).\n\n")
	b.WriteString("| id | algorithms | claim | bound | golden | chart |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, g := range Catalogue() {
		chart := ""
		if g.Chart != "" {
			chart = fmt.Sprintf("[%s](%s)", strings.TrimSuffix(path.Base(g.Chart), path.Ext(g.Chart)), docsRelative(g.Chart))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | [%s](../golden/%s) | %s |\n", g.ID, g.AlgorithmList(),
			cell(g.Claim), cell(g.Bound), g.ID+".golden", g.Golden(), chart)
	}
	return b.String()
}

// docsRelative is a path from the repository root as docs/ links to it: docs/img/x.png is
// img/x.png, anything else ../ and the path.
func docsRelative(p string) string {
	if rest, ok := strings.CutPrefix(p, "docs/"); ok {
		return rest
	}
	return "../" + p
}

func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// SpliceReadme returns readme with the text between the guarantees markers replaced by block.
func SpliceReadme(readme, block string) (string, error) {
	i := strings.Index(readme, ReadmeBegin)
	j := strings.Index(readme, ReadmeEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("README has no %s … %s block", ReadmeBegin, ReadmeEnd)
	}
	return readme[:i+len(ReadmeBegin)] + "\n" + block + readme[j:], nil
}

// UpdateReadme rewrites the guarantees block of the document at path (docs/GUARANTEES.md), touching nothing else.
func UpdateReadme(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := SpliceReadme(string(data), ReadmeBlock())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if out == string(data) {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(out), info.Mode().Perm())
}
