package plots

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/translate"
)

// The translation chart has a panel per translated lane; a lane the run found identical lies
// on its reference's line (every point 0), and one that differs leaves it where the run says:
// Guava, empty at the start, is 19 below the bucket once the first 30 have been decided.
func TestTranslationChartFollowsTheRun(t *testing.T) {
	in, err := translate.ParseIntent("rate=100/1s,burst=20")
	require.NoError(t, err)
	sc, phases := translate.ProbeScenario(in)
	rep, err := translate.Run(context.Background(), sc, in, translate.Translate(in), phases)
	require.NoError(t, err)
	fig, err := Translation(rep)
	require.NoError(t, err)
	ran := 0
	for _, l := range rep.Lanes {
		if l.Ran && l.Fit != translate.FitReference {
			ran++
		}
	}
	require.Len(t, fig.Panels, ran)
	assert.Equal(t, 3, fig.Cols, "15 panels: 5 full rows of 3")
	byTitle := map[string]*Panel{}
	for _, pn := range fig.Panels {
		byTitle[pn.Title] = pn
	}
	diff := func(title string) []float64 {
		pn, ok := byTitle[title]
		require.True(t, ok, "a panel %q", title)
		return pn.Series[1].Y
	}
	for _, y := range diff("nginx: identical") {
		assert.Zero(t, y)
	}
	guava := diff("guava: 190 differ, from #2 at 0s")
	assert.EqualValues(t, -19, guava[1], "the first bin: 1 of 30 against 20")
	fixed := diff("fixed-window: 119 differ, from #51 at 1.1s")
	assert.EqualValues(t, 1, fixed[len(fixed)-1], "180 against 179 in all")
	var buf bytes.Buffer
	require.NoError(t, fig.Write(&buf, "png", DefaultWidth, 0))
	assert.Greater(t, buf.Len(), 10000)

	_, err = Translation(&translate.Report{})
	require.Error(t, err)
}
