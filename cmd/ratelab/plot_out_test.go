package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --out guarantee.png names a file, not a directory to create: refused with the command that
// does what was meant, and nothing is made. An existing directory of that name is a directory.
func TestPlotOutImageNameIsNotADirectory(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "guarantee.png")
	_, _, err := ratelab(t, "plot", "boundary-attack", "--chart", "guarantee", "--out", out)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a directory, not an image file: plot writes DIR/NAME-CHART.png; for one chart in a file of your own, --chart NAME --out - >")
	assert.NoFileExists(t, out)
	assert.NoDirExists(t, out)

	require.NoError(t, os.Mkdir(out, 0o755))
	_, _, err = ratelab(t, "plot", "boundary-attack", "--chart", "guarantee", "--out", out)
	require.NoError(t, err)
	assert.FileExists(t, filepath.Join(out, "boundary-attack-guarantee.png"))
}
