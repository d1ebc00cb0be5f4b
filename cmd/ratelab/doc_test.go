package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// packageDoc is doc.go as the commands table says it: the package doc lists every command
// of commands, in the table's order, with its arguments and summary, as usage does.
func packageDoc(table []command) string {
	var b strings.Builder
	b.WriteString("// Code generated from main.go's commands table by go test ./cmd/ratelab -run TestPackageDocIsTheCommandsTable -update; DO NOT EDIT.\n\n")
	b.WriteString("// Command ratelab runs scripted traffic through rate limiters on a virtual clock and shows,\n" +
		"// side by side, what each one admits.\n//\n")
	b.WriteString("//\tratelab\n//\t    the workbench (TUI on a terminal; the default scenario's table otherwise)\n")
	for _, c := range table {
		b.WriteString("//\t" + strings.TrimSpace("ratelab "+c.name+" "+c.args) + "\n")
		for line := range strings.SplitSeq(wrap(c.summary, helpWidth, ""), "\n") {
			b.WriteString("//\t    " + line + "\n")
		}
	}
	b.WriteString("//\n// `ratelab COMMAND -h` (or `ratelab help COMMAND`) explains a command and every flag it\n" +
		"// takes. Exit codes: 0 ok, 1 failure, 2 usage error, 130 interrupted (143 terminated, 129\n" +
		"// hung up); every error is one line on stderr.\npackage main\n")
	return b.String()
}

// docMismatch is "" when doc is want, else the first line where they part.
func docMismatch(doc, want string) string {
	got, wanted := strings.Split(doc, "\n"), strings.Split(want, "\n")
	for i := range max(len(got), len(wanted)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(wanted) {
			w = wanted[i]
		}
		if g != w {
			return fmt.Sprintf("doc.go line %d: has %q, the table says %q", i+1, g, w)
		}
	}
	return ""
}

// The package doc (doc.go) lists the commands of main.go's table, no more, no fewer, each with
// its arguments and summary: a command added, renamed or reworded without it fails here.
func TestPackageDocIsTheCommandsTable(t *testing.T) {
	want := packageDoc(commands)
	data, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	diff := docMismatch(string(data), want)
	if diff == "" {
		return
	}
	if !*update {
		t.Fatalf("doc.go is stale (%s); rewrite it with: go test ./cmd/ratelab -run TestPackageDocIsTheCommandsTable -update", diff)
	}
	require.NoError(t, os.WriteFile("doc.go", []byte(want), 0o644))
}

// The broken variants: a command dropped from the table, a new one, and a summary reworded
// are each caught, naming the line.
func TestPackageDocCheckCatchesAStaleDoc(t *testing.T) {
	doc := packageDoc(commands)
	require.Empty(t, docMismatch(doc, packageDoc(commands)))

	i := slices.IndexFunc(commands, func(c command) bool { return c.name == "replay" })
	require.GreaterOrEqual(t, i, 0)
	dropped := slices.Delete(slices.Clone(commands), i, i+1)
	assert.Contains(t, docMismatch(doc, packageDoc(dropped)), "ratelab replay", "a command gone from the table")

	added := append(slices.Clone(commands), command{name: "export", args: "--out FILE", summary: "write the results somewhere"})
	assert.Contains(t, docMismatch(doc, packageDoc(added)), "ratelab export --out FILE", "a command missing from the doc")

	reworded := slices.Clone(commands)
	reworded[i].summary = "replay a trace"
	assert.Contains(t, docMismatch(doc, packageDoc(reworded)), `the table says "//\t    replay a trace"`, "a summary changed")
}
