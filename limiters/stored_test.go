package limiters_test

import (
	"testing"

	"github.com/ratelab/ratelab/limiters"
)

// Exactly the kinds whose state is a GCRA or a fixed window are Stored, and StoredKinds names
// them in registry order; the peers registered beside them are not.
func TestStoredKinds(t *testing.T) {
	if got, want := limiters.StoredKinds(), "token-bucket, leaky-bucket and fixed-window"; got != want {
		t.Errorf("StoredKinds() = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		spec string
		want limiters.StoreForm
	}{
		{"token-bucket:capacity=3,rate=100/1s", limiters.StoreForm{GCRA: true, Interval: 10e6, Tolerance: 30e6}},
		{"leaky-bucket:rate=100/1s", limiters.StoreForm{GCRA: true, Interval: 10e6, Tolerance: 10e6}},
		{"fixed-window:limit=100,window=1s", limiters.StoreForm{Limit: 100, Window: 1e9}},
	} {
		spec, err := limiters.ParseSpec(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := spec.(limiters.Stored)
		if !ok {
			t.Errorf("%s is not Stored", tc.spec)
			continue
		}
		if got := s.StoreForm(); got != tc.want {
			t.Errorf("%s: StoreForm() = %+v, want %+v", tc.spec, got, tc.want)
		}
	}
}
