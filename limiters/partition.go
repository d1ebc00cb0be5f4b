package limiters

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/internal/wording"
)

// PartitionSpec is a concurrency limit shared by criticality classes, as Netflix
// concurrency-limits' partitioned limiter shares it (AbstractPartitionedLimiter): each class
// is guaranteed ⌈limit·share⌉ in flight (at least 1), and borrows beyond that while the whole
// has room. Written "partition(user=0.9,prefetch=0.1):aimd:initial=20,min=20,max=200": the
// limit is the inner spec's, fixed (concurrency) or adaptive (aimd, vegas, gradient, …).
//
// The rule, for a request of class c asking n permits with T in flight in all and limit L
// (the inner limiter's, read at each decision): when T + n ≤ L, it is admitted whatever c
// holds (borrowing what idle classes leave); when not, only if c's own in flight plus n fits
// in c's share ⌈L·share⌉. A limit of 32 split user=0.9, prefetch=0.1: once 32 are in flight,
// user may still reach 29 and prefetch 4, so a prefetch flood that took all 32 while user was
// idle cannot keep user out. In flight can pass L, as in Netflix's: what a class borrowed is
// not taken back, so prefetch holding 31 of 32 while users were idle, users still reach 29
// (60 in flight). A request whose class is none of the shares' belongs to
// the unknown partition, guaranteed 1 (share 0).
//
// Requests over the inner limit (admitted on a class's share while the whole was full) are
// counted apart: a completion gives back one of those first, so the inner limiter's own in
// flight never passes its limit, and the adaptive rule hears every completion's latency.
type PartitionSpec struct {
	Spec   Spec // the limit: a kind that releases (concurrency, or an adaptive kind)
	Names  []string
	Shares []float64 // Shares[i] is Names[i]'s share, in [0, 1], summing to at most 1
}

const partitionPrefix = "partition("

// IsPartitionSpec reports whether text is written as a partitioned spec ("partition(…):…").
func IsPartitionSpec(text string) bool {
	return strings.HasPrefix(strings.TrimSpace(text), partitionPrefix)
}

// ParsePartitionSpec reads "partition(user=0.9,prefetch=0.1):concurrency:max=32". A share is
// a fraction (0.9) or a percentage (90%).
func ParsePartitionSpec(text string) (PartitionSpec, error) {
	fail := func(field, value, reason string) (PartitionSpec, error) {
		return PartitionSpec{}, &SpecError{Spec: text, Field: field, Value: value, Reason: reason}
	}
	rest := strings.TrimSpace(text)
	if !strings.HasPrefix(rest, partitionPrefix) {
		return fail("", "", "a partitioned spec starts with partition(…): e.g. partition(user=0.9,prefetch=0.1):concurrency:max=32")
	}
	shares, inner, ok := strings.Cut(rest[len(partitionPrefix):], ")")
	if !ok {
		return fail("", "", "partition( has no closing )")
	}
	inner, ok = strings.CutPrefix(strings.TrimSpace(inner), ":")
	if !ok {
		return fail("", "", "expected : and the limiter after partition(…), e.g. partition(user=0.9,prefetch=0.1):concurrency:max=32")
	}
	var s PartitionSpec
	parts, empty := wording.SplitList(shares, ",", "class")
	if empty != "" {
		return fail("", "", empty+": classes are CLASS=SHARE joined by single commas")
	}
	for _, part := range parts {
		name, value, has := strings.Cut(part, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !has || name == "" {
			return fail(name, "", "expected CLASS=SHARE, e.g. user=0.9")
		}
		v, err := parseShare(value)
		if err != nil {
			return fail(name, value, err.Error())
		}
		for _, n := range s.Names {
			if n == name {
				return fail(name, value, "given twice")
			}
		}
		s.Names = append(s.Names, name)
		s.Shares = append(s.Shares, v)
	}
	spec, err := ParseSpec(inner)
	if err != nil {
		return PartitionSpec{}, err
	}
	s.Spec = spec
	if err := s.Validate(); err != nil {
		return PartitionSpec{}, err
	}
	return s, nil
}

// parseShare reads 0.9 or 90%.
func parseShare(text string) (float64, error) {
	pct := strings.HasSuffix(text, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(text, "%"), 64)
	if err != nil || math.IsNaN(v) {
		return 0, fmt.Errorf("expected a share such as 0.9 or 90%%")
	}
	if pct {
		v /= 100
	}
	return v, nil
}

// Kind is the inner spec's kind: the limit is its.
func (s PartitionSpec) Kind() Kind {
	if s.Spec == nil {
		return "partition"
	}
	return s.Spec.Kind()
}

// String is "partition(user=0.9,prefetch=0.1):" and the inner spec.
func (s PartitionSpec) String() string {
	var b strings.Builder
	b.WriteString(partitionPrefix)
	for i, n := range s.Names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n + "=" + strconv.FormatFloat(s.Shares[i], 'g', -1, 64))
	}
	b.WriteString("):")
	if s.Spec != nil {
		b.WriteString(s.Spec.String())
	}
	return b.String()
}

