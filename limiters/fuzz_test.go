package limiters

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/ratelab/ratelab/virtualclock"
)

// maxTime is the end of the range every limiter is correct in: times from 0 to 2^62ns.
const maxTime = time.Duration(MaxSpan)

// FuzzParseSpec reads arbitrary text as a spec. It must never panic; a spec it reads prints
// back to the same spec; and whatever Validate accepts must build, on a virtual clock, into a
// limiter that prints the same spec and decides requests across the whole time range without
// panicking, while what Validate refuses New refuses too (Validate is New's check without
// building). Seeds: testdata/fuzz/FuzzParseSpec; go test runs them, scripts/fuzz.sh fuzzes.
func FuzzParseSpec(f *testing.F) {
	for _, k := range Kinds() {
		f.Add(k.Example)
	}
	f.Fuzz(func(t *testing.T, text string) {
		spec, err := ParseSpec(text)
		if err != nil {
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("ParseSpec(%q): %T, not a *SpecError: %v", text, err, err)
			}
			return
		}
		printed := spec.String()
		again, err := ParseSpec(printed)
		if err != nil {
			t.Fatalf("ParseSpec(%q) = %q, which does not parse: %v", text, printed, err)
		}
		if again != spec {
			t.Fatalf("ParseSpec(%q) = %#v prints %q, read back as %#v", text, spec, printed, again)
		}
		clock := virtualclock.New()
		valid := spec.Validate()
		l, err := spec.New(clock)
		if valid != nil {
			if err == nil {
				t.Fatalf("%q: Validate refuses (%v) what New builds", printed, valid)
			}
			var ce *ConfigError
			if !errors.As(valid, &ce) {
				t.Fatalf("%q: Validate's error is %T, not a *ConfigError: %v", printed, valid, valid)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q: Validate accepts what New refuses: %v", printed, err)
		}
		if l.String() != printed {
			t.Fatalf("%q builds a limiter that prints %q", printed, l.String())
		}
		if l.Kind() != spec.Kind() {
			t.Fatalf("%q builds a %s", printed, l.Kind())
		}
		exercise(t, printed, spec, l)
	})
}

// exercise drives a freshly built limiter at the edges of its range: the start, its natural
// window, and the end of time, with the largest and a too large request.
func exercise(t *testing.T, name string, spec Spec, l Limiter) {
	t.Helper()
	max := l.MaxPermits()
	if max < 1 {
		t.Fatalf("%s: MaxPermits %d", name, max)
	}
	if got := spec.InitialPermits(); got < 1 || got > max {
		t.Fatalf("%s: InitialPermits %d, MaxPermits %d", name, got, max)
	}
	w := spec.NaturalWindow()
	for _, L := range []time.Duration{1, w, maxTime - 1} {
		if L <= 0 {
			continue
		}
		if b, ok := AdmissionBound(spec, L); ok && b < 1 {
			t.Fatalf("%s: AdmissionBound(%v) = %d", name, L, b)
		}
	}
	times := []time.Duration{0, 0, 1, w / 2, w, w + 1, 2 * w, maxTime / 2, maxTime - 2, maxTime - 1}
	for i, at := range times {
		if at < 0 || at >= maxTime {
			continue
		}
		n := 1
		if i%3 == 1 {
			n = max
		}
		d := l.AcquireAt(at, n)
		if d != Admitted && d != Rejected {
			t.Fatalf("%s: AcquireAt(%v, %d) = %v", name, at, n, d)
		}
		if got := l.AcquireAt(at, max+1); max < math.MaxInt && got != Never {
			t.Fatalf("%s: AcquireAt(%v, max+1=%d) = %v, want never", name, at, max+1, got)
		}
		if a := l.AvailableAt(at); a < 0 || a > max {
			t.Fatalf("%s: AvailableAt(%v) = %d, MaxPermits %d", name, at, a, max)
		}
		if r, ok := l.(RetryAfter); ok {
			if wait, ok := r.RetryAfterAt(at, 1); ok && wait < 0 {
				t.Fatalf("%s: RetryAfterAt(%v, 1) = %v", name, at, wait)
			}
		}
		s := l.Snapshot(at)
		_ = s.Explain(1, d)
	}
}
