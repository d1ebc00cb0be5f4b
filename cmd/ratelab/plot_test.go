package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlotWritesEveryApplicableChartAndPrintsThePaths(t *testing.T) {
	dir := t.TempDir()
	out, _, err := ratelab(t, "plot", "burst-after-idle", "--out", dir)
	require.NoError(t, err)
	var want []string
	for _, c := range []string{"timeline", "rate", "state", "guarantee"} {
		want = append(want, filepath.Join(dir, "burst-after-idle-"+c+".png"))
	}
	assert.Equal(t, strings.Join(want, "\n")+"\n", out)
	for _, p := range want {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(data), "\x89PNG"), p)
	}
}

func TestPlotOneChartAsSVGAtASize(t *testing.T) {
	dir := t.TempDir()
	out, _, err := ratelab(t, "plot", "cold-start", "--chart", "warmup", "--format", "svg", "--width", "640", "--height", "400", "--out", dir)
	require.NoError(t, err)
	path := filepath.Join(dir, "cold-start-warmup.svg")
	assert.Equal(t, path+"\n", out)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), "<svg")
	assert.Contains(t, string(data), `width="480pt"`) // 640 pixels at 96 dpi
}

func TestPlotUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"plot", "boundary-attack"},                                   // no --out
		{"plot", "boundary-attack", "--out", dir, "--chart", "pie"},   // unknown chart
		{"plot", "boundary-attack", "--out", dir, "--format", "jpeg"}, // unknown format
		{"plot", "boundary-attack", "--out", dir, "--width", "10"},    // too small
		{"plot", "--gallery", dir, "boundary-attack"},                 // the gallery takes no scenario
		{"plot", "no-such-scenario", "--out", dir},                    // misspelt scenario
	} {
		_, _, err := ratelab(t, args...)
		assert.True(t, isUsage(err), "%v: got %v, want a usage error", args, err)
	}
	// A chart that does not apply is a failure that says so.
	_, _, err := ratelab(t, "plot", "boundary-attack", "--chart", "warmup", "--out", dir)
	require.Error(t, err)
	assert.False(t, isUsage(err))
	assert.Contains(t, err.Error(), "does not apply")
}

func TestGalleryPageHasEachScenariosTextChartsAndTable(t *testing.T) {
	dir := t.TempDir()
	e := &env{stdout: io.Discard, stderr: io.Discard}
	require.NoError(t, writeGallery(context.Background(), e, dir, []string{"burst-after-idle"}, plotOptions{format: "png", width: 800}))
	page, err := os.ReadFile(filepath.Join(dir, "GALLERY.md"))
	require.NoError(t, err)
	text := string(page)
	assert.Contains(t, text, "## burst-after-idle")
	assert.Contains(t, text, "The algorithms document's example")
	assert.Contains(t, text, "](img/burst-after-idle-timeline.png)")
	assert.Contains(t, text, "| `token-bucket:capacity=3,rate=100/1s` | 13 | 8 |")
	_, err = os.Stat(filepath.Join(dir, "img", "burst-after-idle-guarantee.png"))
	assert.NoError(t, err)
}

// The charts guide's block (docs/CHARTS.md) and the gallery only show images the gallery
// command writes.
func TestReadmeChartsAreInTheGallery(t *testing.T) {
	block := readmeBlock(t, "charts")
	gallery, err := os.ReadFile("../../docs/GALLERY.md")
	require.NoError(t, err)
	for _, line := range strings.Split(block, "\n") {
		i := strings.Index(line, "](img/")
		if i < 0 {
			continue
		}
		file := line[i+len("](") : strings.Index(line[i:], ")")+i]
		assert.Contains(t, string(gallery), "]("+file+")", "README shows %s, which the gallery does not regenerate", file)
		_, err := os.Stat(filepath.Join("../../docs", file))
		assert.NoError(t, err)
	}
}

func TestPlotGuaranteeWindowFlag(t *testing.T) {
	dir := t.TempDir()
	_, _, err := ratelab(t, "plot", "boundary-attack", "--chart", "guarantee", "--window", "20ms", "--format", "svg", "--out", dir)
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(dir, "boundary-attack-guarantee.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(data), "most admitted in any 20ms window")
	_, _, err = ratelab(t, "plot", "boundary-attack", "--window", "-1s", "--out", dir)
	assert.True(t, isUsage(err))
}

// plot --format gif animates a time-axis chart; a chart without one is a usage error, and with
// no --chart only the charts that animate are written.
func TestPlotAnimatedGIF(t *testing.T) {
	dir := t.TempDir()
	out, _, err := ratelab(t, "plot", "burst-after-idle", "--chart", "timeline", "--format", "gif", "--out", dir)
	require.NoError(t, err)
	path := filepath.Join(dir, "burst-after-idle-timeline.gif")
	assert.Equal(t, path+"\n", out)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), "GIF89a"))

	_, _, err = ratelab(t, "plot", "diurnal", "--chart", "waits", "--format", "gif", "--out", dir)
	assert.True(t, isUsage(err), "%v", err)
	assert.ErrorContains(t, err, "no time axis")
	_, _, err = ratelab(t, "plot", "--gallery", dir, "--format", "gif")
	assert.True(t, isUsage(err), "%v", err)
}

// --from and --to zoom the charts, and are checked against the run.
func TestPlotZoom(t *testing.T) {
	dir := t.TempDir()
	_, _, err := ratelab(t, "plot", "boundary-attack", "--chart", "rate", "--from", "900ms", "--to", "1.1s", "--format", "svg", "--out", dir)
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(dir, "boundary-attack-rate.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(data), "time (ms)")
	assert.Contains(t, string(data), "Shown: 900ms to 1.1s of a 3s run.")
	for _, args := range [][]string{
		{"--from", "2s", "--to", "1s"},
		{"--to", "1h"},
		{"--from", "-1s"},
	} {
		_, _, err := ratelab(t, append([]string{"plot", "boundary-attack", "--chart", "rate", "--out", dir}, args...)...)
		assert.True(t, isUsage(err), "%v: %v", args, err)
	}
}
