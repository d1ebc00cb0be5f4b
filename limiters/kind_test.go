package limiters

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every kind in the registry is complete: its entry has every piece, its example parses,
// validates, builds and prints back, and what its spec says about the limiter (initial
// permits, shape, time axis) is what the limiter built from it does. A kind added half-way
// fails here, named with what it lacks.
func TestRegistryIsComplete(t *testing.T) {
	require.NotEmpty(t, Kinds())
	for _, info := range Kinds() {
		t.Run(string(info.Kind), func(t *testing.T) {
			require.Empty(t, info.Missing())
			spec, err := ParseSpec(info.Example)
			require.NoError(t, err, "example")
			assert.Equal(t, info.Kind, spec.Kind())
			assert.Equal(t, info.Example, spec.String(), "the example prints back as written")
			require.NoError(t, spec.Validate())
			l, err := spec.New(zeroClock{})
			require.NoError(t, err)
			assert.Equal(t, info.Kind, l.Kind())
			assert.Equal(t, spec.String(), l.String(), "a limiter prints its spec")
			again, err := ParseSpec(l.String())
			require.NoError(t, err)
			assert.Equal(t, spec, again, "the limiter's spec parses back to an equal spec")
			assert.Equal(t, info.Capabilities, CapabilitiesOf(l).List(), "the declared capabilities are the limiter's")
			st := l.Snapshot(0)
			assert.Equal(t, info.Shape, st.Shape())
			assert.Equal(t, spec.InitialPermits(), l.AvailableAt(0), "InitialPermits is what a fresh limiter has")
			_, timed := spec.NominalRate()
			_, bounded := spec.AdmissionBound(time.Second)
			assert.Equal(t, timed, bounded, "a kind with a rate has a bound, and only then")
			assert.Equal(t, timed, spec.NaturalWindow() > 0, "a kind with a rate has a natural window, and only then")
			for _, d := range []Decision{Admitted, Rejected} {
				s := st.Explain(1, d)
				assert.NotContains(t, s, string(info.Kind)+")", "%s has a sentence of its own for %s", info.Kind, d)
				assert.NotEmpty(t, s)
			}
			for _, text := range append([]string{info.SizesSpec()}, info.AllocSpecs()...) {
				check, err := ParseSpec(text)
				if assert.NoError(t, err, "check spec %s", text) {
					assert.Equal(t, info.Kind, check.Kind(), "check spec %s is of its own kind", text)
					assert.NoError(t, check.Validate(), "check spec %s", text)
				}
			}
			for _, r := range info.Ranges {
				for _, text := range r.Valid {
					s, err := ParseSpec(text)
					if assert.NoError(t, err, "%s: range edge %s", r.Field, text) {
						assert.NoError(t, s.Validate(), "%s: %s is inside the range %q", r.Field, text, r.Accepted)
					}
				}
				for _, text := range r.Invalid {
					if s, err := ParseSpec(text); err == nil {
						assert.Error(t, s.Validate(), "%s: %s is past the range %q", r.Field, text, r.Accepted)
					}
				}
			}
			for _, f := range info.Fields {
				assert.NotEmpty(t, f.Meaning, "field %s explains itself", f.Name)
				if f.Required {
					assert.Contains(t, info.Example, f.Name+"=", "the example gives required field %s", f.Name)
				}
			}
		})
	}
}

// Missing names the kind and each missing piece.
func TestMissingNamesTheKindAndThePiece(t *testing.T) {
	info := tokenBucketKind
	info.Shape, info.Explain = "", nil
	assert.Equal(t, "token-bucket: no shape (one of Shapes()), no explanation", info.Missing())
}

