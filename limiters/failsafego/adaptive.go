package failsafego

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/internal/limits"
)

// KindFailsafeAdaptive is failsafe-go's adaptivelimiter in specs.
const KindFailsafeAdaptive limiters.Kind = "failsafe-adaptive"

// FamilyFailsafe is failsafe-go, the Go fault-tolerance library (its policies: retry,
// circuit breaker, bulkhead, rate limiter, adaptive limiter and throttler).
const FamilyFailsafe limiters.Family = "failsafe-go"

// AdaptiveSpec configures failsafe-go's adaptive limiter (github.com/failsafe-go/failsafe-go
// v0.9.8, adaptivelimiter.NewBuilder[any]() with the fields below, then Build()):
// "failsafe-adaptive:initial=20,min=1,max=200". Every field is a Builder option, with the
// library's default:
//
//	initial, min, max   WithLimits(min, max, initial): 20, 1, 200
//	factor              WithMaxLimitFactor: 5 (the limit stays within 5 × the window's most in flight)
//	recent_min/_max     WithRecentWindow(min, max, samples): 1s, 30s, 50
//	samples
//	quantile            WithRecentQuantile: 0.9 (p90 of the window's execution times)
//	baseline            WithBaselineWindow: 10 (the baseline's moving-average age)
//	correlation         WithCorrelationWindow: 50
//	stabilization       WithMaxLimitStabilizationWindow: 0 (off)
//
// The rule, as the library runs it (adaptiveLimiter.record and updateLimit), on each recorded
// execution: its time goes into a t-digest; once the window holds at least `samples` times
// and the clock has passed the window's end, the window's p90 goes through a 5-sample moving
// median and a 5-sample moving average (recent), the baseline is a moving average of recent
// with age 10 (each reached after 10 warm-up windows), and
//
//	gradient  = baseline / recent
//	queue     = ⌈limit · (1 − gradient)⌉
//	decrease  when queue > 6·log10(limit), or when the limiter is full and in-flight
//	          correlates with falling throughput (or with rising RTT and flat throughput)
//	increase  when queue < 3·log10(limit); else hold
//	step      ±log10(limit) (1 below a limit of 100, 2 from 100 to 999, ...)
//	cap       limit ≤ factor · the window's most in flight, and within [min, max]
//
// The next window ends max(2 · the window's least time, recent_min) later, at most
// recent_max. With the defaults, 8 callers that each ask again when answered and a server
// that answers in 50ms (TestWorkedExample): the first window closes at 350ms, with the 50th
// sample (8 every 50ms: 56 by then), and the limit goes 20 → 21 (queue 0 < 3·log10(20) = 3);
// each later window lasts 1s and closes at the first answer after it, 1.05s on, +1 each:
// 40 at 20.3s, where the cap 5 × 8 holds it. The server slows to 100ms at 30s; the p90 goes
// through the median and the average, and from 33s queue = ⌈40 · (1 − baseline/recent)⌉
// passes 6·log10(40) = 6: −1 a window, 34 at 38.5s, until the baseline (age 10) has caught
// up; the limit climbs back from 47.3s and is at 40 again at 52.8s. It never refused a
// request: 8 in flight is always under it.
//
// Driven at virtual time. The library reads the wall clock in three places and takes no
// clock option: the permit's start (time.Now() in newPermit), the permit's clock
// (util.WallClock, read by Record and Drop) and the first window's end (time.Now() in
// Build). ratelab drives the real library's code, unchanged, at virtual time by setting those
// three unexported fields through package reflect (startTime and clock of each permit, and
// nextUpdateTime once at build) to virtualEpoch + now, 2000-01-01 UTC. The fields are found by
// name and type when the first limiter is built: a version of the library that renamed or
// retyped them is refused with an error that says which, never driven wrong. The test
// TestMatchesTheLibraryOnItsOwnClock checks this against the library driven through its public
// API alone in a testing/synctest bubble, whose fake clock time.Now() reads, decision for
// decision and limit for limit over random schedules.
//
// ratelab's feedback to the library:
//
//	AcquireAt(now, 1)           TryAcquirePermit() (no queueing: refused when full)
//	AcquireAt(now, n > 1)       n permits when n fit under the limit, else none: n executions
//	ObserveAt(now, n, rtt, ok)  n permits, each started at now − rtt: Record() when ok, Drop()
//	                            when not (a timeout, an error burst's failure, a full pool: the
//	                            library's executor drops a cancelled execution and records
//	                            a finished one; ratelab's "not ok" is an execution that did not
//	                            finish, so its time does not move the limit)
//	Release(n) after ObserveAt  nothing more (Record and Drop released the library's permits)
//	Release(n) otherwise        Drop() the n newest permits, at the last time heard (a later
//	                            stage refused the request: the permit is returned unrecorded)
//
// A completion is matched to the permit acquired at now − rtt (the oldest such), else to
// the oldest held: ratelab's feedback carries no per-request token. The in-flight count the
// library records with a sample is the one at that permit's acquisition, as in its executor.
//
// The limiter takes one mutex per call (the library takes its own besides) and allocates:
// the library makes a permit per execution and grows its t-digest; it is a real library's
// lane, not one of ratelab's allocation-free kinds.
type AdaptiveSpec struct {
	Initial, Min, Max    int
	Factor               float64
	RecentMin, RecentMax time.Duration
	Samples              int
	Quantile             float64
	Baseline             int
	Correlation          int
	Stabilization        time.Duration
}

