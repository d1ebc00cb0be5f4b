package limiters

import (
	"testing"
	"time"
)

func newEnvoy(t *testing.T, text string) *EnvoyGradient {
	t.Helper()
	l, err := Parse(text, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l.(*EnvoyGradient)
}

// envoyMinRTT feeds the first minRTT window 50 answers of 10ms, one every 10ms (ObserveAt
// alone: the rule does not need the permits), so that minRTT = 10ms at 500ms.
func envoyMinRTT(t *testing.T, e *EnvoyGradient) {
	t.Helper()
	for i := 1; i <= 50; i++ {
		e.ObserveAt(time.Duration(i)*10*time.Millisecond, 1, 10*time.Millisecond, true)
	}
	if s := e.Snapshot(500 * time.Millisecond); s.RTTNoLoad != 10*time.Millisecond || s.Max != 3 || s.Probes != 1 {
		t.Fatalf("after the first minRTT window: minRTT %s, limit %d, probes %d; want 10ms, 3, 1", s.RTTNoLoad, s.Max, s.Probes)
	}
}

// TestEnvoyGradientSteps is the doc comment's worked example, window by window: samples in,
// limit out, each value derived by hand from calculateNewLimit (⌊L + √L⌋, L = limit·gradient,
// gradient = clamp(minRTT·1.25 / sampleRTT, 0.5, 2)).
func TestEnvoyGradientSteps(t *testing.T) {
	e := newEnvoy(t, "envoy-gradient:update=100ms,interval=1m")
	if e.Limit() != 3 || e.Probes() != 1 {
		t.Fatalf("fresh: limit %d, probes %d; want 3 (pinned to min by the first minRTT window), 1", e.Limit(), e.Probes())
	}
	// Before minRTT is known the sample timer does nothing: the window holds the limit at 3.
	if got := e.AvailableAt(400 * time.Millisecond); got != 3 {
		t.Fatalf("during the first window: %d available, want 3", got)
	}
	envoyMinRTT(t, e)
	steps := []struct {
		rtt    time.Duration // every sample of the window
		limit  int
		sample time.Duration
	}{
		{10 * time.Millisecond, 5, 10 * time.Millisecond},        // 3·1.25 = 3.75 + 1.94 = 5.69
		{10 * time.Millisecond, 8, 10 * time.Millisecond},        // 6.25 + 2.5 = 8.75
		{10 * time.Millisecond, 13, 10 * time.Millisecond},       // 10 + 3.16
		{10 * time.Millisecond, 20, 10 * time.Millisecond},       // 16.25 + 4.03
		{10 * time.Millisecond, 30, 10 * time.Millisecond},       // 25 + 5
		{10 * time.Millisecond, 43, 10 * time.Millisecond},       // 37.5 + 6.12
		{10 * time.Millisecond, 61, 10 * time.Millisecond},       // 53.75 + 7.33
		{10 * time.Millisecond, 84, 10 * time.Millisecond},       // 76.25 + 8.73
		{20 * time.Millisecond, 59, 20 * time.Millisecond},       // 84·0.625 = 52.5 + 7.25
		{40 * time.Millisecond, 34, 40 * time.Millisecond},       // 0.3125 → 0.5: 29.5 + 5.43
		{0, 34, 40 * time.Millisecond},                           // no samples: nothing changes
		{12500 * time.Microsecond, 39, 12500 * time.Microsecond}, // gradient 1: 34 + 5.83
		{5 * time.Millisecond, 86, 5 * time.Millisecond},         // 12.5/5 = 2.5 → 2: 78 + 8.83
	}
	end := 600 * time.Millisecond // the sample timer fires every 100ms from the minRTT window's end
	for i, s := range steps {
		if s.rtt > 0 {
			for k := 1; k <= 9; k++ {
				e.ObserveAt(end-100*time.Millisecond+time.Duration(k)*10*time.Millisecond, 1, s.rtt, true)
			}
		}
		st := e.Snapshot(end)
		if st.Max != s.limit || st.RTT != s.sample {
			t.Fatalf("window %d (ending %s, samples of %s): limit %d, sampleRTT %s; want %d, %s", i+1, end, s.rtt, st.Max, st.RTT, s.limit, s.sample)
		}
		end += 100 * time.Millisecond
	}
}

// TestEnvoyGradientPercentile: the window's percentile, exact, interpolated, truncated to µs.
func TestEnvoyGradientPercentile(t *testing.T) {
	e := newEnvoy(t, "envoy-gradient:update=100ms,interval=1m,requests=4,percentile=90")
	for i, ms := range []int{40, 10, 30, 20} { // sorted 10 20 30 40: rank 0.9·3 = 2.7 → 30 + 0.7·10 = 37ms
		e.ObserveAt(100*time.Millisecond+time.Duration(i)*time.Millisecond, 1, time.Duration(ms)*time.Millisecond, true)
	}
	if s := e.Snapshot(103 * time.Millisecond); s.RTTNoLoad != 37*time.Millisecond {
		t.Fatalf("p90 of 10, 20, 30, 40ms: %s, want 37ms", s.RTTNoLoad)
	}
}

// TestEnvoyGradientEpoch: a request sent before a minRTT window opens gives no sample, and
// the window's samples only count from its epoch.
func TestEnvoyGradientEpoch(t *testing.T) {
	e := newEnvoy(t, "envoy-gradient:update=100ms,interval=1s,jitter=0,requests=3")
	for i := 1; i <= 3; i++ {
		e.ObserveAt(time.Duration(i)*time.Millisecond, 1, time.Millisecond, true)
	}
	// minRTT = 1ms at 3ms; the next window opens at 1.003s exactly (no jitter).
	if s := e.Snapshot(1003*time.Millisecond - 1); s.Probes != 1 || s.RTTNoLoad != time.Millisecond {
		t.Fatalf("before 1.003s: %+v", s)
	}
	if s := e.Snapshot(1003 * time.Millisecond); s.Probes != 2 || s.Max != 3 {
		t.Fatalf("at 1.003s: probes %d, limit %d; want 2, 3 (pinned)", s.Probes, s.Max)
	}
	// Three answers to requests sent before the epoch: none counts, the window stays open.
	for i := 1; i <= 3; i++ {
		e.ObserveAt(1003*time.Millisecond+time.Duration(i)*time.Millisecond, 1, 5*time.Millisecond, true)
	}
	if s := e.Snapshot(1010 * time.Millisecond); s.Probes != 2 || s.RTTNoLoad != time.Millisecond || s.Max != 3 {
		t.Fatalf("after answers sent before the epoch: %+v; want the window still open, minRTT still 1ms", s)
	}
	// Three sent after it: minRTT = 2ms.
	for i := 1; i <= 3; i++ {
		e.ObserveAt(1010*time.Millisecond+time.Duration(i)*time.Millisecond, 1, 2*time.Millisecond, true)
	}
	if s := e.Snapshot(1013 * time.Millisecond); s.RTTNoLoad != 2*time.Millisecond {
		t.Fatalf("after three answers from the window: minRTT %s, want 2ms", s.RTTNoLoad)
	}
}

// TestEnvoyGradientStuckAtMin: five windows in a row that set the limit to min from min open
// a minRTT window at once (minRTT may be stale).
func TestEnvoyGradientStuckAtMin(t *testing.T) {
	e := newEnvoy(t, "envoy-gradient:update=100ms,interval=1m")
	envoyMinRTT(t, e) // limit 3 at 500ms
	for w := 1; w <= 5; w++ {
		end := 500*time.Millisecond + time.Duration(w)*100*time.Millisecond
		e.ObserveAt(end-time.Millisecond, 1, 100*time.Millisecond, true) // gradient 0.5: 1.5 + 1.22 → 2 → min 3
		s := e.Snapshot(end)
		wantProbes := 1
		if w == 5 {
			wantProbes = 2
		}
		if s.Max != 3 || s.Probes != wantProbes {
			t.Fatalf("window %d: limit %d, probes %d; want 3, %d", w, s.Max, s.Probes, wantProbes)
		}
	}
}

// TestEnvoyGradientJitter: the next minRTT window opens interval + U{0 … ⌈interval_ms·15%⌉−1}
// ms after a window ends, seeded: the same seed the same time, another seed another.
func TestEnvoyGradientJitter(t *testing.T) {
	next := func(seed string) time.Duration {
		e := newEnvoy(t, "envoy-gradient:update=100ms,interval=1s,requests=1"+seed)
		e.ObserveAt(time.Millisecond, 1, time.Millisecond, true) // the window ends at 1ms
		for at := time.Millisecond; at < 2*time.Second; at += time.Millisecond {
			if e.Snapshot(at).Probes == 2 {
				return at - time.Millisecond
			}
		}
		t.Fatal("no second minRTT window within 2s")
		return 0
	}
	a, b, c := next(""), next(""), next(",seed=7")
	if a != b || a == c {
		t.Errorf("seed 1 twice: %s, %s; seed 7: %s (want the first two equal, the third different)", a, b, c)
	}
	for _, d := range []time.Duration{a, c} {
		if d < time.Second || d >= 1150*time.Millisecond || d%time.Millisecond != 0 {
			t.Errorf("next window %s after the last: want whole ms in [1s, 1.15s)", d)
		}
	}
}

func TestEnvoyGradientDecisions(t *testing.T) {
	e := newEnvoy(t, "envoy-gradient:update=100ms,interval=1m,max=10")
	for i, want := range []Decision{Admitted, Admitted, Admitted, Rejected} {
		if d := e.AcquireAt(0, 1); d != want {
			t.Fatalf("request %d at limit 3: %v, want %v", i+1, d, want)
		}
	}
	if d := e.AcquireAt(0, 11); d != Never {
		t.Errorf("11 of max 10: %v, want never", d)
	}
	if d := e.AcquireAt(0, 0); d != Invalid {
		t.Errorf("0: %v, want invalid", d)
	}
	e.Release(2)
	if d := e.AcquireAt(0, 2); d != Admitted {
		t.Errorf("2 with 1 in flight under 3: %v", d)
	}
	defer func() {
		if recover() == nil {
			t.Error("Release(4) with 3 in flight did not panic")
		}
	}()
	e.Release(4)
}
