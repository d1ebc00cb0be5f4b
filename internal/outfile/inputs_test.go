package outfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An output that is a noted input, by any name (itself, ./name, a symbolic or a hard link),
// is refused by Check and by Create before anything is written; other paths pass.
func TestCheckRefusesAnInputByAnyName(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("in.csv", []byte("t_ns\n0\n"), 0o644))
	require.NoError(t, os.Symlink("in.csv", "sym.csv"))
	require.NoError(t, os.Link("in.csv", "hard.csv"))
	ctx := WithInputs(context.Background(), nil)
	require.NoError(t, NoteInput(ctx, "the trace --in in.csv", "in.csv"))

	for _, path := range []string{"in.csv", "./in.csv", "sym.csv", "hard.csv", filepath.Join(dir, "in.csv")} {
		err := Check(ctx, Output{Flag: "--out", Path: path})
		require.Error(t, err, path)
		assert.Equal(t, "--out "+path+": the same file as the trace --in in.csv; ratelab does not write over what it reads: give another path", err.Error())
		var same *SameFileError
		assert.True(t, errors.As(err, &same))
		_, err = Create(ctx, path)
		assert.ErrorAs(t, err, &same, "Create checks too: %s", path)
	}
	got, err := os.ReadFile("in.csv")
	require.NoError(t, err)
	assert.Equal(t, "t_ns\n0\n", string(got), "the input is intact")
	assert.ElementsMatch(t, []string{"in.csv", "sym.csv", "hard.csv"}, names(t, dir), "no temporary file")

	assert.NoError(t, Check(ctx, Output{Path: "-"}, Output{Path: ""}, Output{Path: "new.csv"}), "stdout, none and a new path pass")
	require.NoError(t, os.WriteFile("other.csv", nil, 0o644))
	assert.NoError(t, Check(ctx, Output{Flag: "--out", Path: "other.csv"}))
	assert.Equal(t, `"a b.csv": the same file as the trace --in in.csv; ratelab does not write over what it reads: give another path`,
		func() string {
			require.NoError(t, os.Link("in.csv", "a b.csv"))
			return Check(ctx, Output{Path: "a b.csv"}).Error()
		}(), "a path a shell would split is quoted")
	assert.NoError(t, Check(context.Background(), Output{Path: "in.csv"}), "a context without WithInputs guards nothing")
}

// An input that is standard output is refused as it is noted (`ratelab run s.yaml >> s.yaml`);
// a device (/dev/null) is read and written at once and never guarded.
func TestNoteInputRefusesStandardOutput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	require.NoError(t, os.WriteFile(path, []byte("name: s\n"), 0o644))
	stdout, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	defer stdout.Close()
	ctx := WithInputs(context.Background(), stdout)
	err = NoteInput(ctx, "the scenario file s.yaml", path)
	require.Error(t, err)
	assert.Equal(t, "standard output is the scenario file s.yaml: ratelab does not write over what it reads; send the output elsewhere", err.Error())
	stdin, err := os.Open(path)
	require.NoError(t, err)
	defer stdin.Close()
	assert.Error(t, NoteStdin(ctx, "standard input (the scenario file)", stdin))

	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	require.NoError(t, err)
	defer null.Close()
	ctx = WithInputs(context.Background(), null)
	assert.NoError(t, NoteInput(ctx, "the null device", os.DevNull))
	assert.NoError(t, Check(ctx, Output{Path: os.DevNull}), "a device is never an input to guard")
	assert.NoError(t, NoteInput(ctx, "nothing", filepath.Join(dir, "missing")), "a path that does not exist is not an input")
}
