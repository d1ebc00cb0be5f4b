package failsafego

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

func TestSpecRoundTrip(t *testing.T) {
	for text, want := range map[string]string{
		"failsafe-adaptive":                       "failsafe-adaptive:initial=20,min=1,max=200",
		"failsafe-adaptive:max=50,initial=10":     "failsafe-adaptive:initial=10,min=1,max=50",
		"failsafe-adaptive:quantile=0.5,factor=2": "failsafe-adaptive:initial=20,min=1,max=200,factor=2,quantile=0.5",
		"failsafe-adaptive:samples=10,recent_min=100ms,recent_max=1s,stabilization=5s": "failsafe-adaptive:initial=20,min=1,max=200,recent_min=100ms,recent_max=1s,samples=10,stabilization=5s",
	} {
		spec, err := limiters.ParseSpec(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if spec.String() != want {
			t.Errorf("%s prints %s, want %s", text, spec, want)
		}
		again, err := limiters.ParseSpec(spec.String())
		if err != nil || again != spec {
			t.Errorf("%s does not read back: %v, %v", spec, again, err)
		}
		if _, err := spec.New(nil); err != nil {
			t.Errorf("%s: %v", spec, err)
		}
	}
}

func TestSpecRefusals(t *testing.T) {
	for text, field := range map[string]string{
		"failsafe-adaptive:min=30":                      "initial",
		"failsafe-adaptive:min=300":                     "min",
		"failsafe-adaptive:initial=300":                 "initial",
		"failsafe-adaptive:factor=0.5":                  "factor",
		"failsafe-adaptive:recent_min=2s,recent_max=1s": "recent_min",
		"failsafe-adaptive:quantile=1":                  "quantile",
		"failsafe-adaptive:correlation=1":               "correlation",
		"failsafe-adaptive:max=3000000000":              "max",
	} {
		spec, err := limiters.ParseSpec(text)
		if err == nil {
			err = spec.Validate()
		}
		var ce *limiters.ConfigError
		if !errors.As(err, &ce) || ce.Field != field {
			t.Errorf("%s: %v, want a ConfigError on %s", text, err, field)
		}
	}
	if _, err := limiters.ParseSpec("failsafe-adaptive:quantile=x"); err == nil || !strings.Contains(err.Error(), "quantile") {
		t.Errorf("quantile=x: %v", err)
	}
}

func TestRequestsOfMany(t *testing.T) {
	a, err := NewAdaptive(AdaptiveSpec{Initial: 5, Min: 1, Max: 10, Factor: 5, RecentMin: time.Second, RecentMax: time.Second,
		Samples: 50, Quantile: 0.9, Baseline: 10, Correlation: 50}, nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		n    int
		want limiters.Decision
		held int
	}{{3, limiters.Admitted, 3}, {3, limiters.Rejected, 3}, {2, limiters.Admitted, 5}, {1, limiters.Rejected, 5},
		{11, limiters.Never, 5}, {0, limiters.Invalid, 5}}
	for _, s := range steps {
		if d := a.AcquireAt(time.Millisecond, s.n); d != s.want || a.InFlight() != s.held {
			t.Fatalf("AcquireAt(%d) = %v with %d in flight, want %v with %d", s.n, d, a.InFlight(), s.want, s.held)
		}
	}
	a.ObserveAt(10*time.Millisecond, 3, 9*time.Millisecond, true) // the first three, started at 1ms
	if a.InFlight() != 2 || a.Available() != 3 {
		t.Fatalf("after 3 answered: %d in flight, %d available, want 2 and 3", a.InFlight(), a.Available())
	}
	a.Release(3) // what ObserveAt released already
	a.Release(2) // given back unanswered: dropped
	if a.InFlight() != 0 {
		t.Fatalf("%d in flight after all came back", a.InFlight())
	}
	defer func() {
		if recover() == nil {
			t.Error("Release(1) with nothing held did not panic")
		}
	}()
	a.Release(1)
}

func TestZeroValue(t *testing.T) {
	var a Adaptive
	if d := a.AcquireAt(0, 1); d != limiters.Never || a.Kind() != "" || a.Limit() != 0 || a.String() != "" {
		t.Errorf("zero value: %v %q %d %q", d, a.Kind(), a.Limit(), a.String())
	}
	a.ObserveAt(1, 1, 1, true)
}

func TestRegisteredAfterThePeers(t *testing.T) {
	kinds := limiters.Kinds()
	last := kinds[len(kinds)-1]
	if last.Kind != KindFailsafeAdaptive {
		t.Errorf("the last kind is %s, want %s", last.Kind, KindFailsafeAdaptive)
	}
	if s := last.Missing(); s != "" {
		t.Error(s)
	}
	l, _ := limiters.Parse(last.Example, nil)
	if got := limiters.CapabilitiesOf(l); got.Feedback == nil || got.Release == nil || got.Reserve != nil || got.RetryAfter != nil || got.Refund != nil {
		t.Errorf("capabilities %+v, want release and feedback only", got)
	}
}
