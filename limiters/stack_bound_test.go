package limiters_test

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// A stack's bound is its tightest stage's; a stack with no bounded stage has none.
func TestStackBound(t *testing.T) {
	parse := func(texts ...string) []limiters.Spec {
		var out []limiters.Spec
		for _, text := range texts {
			s, err := limiters.ParseSpec(text)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return out
	}
	tb, fw, bulkhead := "token-bucket:capacity=10,rate=100/1s", "fixed-window:limit=100,window=1s", "concurrency:max=5"
	for _, tc := range []struct {
		stack []string
		want  int64
		ok    bool
	}{
		{[]string{tb}, 109, true},
		{[]string{fw}, 200, true},
		{[]string{fw, tb}, 109, true},
		{[]string{bulkhead, fw}, 200, true},
		{[]string{bulkhead}, 0, false},
		{nil, 0, false},
	} {
		got, ok := limiters.StackBound(parse(tc.stack...), time.Second)
		if got != tc.want || ok != tc.ok {
			t.Errorf("StackBound(%v, 1s) = %d, %v; want %d, %v", tc.stack, got, ok, tc.want, tc.ok)
		}
	}
}
