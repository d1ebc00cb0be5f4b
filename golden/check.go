package golden

import (
	"fmt"
	"time"
)

// The checkers. Each takes what a run admitted and the exact bound, and returns nil or an
// error that names the bound and the interval (or instant) that broke it. They are written
// from the algorithms' promises, not from the limiters' code: bounds are computed here from
// the parameters (emissionInterval, tokenBucketBound, …), never read back from the limiter.

// emissionInterval is T = window / permits rounded up to a whole nanosecond, as the
// glossary defines it.
func emissionInterval(permits int, window time.Duration) time.Duration {
	w, p := int64(window), int64(permits)
	return time.Duration((w + p - 1) / p)
}

// ceilDiv is ⌈a/b⌉ for a ≥ 0, b > 0.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// tokenBucketBound is capacity + ⌈L/T⌉ − 1: a full burst, then one per T.
func tokenBucketBound(capacity int, T, L time.Duration) int64 {
	return int64(capacity) + ceilDiv(int64(L), int64(T)) - 1
}

// Worst is the most permits admitted in one half-open interval [From, From+Length).
type Worst struct {
	Length   time.Duration
	Count    int64
	From, To time.Duration // first and last admission inside it
}

func (w Worst) String() string {
	return fmt.Sprintf("%d admitted in [%s, %s) (first at %s, last at %s)",
		w.Count, ms(w.From), ms(w.From+w.Length), ms(w.From), ms(w.To))
}

// WorstInterval is the exact maximum of permits admitted in any half-open interval of length
// L: a two-pointer sweep in which every admission in turn is the last one of the interval
// and the interval starts at the earliest admission later than it minus L. adm must be in
// time order.
func WorstInterval(adm []Admission, L time.Duration) Worst {
	w := Worst{Length: L}
	var sum int64
	head := 0
	for _, a := range adm {
		sum += int64(a.Permits)
		for adm[head].At <= a.At-L {
			sum -= int64(adm[head].Permits)
			head++
		}
		if sum > w.Count {
			w.Count, w.From, w.To = sum, adm[head].At, a.At
		}
	}
	return w
}

// CheckInterval fails when more than bound permits were admitted in some half-open interval
// of length L. formula says where the bound comes from ("capacity + ⌈L/T⌉ − 1").
func CheckInterval(adm []Admission, L time.Duration, bound int64, formula string) (Worst, error) {
	w := WorstInterval(adm, L)
	if w.Count > bound {
		return w, fmt.Errorf("%s: over the bound %s = %d for intervals of length %s", w, formula, bound, ms(L))
	}
	return w, nil
}

// CheckSpacing fails when two consecutive admissions are less than T apart.
func CheckSpacing(adm []Admission, T time.Duration) (time.Duration, error) {
	least := time.Duration(-1)
	for i := 1; i < len(adm); i++ {
		gap := adm[i].At - adm[i-1].At
		if least < 0 || gap < least {
			least = gap
		}
		if gap < T {
			return gap, fmt.Errorf("admissions at %s and %s are %s apart: under the bound of one emission interval T = %s",
				ms(adm[i-1].At), ms(adm[i].At), ms(gap), ms(T))
		}
	}
	return least, nil
}

// WindowCount is the permits admitted in one aligned window [Start, Start+window).
type WindowCount struct {
	Start time.Duration
	Count int64
}

// AlignedCounts counts admissions per aligned window [k·window, (k+1)·window), for every
// window that admitted something, in time order.
func AlignedCounts(adm []Admission, window time.Duration) []WindowCount {
	var out []WindowCount
	for _, a := range adm {
		start := a.At - a.At%window
		if len(out) == 0 || out[len(out)-1].Start != start {
			out = append(out, WindowCount{Start: start})
		}
		out[len(out)-1].Count += int64(a.Permits)
	}
	return out
}

// CheckAligned fails when an aligned window admitted more than limit.
func CheckAligned(adm []Admission, window time.Duration, limit int64) ([]WindowCount, error) {
	counts := AlignedCounts(adm, window)
	for _, c := range counts {
		if c.Count > limit {
			return counts, fmt.Errorf("%d admitted in the aligned window [%s, %s): over the bound limit = %d per window",
				c.Count, ms(c.Start), ms(c.Start+window), limit)
		}
	}
	return counts, nil
}

// CheckExact fails unless exactly want permits were admitted in [from, to).
func CheckExact(adm []Admission, from, to time.Duration, want int64, what string) (int64, error) {
	got := Count(adm, from, to)
	if got != want {
		return got, fmt.Errorf("%d admitted in [%s, %s): %s is exactly %d", got, ms(from), ms(to), what, want)
	}
	return got, nil
}

// Count is the permits admitted in [from, to).
func Count(adm []Admission, from, to time.Duration) int64 {
	var n int64
	for _, a := range adm {
		if a.At >= from && a.At < to {
			n += int64(a.Permits)
		}
	}
	return n
}

// CheckSchedule fails unless the admissions in [from, to) happened exactly at the instants
// want (one permit each), in order.
func CheckSchedule(adm []Admission, from, to time.Duration, want []time.Duration, what string) error {
	var got []time.Duration
	for _, a := range adm {
		if a.At >= from && a.At < to {
			for range a.Permits {
				got = append(got, a.At)
			}
		}
	}
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return fmt.Errorf("in [%s, %s) admission %d of %d expected at %s never came: %s", ms(from), ms(to), i+1, len(want), ms(want[i]), what)
		case i >= len(want):
			return fmt.Errorf("in [%s, %s) admission %d at %s is one more than the %d expected: %s", ms(from), ms(to), i+1, ms(got[i]), len(want), what)
		case got[i] != want[i]:
			return fmt.Errorf("in [%s, %s) admission %d was at %s, expected at %s: %s", ms(from), ms(to), i+1, ms(got[i]), ms(want[i]), what)
		}
	}
	return nil
}
