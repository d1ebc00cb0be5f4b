package limiters

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/ratelab/ratelab/limiters/internal/limits"
)

// KindEnvoyGradient is Envoy's adaptive-concurrency gradient controller in specs.
const KindEnvoyGradient Kind = "envoy-gradient"

// FamilyEnvoy is Envoy's HTTP filters (adaptive_concurrency).
const FamilyEnvoy Family = "envoy"

// EnvoyGradientSpec configures a model of Envoy's adaptive-concurrency filter's gradient
// controller (source/extensions/filters/http/adaptive_concurrency/controller/
// gradient_controller.cc): "envoy-gradient:update=100ms,interval=1m". Its fields are the
// GradientControllerConfig's, with Envoy's defaults where the proto has them:
//
//	update       concurrency_limit_params.concurrency_update_interval (required in Envoy;
//	             default here 100ms, the value of Envoy's documented example)
//	interval     min_rtt_calc_params.interval (default here 60s, the documented example's)
//	requests     min_rtt_calc_params.request_count: 50
//	jitter       min_rtt_calc_params.jitter, percent of interval: 15
//	min          min_rtt_calc_params.min_concurrency: 3 (also the least limit)
//	buffer       min_rtt_calc_params.buffer, percent of minRTT: 25
//	percentile   sample_aggregate_percentile: 50
//	max          concurrency_limit_params.max_concurrency_limit: 1000
//	seed         the jitter's PCG seed (Envoy draws it from its random generator): 1
//
// The controller, in virtual time (its two timers fire lazily, in time order, before any
// call at a later time; at one instant the sample timer fires before the minRTT timer):
//
//	start:          the limit is min; a minRTT window opens (below)
//	minRTT window:  the limit before is kept aside, the limit is pinned to min, the samples
//	                so far are thrown away, and the window's epoch is now; a request sent
//	                before the epoch gives no sample when it completes. At the `requests`-th
//	                sample, minRTT = the window's percentile, the kept limit comes back, the
//	                next window opens after interval + U{0 … ⌈interval_ms · jitter⌉−1} ms, and
//	                the sample timer restarts
//	every update:   (not during a minRTT window, when the timer stops until it ends) if any
//	                samples came: sampleRTT = their percentile (whole µs), and
//	                    gradient = clamp((minRTT · (1 + buffer)) / sampleRTT, 0.5, 2)
//	                    L = limit · gradient;  limit = clamp(⌊L + √L⌋, min, max)
//	                if the limit is set to min, from min, 5 windows in a row, a minRTT window
//	                opens at once (minRTT may be stale)
//	decision:       forward when in flight + n ≤ limit (Envoy: in flight < limit, n = 1)
//
// Worked, at the defaults with a server that answers in 10ms: the first 50 answers give
// minRTT = 10ms and the limit goes back to 3. Each 100ms window then sees sampleRTT = 10ms:
// gradient = 12.5/10 = 1.25, L = 3·1.25 = 3.75, limit = ⌊3.75 + 1.94⌋ = 5; then 5 → ⌊6.25 +
// 2.5⌋ = 8 → ⌊10 + 3.16⌋ = 13 → ⌊16.25 + 4.03⌋ = 20 → 30 → 43 → 61 → 84: ×1.25 plus its
// square root a window, while latency stays within the 25% buffer. At 84, latency doubles to
// 20ms: gradient = 12.5/20 = 0.625, L = 52.5, limit = ⌊52.5 + 7.25⌋ = 59; at 40ms the gradient
// 0.3125 is clamped to 0.5: 59 → ⌊29.5 + 5.43⌋ = 34. Every interval (60s to 68.999s) a
// minRTT window pins the limit to 3 until 50 requests have answered: those refused then are
// the probe's cost.
//
// Where the model departs from Envoy: Envoy aggregates samples in a log-linear histogram
// (circllhist) and reads an approximate percentile; this takes the exact one (linear
// interpolation between the sorted samples, truncated to whole µs as Envoy truncates).
// Envoy's newer min_concurrency_limit and fixed_value fields are not modelled (the limit's
// floor is min, and minRTT is always measured). A request that ends without an answer
// (ObserveAt with ok false: a timeout, an error burst's failure) gives no sample, as Envoy
// cancels the sample of a stream reset before its response headers.
//
// The limiter takes one mutex per call (timers and the sample buffer are shared state) and
// allocates only when a window holds more samples than any before it.
type EnvoyGradientSpec struct {
	Update, Interval time.Duration
	Requests         int
	Jitter           float64 // percent
	Min, Max         int
	Buffer           float64 // percent
	Percentile       float64 // percent
	Seed             int
}