// Validate checks the shares (each in [0, 1], at most 1 together, at least one class) and
// that the inner kind releases its permits (a concurrency limit).
func (s PartitionSpec) Validate() error {
	if s.Spec == nil {
		return NewConfigError("partition", "spec", "nil", "a partitioned spec needs a limiter spec")
	}
	if len(s.Names) == 0 || len(s.Names) != len(s.Shares) {
		return NewConfigError(s.Kind(), "partition", "", "needs at least one CLASS=SHARE, e.g. partition(user=0.9,prefetch=0.1)")
	}
	sum := 0.0
	for i, v := range s.Shares {
		if !(v >= 0 && v <= 1) {
			return NewConfigError(s.Kind(), s.Names[i], strconv.FormatFloat(v, 'g', -1, 64), "a share is in [0, 1] (or 0% to 100%)")
		}
		sum += v
	}
	if sum > 1+1e-9 {
		return NewConfigError(s.Kind(), "partition", strconv.FormatFloat(sum, 'g', 4, 64), "the shares add up to more than 1")
	}
	if err := s.Spec.Validate(); err != nil {
		return err
	}
	if info := lookup(s.Spec.Kind()); info != nil && !info.Has(CapRelease) {
		return NewConfigError(s.Kind(), "partition", s.Spec.String(),
			"partitions share a concurrency limit: the inner kind must release its permits (concurrency, aimd, vegas, gradient, gradient2, envoy-gradient, …)")
	}
	return nil
}

// New builds the inner limiter and the partitions over it.
func (s PartitionSpec) New(clock Clock) (Limiter, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	inner, err := s.Spec.New(clock)
	if err != nil {
		return nil, err
	}
	caps := CapabilitiesOf(inner)
	if caps.Release == nil {
		return nil, NewConfigError(s.Kind(), "partition", s.Spec.String(), "the inner limiter does not release its permits")
	}
	p := &Partitioned{spec: s, inner: inner, release: caps.Release, feedback: caps.Feedback,
		busy: make([]int, len(s.Names)+1)}
	if a, ok := inner.(Adaptive); ok {
		p.adaptive = a
		return &PartitionedAdaptive{Partitioned: *p}, nil
	}
	return p, nil
}

// AdmissionBound is false: a concurrency limit has no time axis.
func (s PartitionSpec) AdmissionBound(time.Duration) (int64, bool) { return 0, false }

// NaturalWindow is the inner spec's (0 for the zero spec).
func (s PartitionSpec) NaturalWindow() time.Duration {
	if s.Spec == nil {
		return 0
	}
	return s.Spec.NaturalWindow()
}

// NominalRate is the inner spec's.
func (s PartitionSpec) NominalRate() (Rate, bool) {
	if s.Spec == nil {
		return Rate{}, false
	}
	return s.Spec.NominalRate()
}

// InitialPermits is the inner spec's.
func (s PartitionSpec) InitialPermits() int {
	if s.Spec == nil {
		return 0
	}
	return s.Spec.InitialPermits()
}

// Classed is a limiter that decides per request class: the caller names the class of the
// request it is about to decide, release or observe (SetClass, an index into Classes; any
// other index is the unknown class).
type Classed interface {
	Classes() []string
	SetClass(i int)
}

// Partitioned is a PartitionSpec's limiter over a fixed limit (see PartitionedAdaptive). Not
// safe for concurrent use: SetClass and the call it precedes are one step.
type Partitioned struct {
	spec     PartitionSpec
	inner    Limiter
	release  Releaser
	feedback Feedback
	adaptive Adaptive
	busy     []int // in flight per class; the last is the unknown class
	over     int   // permits admitted over the inner limit, on a class's share
	class    int
}