// DefaultAdaptiveSpec is the library's NewBuilder defaults.
var DefaultAdaptiveSpec = AdaptiveSpec{
	Initial: 20, Min: 1, Max: 200, Factor: 5,
	RecentMin: time.Second, RecentMax: 30 * time.Second, Samples: 50,
	Quantile: 0.9, Baseline: 10, Correlation: 50,
}

var adaptiveKind = limiters.KindInfo{
	Kind: KindFailsafeAdaptive, Family: FamilyFailsafe, Shape: limiters.ShapeAdaptive,
	Summary:      "failsafe-go's adaptivelimiter, the real library at virtual time: p90 window against a baseline, ±log10",
	Example:      "failsafe-adaptive:initial=20,min=1,max=200",
	Checks:       limiters.CheckSpecs{Sizes: "failsafe-adaptive:initial=5,min=1,max=5", Allocs: []string{"failsafe-adaptive:initial=5,min=1,max=200"}},
	Fields:       limiters.FieldInfos[AdaptiveSpec](),
	Ranges:       adaptiveRanges,
	Capabilities: []limiters.Capability{limiters.CapRelease, limiters.CapFeedback},
	Parse:        limiters.SpecParser(DefaultAdaptiveSpec),
	Explain:      explainAdaptive,
}

func floatField(name, meaning string, v *float64, def float64) limiters.Field {
	return limiters.Field{
		FieldInfo: limiters.FieldInfo{Name: name, Meaning: meaning},
		Set: func(text string) error {
			f, err := strconv.ParseFloat(text, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("%q is not a number", text)
			}
			*v = f
			return nil
		},
		Get:  func() string { return strconv.FormatFloat(*v, 'f', -1, 64) },
		Omit: func() bool { return *v == def },
	}
}

func optionalInt(name, meaning string, v *int, def int) limiters.Field {
	f := limiters.IntField(name, false, meaning, v)
	f.Omit = func() bool { return *v == def }
	return f
}

func optionalDuration(name, meaning string, v *time.Duration, def time.Duration) limiters.Field {
	f := limiters.DurationField(name, false, meaning, v)
	f.Omit = func() bool { return *v == def }
	return f
}

func (s *AdaptiveSpec) Fields() []limiters.Field {
	d := DefaultAdaptiveSpec
	return []limiters.Field{
		limiters.IntField("initial", false, "the limit at start (default 20)", &s.Initial),
		limiters.IntField("min", false, "the least the limit falls to (default 1)", &s.Min),
		limiters.IntField("max", false, "the most the limit grows to (default 200)", &s.Max),
		floatField("factor", "the limit stays within factor × the window's most in flight, at least 1 (default 5)", &s.Factor, d.Factor),
		optionalDuration("recent_min", "a window lasts at least this (default 1s)", &s.RecentMin, d.RecentMin),
		optionalDuration("recent_max", "a window lasts at most this (default 30s)", &s.RecentMax, d.RecentMax),
		optionalInt("samples", "executions a window needs before it moves the limit (default 50)", &s.Samples, d.Samples),
		floatField("quantile", "the quantile of a window's times compared, in (0, 1) (default 0.9)", &s.Quantile, d.Quantile),
		optionalInt("baseline", "the baseline's moving-average age in windows (default 10)", &s.Baseline, d.Baseline),
		optionalInt("correlation", "windows the in-flight/throughput/RTT correlations span, at least 2 (default 50)", &s.Correlation, d.Correlation),
		optionalDuration("stabilization", "remember the most in flight over this span for the cap (default off)", &s.Stabilization, 0),
	}
}

