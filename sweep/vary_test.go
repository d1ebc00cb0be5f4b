package sweep

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func texts(d Dimension) string {
	out := make([]string, len(d.Values))
	for i, v := range d.Values {
		out[i] = v.Text
	}
	return strings.Join(out, " ")
}

// Each kind of range steps as documented: the ends exact, the values between rounded to a
// round unit, repeats dropped.
func TestRangesStepAsDocumented(t *testing.T) {
	for _, tc := range []struct {
		vary  string
		steps Steps
		want  string
		unit  string
	}{
		{"token-bucket.capacity=1..100", Steps{}, "1 12 23 34 45 56 67 78 89 100", ""},
		{"token-bucket.capacity=1..100", Steps{Scale: Log}, "1 2 3 5 8 13 22 36 60 100", ""},
		{"token-bucket.capacity=1..1000", Steps{N: 4, Scale: Log}, "1 10 100 1000", ""},
		{"token-bucket.capacity=1..1000", Steps{Scale: Log}, "1 2 5 10 22 46 100 215 464 1000", ""},
		{"token-bucket.capacity=1..100000", Steps{}, "1 11000 22000 33000 44000 56000 67000 78000 89000 100000", ""},
		{"token-bucket.capacity=1..5", Steps{}, "1 2 3 4 5", ""}, // fewer whole numbers than steps: each once
		{"token-bucket.capacity=7..7", Steps{}, "7", ""},
		{"token-bucket.rate=50/1s..200/1s", Steps{}, "50/1s 67/1s 83/1s 100/1s 117/1s 133/1s 150/1s 167/1s 183/1s 200/1s", "permits/s"},
		{"token-bucket.rate=50/s..200/s", Steps{N: 4}, "50/1s 100/1s 150/1s 200/1s", "permits/s"},
		{"warm-up.warmup=1s..10s", Steps{}, "1s 2s 3s 4s 5s 6s 7s 8s 9s 10s", "s"},
		{"warm-up.warmup=1s..10s", Steps{Scale: Log}, "1s 1.29s 1.67s 2.15s 2.78s 3.59s 4.64s 5.99s 7.74s 10s", "s"},
		{"fixed-window.window=10ms..1s", Steps{N: 3}, "10ms 510ms 1s", "s"},
		{"guava-warm-up.cold_factor=1.5..3", Steps{N: 4}, "1.5 2 2.5 3", ""},
		{"x-time-rate.mode=try,wait", Steps{}, "try wait", ""},
		{"token-bucket.capacity=3, 1, 2", Steps{}, "3 1 2", ""}, // a list keeps its order
	} {
		d, err := ParseDimension(tc.vary, tc.steps)
		require.NoError(t, err, tc.vary)
		assert.Equal(t, tc.want, texts(d), "%s %+v", tc.vary, tc.steps)
		assert.Equal(t, tc.unit, d.Unit(), tc.vary)
	}
	d, err := ParseDimension("token-bucket.rate=50/1s..200/1s", Steps{N: 4})
	require.NoError(t, err)
	assert.Equal(t, []float64{50, 100, 150, 200}, []float64{d.Values[0].Num, d.Values[1].Num, d.Values[2].Num, d.Values[3].Num}, "rates sit on the axis in permits per second")
	d, err = ParseDimension("token-bucket.rate=6/1m..60/1m", Steps{N: 2})
	require.NoError(t, err)
	assert.InDelta(t, 0.1, d.Values[0].Num, 1e-12)
	d, err = ParseDimension("x-time-rate.mode=try,wait", Steps{})
	require.NoError(t, err)
	assert.True(t, math.IsNaN(d.Values[0].Num))
	assert.False(t, d.Numeric())
}

// A --vary's target and field split at the last "." before the last "=": a lane named by its
// spec, dots and = signs included, reads as that lane.
func TestTargetAndField(t *testing.T) {
	d, err := ParseDimension("token-bucket.capacity=1..9", Steps{})
	require.NoError(t, err)
	assert.Equal(t, "token-bucket", d.Target)
	assert.Equal(t, "token-bucket", string(d.Kind))
	assert.Equal(t, "capacity", d.Field)
	d, err = ParseDimension("token-bucket:capacity=10,rate=0.5/1s.capacity=1..9", Steps{})
	require.NoError(t, err)
	assert.Equal(t, "token-bucket:capacity=10,rate=0.5/1s", d.Target)
	assert.Empty(t, d.Kind, "a lane's name, checked against the scenario by New")
	assert.Equal(t, "capacity", d.Field)
}

// Mistakes name the --vary and say what is wrong, with did-you-mean for a kind's field.
func TestBadVaryIsExplained(t *testing.T) {
	for vary, want := range map[string]string{
		"token-bucket.capacity":             "not TARGET.FIELD=VALUES",
		"capacity=1..9":                     `"capacity" is not TARGET.FIELD`,
		"token-bucket.=1..9":                `"token-bucket." is not TARGET.FIELD`,
		"token-bucket.capcity=1..9":         `token-bucket has no field "capcity" (did you mean capacity?) (fields: capacity, rate)`,
		"token-bucket.burst=1..9":           `token-bucket has no field "burst" (fields: capacity, rate)`,
		"token-bucket.capacity=":            "no values after =",
		"token-bucket.capacity=9..1":        "9..1: LO is above HI",
		"token-bucket.rate=1/1s..100/1m":    "a rate range keeps one window and steps the permits; write both per 1s (e.g. 1/1s..1/1s)",
		"token-bucket.rate=1/1s..x":         "x: expected permits/window",
		"token-bucket.capacity=a..b":        "a..b: LO..HI takes two whole numbers",
		"warm-up.warmup=1s..2":              `1s..2: "2" is not a duration like 1s`,
		"token-bucket.capacity=1,1":         "1 is listed twice",
		"token-bucket.capacity=1,,2":        "an empty value",
		"sliding-window.slots=..10":         "LO..HI takes",
		"token-bucket.capacity=1..10 extra": "LO..HI takes",
	} {
		_, err := ParseDimension(vary, Steps{})
		if want == "" {
			assert.NoError(t, err, vary)
			continue
		}
		require.Error(t, err, vary)
		assert.Contains(t, err.Error(), want, vary)
		assert.True(t, strings.HasPrefix(err.Error(), "vary "+vary+": "), err.Error())
	}
	_, err := ParseDimension("token-bucket.capacity=0..9", Steps{Scale: Log})
	assert.ErrorContains(t, err, "a log range starts at 1 or more, not 0")
	_, err = ParseDimension("token-bucket.capacity=1..9", Steps{N: 1})
	assert.ErrorContains(t, err, "1 steps: a range takes 2 to 1000")
}
