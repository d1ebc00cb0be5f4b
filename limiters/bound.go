package limiters

import "time"

// AdmissionBound is the most permits the algorithm of spec promises to admit in any
// half-open interval of length L, and false for kinds with no time axis (concurrency).
// These are the exact worst cases, reachable by an adversarial arrival pattern:
//
//   - token bucket, warm-up: capacity + ⌈L/T⌉ − 1 (a full burst, then one per T);
//     100/s capacity 3 over 1s: 102.
//   - leaky bucket: ⌈L/T⌉; 100/s over 1s: 100.
//   - fixed window: limit·(⌈(L−1ns)/window⌉ + 1), the windows the interval can touch;
//     100 per 1s over 1s: 200 — the boundary burst.
//   - sliding window: limit·⌈k/slots⌉ where k = ⌈(L−1ns)/slotLength⌉ + 1 is the number of
//     slot-indices the interval can touch; 100 per 1s in 10 slots: 100 over 900ms, 200 over 1s.
func AdmissionBound(spec Spec, L time.Duration) (int64, bool) {
	if L <= 0 {
		return 0, true
	}
	touched := func(span time.Duration) int64 { // ⌈(L−1)/span⌉ + 1
		return (int64(L)-1+int64(span)-1)/int64(span) + 1
	}
	switch spec.Kind {
	case KindTokenBucket, KindWarmUpTokenBucket:
		t := int64(spec.Rate.Interval())
		return int64(spec.Capacity) + (int64(L)+t-1)/t - 1, true
	case KindLeakyBucket:
		t := int64(spec.Rate.Interval())
		return (int64(L) + t - 1) / t, true
	case KindFixedWindow:
		return int64(spec.Limit) * touched(spec.Window), true
	case KindSlidingWindow:
		slots := int64(max(spec.Slots, 1))
		k := touched(spec.Window / time.Duration(slots))
		return int64(spec.Limit) * ((k + slots - 1) / slots), true
	}
	return 0, false
}

// NaturalWindow is the span a spec is usually judged over: the rate's window for the GCRA
// kinds, the window for window kinds, and 0 for concurrency.
func (s Spec) NaturalWindow() time.Duration {
	switch s.Kind {
	case KindTokenBucket, KindLeakyBucket, KindWarmUpTokenBucket:
		return s.Rate.Window
	case KindFixedWindow, KindSlidingWindow:
		return s.Window
	}
	return 0
}
