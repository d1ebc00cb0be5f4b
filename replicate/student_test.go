package replicate

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTQuantileMatchesTheTables pins t(0.975, df) to the published tables (to the 4 decimals
// they print, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2) and its limit, the normal's 1.95996.
func TestTQuantileMatchesTheTables(t *testing.T) {
	for _, c := range []struct {
		df   int
		want float64
	}{{1, 12.7062}, {2, 4.3027}, {3, 3.1824}, {4, 2.7764}, {5, 2.5706}, {9, 2.2622}, {10, 2.2281},
		{19, 2.0930}, {29, 2.0452}, {30, 2.0423}, {60, 2.0003}, {100, 1.9840}, {199, 1.9720}} {
		require.InDelta(t, c.want, TQuantile975(c.df), 5e-5, "df %d", c.df)
	}
	require.InDelta(t, 1.959964, TQuantile975(1_000_000), 1e-5)
	require.True(t, math.IsNaN(TQuantile975(0)))
	require.True(t, math.IsNaN(TQuantile975(-3)))
}

// TestTQuantileIsTheCDFsInverse: P(T > t(p)) = 1 − p; df 1 (the Cauchy) has the closed form
// t(p) = tan(π(p − ½)) and df 2 has t(p) = (2p−1)·√(2 / (4p(1−p))).
func TestTQuantileIsTheCDFsInverse(t *testing.T) {
	for _, p := range []float64{0.6, 0.9, 0.975, 0.995} {
		require.InDelta(t, math.Tan(math.Pi*(p-0.5)), tQuantile(p, 1), 1e-9*math.Tan(math.Pi*(p-0.5)), "df 1 p %g", p)
		require.InDelta(t, (2*p-1)*math.Sqrt(2/(4*p*(1-p))), tQuantile(p, 2), 1e-9, "df 2 p %g", p)
		for _, nu := range []float64{3, 7, 40} {
			require.InDelta(t, 1-p, tUpper(tQuantile(p, nu), nu), 1e-13, "df %g p %g", nu, p)
		}
	}
}