// Kind is KindFailsafeAdaptive.
func (s AdaptiveSpec) Kind() limiters.Kind { return KindFailsafeAdaptive }

// String is "failsafe-adaptive:initial=20,min=1,max=200" and any field not at its default.
func (s AdaptiveSpec) String() string { return limiters.FormatSpec(KindFailsafeAdaptive, s.Fields()) }

// Validate refuses what the library's builder would panic on (limits out of order, a factor
// below 1, recent_min above recent_max, a quantile outside (0, 1)) and what would leave it
// without a window (baseline 0, correlation below 2), limits beyond 2^31 − 1 and spans beyond
// 2^62ns.
func (s AdaptiveSpec) Validate() error {
	k := KindFailsafeAdaptive
	if s.Max < 1 || s.Max > math.MaxInt32 {
		return limiters.NewConfigError(k, "max", fmt.Sprint(s.Max), "must be between 1 and 2^31-1")
	}
	if s.Min < 1 || s.Min > s.Max {
		return limiters.NewConfigError(k, "min", fmt.Sprint(s.Min), fmt.Sprintf("must be between 1 and max=%d", s.Max))
	}
	if s.Initial < s.Min || s.Initial > s.Max {
		return limiters.NewConfigError(k, "initial", fmt.Sprint(s.Initial), fmt.Sprintf("must be between min=%d and max=%d", s.Min, s.Max))
	}
	if !(s.Factor >= 1) || s.Factor > 1e6 {
		return limiters.NewConfigError(k, "factor", fmt.Sprint(s.Factor), "must be between 1 and 1e6")
	}
	if s.RecentMin <= 0 || int64(s.RecentMax) > limiters.MaxSpan {
		return limiters.NewConfigError(k, "recent_min", limiters.FormatDuration(s.RecentMin), "must be positive, recent_max at most 2^62ns")
	}
	if s.RecentMin > s.RecentMax {
		return limiters.NewConfigError(k, "recent_min", limiters.FormatDuration(s.RecentMin), "must be at most recent_max="+limiters.FormatDuration(s.RecentMax))
	}
	if s.Samples < 1 {
		return limiters.NewConfigError(k, "samples", fmt.Sprint(s.Samples), "must be at least 1")
	}
	if !(s.Quantile > 0 && s.Quantile < 1) {
		return limiters.NewConfigError(k, "quantile", fmt.Sprint(s.Quantile), "must be in (0, 1)")
	}
	if s.Baseline < 1 {
		return limiters.NewConfigError(k, "baseline", fmt.Sprint(s.Baseline), "must be at least 1")
	}
	if s.Correlation < 2 {
		return limiters.NewConfigError(k, "correlation", fmt.Sprint(s.Correlation), "must be at least 2")
	}
	if s.Stabilization < 0 || int64(s.Stabilization) > limiters.MaxSpan {
		return limiters.NewConfigError(k, "stabilization", limiters.FormatDuration(s.Stabilization), "must be between 0 and 2^62ns")
	}
	return nil
}