var envoyGradientKind = KindInfo{
	Kind: KindEnvoyGradient, Family: FamilyEnvoy, Shape: ShapeAdaptive,
	Summary:      "Envoy's gradient controller: limit·clamp(minRTT·1.25/p50, 0.5, 2) + √, minRTT re-measured at min concurrency",
	Example:      "envoy-gradient:update=100ms,interval=1m",
	Checks:       CheckSpecs{Sizes: "envoy-gradient:update=100ms,interval=1m,min=5,max=5"},
	Fields:       FieldInfos[EnvoyGradientSpec](),
	Ranges:       envoyGradientRanges,
	Capabilities: []Capability{CapRelease, CapFeedback},
	Parse: SpecParser(EnvoyGradientSpec{Update: 100 * time.Millisecond, Interval: 60 * time.Second, Requests: 50, Jitter: 15,
		Min: 3, Max: 1000, Buffer: 25, Percentile: 50, Seed: 1}),
	Explain: explainAdaptive,
}

func (s *EnvoyGradientSpec) Fields() []Field {
	return []Field{
		DurationField("update", false, "concurrency_update_interval: how often the limit is recomputed (default 100ms)", &s.Update),
		DurationField("interval", false, "min_rtt_calc_params.interval: time between minRTT windows (default 60s)", &s.Interval),
		optionalInt("requests", "min_rtt_calc_params.request_count: samples a minRTT window needs (default 50)", &s.Requests, 50),
		floatField("jitter", "min_rtt_calc_params.jitter: percent of interval added at random to it (default 15)", &s.Jitter, 15),
		optionalInt("min", "min_rtt_calc_params.min_concurrency: the limit during a minRTT window and the least (default 3)", &s.Min, 3),
		optionalInt("max", "max_concurrency_limit: the most the limit grows to (default 1000)", &s.Max, 1000),
		floatField("buffer", "min_rtt_calc_params.buffer: percent added to minRTT (default 25)", &s.Buffer, 25),
		floatField("percentile", "sample_aggregate_percentile: the percentile of a window's latencies (default 50)", &s.Percentile, 50),
		seedField(&s.Seed),
	}
}

// Kind is KindEnvoyGradient.
func (s EnvoyGradientSpec) Kind() Kind { return KindEnvoyGradient }

// String is "envoy-gradient:update=100ms,interval=1m" and any field not at its default.
func (s EnvoyGradientSpec) String() string { return FormatSpec(KindEnvoyGradient, s.Fields()) }

// Validate refuses what Envoy's proto validation refuses (update not positive, interval
// under 1ms, requests, min or max of 0, percents outside [0, 100]) and min above max, limits
// beyond 2^31 − 1 and spans beyond 2^62ns.
func (s EnvoyGradientSpec) Validate() error {
	k := KindEnvoyGradient
	if s.Update <= 0 || int64(s.Update) > MaxSpan {
		return NewConfigError(k, "update", FormatDuration(s.Update), "must be positive, at most 2^62ns")
	}
	if s.Interval < time.Millisecond || int64(s.Interval) > MaxSpan/2 {
		return NewConfigError(k, "interval", FormatDuration(s.Interval), "must be at least 1ms (Envoy's validation), at most 2^61ns")
	}
	if s.Requests < 1 || s.Requests > 1<<20 {
		return NewConfigError(k, "requests", fmt.Sprint(s.Requests), "must be between 1 and 2^20")
	}
	if s.Max < 1 || s.Max > math.MaxInt32 {
		return NewConfigError(k, "max", fmt.Sprint(s.Max), "must be between 1 and 2^31-1")
	}
	if s.Min < 1 || s.Min > s.Max {
		return NewConfigError(k, "min", fmt.Sprint(s.Min), fmt.Sprintf("must be between 1 and max=%d", s.Max))
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"jitter", s.Jitter}, {"buffer", s.Buffer}, {"percentile", s.Percentile}} {
		if !(p.v >= 0 && p.v <= 100) {
			return NewConfigError(k, p.name, fmt.Sprint(p.v), "must be a percent in [0, 100]")
		}
	}
	if s.Seed < 1 {
		return NewConfigError(k, "seed", fmt.Sprint(s.Seed), "must be positive")
	}
	return nil
}

