package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A --chart FILE's name and bytes agree: .png (any case) or no extension is PNG, .svg is SVG,
// and any other extension (fit --chart out.gif wrote PNG bytes) is refused before the run,
// leaving no file.
func TestChartExtensionIsTheFormat(t *testing.T) {
	for _, cmd := range [][]string{{"fit", "--in", gatewayTrace, "--steps", "4"}, {"translate", "rate=100/1s,burst=20"}} {
		dir := t.TempDir()
		for _, bad := range []string{"out.gif", "out.jpg", "out.PDF", "out.png.txt"} {
			path := filepath.Join(dir, bad)
			_, _, err := ratelab(t, append(cmd, "--chart", path)...)
			require.Error(t, err, "%v --chart %s", cmd, bad)
			assert.True(t, isUsage(err), "%v: %v", cmd, err)
			assert.Contains(t, err.Error(), "--chart "+path+": ratelab does not write "+filepath.Ext(bad)+" files; name the chart .png (PNG) or .svg (SVG)")
			assert.NoFileExists(t, path)
		}
		for name, magic := range map[string]string{"a.PNG": "\x89PNG\r\n", "plain": "\x89PNG\r\n", "b.SVG": "<svg"} {
			path := filepath.Join(dir, name)
			_, _, err := ratelab(t, append(cmd, "--chart", path)...)
			require.NoError(t, err, "%v --chart %s", cmd, name)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.True(t, bytes.HasPrefix(b, []byte(magic)) || bytes.Contains(b[:min(len(b), 200)], []byte(magic)), "%v --chart %s: %.20q", cmd, name, b)
		}
	}
}