// Specs are checked without building anything, with the same errors New gives.
func TestValidateIsWhatNewRefuses(t *testing.T) {
	for _, text := range []string{
		"token-bucket:capacity=1,rate=1/1ns", "token-bucket:capacity=4611686018427387904,rate=1/1ns",
		"leaky-bucket:rate=1/200000h", "fixed-window:limit=5000000000,window=1s", "fixed-window:limit=100,window=10ns",
		"sliding-window:limit=100,window=1s,slots=7", "sliding-window:limit=100,window=1s,slots=5000",
		"warm-up:capacity=10,rate=100/1s,warmup=200000h", "concurrency:max=3000000000",
	} {
		spec, err := ParseSpec(text)
		require.NoError(t, err, text)
		_, newErr := spec.New(zeroClock{})
		vErr := spec.Validate()
		if newErr == nil {
			assert.NoError(t, vErr, text)
			continue
		}
		require.Error(t, vErr, text)
		assert.Equal(t, newErr.Error(), vErr.Error(), text)
		var ce *ConfigError
		assert.ErrorAs(t, vErr, &ce, text)
	}
}

// Every spec type is a comparable value: equal specs describe the same limiter.
func TestSpecsCompare(t *testing.T) {
	a, _ := ParseSpec("token-bucket:capacity=3,rate=100/1s")
	b, _ := ParseSpec("token-bucket: rate=100/s,capacity=3")
	c, _ := ParseSpec("token-bucket:capacity=4,rate=100/1s")
	assert.True(t, a == b)
	assert.False(t, a == c)
	assert.Equal(t, fmt.Sprint(a), "token-bucket:capacity=3,rate=100/1s")
}

// The warm-up spec's documented curve: 1/3 of the rate cold, 1/2 halfway, all of it at P.
func TestWarmUpRateAtIsTheDocumentedCurve(t *testing.T) {
	s := WarmUpSpec{Capacity: 10, Rate: PerSecond(100), WarmUp: 10 * time.Second}
	for _, tc := range []struct {
		age  time.Duration
		want float64
	}{
		{0, 100.0 / 3}, {5 * time.Second, 50}, {10 * time.Second, 100}, {time.Minute, 100},
	} {
		assert.InDelta(t, tc.want, s.RateAt(tc.age), 1e-9, "age %v", tc.age)
	}
}

// A snapshot's JSON carries its shape's fields, meaningful zeros included, and no others.
func TestStateJSONKeepsTheShapesZeros(t *testing.T) {
	for _, tc := range []struct {
		spec       string
		has, lacks []string
	}{
		{"token-bucket:capacity=3,rate=100/1s", []string{`"arrival_ns":0`, `"interval_ns":10000000`}, []string{`"limit"`, `"in_flight"`, `"age_ns"`}},
		{"warm-up:capacity=3,rate=100/1s,warmup=1s", []string{`"arrival_ns":0`, `"age_ns":0`}, []string{`"limit"`}},
		{"fixed-window:limit=5,window=1s", []string{`"count":0`, `"window_start_ns":0`}, []string{`"arrival_ns"`, `"slots"`}},
		{"sliding-window:limit=5,window=1s,slots=2", []string{`"count":0`, `"slots":[`}, []string{`"arrival_ns"`}},
		{"concurrency:max=2", []string{`"in_flight":0`, `"max":2`}, []string{`"arrival_ns"`, `"limit"`}},
	} {
		l, err := Parse(tc.spec, zeroClock{})
		require.NoError(t, err)
		out, err := json.Marshal(l.Snapshot(0))
		require.NoError(t, err)
		require.True(t, json.Valid(out), "%s", out)
		for _, s := range tc.has {
			assert.Contains(t, string(out), s, tc.spec)
		}
		for _, s := range tc.lacks {
			assert.NotContains(t, string(out), s, tc.spec)
		}
	}
}

// A level-shaped state's JSON carries its level fields, zeros included.
func TestStateJSONLevelFields(t *testing.T) {
	out, err := json.Marshal(State{Kind: "peer", At: 5, Level: 0, LevelMax: 2.5, LevelName: "tokens", NextFree: 5})
	require.NoError(t, err)
	assert.Equal(t, `{"kind":"peer","at_ns":5,"available":0,"max_permits":0,"level":0,"level_max":2.5,"level_name":"tokens","next_free_ns":5}`, string(out))
}