// envoyGradientRanges are what EnvoyGradientSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for envoy-gradient, with specs at and just past each edge that the registry
// test holds to Validate.
var envoyGradientRanges = []FieldRange{
	{Field: "update", Accepted: "a positive duration, " + limits.Span + " (default 100ms)",
		Why:     "concurrency_update_interval: Envoy requires it positive",
		Valid:   []string{"envoy-gradient:update=1ns", "envoy-gradient:update=1h"},
		Invalid: []string{"envoy-gradient:update=0s"}},
	{Field: "interval", Accepted: "1ms to 2^61 ns (default 1m)",
		Why:     "Envoy's validation: gte 1ms; a window's end is now + interval + jitter",
		Valid:   []string{"envoy-gradient:interval=1ms", "envoy-gradient:interval=1h"},
		Invalid: []string{"envoy-gradient:interval=999us"}},
	{Field: "requests", Accepted: "1 to 1048576 (default 50)",
		Why:     "request_count: Envoy's proto refuses 0; a window's samples are kept",
		Valid:   []string{"envoy-gradient:requests=1", "envoy-gradient:requests=1048576"},
		Invalid: []string{"envoy-gradient:requests=0", "envoy-gradient:requests=1048577"}},
	{Field: "jitter", Accepted: "a percent in [0, 100] (default 15)",
		Why:     "Envoy's type.v3.Percent",
		Valid:   []string{"envoy-gradient:jitter=0", "envoy-gradient:jitter=100"},
		Invalid: []string{"envoy-gradient:jitter=101", "envoy-gradient:jitter=-1"}},
	{Field: "min", Accepted: "1 to max (default 3)",
		Why:     "the limit is a count of permits held, in 32 bits; Envoy's proto refuses 0",
		Valid:   []string{"envoy-gradient:min=1", "envoy-gradient:min=1000"},
		Invalid: []string{"envoy-gradient:min=0", "envoy-gradient:min=1001"}},
	{Field: "max", Accepted: "1 to 2147483647, at least min (default 1000)",
		Why:     "the limit is a count of permits held, in 32 bits; Envoy's proto refuses 0",
		Valid:   []string{"envoy-gradient:min=1,max=1", "envoy-gradient:max=2147483647"},
		Invalid: []string{"envoy-gradient:max=2147483648", "envoy-gradient:max=2"}},
	{Field: "buffer", Accepted: "a percent in [0, 100] (default 25)",
		Why:     "Envoy's type.v3.Percent",
		Valid:   []string{"envoy-gradient:buffer=0", "envoy-gradient:buffer=100"},
		Invalid: []string{"envoy-gradient:buffer=100.5"}},
	{Field: "percentile", Accepted: "a percent in [0, 100] (default 50)",
		Why:     "Envoy's type.v3.Percent",
		Valid:   []string{"envoy-gradient:percentile=0", "envoy-gradient:percentile=99.9"},
		Invalid: []string{"envoy-gradient:percentile=200"}},
	{Field: "seed", Accepted: "1 to 2^63−1 (default 1)",
		Why:     "the jitter's PCG seed: a run's minRTT windows open at the same times every time",
		Valid:   []string{"envoy-gradient:seed=1"},
		Invalid: []string{"envoy-gradient:seed=0"}},
}

// New builds the controller, its first minRTT window open at virtual time 0; the clock is
// read only by TryAcquire and Available (the At forms and feedback carry their time).
func (s EnvoyGradientSpec) New(clock Clock) (Limiter, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	e := &EnvoyGradient{spec: s, clock: clock, rng: newJitter(s.Seed), limit: s.Min, samples: make([]int64, 0, 2*s.Requests)}
	e.resetAt, e.resetArmed = s.Update, true
	e.enterMinRTTWindow(0)
	return e, nil
}

// AdmissionBound is false: no time axis.
func (s EnvoyGradientSpec) AdmissionBound(time.Duration) (int64, bool) { return 0, false }

// NaturalWindow is 0: no time axis.
func (s EnvoyGradientSpec) NaturalWindow() time.Duration { return 0 }

// NominalRate is false: no time axis.
func (s EnvoyGradientSpec) NominalRate() (Rate, bool) { return Rate{}, false }

// InitialPermits is min: the first minRTT window pins the limit there.
func (s EnvoyGradientSpec) InitialPermits() int { return s.Min }

