package limiters

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// Concurrency is a bulkhead: at most max permits held at once. It has no time axis; it
// answers "how many requests may be in progress together", not "how many per second".
//
// The two are not interchangeable. A downstream answers in 3s and a rate limiter allows
// 10/s: the rate limiter is perfectly happy while 30 requests are in flight, and a pool of 20
// connections has already given up. Run both: the rate limiter protects the downstream's
// throughput, the bulkhead this process's threads and connections.
//
// A permit is not refunded by the clock: it only comes back through Release, so TryDo (which
// releases on the way out, even when the function panics) is the safe default. Available is
// max − in flight; the state is one int32, and acquire and release are single CAS loops, so
// callers that do not fit are rejected instead of oversubscribing the pool. Releasing more
// than is held panics, like sync.WaitGroup's negative counter, and changes nothing: a
// double-release bug fails its test at once instead of silently inflating the limit.
//
// The zero value grants nothing: every request is Never, nothing is available, and no
// method panics; NewConcurrency makes a working one.
type Concurrency struct {
	inFlight atomic.Int32
	max      int32
}

var (
	_ Releaser = (*Concurrency)(nil)
	_ Clocked  = (*Concurrency)(nil)
)

// KindConcurrency is the concurrency limiter's name in specs.
const KindConcurrency Kind = "concurrency"

// ConcurrencySpec configures a Concurrency limiter: "concurrency:max=20".
type ConcurrencySpec struct {
	Max int // permits held at once
}

var concurrencyKind = KindInfo{
	Kind: KindConcurrency, Family: FamilyRatelab, Shape: ShapeBulkhead,
	Summary:      "at most max in flight at once (bulkhead); no time axis",
	Example:      "concurrency:max=20",
	Checks:       CheckSpecs{Sizes: "concurrency:max=5", Allocs: []string{"concurrency:max=5"}},
	Fields:       FieldInfos[ConcurrencySpec](),
	Ranges:       concurrencyRanges,
	Capabilities: []Capability{CapRelease},
	Parse:        SpecParser(ConcurrencySpec{}),
	Explain:      explainConcurrency,
}

func (s *ConcurrencySpec) Fields() []Field {
	return []Field{IntField("max", true, "permits held at once", &s.Max)}
}

// Kind is KindConcurrency.
func (s ConcurrencySpec) Kind() Kind { return KindConcurrency }

// String is "concurrency:max=20".
func (s ConcurrencySpec) String() string { return FormatSpec(KindConcurrency, s.Fields()) }

// Validate refuses max below 1 or above 2³¹−1.
func (s ConcurrencySpec) Validate() error {
	if s.Max < 1 || s.Max > math.MaxInt32 {
		return NewConfigError(KindConcurrency, "max", fmt.Sprint(s.Max), "must be between 1 and 2^31-1")
	}
	return nil
}

// concurrencyRanges are what ConcurrencySpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for concurrency, with specs at and just past each edge that the registry
// test holds to Validate.
var concurrencyRanges = []FieldRange{
	{Field: "max", Accepted: "1 to 2^31−1",
		Why:     "the permits held are counted in 32 bits",
		Valid:   []string{"concurrency:max=1", "concurrency:max=2147483647"},
		Invalid: []string{"concurrency:max=0", "concurrency:max=2147483648"}},
}

// New is NewConcurrency(s.Max); the clock is not used.
func (s ConcurrencySpec) New(Clock) (Limiter, error) { return NewConcurrency(s.Max) }

// AdmissionBound is false: a bulkhead has no time axis.
func (s ConcurrencySpec) AdmissionBound(time.Duration) (int64, bool) { return 0, false }

// NaturalWindow is 0: no time axis.
func (s ConcurrencySpec) NaturalWindow() time.Duration { return 0 }

// NominalRate is false: no time axis.
func (s ConcurrencySpec) NominalRate() (Rate, bool) { return Rate{}, false }

// InitialPermits is max.
func (s ConcurrencySpec) InitialPermits() int { return s.Max }

// NewConcurrency returns a bulkhead of max permits. It refuses max below 1 or above 2³¹−1.
func NewConcurrency(max int) (*Concurrency, error) {
	if err := (ConcurrencySpec{Max: max}).Validate(); err != nil {
		return nil, err
	}
	return &Concurrency{max: int32(max)}, nil
}

// AcquireAt takes n permits if in flight + n ≤ max. The time is ignored.
func (c *Concurrency) AcquireAt(_ time.Duration, n int) Decision {
	if d := CheckN(n, int(c.max)); d != Admitted {
		return d
	}
	for {
		held := c.inFlight.Load()
		if int32(n) > c.max-held { // not held+n > max: that wraps for max near 2^31
			return Rejected
		}
		if c.inFlight.CompareAndSwap(held, held+int32(n)) {
			return Admitted
		}
	}
}

// TryAcquireAt reports whether n permits were taken.
func (c *Concurrency) TryAcquireAt(now time.Duration, n int) bool {
	return c.AcquireAt(now, n) == Admitted
}

// TryAcquire reports whether n permits were taken.
func (c *Concurrency) TryAcquire(n int) bool { return c.AcquireAt(0, n) == Admitted }

// Release returns n permits. It panics, leaving the state unchanged, if n is not positive or
// more than are in flight.
func (c *Concurrency) Release(n int) {
	for {
		held := c.inFlight.Load()
		if n <= 0 || int64(n) > int64(held) {
			panic(fmt.Sprintf("limiters: concurrency: Release(%d) with %d in flight", n, held))
		}
		if c.inFlight.CompareAndSwap(held, held-int32(n)) {
			return
		}
	}
}

// TryDo runs fn holding n permits and reports whether it ran. The permits are released when
// fn returns or panics; a panic continues after the release.
func (c *Concurrency) TryDo(n int, fn func()) bool {
	if !c.TryAcquire(n) {
		return false
	}
	defer c.Release(n)
	fn()
	return true
}

// InFlight is the number of permits held.
func (c *Concurrency) InFlight() int { return int(c.inFlight.Load()) }

// AvailableAt is max − in flight.
func (c *Concurrency) AvailableAt(time.Duration) int { return c.Available() }

// Available is max − in flight.
func (c *Concurrency) Available() int { return int(c.max - c.inFlight.Load()) }

// MaxPermits is max.
func (c *Concurrency) MaxPermits() int { return int(c.max) }

// Kind is KindConcurrency.
func (c *Concurrency) Kind() Kind { return KindConcurrency }

// String is the spec: "concurrency:max=20".
func (c *Concurrency) String() string { return c.Spec().String() }

// Spec is the limiter's configuration.
func (c *Concurrency) Spec() ConcurrencySpec { return ConcurrencySpec{Max: int(c.max)} }

// Snapshot returns in flight and max.
func (c *Concurrency) Snapshot(now time.Duration) State {
	held := int(c.inFlight.Load())
	return State{Kind: KindConcurrency, At: now, Available: int(c.max) - held, MaxPermits: int(c.max),
		InFlight: held, Max: int(c.max)}
}

// explainConcurrency: permits in flight against max.
func explainConcurrency(s State, n int, d Decision) string {
	head := fmt.Sprintf("%d of %d in flight", s.InFlight, s.Max)
	if d == Admitted {
		return fmt.Sprintf("%s; %d more fit", head, n)
	}
	return fmt.Sprintf("%s; %d more would exceed the bulkhead until permits are released", head, n)
}