// adaptiveRanges are what AdaptiveSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for failsafe-adaptive, with specs at and just past each edge that the registry
// test holds to Validate.
var adaptiveRanges = []limiters.FieldRange{
	{Field: "initial", Accepted: "between min and max (default 20)",
		Why:     "the library's WithLimits panics on limits out of order; the limit is a count of permits, in 32 bits",
		Valid:   []string{"failsafe-adaptive:initial=1,min=1,max=1", "failsafe-adaptive:initial=200"},
		Invalid: []string{"failsafe-adaptive:initial=201", "failsafe-adaptive:initial=5,min=6"}},
	{Field: "min", Accepted: "1 to max (default 1)",
		Why:     "the library's WithLimits panics on limits out of order; the limit is a count of permits, in 32 bits",
		Valid:   []string{"failsafe-adaptive:min=1", "failsafe-adaptive:initial=200,min=200,max=200"},
		Invalid: []string{"failsafe-adaptive:min=0", "failsafe-adaptive:initial=20,min=21,max=20"}},
	{Field: "max", Accepted: "1 to 2147483647 (default 200)",
		Why:     "the library's WithLimits panics on limits out of order; the limit is a count of permits, in 32 bits",
		Valid:   []string{"failsafe-adaptive:initial=1,min=1,max=1", "failsafe-adaptive:max=2147483647"},
		Invalid: []string{"failsafe-adaptive:max=2147483648"}},
	{Field: "factor", Accepted: "a number from 1 to 1e6 (default 5)",
		Why:     "failsafe-go's builder panics on others (WithMaxLimitFactor below 1); the cap is factor × in flight, a float",
		Valid:   []string{"failsafe-adaptive:factor=1", "failsafe-adaptive:factor=1000000"},
		Invalid: []string{"failsafe-adaptive:factor=0.99", "failsafe-adaptive:factor=1000001"}},
	{Field: "recent_min", Accepted: "a positive duration, at most recent_max (default 1s)",
		Why:     "failsafe-go's builder panics on others (WithRecentWindow with min above max)",
		Valid:   []string{"failsafe-adaptive:recent_min=1ns", "failsafe-adaptive:recent_min=30s"},
		Invalid: []string{"failsafe-adaptive:recent_min=31s", "failsafe-adaptive:recent_min=0s"}},
	{Field: "recent_max", Accepted: "at least recent_min, a span of virtual time, " + limits.Span + " (default 30s)",
		Why:     "a window's end is now + at most recent_max: the sum must not overflow",
		Valid:   []string{"failsafe-adaptive:recent_max=1s", "failsafe-adaptive:recent_max=4611686018427387904ns"},
		Invalid: []string{"failsafe-adaptive:recent_max=999ms", "failsafe-adaptive:recent_max=4611686018427387905ns"}},
	{Field: "samples", Accepted: "1 to 2^63−1 (default 50)",
		Why:     "executions a window needs before it moves the limit",
		Valid:   []string{"failsafe-adaptive:samples=1"},
		Invalid: []string{"failsafe-adaptive:samples=0"}},
	{Field: "quantile", Accepted: "a number in (0, 1) (default 0.9)",
		Why:     "failsafe-go's builder panics on others (WithRecentQuantile)",
		Valid:   []string{"failsafe-adaptive:quantile=0.01", "failsafe-adaptive:quantile=0.99"},
		Invalid: []string{"failsafe-adaptive:quantile=0", "failsafe-adaptive:quantile=1"}},
	{Field: "baseline", Accepted: "1 to 2^63−1 windows (default 10)",
		Why:     "the baseline's moving-average weight is 2/(baseline+1)",
		Valid:   []string{"failsafe-adaptive:baseline=1"},
		Invalid: []string{"failsafe-adaptive:baseline=0"}},
	{Field: "correlation", Accepted: "at least 2 windows (default 50)",
		Why:     "a correlation needs two pairs",
		Valid:   []string{"failsafe-adaptive:correlation=2"},
		Invalid: []string{"failsafe-adaptive:correlation=1"}},
	{Field: "stabilization", Accepted: "a positive duration, a span of virtual time, " + limits.Span + ", or omitted (off)",
		Why:     "the span the most in flight is remembered over, added to times",
		Valid:   []string{"failsafe-adaptive:stabilization=1ns", "failsafe-adaptive:stabilization=1h"},
		Invalid: []string{"failsafe-adaptive:stabilization=0s", "failsafe-adaptive:stabilization=4611686018427387905ns"}},
}

// New builds the limiter; the clock is read only by TryAcquire and Available (feedback and
// AcquireAt carry their time).
func (s AdaptiveSpec) New(clock limiters.Clock) (limiters.Limiter, error) {
	return NewAdaptive(s, clock)
}