// EnvoyGradient is the gradient controller of EnvoyGradientSpec. The zero value grants
// nothing (every request is Never); the spec's New makes a working one.
type EnvoyGradient struct {
	spec  EnvoyGradientSpec
	clock Clock

	mu       sync.Mutex
	now      time.Duration // the latest time heard: the timers have fired up to here
	limit    int
	inFlight int
	deferred int // the limit kept aside during a minRTT window; 0 outside one (Envoy's test)
	epoch    time.Duration
	minRTT   time.Duration // whole µs
	sample   time.Duration // the last window's percentile, whole µs
	samples  []int64       // µs, this window's
	// the two timers: the sample window's reset, and the next minRTT window
	resetAt, minAt         time.Duration
	resetArmed, minArmed   bool
	consecutiveMin, probes int
	rng                    *rand.Rand
}

var (
	_ Adaptive = (*EnvoyGradient)(nil)
	_ Clocked  = (*EnvoyGradient)(nil)
)

func (e *EnvoyGradient) inMinRTTWindow() bool { return e.deferred > 0 }

// advance fires the timers due by now, in time order (the sample timer first at a tie), each
// at its own time.
func (e *EnvoyGradient) advance(now time.Duration) {
	for {
		switch {
		case e.resetArmed && e.resetAt <= now && (!e.minArmed || e.resetAt <= e.minAt):
			e.resetArmed = false
			e.sampleTimer(e.resetAt)
		case e.minArmed && e.minAt <= now:
			e.minArmed = false
			e.enterMinRTTWindow(e.minAt)
		default:
			e.now = max(e.now, now)
			return
		}
	}
}

// sampleTimer is Envoy's sample_reset_timer_ callback at time t.
func (e *EnvoyGradient) sampleTimer(t time.Duration) {
	if e.inMinRTTWindow() {
		return // re-armed when the minRTT window ends
	}
	if len(e.samples) > 0 {
		e.sample = e.percentile()
		e.setLimit(t, e.newLimit())
	}
	e.resetAt, e.resetArmed = t+e.spec.Update, true
}

// enterMinRTTWindow opens a minRTT window at time t.
func (e *EnvoyGradient) enterMinRTTWindow(t time.Duration) {
	if e.inMinRTTWindow() {
		return
	}
	e.probes++
	e.deferred = e.limit
	e.setLimit(t, e.spec.Min)
	e.samples = e.samples[:0]
	e.epoch = t
}

// percentile is the window's percentile in whole µs (see EnvoyGradientSpec), and clears it.
func (e *EnvoyGradient) percentile() time.Duration {
	s := e.samples
	slices.Sort(s)
	rank := e.spec.Percentile / 100 * float64(len(s)-1)
	lo := int(rank)
	v := float64(s[lo])
	if lo+1 < len(s) {
		v += (rank - float64(lo)) * float64(s[lo+1]-s[lo])
	}
	e.samples = s[:0]
	return time.Duration(int64(v)) * time.Microsecond
}

// newLimit is calculateNewLimit.
func (e *EnvoyGradient) newLimit() int {
	buffered := float64(e.minRTT/time.Microsecond) * (1 + e.spec.Buffer/100)
	g := buffered / float64(e.sample/time.Microsecond)
	if !(g <= 2) { // NaN (0/0) as std::min(2.0, NaN): 2
		g = 2
	}
	g = max(g, 0.5)
	l := float64(e.limit) * g
	n := l + math.Sqrt(l)
	if n >= float64(e.spec.Max) {
		return e.spec.Max
	}
	return max(e.spec.Min, int(n))
}

// setLimit is updateConcurrencyLimit at time t.
func (e *EnvoyGradient) setLimit(t time.Duration, limit int) {
	old := e.limit
	e.limit = limit
	if !e.inMinRTTWindow() && old == e.spec.Min && limit == e.spec.Min {
		e.consecutiveMin++
	} else {
		e.consecutiveMin = 0
	}
	if e.consecutiveMin >= 5 {
		e.minAt, e.minArmed = t, true
	}
}

// record is recordLatencySample for a request sent at sent, answered at now.
func (e *EnvoyGradient) record(now, sent time.Duration) {
	if sent < e.epoch {
		return
	}
	e.samples = append(e.samples, int64((now-sent)/time.Microsecond))
	if !e.inMinRTTWindow() || len(e.samples) < e.spec.Requests {
		return
	}
	e.minRTT = e.percentile()
	e.setLimit(now, e.deferred)
	e.deferred = 0
	e.minAt, e.minArmed = now+e.jittered(), true
	e.resetAt, e.resetArmed = now+e.spec.Update, true
}

