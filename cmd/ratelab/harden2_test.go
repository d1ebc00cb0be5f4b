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

// show of a file whose lane name is not UTF-8, or of a file whose own name is not (and which
// names the scenario), says so in ratelab's words at the place, where it printed yaml's
// "invalid leading UTF-8 octet" at column 1, or "yaml: cannot marshal invalid UTF-8 data".
func TestShowRefusesTextThatIsNotUTF8(t *testing.T) {
	dir := t.TempDir()
	body := "horizon: 1s\nsources: [{kind: constant, rate: 5}]\nlimiters:\n  - {name: \"a\xffb\", spec: concurrency:max=1}\n"
	path := filepath.Join(dir, "lane.yaml")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	_, _, err := ratelab(t, "show", path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+":4:14: byte 0xff is not UTF-8 text, which a scenario file must be")
	assert.NotContains(t, err.Error(), "octet")

	path = filepath.Join(dir, "a\xffb.yaml")
	require.NoError(t, os.WriteFile(path, []byte("horizon: 1s\nsources: [{kind: constant, rate: 5}]\nlimiters: [concurrency:max=1]\n"), 0o644))
	_, _, err = ratelab(t, "show", path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `name "a\xffb" is not UTF-8 text, which a scenario file must be (a file without a name: is named after the file: add a name: line)`)
	assert.NotContains(t, err.Error(), "marshal")
}
