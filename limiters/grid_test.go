package limiters

import (
	"testing"
	"time"
)

// Every kind that counts in windows or slots (its State's shape says so) has a grid, from
// its registry example: a chart can draw its boundaries.
func TestWindowKindsHaveAGrid(t *testing.T) {
	for _, info := range Kinds() {
		spec, err := ParseSpec(info.Example)
		if err != nil {
			t.Fatalf("%s: %v", info.Kind, err)
		}
		_, ok := GridOf(spec)
		if want := info.Shape == ShapeWindow || info.Shape == ShapeSlots; want && !ok {
			t.Errorf("%s (shape %s) has no grid", info.Kind, info.Shape)
		}
	}
}

func TestGridCuts(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name     string
		spec     string
		from, to time.Duration
		want     []time.Duration
	}{
		{"fixed windows at multiples of 1s", "fixed-window:limit=100,window=1s", 0, 3000 * ms, []time.Duration{0, 1000 * ms, 2000 * ms, 3000 * ms}},
		{"flash5 offset 250ms: the first boundary at 750ms", "flash5-fixed:limit=10,window=1s,offset=250ms", 0, 2000 * ms, []time.Duration{750 * ms, 1750 * ms}},
		{"sliding window: a cut per 100ms slot", "sliding-window:limit=100,window=1s,slots=4", 900 * ms, 1600 * ms, []time.Duration{1000 * ms, 1250 * ms, 1500 * ms}},
		{"sentinel: 500ms buckets, offset 100ms", "sentinel:threshold=10,offset=100ms", 0, 1000 * ms, []time.Duration{400 * ms, 900 * ms}},
		{"keyed: the inner spec's grid", "keys(max=10):fixed-window:limit=5,window=100ms", 50 * ms, 250 * ms, []time.Duration{100 * ms, 200 * ms}},
	} {
		var spec Spec
		var err error
		if IsKeyedSpec(tc.spec) {
			spec, err = ParseKeyedSpec(tc.spec)
		} else {
			spec, err = ParseSpec(tc.spec)
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		g, ok := GridOf(spec)
		if !ok {
			t.Fatalf("%s: no grid", tc.name)
		}
		got, ok := g.Cuts(tc.from, tc.to, 100)
		if !ok || len(got) != len(tc.want) {
			t.Fatalf("%s: cuts %v, want %v", tc.name, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: cuts %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
	if _, ok := GridOf(mustParse(t, "token-bucket:capacity=3,rate=100/1s")); ok {
		t.Error("a token bucket has no grid: it refills continuously")
	}
	g, _ := GridOf(mustParse(t, "fixed-window:limit=10,window=1ms"))
	if _, ok := g.Cuts(0, time.Hour, 1000); ok {
		t.Error("3.6 million boundaries in an hour: too many to draw, want false")
	}
	if _, ok := GridOf(mustParse(t, "sentinel:threshold=10,behavior=throttling")); ok {
		t.Error("sentinel's throttling counts nothing: no grid")
	}
}

func mustParse(t *testing.T, text string) Spec {
	t.Helper()
	s, err := ParseSpec(text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