// PartitionedAdaptive is Partitioned over an adaptive limit: it is Adaptive itself.
type PartitionedAdaptive struct{ Partitioned }

// Limit is the inner limit now (0 for the zero value).
func (p *PartitionedAdaptive) Limit() int {
	if p.adaptive == nil {
		return 0
	}
	return p.adaptive.Limit()
}

// Probes is the inner limiter's.
func (p *PartitionedAdaptive) Probes() int {
	if p.adaptive == nil {
		return 0
	}
	return p.adaptive.Probes()
}

// Classes is the partitions' class names, in the spec's order.
func (p *Partitioned) Classes() []string { return p.spec.Names }

// SetClass names the class of the next request decided, released or observed.
func (p *Partitioned) SetClass(i int) {
	if i < 0 || i >= len(p.spec.Names) {
		i = len(p.spec.Names)
	}
	p.class = i
}

// limit is the inner limit now: the adaptive limit, or the fixed one (its MaxPermits).
func (p *Partitioned) limit() int {
	switch {
	case p.adaptive != nil:
		return p.adaptive.Limit()
	case p.inner != nil:
		return p.inner.MaxPermits()
	}
	return 0
}

// InFlight is the permits held over every class.
func (p *Partitioned) InFlight() int {
	n := 0
	for _, b := range p.busy {
		n += b
	}
	return n
}

// ClassInFlight is class i's permits held (i = len(Classes()): the unknown class).
func (p *Partitioned) ClassInFlight(i int) int {
	if i < 0 || i >= len(p.busy) {
		return 0
	}
	return p.busy[i]
}

// share is class i's guaranteed in flight under limit: ⌈limit·share⌉, at least 1 (Netflix's
// Partition.updateLimit).
func (p *Partitioned) share(i, limit int) int {
	s := 0.0
	if i < len(p.spec.Shares) {
		s = p.spec.Shares[i]
	}
	return max(1, int(math.Ceil(float64(limit)*s)))
}

// AcquireAt admits n permits of the current class (see PartitionSpec).
func (p *Partitioned) AcquireAt(now time.Duration, n int) Decision {
	if p.inner == nil {
		return Never // the zero value: no limit to share
	}
	if d := CheckN(n, p.inner.MaxPermits()); d != Admitted {
		return d
	}
	limit := p.limit()
	if p.InFlight()+n > limit && p.busy[p.class]+n > p.share(p.class, limit) {
		return Rejected
	}
	p.busy[p.class] += n
	if p.inner.AcquireAt(now, n) != Admitted {
		p.over += n // on the class's share, past the inner limit
	}
	return Admitted
}

// Release gives back n permits of the current class: first those held over the inner limit.
func (p *Partitioned) Release(n int) {
	if n <= 0 || n > p.ClassInFlight(p.class) {
		panic(fmt.Sprintf("limiters: partition: Release(%d) with %d in flight in class %d", n, p.ClassInFlight(p.class), p.class))
	}
	p.busy[p.class] -= n
	k := min(p.over, n)
	p.over -= k
	if n > k {
		p.release.Release(n - k)
	}
}

// ObserveAt passes the completion to the inner limiter when it takes feedback.
func (p *Partitioned) ObserveAt(now time.Duration, n int, latency time.Duration, ok bool) {
	if p.feedback != nil {
		p.feedback.ObserveAt(now, n, latency, ok)
	}
}

// AvailableAt is what the current class could take now: the whole's room, or, when the
// whole is full, what is left of the class's share.
func (p *Partitioned) AvailableAt(time.Duration) int {
	if p.inner == nil {
		return 0
	}
	limit := p.limit()
	return max(limit-p.InFlight(), p.share(p.class, limit)-p.ClassInFlight(p.class), 0)
}

// MaxPermits is the inner limiter's.
func (p *Partitioned) MaxPermits() int {
	if p.inner == nil {
		return 0
	}
	return p.inner.MaxPermits()
}

// Kind is the inner limiter's.
func (p *Partitioned) Kind() Kind {
	if p.inner == nil {
		return "partition"
	}
	return p.inner.Kind()
}

// String is the spec.
func (p *Partitioned) String() string { return p.spec.String() }

// Snapshot is the inner limiter's state, its in flight being every class's.
func (p *Partitioned) Snapshot(now time.Duration) State {
	if p.inner == nil {
		return State{}
	}
	return p.inner.Snapshot(now)
}