// jittered is applyJitter(interval, jitter): interval + U{0 … ⌈interval_ms · jitter⌉ − 1} ms.
func (e *EnvoyGradient) jittered() time.Duration {
	ms := int64(e.spec.Interval / time.Millisecond)
	span := uint64(math.Ceil(float64(ms) * e.spec.Jitter / 100))
	if e.spec.Jitter == 0 || span == 0 {
		return e.spec.Interval
	}
	return time.Duration(ms+int64(e.rng.Uint64()%span)) * time.Millisecond
}

// AcquireAt forwards n when in flight + n ≤ the limit at now (after the timers due by now).
func (e *EnvoyGradient) AcquireAt(now time.Duration, n int) Decision {
	if e.rng == nil {
		return CheckN(n, 0)
	}
	if d := CheckN(n, e.spec.Max); d != Admitted {
		return d
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(now)
	if e.inFlight+n > e.limit {
		return Rejected
	}
	e.inFlight += n
	return Admitted
}

// TryAcquireAt reports whether n permits were taken.
func (e *EnvoyGradient) TryAcquireAt(now time.Duration, n int) bool {
	return e.AcquireAt(now, n) == Admitted
}

// TryAcquire is TryAcquireAt at the clock's time.
func (e *EnvoyGradient) TryAcquire(n int) bool { return e.TryAcquireAt(ReadClock(e.clock), n) }

// ObserveAt hears n requests sent at now − latency and answered at now: a sample each when
// ok (none when not: Envoy cancels the sample of a request without a response).
func (e *EnvoyGradient) ObserveAt(now time.Duration, n int, latency time.Duration, ok bool) {
	if e.rng == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(now)
	if !ok {
		return
	}
	for range n {
		e.record(now, now-latency)
	}
}

// Release returns n permits; it panics, changing nothing, if n is not positive or more than
// are held.
func (e *EnvoyGradient) Release(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n <= 0 || n > e.inFlight {
		panic(fmt.Sprintf("limiters: %s: Release(%d) with %d in flight", KindEnvoyGradient, n, e.inFlight))
	}
	e.inFlight -= n
}

// Limit is the limit now (as of the latest time heard).
func (e *EnvoyGradient) Limit() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.limit
}

// Probes is the number of minRTT windows opened, the first at 0 included.
func (e *EnvoyGradient) Probes() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.probes
}

// InFlight is the number of permits held.
func (e *EnvoyGradient) InFlight() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inFlight
}

// AvailableAt is max(limit − in flight, 0) after the timers due by now.
func (e *EnvoyGradient) AvailableAt(now time.Duration) int {
	if e.rng == nil {
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(now)
	return max(e.limit-e.inFlight, 0)
}

// Available is AvailableAt at the clock's time.
func (e *EnvoyGradient) Available() int { return e.AvailableAt(ReadClock(e.clock)) }

// MaxPermits is max.
func (e *EnvoyGradient) MaxPermits() int { return e.spec.Max }

// Kind is KindEnvoyGradient ("" for the zero value).
func (e *EnvoyGradient) Kind() Kind {
	if e.rng == nil {
		return ""
	}
	return KindEnvoyGradient
}

// String is the spec ("" for the zero value).
func (e *EnvoyGradient) String() string {
	if e.rng == nil {
		return ""
	}
	return e.spec.String()
}

// Spec is the limiter's configuration.
func (e *EnvoyGradient) Spec() Spec { return e.spec }

// Snapshot is the state at now, after the timers due by now (as every call with a time: the
// engine asks it at the lane's time, just before the decision it explains): the limit, in flight, the last
// window's percentile (RTT), minRTT (the no-load RTT) and the minRTT windows so far.
func (e *EnvoyGradient) Snapshot(now time.Duration) State {
	if e.rng == nil {
		return State{At: now}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.advance(now)
	return State{Kind: KindEnvoyGradient, At: now, Available: max(e.limit-e.inFlight, 0), MaxPermits: e.spec.Max,
		InFlight: e.inFlight, Max: e.limit, RTT: e.sample, RTTNoLoad: e.minRTT, Probes: e.probes}
}