// AdmissionBound is false: no time axis.
func (s AdaptiveSpec) AdmissionBound(time.Duration) (int64, bool) { return 0, false }

// NaturalWindow is 0: no time axis.
func (s AdaptiveSpec) NaturalWindow() time.Duration { return 0 }

// NominalRate is false: no time axis.
func (s AdaptiveSpec) NominalRate() (limiters.Rate, bool) { return limiters.Rate{}, false }

// InitialPermits is the initial limit.
func (s AdaptiveSpec) InitialPermits() int { return s.Initial }

// Builder is the library's builder for the spec: the options above, nothing else.
func (s AdaptiveSpec) Builder() adaptivelimiter.Builder[any] {
	b := adaptivelimiter.NewBuilder[any]().
		WithLimits(uint(s.Min), uint(s.Max), uint(s.Initial)).
		WithMaxLimitFactor(s.Factor).
		WithRecentWindow(s.RecentMin, s.RecentMax, uint(s.Samples)).
		WithRecentQuantile(s.Quantile).
		WithBaselineWindow(uint(s.Baseline)).
		WithCorrelationWindow(uint(s.Correlation))
	if s.Stabilization > 0 {
		b = b.WithMaxLimitStabilizationWindow(s.Stabilization)
	}
	return b
}

// Adaptive is failsafe-go's adaptive limiter driven at virtual time (see AdaptiveSpec). The
// zero value grants nothing (every request is Never); NewAdaptive makes a working one.
type Adaptive struct {
	spec  AdaptiveSpec
	clock limiters.Clock

	mu      sync.Mutex
	lib     adaptivelimiter.AdaptiveLimiter[any]
	at      *virtualClock
	held    []held // permits held, in the order acquired
	settled int    // permits Record or Drop released on ObserveAt, for Release to take
	rtt     time.Duration
}

type held struct {
	p  adaptivelimiter.Permit
	at time.Duration
}

var (
	_ limiters.Adaptive = (*Adaptive)(nil)
	_ limiters.Clocked  = (*Adaptive)(nil)
)

// NewAdaptive builds the library's limiter for spec, its first window ending at virtual time
// 0. It refuses what AdaptiveSpec.Validate refuses, and a library whose fields it cannot drive
// at virtual time (see AdaptiveSpec).
func NewAdaptive(spec AdaptiveSpec, clock limiters.Clock) (*Adaptive, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	lay, err := layoutOf()
	if err != nil {
		return nil, err
	}
	a := &Adaptive{spec: spec, clock: clock, lib: spec.Builder().Build(), at: &virtualClock{t: virtualEpoch}}
	lay.startAt(a.lib, virtualEpoch)
	return a, nil
}

// advance moves the library's clock to now (never back: a late reading is heard at the last
// time, as the library's wall clock would).
func (a *Adaptive) advance(now time.Duration) {
	if t := virtualEpoch.Add(now); t.After(a.at.t) {
		a.at.t = t
	}
}

