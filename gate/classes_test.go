package gate

import (
	"strings"
	"testing"

	"github.com/ratelab/ratelab/engine"
)

func TestClassMetrics(t *testing.T) {
	r := engine.LaneResult{Classes: []engine.ClassResult{
		{Class: "user", Offered: 200, Refused: 0, Answered: 198, LatencyP99: 600e6},
		{Class: "prefetch", Offered: 400, Refused: 100},
	}}
	for _, c := range []struct {
		text string
		want float64
		ok   bool
	}{
		{"all.refused{class=user} == 0", 0, true},
		{"all.refused%{class=prefetch} > 20", 25, true},
		{"all.latency_p99{ class = user } < 1s", 600e6, true},
		{"all.answered{class=user} >= 198", 198, true},
		{"all.refused{class=batch} == 0", 0, false},
	} {
		check, err := Parse(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		v, ok := check.Metric.Value(engine.LaneSpec{}, r)
		if ok != c.ok || v != c.want {
			t.Errorf("%s: %v %v, want %v %v", c.text, v, ok, c.want, c.ok)
		}
		if ok && !check.Holds(v) {
			t.Errorf("%s does not hold for %v", c.text, v)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"all.refused{klass=user} == 0", "the only label is class"},
		{"all.refused{class=user == 0", "no closing }"},
		{"all.refusd{class=user} == 0", "did you mean refused?"},
		{"all.latency_p99{class=user} < 5", "compare it with a duration"},
	} {
		if _, err := Parse(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.text, err, c.want)
		}
	}
}
