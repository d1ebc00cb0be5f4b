package plots

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	fitpkg "github.com/ratelab/ratelab/fit"
)

// The burstiness chart draws σ at every fitting grid rate in the token bucket's colour, marks
// the knee at its point and the relaxed capacity below it, and renders as PNG and SVG.
func TestBurstinessChart(t *testing.T) {
	rep, err := fitpkg.Fit(context.Background(), fitpkg.File("../scenarios/traces/api-gateway.csv", "api-gateway.csv"),
		fitpkg.Options{Steps: 10, RefusePPM: 10000})
	require.NoError(t, err)
	f := Burstiness(rep)
	pn := f.Panels[0]
	curve := pn.Series[0]
	require.Len(t, curve.X, len(rep.Curve))
	for i, p := range rep.Curve {
		assert.Equal(t, p.PerSec, curve.X[i])
		assert.Equal(t, float64(p.Capacity), curve.Y[i])
	}
	assert.Equal(t, KindColor("token-bucket"), curve.Color)
	knee, relaxed := pn.Series[2], pn.Series[3]
	assert.Equal(t, []float64{float64(rep.Recommended().Capacity)}, knee.Y)
	assert.Equal(t, []float64{float64(rep.Relaxed.Capacity)}, relaxed.Y)
	assert.Less(t, relaxed.Y[0], knee.Y[0])
	for _, format := range []string{"png", "svg"} {
		var b bytes.Buffer
		require.NoError(t, f.Write(&b, format, 0, 0))
		assert.Greater(t, b.Len(), 1000)
	}
}