// AcquireAt takes n permits from the library at now (see AdaptiveSpec): Rejected when they
// do not fit under its limit, Never when n is above max.
func (a *Adaptive) AcquireAt(now time.Duration, n int) limiters.Decision {
	if a.lib == nil {
		return limiters.CheckN(n, 0)
	}
	if d := limiters.CheckN(n, a.spec.Max); d != limiters.Admitted {
		return d
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.advance(now)
	if n > 1 && a.lib.Limit()-a.lib.Inflight() < n {
		return limiters.Rejected
	}
	lay := theLayout
	for range n {
		p, ok := a.lib.TryAcquirePermit()
		if !ok {
			// Only n = 1 gets here: n > 1 fit, and nothing else touches the library.
			return limiters.Rejected
		}
		lay.pin(p, a.at, a.at.t)
		a.held = append(a.held, held{p: p, at: a.at.t.Sub(virtualEpoch)})
	}
	return limiters.Admitted
}

// TryAcquireAt reports whether n permits were taken.
func (a *Adaptive) TryAcquireAt(now time.Duration, n int) bool {
	return a.AcquireAt(now, n) == limiters.Admitted
}

// TryAcquire is TryAcquireAt at the limiter's clock's time.
func (a *Adaptive) TryAcquire(n int) bool { return a.TryAcquireAt(limiters.ReadClock(a.clock), n) }

// ObserveAt tells the library that n executions started at now − latency finished at now:
// Record() each when ok, Drop() when not.
func (a *Adaptive) ObserveAt(now time.Duration, n int, latency time.Duration, ok bool) {
	if a.lib == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.advance(now)
	start := now - latency
	for range n {
		i := a.match(start)
		if i < 0 {
			return
		}
		p := a.held[i].p
		a.held = append(a.held[:i], a.held[i+1:]...)
		theLayout.pin(p, a.at, virtualEpoch.Add(start))
		if ok {
			p.Record()
			a.rtt = latency
		} else {
			p.Drop()
		}
		a.settled++
	}
}

// match is the index of the oldest permit acquired at start, else of the oldest held, -1 when
// none is held.
func (a *Adaptive) match(start time.Duration) int {
	for i, h := range a.held {
		if h.at == start {
			return i
		}
	}
	if len(a.held) == 0 {
		return -1
	}
	return 0
}

// Release returns n permits: those ObserveAt already gave back first, then Drop() of the
// newest held. It panics, changing nothing, if n is not positive or more than are held.
func (a *Adaptive) Release(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n <= 0 || n > a.settled+len(a.held) {
		panic(fmt.Sprintf("limiters: %s: Release(%d) with %d in flight", KindFailsafeAdaptive, n, a.settled+len(a.held)))
	}
	take := min(n, a.settled)
	a.settled -= take
	for range n - take {
		last := len(a.held) - 1
		p := a.held[last].p
		a.held = a.held[:last]
		p.Drop()
	}
}

// Limit is the library's limit now.
func (a *Adaptive) Limit() int {
	if a.lib == nil {
		return 0
	}
	return a.lib.Limit()
}

// Probes is 0: the library has no no-load probe.
func (a *Adaptive) Probes() int { return 0 }

// InFlight is the number of permits held (the library's Inflight).
func (a *Adaptive) InFlight() int {
	if a.lib == nil {
		return 0
	}
	return a.lib.Inflight()
}

// AvailableAt is max(limit − in flight, 0).
func (a *Adaptive) AvailableAt(time.Duration) int { return max(a.Limit()-a.InFlight(), 0) }

// Available is max(limit − in flight, 0).
func (a *Adaptive) Available() int { return a.AvailableAt(0) }

// MaxPermits is the spec's max: the largest the limit can grow.
func (a *Adaptive) MaxPermits() int { return a.spec.Max }

// Kind is KindFailsafeAdaptive ("" for the zero value).
func (a *Adaptive) Kind() limiters.Kind {
	if a.lib == nil {
		return ""
	}
	return KindFailsafeAdaptive
}

// String is the spec ("" for the zero value).
func (a *Adaptive) String() string {
	if a.lib == nil {
		return ""
	}
	return a.spec.String()
}

// Spec is the limiter's configuration.
func (a *Adaptive) Spec() limiters.Spec { return a.spec }

// Snapshot is in flight, the library's limit and the last execution time it recorded.
func (a *Adaptive) Snapshot(now time.Duration) limiters.State {
	if a.lib == nil {
		return limiters.State{At: now}
	}
	a.mu.Lock()
	rtt := a.rtt
	a.mu.Unlock()
	limit, held := a.Limit(), a.InFlight()
	return limiters.State{Kind: KindFailsafeAdaptive, At: now, Available: max(limit-held, 0), MaxPermits: a.spec.Max,
		InFlight: held, Max: limit, RTT: rtt}
}

func explainAdaptive(s limiters.State, n int, d limiters.Decision) string {
	head := fmt.Sprintf("%d of failsafe-go's limit %d in flight", s.InFlight, s.Max)
	if s.RTT > 0 {
		head += fmt.Sprintf(" (last execution %s)", limiters.FormatDuration(s.RTT))
	}
	if d == limiters.Admitted {
		return fmt.Sprintf("%s; %d more fit", head, n)
	}
	return fmt.Sprintf("%s; %d more would pass the limit (TryAcquirePermit refuses) until permits are released or the limit grows", head, n)
}
